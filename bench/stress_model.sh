#!/usr/bin/env bash
# The model-based stress round of tests/it/stress_model.rs at length, on a release build: the
# same code `cargo test` runs briefly, here STEPS steps (default 10000) per seed and backend.
# Every kind of invariant a round breaks is listed with the first step that broke it, and the
# seed and step to replay it; the script fails if any broke.
# Usage: bench/stress_model.sh [STEPS]
# (env: SEEDS=1,2,... the seeds, default 1; BACKENDS="jj git"; KEEP_GOING=0 to stop each round
# at its first break and print its step log; STRESS_SECONDS=N stops each seed's round after N s,
# its figures then of the steps done; STRESS_PROGRESS=N prints a line of figures every N steps;
# STRESS_PROFILE=1 adds to each such line where the time went, by command and oracle check;
# STRESS_TMPDIR=DIR makes each round's repositories under DIR, e.g. a tmpfs such as /dev/shm)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

steps=${1:-10000}
status=0
for backend in ${BACKENDS:-jj git}; do
    start=$(date +%s)
    if TMPDIR=${STRESS_TMPDIR:-${TMPDIR:-/tmp}} STRESS_SEEDS=${SEEDS:-1} STRESS_STEPS=$steps STRESS_KEEP_GOING=${KEEP_GOING:-1} \
        cargo test --release --locked --quiet --test it "stress_model::stress_model_$backend" \
        -- --exact --nocapture; then
        echo "$backend: every seed held for ${STRESS_SECONDS:+up to }$steps steps ($(($(date +%s) - start)) s)"
    else
        echo "$backend: an invariant broke (see above; $(($(date +%s) - start)) s)"
        status=1
    fi
done
exit "$status"
