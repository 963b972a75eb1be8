#!/usr/bin/env bash
# Installs what the interop tests run, once, into a cache folder: Node.js
# 22 and the npm packages that ts/package-lock.json pins,
# both from the npm registry (npm must be on PATH for the first install;
# later runs are offline). Prints, on stdout:
#
#   NODE=<the node binary>
#   NODE_MODULES=<the node_modules folder of the pinned packages>
#
# Environment:
#   PARLEY_INTEROP_CACHE   the cache folder (default: ~/.cache/parley-interop)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${PARLEY_INTEROP_CACHE:-$HOME/.cache/parley-interop}
# shellcheck source=../scripts/node.sh
source "$HERE/../scripts/node.sh" # parley_node

die() {
	printf 'interop: %s\n' "$*" >&2
	exit 1
}

mkdir -p "$CACHE"
# Two runs sharing the cache must not install at the same time.
if command -v flock >/dev/null; then
	exec 9>"$CACHE/.lock"
	timeout 600 flock 9 || die "timed out waiting for $CACHE/.lock"
fi

NODE=$(parley_node "$CACHE/node") || die "could not install Node.js into $CACHE/node"

# One folder per lock file: a changed pin installs afresh, beside the old.
lock=$(sha256sum "$HERE/ts/package-lock.json" | cut -c1-16)
TS=$CACHE/ts-$lock
if [[ ! -f $TS/.installed ]]; then
	command -v npm >/dev/null || die "npm is needed once, to install the TypeScript SDK (ts/package-lock.json)"
	rm -rf "$TS"
	mkdir -p "$TS"
	cp "$HERE/ts/package.json" "$HERE/ts/package-lock.json" "$TS/"
	printf '== installing the TypeScript SDK (ts/package-lock.json) into %s\n' "$TS" >&2
	# npm ci installs exactly what the lock file says, with the Node
	# above for any install script.
	(cd "$TS" && PATH=$(dirname "$NODE"):$PATH timeout 600 npm ci --no-audit --no-fund --loglevel=error >&2) ||
		die "could not install the TypeScript SDK into $TS"
	touch "$TS/.installed"
fi

printf 'NODE=%s\nNODE_MODULES=%s\n' "$NODE" "$TS/node_modules"
