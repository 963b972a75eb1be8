#!/usr/bin/env bash
# Installs the Debian packages the tests need and the machine lacks:
# nginx (the fleet test's load balancer), redis-server (the shared store
# of single-use requestState), curl (the curl guide's test runs its
# commands), tmux (the terminal tests of cmd/parley answer its forms in
# a tmux pane) and chromium (the apps stage renders an MCP App in it,
# headless, driven by playwright-core, which speaks to it directly and
# needs no chromium-driver). Idempotent: a machine that has them is left
# alone. Needs root or sudo, and Debian's package archive.
#
#   scripts/deps.sh            # install what is missing
set -euo pipefail

need=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || need+=(redis-server)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "deps: need root (or sudo) to install: ${need[*]}" >&2
		exit 1
	fi
	sudo=(sudo)
fi
echo "deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -qq
"${sudo[@]}" apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# The packages' own services (started by their install scripts where an
# init system runs) are not what the tests use: they start their own, on
# ports of their own.
