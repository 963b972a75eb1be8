#!/usr/bin/env bash
# Installs the Debian packages the tests need, if missing: redis-server
# (requeststate/redisstore runs a real one) and nginx. Idempotent: a
# package whose command is already on PATH is left alone. Needs root (or
# sudo) only when something is missing.
set -euo pipefail

missing=()
command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
command -v nginx >/dev/null 2>&1 || missing+=(nginx)
if [ ${#missing[@]} -eq 0 ]; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
	echo "deps.sh: missing ${missing[*]} and no apt-get: install them by hand" >&2
	exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
	sudo="sudo"
fi
echo "deps.sh: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
