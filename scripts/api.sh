#!/usr/bin/env bash
# Holds the module's exported API to the recorded baseline, api/baseline.zip
# (export data written by golang.org/x/exp/cmd/apidiff).
#
#   scripts/api.sh check    # make api (in make test): fails on any difference
#   scripts/api.sh record   # make api-record: records the API as it is now
#
# Every difference fails the check, compatible ones too, so that the baseline
# is always the API of main and a later removal cannot hide behind an earlier
# addition. Recording a compatible change is one command. Recording an
# incompatible one (a removal, a changed type or signature) also needs
# API_BREAK=1, and every name it breaks must be named in CHANGELOG.md: the
# policy is to deprecate first (a "Deprecated:" doc paragraph, the old name
# kept working) and remove later, as a conscious, recorded step.
set -euo pipefail

APIDIFF=golang.org/x/exp/cmd/apidiff@v0.0.0-20261113113407-e3970619a1a4
MODULE=github.com/parley-mcp/parley
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BASELINE=$ROOT/api/baseline.zip
GO=${GO:-go}

mode=${1:-check}
case $mode in
check | record) ;;
*)
	echo "usage: $0 check|record" >&2
	exit 2
	;;
esac

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$ROOT"
$GO run "$APIDIFF" -m -w "$tmp/now.zip" "$MODULE"

if [ ! -f "$BASELINE" ]; then
	if [ "$mode" = record ]; then
		cp "$tmp/now.zip" "$BASELINE"
		echo "api: baseline recorded (first time)"
		exit 0
	fi
	echo "api: no baseline at api/baseline.zip; record one with: make api-record" >&2
	exit 1
fi

# apidiff notes each internal package it ignores; that is no difference.
$GO run "$APIDIFF" -m "$BASELINE" "$tmp/now.zip" 2>&1 | grep -v '^Ignoring internal package' >"$tmp/report" || true
$GO run "$APIDIFF" -m -incompatible "$BASELINE" "$tmp/now.zip" 2>&1 | grep -v '^Ignoring internal package' >"$tmp/incompatible" || true

if [ ! -s "$tmp/report" ]; then
	echo "api: the exported API matches api/baseline.zip"
	exit 0
fi

if [ "$mode" = check ]; then
	echo "api: the exported API differs from the recorded baseline (api/baseline.zip):" >&2
	cat "$tmp/report" >&2
	if [ -s "$tmp/incompatible" ]; then
		cat >&2 <<-'MSG'
		api: incompatible changes break programs written against main. Deprecate
		instead: keep the old name working, add a "Deprecated: use X." doc
		paragraph and a CHANGELOG.md entry. If the break is intended, record it
		with API_BREAK=1 make api-record and name each broken name in CHANGELOG.md.
		MSG
	else
		echo "api: compatible changes only; record them with: make api-record (and add them to CHANGELOG.md)" >&2
	fi
	exit 1
fi

# record
cat "$tmp/report"
if [ -s "$tmp/incompatible" ]; then
	if [ "${API_BREAK:-}" != 1 ]; then
		echo "api: refusing to record incompatible changes without API_BREAK=1 (see the policy at the top of scripts/api.sh)" >&2
		exit 1
	fi
	# Each line reads "- ./pkg.Name: what"; CHANGELOG.md must name pkg.Name.
	missing=0
	while IFS= read -r line; do
		case $line in
		"- ./"*) ;;
		*) continue ;;
		esac
		name=${line#- ./}
		name=${name%%:*}
		if ! grep -qF "$name" "$ROOT/CHANGELOG.md"; then
			echo "api: CHANGELOG.md does not name $name ($line)" >&2
			missing=1
		fi
	done <"$tmp/incompatible"
	[ "$missing" = 0 ] || exit 1
fi
cp "$tmp/now.zip" "$BASELINE"
echo "api: baseline recorded"
