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
# Another process may hold apt's locks (unattended-upgrades on a fresh
# machine, another job): apt-get waits for them, up to DEPS_LOCK_WAIT
# seconds (default 300), instead of failing at once.
#
#   scripts/deps.sh               # install what is missing
#   scripts/deps.sh --self-test   # check the waiting with a stand-in apt-get
set -euo pipefail

lock_wait=${DEPS_LOCK_WAIT:-300}
lock_poll=${DEPS_LOCK_POLL:-5}
sudo=()

# apt_get runs apt-get with its arguments, waiting while another process
# holds apt's locks: DPkg::Lock::Timeout makes apt-get wait for dpkg's
# lock itself; a lock it does not wait for (the package lists' lock of
# apt-get update) is retried here until lock_wait seconds have passed.
apt_get() {
	local start=$SECONDS out
	while :; do
		if out=$("${sudo[@]}" apt-get -o DPkg::Lock::Timeout="$lock_wait" "$@" 2>&1); then
			return 0
		fi
		if ! grep -qiE 'could not (get|open) lock|unable to (lock|acquire)' <<<"$out" || ((SECONDS - start >= lock_wait)); then
			printf '%s\n' "$out" >&2
			return 1
		fi
		echo "deps: another process holds apt's lock; waiting (up to ${lock_wait}s)" >&2
		sleep "$lock_poll"
	done
}

if [ "${1:-}" = --self-test ]; then
	fail() {
		echo "deps self-test: $*" >&2
		exit 1
	}
	dir=$(mktemp -d)
	trap 'rm -rf "$dir"' EXIT
	# A stand-in apt-get whose lock is held for its first two runs.
	cat >"$dir/apt-get" <<'STANDIN'
#!/bin/sh
n=$(cat "$STANDIN_DIR/runs" 2>/dev/null || echo 0)
echo $((n + 1)) >"$STANDIN_DIR/runs"
echo "$*" >>"$STANDIN_DIR/args"
if [ "$n" -lt "${STANDIN_BUSY:-2}" ]; then
	echo "E: Could not get lock /var/lib/apt/lists/lock. It is held by process 4242 (apt-get)" >&2
	exit 100
fi
STANDIN
	chmod +x "$dir/apt-get"
	export STANDIN_DIR=$dir
	PATH="$dir:$PATH"
	lock_poll=0.1
	apt_get update -qq 2>/dev/null || fail "a lock held for two runs was not waited for"
	[ "$(cat "$dir/runs")" = 3 ] || fail "apt-get ran $(cat "$dir/runs") times, want 3"
	grep -q 'DPkg::Lock::Timeout=' "$dir/args" || fail "apt-get was not told to wait for dpkg's lock"
	rm -f "$dir/runs"
	lock_wait=1
	export STANDIN_BUSY=1000
	apt_get update -qq 2>/dev/null && fail "a lock held for good was waited for without end"
	rm -f "$dir/runs"
	# Another failure is not retried.
	printf '#!/bin/sh\necho x >>"$STANDIN_DIR/runs"\necho "E: Unable to locate package nosuch" >&2\nexit 100\n' >"$dir/apt-get"
	apt_get install nosuch 2>/dev/null && fail "a failed install passed"
	[ "$(wc -l <"$dir/runs")" = 1 ] || fail "a failure other than the lock was retried"
	echo "deps self-test: ok"
	exit 0
fi

need=()
command -v nginx >/dev/null 2>&1 || [ -x /usr/sbin/nginx ] || need+=(nginx)
command -v redis-server >/dev/null 2>&1 || [ -x /usr/bin/redis-server ] || need+=(redis-server)
command -v curl >/dev/null 2>&1 || need+=(curl)
command -v tmux >/dev/null 2>&1 || need+=(tmux)
[ -x /usr/bin/chromium ] || need+=(chromium)
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" -ne 0 ]; then
	if ! command -v sudo >/dev/null 2>&1; then
		echo "deps: need root (or sudo) to install: ${need[*]}" >&2
		exit 1
	fi
	sudo=(sudo)
fi
echo "deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt_get update -qq
apt_get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# The packages' own services (started by their install scripts where an
# init system runs) are not what the tests use: they start their own, on
# ports of their own.
