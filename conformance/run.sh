#!/usr/bin/env bash
# Runs the official MCP conformance suite against Parley's everything-server
# and everything-client: at protocol version 2026-07-28, judged against
# conformance/baseline.yml, and at 2025-11-25 (the active server suite
# against the same server process and URL, and the client scenarios of that
# generation), where every scenario must pass. Exits non-zero if any run
# fails.
#
#   conformance/run.sh            # server and client
#   conformance/run.sh server     # only the server scenarios
#   conformance/run.sh client     # only the client scenarios
#
# Environment:
#   PARLEY_CONFORMANCE_CACHE    where Node 22 and the suite are installed, once
#                               (default: ~/.cache/parley-conformance)
#   PARLEY_CONFORMANCE_RESULTS  where checks.json files go
#                               (default: $PARLEY_CONFORMANCE_CACHE/results)
#   PARLEY_CONFORMANCE_ARGS     extra arguments for both suite runs (--verbose, ...)
#
# The first run needs the npm registry (npm must be on PATH); later runs are
# offline.
set -euo pipefail

SUITE_PACKAGE=@modelcontextprotocol/conformance
SUITE_VERSION=0.2.0-alpha.12
REQUIREMENTS=2026-07-28
LEGACY=2025-11-25
# The 2025-11-25 client scenarios (the auth/* ones through a legacy
# session); each must pass with no failure and no warning.
LEGACY_CLIENT_SCENARIOS=(initialize tools_call elicitation-sep1034-client-defaults sse-retry
	auth/metadata-default auth/metadata-var1 auth/metadata-var2 auth/metadata-var3 auth/basic-cimd
	auth/scope-from-www-authenticate auth/scope-from-scopes-supported auth/scope-omitted-when-undefined
	auth/scope-step-up auth/scope-retry-limit auth/token-endpoint-auth-basic auth/token-endpoint-auth-post
	auth/token-endpoint-auth-none auth/pre-registration)

# The authorization extensions' client scenarios (client credentials,
# enterprise-managed authorization, workload identity federation, DPoP):
# the suite does not score them, so they are run one by one, at the
# suite's default generation (2026-07-28) and, with --force, at 2025-11-25
# (a legacy session), and each must pass: exit 0, no check failed or
# warned. See auth_extension_verdict.
AUTH_EXTENSION_SCENARIOS=(auth/client-credentials-jwt auth/client-credentials-basic auth/enterprise-managed-authorization
	auth/wif-jwt-bearer auth/dpop auth/dpop-nonce)

# The tasks extension's scenarios (SEP-2663), run explicitly.
TASKS_SCENARIOS=(tasks-lifecycle tasks-capability-negotiation tasks-wire-fields tasks-request-state-removal
	tasks-mrtr-input tasks-request-headers tasks-dispatch-and-envelope tasks-status-notifications
	tasks-required-task-error tasks-mrtr-composition)

# The skills extension's scenarios (SEP-2640), run explicitly: the server
# ones at both generations, the client ones at the suite's default. Each
# must run its real checks: see skills_verdict.
SKILLS_SERVER_SCENARIOS=(sep-2640-skills-enumeration sep-2640-skills-manifest sep-2640-skills-directory)
SKILLS_CLIENT_SCENARIOS=(sep-2640-client-no-prefetch sep-2640-client-verify-digest sep-2640-client-verify-size
	sep-2640-client-verify-frontmatter)
# The checks a skills scenario may skip at 2025-11-25, where the caching
# attributes they look for are not defined.
SKILLS_LEGACY_SKIPS=sep-2640-skills-list-cache-attributes,sep-2640-skills-get-cache-attributes

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${PARLEY_CONFORMANCE_CACHE:-$HOME/.cache/parley-conformance}
RESULTS=${PARLEY_CONFORMANCE_RESULTS:-$CACHE/results}
BASELINE=$ROOT/conformance/baseline.yml
read -r -a EXTRA_ARGS <<<"${PARLEY_CONFORMANCE_ARGS:-}"

what=${1:-all}
case $what in
server | client | all) ;;
*)
	echo "usage: $0 [server|client|all]" >&2
	exit 2
	;;
esac

log() { printf '== %s\n' "$*" >&2; }
die() {
	printf 'conformance: %s\n' "$*" >&2
	exit 1
}

# ---- install (once) --------------------------------------------------------

# shellcheck source=../scripts/node.sh
source "$ROOT/scripts/node.sh" # parley_node, parley_npm_install

NODE_DIR=$CACHE/node
NODE=
SUITE_DIR=$CACHE/suite-$SUITE_VERSION
SUITE_JS=$SUITE_DIR/node_modules/$SUITE_PACKAGE/dist/index.js

installed_version() { # prints the version of the package.json at $1, or nothing
	[[ -f $1 ]] && sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$1" | head -n 1
}

install() {
	mkdir -p "$CACHE"
	# Two runs sharing a cache must not install at the same time.
	if command -v flock >/dev/null; then
		exec 9>"$CACHE/.lock"
		timeout 600 flock 9 || die "timed out waiting for $CACHE/.lock"
	fi
	NODE=$(parley_node "$NODE_DIR") || die "could not install Node.js into $NODE_DIR"
	if [[ $(installed_version "$SUITE_DIR/node_modules/$SUITE_PACKAGE/package.json") != "$SUITE_VERSION" ]]; then
		# npm runs the suite's install scripts with the Node on PATH.
		PATH=$(dirname "$NODE"):$PATH parley_npm_install "$SUITE_DIR" "$SUITE_PACKAGE@$SUITE_VERSION" ||
			die "could not install $SUITE_PACKAGE@$SUITE_VERSION"
	fi
	[[ -f $SUITE_JS ]] || die "$SUITE_JS is missing after install"
	if command -v flock >/dev/null; then exec 9>&-; fi
}

install
export PATH=$(dirname "$NODE"):$PATH # the suite runs subprocesses with node
conformance() { "$NODE" "$SUITE_JS" "$@"; }
log "node $("$NODE" --version), $SUITE_PACKAGE $(conformance --version)"

# ---- build -----------------------------------------------------------------

WORK=$(mktemp -d "${TMPDIR:-/tmp}/parley-conformance.XXXXXX")
SERVER_PID=
cleanup() {
	if [[ -n $SERVER_PID ]] && kill -0 "$SERVER_PID" 2>/dev/null; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK"
}
trap cleanup EXIT

log "building the fixtures"
(cd "$ROOT" && timeout 300 go build -o "$WORK/everything-server" ./conformance/everything-server &&
	timeout 300 go build -o "$WORK/everything-client" ./conformance/everything-client)

mkdir -p "$RESULTS"
rm -rf "$RESULTS/server" "$RESULTS/client" "$RESULTS/server-$LEGACY" "$RESULTS/client-$LEGACY" "$RESULTS/skills" "$RESULTS/auth-extensions" "$RESULTS"/*.log # only what an earlier run wrote

# summarize NAME LOG: prints a short summary of the suite's output in LOG:
# scenarios passed, failed as the baseline expects, failed but not scored,
# and, one a line, every regression and stale baseline entry.
summarize() {
	printf '\n---- %s ----\n' "$1"
	if ! grep -q 'SUMMARY ===' "$2"; then
		echo "no summary: the suite did not finish (see $2)"
		return
	fi
	sed 's/\x1b\[[0-9;]*m//g' "$2" | sed -n '/SUMMARY ===/,$p' | awk '
		/^Expected failures/ { section = "expected"; next }
		/^Unexpected failures \(/ { section = "unexpected"; next }
		/^Stale baseline entries/ { section = "stale"; next }
		/^$/ { section = ""; next }
		section == "expected" { expected[$2] = 1; next }
		section == "unexpected" { unexpected[++nu] = $2; next }
		section == "stale" { stale[++ns] = $2; next }
		/^✓ / { passed++; next }
		/^✗ / { name = $2; sub(/:$/, "", name); failed[++nf] = name; line[name] = $0; next }
		/^Total:/ { total = $0; next }
		/^Baseline check passed/ { verdict = $0 }
		END {
			nexp = 0; unscored = ""
			for (i = 1; i <= nf; i++) {
				n = failed[i]
				if (n in expected) { nexp++; continue }
				isUnexpected = 0
				for (j = 1; j <= nu; j++) if (unexpected[j] == n) isUnexpected = 1
				if (!isUnexpected) unscored = unscored (unscored == "" ? "" : ", ") n
			}
			printf "%d scenarios passed, %d failed as the baseline expects\n", passed, nexp
			if (unscored != "") printf "failed but not scored: %s\n", unscored
			print total
			for (j = 1; j <= nu; j++) printf "REGRESSION (not in the baseline): %s\n", (unexpected[j] in line) ? line[unexpected[j]] : unexpected[j]
			for (j = 1; j <= ns; j++) printf "STALE baseline entry (now passes): %s\n", stale[j]
			if (verdict != "") print verdict
		}'
}

# explain KIND LOG: for each scenario that LOG lists as an unexpected
# failure or a stale baseline entry, prints its failing checks.
explain() {
	local names
	names=$(sed 's/\x1b\[[0-9;]*m//g' "$2" |
		awk '/^(Unexpected failures|Stale baseline entries)/ { on = 1; next } on && /^  (✗|✓) / { print $2; next } { on = 0 }')
	[[ -n $names ]] || return 0
	printf '\nfailing checks (%s):\n' "$1"
	local name prefix dirs
	for name in $names; do
		name=${name%%:*} # a per-check entry is scenario:check-id
		prefix=$RESULTS/$1/$name-
		[[ $1 == server ]] && prefix=$RESULTS/server/server-$name-
		dirs=("$prefix"20*)
		if [[ ! -f ${dirs[0]}/checks.json ]]; then
			echo "  $name: no checks.json found"
			continue
		fi
		"$NODE" -e '
			const [file, name] = process.argv.slice(1);
			const checks = JSON.parse(require("fs").readFileSync(file, "utf8"));
			const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING");
			if (bad.length === 0) console.log(`  ${name}: every check passed (a stale baseline entry)`);
			for (const c of bad) console.log(`  ${name}: ${c.id} ${c.status}${c.errorMessage ? ": " + c.errorMessage : ""}`);
		' "${dirs[0]}/checks.json" "$name"
	done
}

status_server=skipped
status_client=skipped
status_legacy_server=skipped
status_tasks=skipped
status_legacy_client=skipped
status_skills_server=skipped
status_skills_client=skipped
status_auth_ext=skipped

# skills_verdict DIR ALLOWED_SKIPS: judges the checks.json a skills
# scenario left under DIR. The scenarios skip every check of an extension
# the implementation does not declare, and the client ones skip theirs
# when the client never lists, so a pass is not enough: the scenario must
# have run a check of its own (not only wire-schema-valid), and none may
# have failed, warned or been skipped (but those in ALLOWED_SKIPS, comma
# separated). Prints what is wrong and returns non-zero.
skills_verdict() {
	local file
	file=$(find "$1" -name checks.json | head -n 1)
	if [[ -z $file ]]; then
		echo "no checks.json"
		return 1
	fi
	"$NODE" -e '
		const [file, allowed] = process.argv.slice(1);
		const ok = new Set(allowed.split(",").filter(Boolean));
		const checks = JSON.parse(require("fs").readFileSync(file, "utf8"));
		const bad = checks.filter((c) => c.status === "FAILURE" || c.status === "WARNING" || (c.status === "SKIPPED" && !ok.has(c.id)));
		const real = checks.filter((c) => c.id !== "wire-schema-valid" && c.status === "SUCCESS");
		if (real.length === 0) console.log("ran only the schema check: no check of its own passed");
		for (const c of bad.slice(0, 2)) console.log(`${c.id} ${c.status}${c.errorMessage ? ": " + c.errorMessage : ""}`);
		if (bad.length > 2) console.log(`and ${bad.length - 2} more`);
		process.exit(bad.length > 0 || real.length === 0 ? 1 : 0);
	' "$file" "$2"
}

# ---- server scenarios --------------------------------------------------------

run_server() {
	# Port 0: the server binds a free loopback port and reports it, so no
	# other process can take it between choosing and binding.
	"$WORK/everything-server" -addr 127.0.0.1:0 2>"$RESULTS/everything-server.log" &
	SERVER_PID=$!
	local url='' i
	for ((i = 0; i < 100; i++)); do # up to 10 s
		# The server prints its URL once it listens.
		url=$(sed -n 's|.*serving MCP on \(http://[^ ]*\).*|\1|p' "$RESULTS/everything-server.log" | head -n 1)
		[[ -n $url ]] && break
		kill -0 "$SERVER_PID" 2>/dev/null || break
		sleep 0.1
	done
	if [[ -z $url ]]; then
		cat "$RESULTS/everything-server.log" >&2
		die "everything-server did not start"
	fi
	if command -v curl >/dev/null; then # any HTTP answer will do
		curl -s -o /dev/null --max-time 5 -X POST "$url" || die "everything-server does not answer at $url"
	fi
	log "server scenarios against $url"
	local rc=0
	timeout 300 "$NODE" "$SUITE_JS" server --url "$url" --requirements "$REQUIREMENTS" \
		--expected-failures "$BASELINE" -o "$RESULTS/server" "${EXTRA_ARGS[@]}" >"$RESULTS/server.log" 2>&1 || rc=$?
	if ((rc == 0)); then status_server=passed; else status_server="FAILED (exit $rc)"; fi

	# The same process and URL serve the older generation: the whole
	# active suite of 2025-11-25, no baseline.
	log "server scenarios at $LEGACY against $url"
	rc=0
	timeout 300 "$NODE" "$SUITE_JS" server --url "$url" --suite active --spec-version "$LEGACY" \
		-o "$RESULTS/server-$LEGACY" "${EXTRA_ARGS[@]}" >"$RESULTS/server-$LEGACY.log" 2>&1 || rc=$?
	if ((rc == 0)); then status_legacy_server=passed; else status_legacy_server="FAILED (exit $rc)"; fi

	# The tasks extension's scenarios are not scored (the suite marks them
	# [extension]), so they are run one by one, and each must pass:
	# exit 0 and no failed check.
	log "tasks extension scenarios against $url"
	local sc failed_tasks=()
	: >"$RESULTS/server-tasks.log"
	for sc in "${TASKS_SCENARIOS[@]}"; do
		rc=0
		timeout 120 "$NODE" "$SUITE_JS" server --url "$url" --scenario "$sc" \
			-o "$RESULTS/server-tasks" >"$RESULTS/server-$sc.log" 2>&1 || rc=$?
		cat "$RESULTS/server-$sc.log" >>"$RESULTS/server-tasks.log"
		if ((rc != 0)) || ! grep -q ', 0 failed' "$RESULTS/server-$sc.log"; then
			failed_tasks+=("$sc")
		fi
	done
	if ((${#failed_tasks[@]} == 0)); then
		status_tasks="passed (${#TASKS_SCENARIOS[@]} scenarios; tasks-status-notifications is skipped by the suite itself)"
	else
		status_tasks="FAILED (${failed_tasks[*]})"
	fi

	# The skills extension's scenarios, at both generations: each must run
	# its real checks (skills_verdict).
	log "skills extension server scenarios against $url"
	local gen args why failed_skills=()
	: >"$RESULTS/server-skills.log"
	for sc in "${SKILLS_SERVER_SCENARIOS[@]}"; do
		for gen in "$REQUIREMENTS" "$LEGACY"; do
			# --force: with --spec-version, the suite skips an extension
			# scenario, which is not on the spec timeline.
			args=(--spec-version "$gen" --force)
			rc=0
			timeout 120 "$NODE" "$SUITE_JS" server --url "$url" --scenario "$sc" "${args[@]}" \
				-o "$RESULTS/skills/server-$gen/$sc" >>"$RESULTS/server-skills.log" 2>&1 || rc=$?
			why=$(skills_verdict "$RESULTS/skills/server-$gen/$sc" "$([[ $gen == "$LEGACY" ]] && echo "$SKILLS_LEGACY_SKIPS")") && ((rc == 0)) ||
				failed_skills+=("$sc@$gen${why:+ (${why//$'\n'/; })}")
		done
	done
	if ((${#failed_skills[@]} == 0)); then
		status_skills_server="passed (${#SKILLS_SERVER_SCENARIOS[@]} scenarios at $REQUIREMENTS and $LEGACY, every one running its own checks)"
	else
		status_skills_server="FAILED: ${failed_skills[*]}"
	fi
	kill "$SERVER_PID" 2>/dev/null || true
	wait "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=
}

# ---- client scenarios --------------------------------------------------------

run_client() {
	log "client scenarios with $WORK/everything-client"
	local rc=0
	timeout 300 "$NODE" "$SUITE_JS" client --command "$WORK/everything-client" --requirements "$REQUIREMENTS" \
		--expected-failures "$BASELINE" -o "$RESULTS/client" "${EXTRA_ARGS[@]}" >"$RESULTS/client.log" 2>&1 || rc=$?
	if ((rc == 0)); then status_client=passed; else status_client="FAILED (exit $rc)"; fi

	log "client scenarios at $LEGACY: ${LEGACY_CLIENT_SCENARIOS[*]}"
	local sc failed=()
	: >"$RESULTS/client-$LEGACY.log"
	for sc in "${LEGACY_CLIENT_SCENARIOS[@]}"; do
		rc=0
		timeout 120 "$NODE" "$SUITE_JS" client --command "$WORK/everything-client" --scenario "$sc" --spec-version "$LEGACY" \
			-o "$RESULTS/client-$LEGACY" "${EXTRA_ARGS[@]}" >>"$RESULTS/client-$LEGACY.log" 2>&1 || rc=$?
		((rc == 0)) || failed+=("$sc")
	done
	if ((${#failed[@]} == 0)); then status_legacy_client=passed; else status_legacy_client="FAILED (${failed[*]})"; fi

	# The skills extension's client scenarios: each must run its real
	# check (skills_verdict). The verify ones expect the client to refuse
	# the tampered skill and exit with an error, which the suite allows.
	log "skills extension client scenarios: ${SKILLS_CLIENT_SCENARIOS[*]}"
	local why failed_skills=()
	: >"$RESULTS/client-skills.log"
	for sc in "${SKILLS_CLIENT_SCENARIOS[@]}"; do
		rc=0
		timeout 120 "$NODE" "$SUITE_JS" client --command "$WORK/everything-client" --scenario "$sc" \
			-o "$RESULTS/skills/client/$sc" >>"$RESULTS/client-skills.log" 2>&1 || rc=$?
		why=$(skills_verdict "$RESULTS/skills/client/$sc" "") && ((rc == 0)) || failed_skills+=("$sc${why:+ (${why//$'\n'/; })}")
	done
	if ((${#failed_skills[@]} == 0)); then
		status_skills_client="passed (${#SKILLS_CLIENT_SCENARIOS[@]} scenarios, every one running its own check)"
	else
		status_skills_client="FAILED: ${failed_skills[*]}"
	fi

	# The authorization extensions: every scenario at both generations.
	log "authorization extension client scenarios: ${AUTH_EXTENSION_SCENARIOS[*]}"
	local gen out failed_auth=()
	: >"$RESULTS/client-auth-extensions.log"
	for sc in "${AUTH_EXTENSION_SCENARIOS[@]}"; do
		for gen in "$REQUIREMENTS" "$LEGACY"; do
			rc=0
			out=$RESULTS/auth-extensions/$gen/${sc//\//-}.log
			mkdir -p "$(dirname "$out")"
			timeout 120 "$NODE" "$SUITE_JS" client --command "$WORK/everything-client" --scenario "$sc" --spec-version "$gen" --force \
				-o "$RESULTS/auth-extensions/$gen" "${EXTRA_ARGS[@]}" >"$out" 2>&1 || rc=$?
			cat "$out" >>"$RESULTS/client-auth-extensions.log"
			why=$(auth_extension_verdict "$out") && ((rc == 0)) || failed_auth+=("$sc@$gen${why:+ ($why)}")
		done
	done
	if ((${#failed_auth[@]} == 0)); then
		status_auth_ext="passed (${#AUTH_EXTENSION_SCENARIOS[@]} scenarios at $REQUIREMENTS and $LEGACY, every check)"
	else
		status_auth_ext="FAILED: ${failed_auth[*]}"
	fi
}

# auth_extension_verdict LOG: whether the suite's output in LOG says the
# scenario ran checks and every one passed ("Passed: N/N, 0 failed, 0
# warnings" with N > 0). Prints what it saw otherwise.
auth_extension_verdict() {
	local line
	line=$(sed 's/\x1b\[[0-9;]*m//g' "$1" | grep -E '^Passed: ' | tail -n 1)
	if [[ $line =~ ^Passed:\ ([0-9]+)/([0-9]+),\ 0\ failed,\ 0\ warnings && ${BASH_REMATCH[1]} -gt 0 && ${BASH_REMATCH[1]} == "${BASH_REMATCH[2]}" ]]; then
		return 0
	fi
	echo "${line:-no result line}"
	return 1
}

# legacy_summary NAME LOG: the scenarios of a run without a baseline:
# how many passed, and each one that did not.
legacy_summary() {
	printf '\n---- %s ----\n' "$1"
	sed 's/\x1b\[[0-9;]*m//g' "$2" | grep -E '^(✓ |✗ |Total:|Passed: )' | awk '
		/^✓ / { passed++; next }
		/^✗ / { failed++; print "FAILED: " $0; next }
		/^Passed: / { if ($0 ~ / 0 failed, 0 warnings/) passed++; else { failed++; print "FAILED: " $0 }; next }
		{ print }
		END { printf "%d scenarios passed, %d failed\n", passed, failed }'
}

[[ $what == client ]] || run_server
[[ $what == server ]] || run_client

if [[ $what != client ]]; then
	summarize "server scenarios" "$RESULTS/server.log"
	explain server "$RESULTS/server.log"
fi
if [[ $what != server ]]; then
	summarize "client scenarios" "$RESULTS/client.log"
	explain client "$RESULTS/client.log"
fi
[[ $what == client ]] || legacy_summary "server scenarios at $LEGACY (same process)" "$RESULTS/server-$LEGACY.log"
[[ $what == server ]] || legacy_summary "client scenarios at $LEGACY" "$RESULTS/client-$LEGACY.log"
printf '\nconformance %s (baseline %s): server %s, client %s\n' \
	"$REQUIREMENTS" "${BASELINE#"$ROOT"/}" "$status_server" "$status_client"
printf 'conformance %s: server %s, client %s\n' "$LEGACY" "$status_legacy_server" "$status_legacy_client"
printf 'conformance tasks extension: server %s\n' "$status_tasks"
printf 'conformance skills extension: server %s, client %s\n' "$status_skills_server" "$status_skills_client"
printf 'conformance authorization extensions: client %s\n' "$status_auth_ext"
printf 'logs and checks.json files: %s\n' "$RESULTS"
for st in "$status_server" "$status_client" "$status_legacy_server" "$status_legacy_client" "$status_tasks" "$status_skills_server" "$status_skills_client" "$status_auth_ext"; do
	[[ $st != FAILED* ]] || exit 1
done
