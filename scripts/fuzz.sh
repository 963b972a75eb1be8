#!/usr/bin/env bash
# Runs every fuzz target of the module for a short time each: a habit, so
# that a target that no longer builds, or an input the seed corpus already
# breaks, is caught by `make test`. A finding is written by the go command
# to the package's testdata/fuzz/<Target>/ and fails the run: commit it
# with the fix, and it stays a regression test.
#
#   scripts/fuzz.sh                 # every target, FUZZTIME each (default 20000x: that many inputs)
#   FUZZTIME=10m scripts/fuzz.sh    # a longer run (docs/testing.md)
#   scripts/fuzz.sh ./requeststate  # only the targets of these packages
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZTIME=${FUZZTIME:-20000x}
GO=${GO:-go}

pkgs=("$@")
[ ${#pkgs[@]} -eq 0 ] && mapfile -t pkgs < <(grep -rl --include='*_test.go' '^func Fuzz' . | xargs -n1 dirname | sort -u)

n=0
for pkg in "${pkgs[@]}"; do
	for target in $(grep -h -o '^func Fuzz[A-Za-z0-9_]*' "$pkg"/*_test.go | sed 's/^func //' | sort -u); do
		echo "== fuzz $pkg $target ($FUZZTIME)"
		"$GO" test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$pkg" >/tmp/parley-fuzz.$$ 2>&1 || {
			cat /tmp/parley-fuzz.$$
			rm -f /tmp/parley-fuzz.$$
			echo "fuzz: $pkg $target failed" >&2
			exit 1
		}
		n=$((n + 1))
	done
done
rm -f /tmp/parley-fuzz.$$
echo "fuzz: $n targets, $FUZZTIME each, no failure"
