#!/usr/bin/env bash
# Runs the stages of `make test` one after another and ends with one line
# that says the verdict, so the hundreds of lines above it need not be read:
#
#   make test: 12 stages passed in 6m40s
#   make test: FAILED at stage unit (3 of 12 passed before it, 1m02s)
#
# Usage: scripts/stages.sh STAGE...   (each STAGE is a make target)
# STAGE_RUNNER overrides the command that runs a stage (default:
# "${MAKE:-make} --no-print-directory"); scripts/stages.sh --self-test
# checks this script with stand-in stages.
set -uo pipefail

if [ "${1:-}" = --self-test ]; then
	self=${BASH_SOURCE[0]}
	fail() {
		echo "stages self-test: $*" >&2
		exit 1
	}
	out=$(STAGE_RUNNER=true bash "$self" a b c 2>&1) || fail "passing stages failed: $out"
	last=$(printf '%s\n' "$out" | tail -1)
	[[ $last =~ ^"make test: 3 stages passed in "[0-9]+m[0-9]{2}s$ ]] || fail "pass line: $last"
	# A stand-in runner that fails the stage named "b".
	runner=$(mktemp)
	trap 'rm -f "$runner"' EXIT
	printf '#!/bin/sh\n[ "$1" != b ]\n' >"$runner"
	chmod +x "$runner"
	out=$(STAGE_RUNNER=$runner bash "$self" a b c 2>&1) && fail "a failing stage passed: $out"
	last=$(printf '%s\n' "$out" | tail -1)
	[[ $last =~ ^"make test: FAILED at stage b (1 of 3 passed before it, "[0-9]+m[0-9]{2}s")"$ ]] || fail "failure line: $last"
	printf '%s\n' "$out" | grep -q '== stage c' && fail "a stage ran after a failure"
	out=$(STAGE_RUNNER=true bash "$self" 2>&1) && fail "no stages passed: $out"
	echo "stages self-test: ok"
	exit 0
fi

[ $# -gt 0 ] || {
	echo "usage: $0 STAGE..." >&2
	exit 2
}

read -r -a runner <<<"${STAGE_RUNNER:-${MAKE:-make} --no-print-directory}"
elapsed() {
	local s=$((SECONDS - $1))
	printf '%dm%02ds' $((s / 60)) $((s % 60))
}

start=$SECONDS
passed=0
durations=()
for stage in "$@"; do
	printf '\n== stage %s\n' "$stage"
	t0=$SECONDS
	if ! "${runner[@]}" "$stage"; then
		printf '\nmake test: FAILED at stage %s (%d of %d passed before it, %s)\n' "$stage" "$passed" "$#" "$(elapsed "$start")"
		exit 1
	fi
	passed=$((passed + 1))
	durations+=("$stage $(elapsed "$t0")")
done
printf '\nstage times: %s\n' "$(IFS=,; echo "${durations[*]}" | sed 's/,/, /g')"
printf 'make test: %d stages passed in %s\n' "$passed" "$(elapsed "$start")"
