#!/usr/bin/env bash
# The kill, signal and concurrency tests (bench/kill_tests.txt) run ROUNDS times in a row
# (default 20), stopping at the first round with a failure; each round's time and result is
# printed, a failing round's output kept in $TMPDIR/kill-loop-<round>.log.
# Usage: bench/kill_loop.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

rounds=${1:-20}
mapfile -t names < <(grep -v '^#' bench/kill_tests.txt | grep .)
cargo test --locked --quiet --test it --no-run
# Every name must be a test: `--exact` with a name that matches none runs nothing, silently.
listed=$(cargo test --locked --quiet --test it -- --list 2>/dev/null | sed -n 's/: test$//p')
missing=0
for name in "${names[@]}"; do
    grep -qxF "$name" <<<"$listed" || { echo "kill_loop.sh: no test named $name" >&2; missing=1; }
done
[[ $missing == 0 ]] || exit 1
for round in $(seq 1 "$rounds"); do
    start=$(date +%s)
    log=${TMPDIR:-/tmp}/kill-loop-$round.log
    if cargo test --locked --quiet --test it -- --exact "${names[@]}" >"$log" 2>&1; then
        echo "round $round: ${#names[@]} tests passed ($(($(date +%s) - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg))"
        rm -f "$log"
    else
        echo "round $round: FAILED ($(($(date +%s) - start)) s, load $(cut -d' ' -f1-3 /proc/loadavg)); see $log"
        grep -E '^test .*FAILED|^---- ' "$log" || true
        exit 1
    fi
done
echo "all $rounds rounds passed"
