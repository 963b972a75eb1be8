#!/usr/bin/env bash
# The fleet test: three Parley instances behind nginx (round-robin, no
# stickiness) sharing a key ring from files, with a load driver running
# concurrent two-round flows through nginx while
#   (a) the instances are restarted one at a time,
#   (b) the key ring goes through the three rotation phases of S36
#       ([OLD,NEW], then [NEW,OLD], then one TTL later [NEW]), each a
#       rolling restart, with flows in flight,
#   (c) single-use state is on, recorded in one Redis server all instances
#       share, and a replayed round is refused by every instance,
# and then checks that a rotation done in the wrong order (NEW promoted on
# one instance before the others know it) fails in the documented way:
# the others refuse its state with "Invalid or expired requestState".
# Last, the tasks phase: tasks created through nginx are polled, answered
# and cancelled at other instances while one instance is killed (SIGKILL)
# with tasks in flight: its tasks must fail with the lost-instance error
# within their lease, every other task must end as it should, none stuck.
# Everything listens on loopback; the run is bounded in flows and time.
#
#   bash examples/fleet/run.sh       # or: make fleet
#
# The last line is
#   fleet: <flows> flows, <failed> failed, p50 <ms> ms, p99 <ms> ms; tasks: <n> created, <c> completed, <x> cancelled, <l> lost with their instance, <s> stuck, <w> wrong
# and the exit status is non-zero if any flow failed, any task was stuck or
# ended wrongly, or any check did not hold. See docs/guide/fleet.md.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
TTL=${PARLEY_FLEET_TTL:-4s}
WORKERS=${PARLEY_FLEET_WORKERS:-8}

bash "$ROOT/scripts/deps.sh"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)

DIR=$(mktemp -d "${TMPDIR:-/tmp}/parley-fleet.XXXXXX")
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -f "$DIR/nginx.pid" ] && kill "$(cat "$DIR/nginx.pid" 2>/dev/null)" 2>/dev/null || true
	wait 2>/dev/null || true
	[ -n "${PARLEY_FLEET_KEEP:-}" ] && echo "fleet: kept $DIR" >&2 || rm -rf "$DIR"
}
trap cleanup EXIT

log() { printf '== fleet: %s\n' "$*" >&2; }
die() {
	printf 'fleet: %s\n' "$*" >&2
	for f in "$DIR"/*.log; do
		[ -s "$f" ] && { echo "--- $f" >&2; tail -n 20 "$f" >&2; }
	done
	exit 1
}

# free_port sets PORT to a loopback port nothing listens on and that no
# earlier call chose (the chosen ones are not listened on until their
# programs start).
USED=" "
free_port() {
	local p
	for _ in $(seq 50); do
		# Below the kernel's ephemeral range (32768 and up), where outgoing
		# connections could take a port between this check and the listen.
		p=$((20000 + RANDOM % 12000))
		case $USED in *" $p "*) continue ;; esac
		if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null; then
			USED="$USED$p "
			PORT=$p
			return
		fi
	done
	die "no free port"
}

newkey() { head -c 32 /dev/urandom | base64; }

log "building"
(cd "$ROOT" && go build -o "$DIR/instance" ./examples/fleet/instance && go build -o "$DIR/load" ./examples/fleet/load)

OLD=$(newkey)
NEW=$(newkey)
PORTS=()
for i in 1 2 3; do
	free_port
	PORTS+=("$PORT")
done
free_port
LB=$PORT
free_port
REDIS_PORT=$PORT
declare -A PID

REDIS=$(command -v redis-server || echo /usr/bin/redis-server)
"$REDIS" --port "$REDIS_PORT" --bind 127.0.0.1 --save '' --appendonly no >"$DIR/redis.log" 2>&1 &
pids+=("$!")
for _ in $(seq 100); do
	(exec 3<>/dev/tcp/127.0.0.1/$REDIS_PORT) 2>/dev/null && break
	sleep 0.05
done
log "redis on port $REDIS_PORT (single-use state)"

# start i: runs instance i on its port with its key file, and waits until
# it answers.
start() {
	local i=$1 port=${PORTS[$(($1 - 1))]}
	"$DIR/instance" -addr "127.0.0.1:$port" -keys-file "$DIR/keys-$i.txt" -ttl "$TTL" -name "i$i" -redis "127.0.0.1:$REDIS_PORT" >>"$DIR/instance-$i.log" 2>&1 &
	PID[$i]=$!
	pids+=("$!")
	for _ in $(seq 200); do
		if curl -fsS "http://127.0.0.1:$port/healthz" >/dev/null 2>&1; then return; fi
		kill -0 "${PID[$i]}" 2>/dev/null || die "instance $i exited at start"
		sleep 0.05
	done
	die "instance $i did not come up"
}

# restart i ring: stops instance i gracefully (requests in flight finish)
# and starts it again with the key ring given.
restart() {
	local i=$1
	printf '%s\n' "$2" >"$DIR/keys-$i.txt"
	kill -TERM "${PID[$i]}"
	wait "${PID[$i]}" || die "instance $i did not stop cleanly"
	start "$i"
}

for i in 1 2 3; do
	printf '%s\n' "$OLD" >"$DIR/keys-$i.txt"
	start "$i"
done
log "instances on ports ${PORTS[*]}"

mkdir -p "$DIR/body" "$DIR/proxy" "$DIR/fastcgi" "$DIR/uwsgi" "$DIR/scgi"
user=""
[ "$(id -u)" -eq 0 ] && user="user root;"
sed -e "s|@DIR@|$DIR|g" -e "s|@USER@|$user|" -e "s|@LB@|127.0.0.1:$LB|" \
	-e "s|@I1@|127.0.0.1:${PORTS[0]}|" -e "s|@I2@|127.0.0.1:${PORTS[1]}|" -e "s|@I3@|127.0.0.1:${PORTS[2]}|" \
	"$ROOT/examples/fleet/nginx.conf" >"$DIR/nginx.conf"
"$NGINX" -p "$DIR" -c "$DIR/nginx.conf" >"$DIR/nginx.log" 2>&1 &
pids+=("$!")
URL="http://127.0.0.1:$LB/mcp"
for _ in $(seq 100); do
	curl -s -o /dev/null "$URL" 2>/dev/null && break
	sleep 0.05
done
log "nginx on port $LB"

log "load: $WORKERS workers through nginx"
"$DIR/load" -url "$URL" -workers "$WORKERS" -duration 3m >"$DIR/load.out" 2>"$DIR/load.log" &
LOAD=$!
pids+=("$LOAD")
sleep 1

log "(a) rolling restart, same keys"
for i in 1 2 3; do restart "$i" "$OLD"; done
log "(b) rotation phase 1: [OLD, NEW] (every instance learns NEW)"
for i in 1 2 3; do restart "$i" "$OLD,$NEW"; done
log "(b) rotation phase 2: [NEW, OLD] (NEW seals)"
for i in 1 2 3; do restart "$i" "$NEW,$OLD"; done
# State sealed with OLD before phase 2 was out may still be in flight for
# one TTL; only then may OLD go.
sleep "${TTL%s}"
sleep 1
log "(b) rotation phase 3: [NEW] (OLD retired)"
for i in 1 2 3; do restart "$i" "$NEW"; done
sleep 1

kill -INT "$LOAD" 2>/dev/null || true
status=0
wait "$LOAD" || status=$?
cat "$DIR/load.log" >&2
[ "$status" -eq 0 ] || die "the load driver reported failed flows"
summary=$(tail -n 1 "$DIR/load.out")
log "$(head -n 1 "$DIR/load.out")"

INSTANCES="http://127.0.0.1:${PORTS[0]}/mcp,http://127.0.0.1:${PORTS[1]}/mcp,http://127.0.0.1:${PORTS[2]}/mcp"
log "(c) a spent round replayed at every instance"
"$DIR/load" -url "$URL" -replay "$INSTANCES" >&2 || die "a replayed round was not refused by every instance"

log "wrong order: NEWER promoted on one instance before the others learn it"
NEWER=$(newkey)
restart 1 "$NEWER,$NEW"
"$DIR/load" -cross "http://127.0.0.1:${PORTS[0]}/mcp,http://127.0.0.1:${PORTS[1]}/mcp" -expect refused >&2 ||
	die "a state sealed with a key the other instances do not know was not refused as documented"
log "the right order: learn first, then promote"
restart 2 "$NEW,$NEWER"
restart 3 "$NEW,$NEWER"
"$DIR/load" -cross "http://127.0.0.1:${PORTS[0]}/mcp,http://127.0.0.1:${PORTS[1]}/mcp" -expect accepted >&2 ||
	die "a state sealed with a key every instance knows was refused"

TASKS=${PARLEY_FLEET_TASKS:-30}
log "tasks: $TASKS created through nginx, answered and polled at the others, i3 killed with tasks in flight"
INST="i1=http://127.0.0.1:${PORTS[0]}/mcp,i2=http://127.0.0.1:${PORTS[1]}/mcp,i3=http://127.0.0.1:${PORTS[2]}/mcp"
"$DIR/load" -url "$URL" -tasks "$TASKS" -instances "$INST" -kill "i3=${PID[3]}" >"$DIR/tasks.out" 2>"$DIR/tasks.log" ||
	{ cat "$DIR/tasks.log" >&2; die "tasks: $(tail -n 1 "$DIR/tasks.out" 2>/dev/null)"; }
cat "$DIR/tasks.log" >&2
tasks_summary=$(tail -n 1 "$DIR/tasks.out")

echo "$summary; $tasks_summary"
case "$summary; $tasks_summary" in
"fleet: "*", 0 failed, "*"; tasks: "*" 0 stuck, 0 wrong") ;;
*) exit 1 ;;
esac
