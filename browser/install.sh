#!/usr/bin/env bash
# Installs what the browser tests run, once, into a cache folder: Node.js
# 22 and the packages js/package-lock.json pins (the MCP Apps host
# library, the TypeScript SDK's client, esbuild, playwright-core and the
# MCP Inspector), from the npm registry; npm must be on PATH for the first
# install, later runs are offline. Chromium is Debian's (scripts/deps.sh
# installs it): playwright-core drives it and downloads no browser. Prints,
# on stdout:
#
#   NODE=<the node binary>
#   NODE_MODULES=<the node_modules folder of the pinned packages>
#   CHROMIUM=<the browser>
#
# Environment:
#   PARLEY_BROWSER_CACHE   the cache folder (default: ~/.cache/parley-browser)
#   CHROMIUM               the browser (default: /usr/bin/chromium)
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${PARLEY_BROWSER_CACHE:-$HOME/.cache/parley-browser}
CHROMIUM=${CHROMIUM:-/usr/bin/chromium}
# shellcheck source=../scripts/node.sh
source "$HERE/../scripts/node.sh" # parley_node

die() {
	printf 'browser: %s\n' "$*" >&2
	exit 1
}

[[ -x $CHROMIUM ]] || die "no Chromium at $CHROMIUM (scripts/deps.sh installs Debian's chromium)"

mkdir -p "$CACHE"
# Two runs sharing the cache must not install at the same time.
if command -v flock >/dev/null; then
	exec 9>"$CACHE/.lock"
	timeout 600 flock 9 || die "timed out waiting for $CACHE/.lock"
fi

NODE=$(parley_node "$CACHE/node") || die "could not install Node.js into $CACHE/node"

# One folder per lock file: a changed pin installs afresh, beside the old.
lock=$(sha256sum "$HERE/js/package-lock.json" | cut -c1-16)
JS=$CACHE/js-$lock
if [[ ! -f $JS/.installed ]]; then
	command -v npm >/dev/null || die "npm is needed once, to install js/package-lock.json"
	rm -rf "$JS"
	mkdir -p "$JS"
	cp "$HERE/js/package.json" "$HERE/js/package-lock.json" "$JS/"
	printf '== installing js/package-lock.json into %s\n' "$JS" >&2
	# npm ci installs exactly what the lock file says, with the Node above
	# for any install script (esbuild's picks its platform binary, a
	# package of the registry).
	(cd "$JS" && PATH=$(dirname "$NODE"):$PATH timeout 600 npm ci --no-audit --no-fund --loglevel=error >&2) ||
		die "could not install js/package-lock.json into $JS"
	touch "$JS/.installed"
fi

printf 'NODE=%s\nNODE_MODULES=%s\nCHROMIUM=%s\n' "$NODE" "$JS/node_modules" "$CHROMIUM"
