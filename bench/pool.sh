#!/usr/bin/env bash
# The pool case of docs/benchmarks.md: a cold `run new -- true` that takes a prepared workspace,
# against `jj workspace add` of the same repository and against a warm run, and 16 parallel
# runs taking prepared workspaces with and without the background refill.
#
#   bench/pool.sh
#
# Nothing is deleted between timed steps: on ext4 without a journal, creating files soon after
# many were deleted is slowed by the inode allocator skipping recently deleted inodes (seen
# here: `jj workspace add` of 50,000 files from 3 s to 50 s), which would distort both sides.
# So each floor run adds a workspace under a new name, the pool is filled for all the pooled
# runs at once (untimed), and everything is removed at the end.
#
# Environment (all optional):
#   AGENT_WORKSPACE_BIN   binary to use; default: cargo build --release into a scratch target
#   FILES                 files in the synthetic jj repository [50000]
#   RUNS                  timed cold runs per side [5]; warm runs are 10x that
#   PARALLEL              parallel runs of the refill case [16]
#   KEEP_SCRATCH=1        keep the scratch directory
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
project=$(cd "$here/.." && pwd -P)
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
FILES=${FILES:-50000}
RUNS=${RUNS:-5}
PARALLEL=${PARALLEL:-16}
for tool in jj direnv hyperfine awk; do
    command -v "$tool" >/dev/null || { echo "pool.sh: $tool is not on PATH" >&2; exit 1; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/aw-pool-bench.XXXXXX")
scratch=$(cd "$scratch" && pwd -P)
[[ ${KEEP_SCRATCH:-} == 1 ]] || trap 'rm -rf "$scratch"' EXIT
bin=$(release_binary "$scratch" "$project")
JJ=$(command -v jj)
export HOME=$scratch/home XDG_CACHE_HOME=$scratch/cache XDG_CONFIG_HOME=$scratch/config
export XDG_DATA_HOME=$scratch/data JJ_CONFIG=$scratch/jj.toml
config=$XDG_CONFIG_HOME/agent-workspace/config.toml
mkdir -p "$HOME" "$XDG_CONFIG_HOME/agent-workspace"
printf '[user]\nname = "Bench"\nemail = "bench@example.com"\n' >"$JJ_CONFIG"
say() { printf '==> %s\n' "$*" >&2; }
now_ms() { awk -v t="$EPOCHREALTIME" 'BEGIN { printf "%.1f", t * 1000 }'; }
# time_ms CMD... -> prints the wall time of one run of CMD in ms (its output discarded)
time_ms() {
    local s e
    s=$EPOCHREALTIME
    "$@" >/dev/null 2>&1
    e=$EPOCHREALTIME
    awk -v s="$s" -v e="$e" 'BEGIN { printf "%.1f\n", (e - s) * 1000 }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
settle() { sync; sleep 3; }

repo=$scratch/repo
say "making a jj repository of $FILES files"
synthetic_repo "$repo" "$FILES"
cd "$repo"

say "floor: jj workspace add ($RUNS runs, each under a new name)"
settle
for ((i = 1; i <= RUNS; i++)); do
    time_ms "$JJ" -R "$repo" --quiet workspace add --name "floor$i" "$scratch/floor$i"
done | tee "$scratch/floor.ms" >&2

say "pooled cold runs ($RUNS runs, each taking one of $RUNS prepared workspaces; no refill)"
printf '[pool]\nsize = 0\n' >"$config"
"$bin" pool fill "$RUNS" >/dev/null
settle
for ((i = 1; i <= RUNS; i++)); do
    time_ms "$bin" run "new$i" -- true
done | tee "$scratch/pooled.ms" >&2
[[ $("$bin" pool status --json | awk '/^  "ready"/ { print $2 }' | tr -d ,) == 0 ]] ||
    { echo "pool.sh: a pooled run did not take a prepared workspace" >&2; exit 1; }

say "warm runs ($((RUNS * 10)) runs)"
hyperfine -N --style basic --warmup 3 --runs $((RUNS * 10)) \
    --export-json "$scratch/warm.json" "$bin run new1 -- true" >&2
warm=$(awk '/"median"/ { gsub(/[",]/, ""); printf "%.1f", $2 * 1000; exit }' "$scratch/warm.json")

# parallel TAG: PARALLEL runs at once, each taking a prepared workspace; their times in ms.
parallel() {
    local tag=$1 i
    : >"$scratch/par-$tag.ms"
    for ((i = 0; i < PARALLEL; i++)); do
        (time_ms "$bin" run "$tag$i" -- true >>"$scratch/par-$tag.ms") &
    done
    wait
}
say "$PARALLEL parallel pooled runs without a refill (pool.size = 0)"
"$bin" pool fill "$PARALLEL" >/dev/null
settle
parallel quiet
say "$PARALLEL parallel pooled runs, each starting the background refill (pool.size = $PARALLEL)"
printf '[pool]\nsize = %d\n' "$PARALLEL" >"$config"
"$bin" pool fill >/dev/null
settle
t0=$(now_ms)
parallel refill
t1=$(now_ms)
filling=$("$bin" pool status --json | awk '/^  "filling"/ { print $2 }' | tr -d ,)
say "waiting for the refill"
while [[ $("$bin" pool status --json | awk '/^  "ready"/ { print $2 }' | tr -d ,) != "$PARALLEL" ]]; do
    sleep 1
done
t2=$(now_ms)

f=$(median <"$scratch/floor.ms")
p=$(median <"$scratch/pooled.ms")
qm=$(median <"$scratch/par-quiet.ms")
qx=$(sort -n "$scratch/par-quiet.ms" | tail -1)
rm_=$(median <"$scratch/par-refill.ms")
rx=$(sort -n "$scratch/par-refill.ms" | tail -1)
ratio() { awk -v a="$1" -v b="$2" "BEGIN { printf \"$3\", a / b }"; }
echo
echo "repository: $FILES files; $("$bin" --version); $("$JJ" --version)"
echo "jj workspace add (floor of a cold run): median ${f} ms of $(tr '\n' ' ' <"$scratch/floor.ms")"
echo "pooled run newN -- true: median ${p} ms of $(tr '\n' ' ' <"$scratch/pooled.ms")= $(ratio "$p" "$f" %.3f)x the floor (target <= 0.05x)"
echo "warm run -- true: ${warm} ms; pooled = $(ratio "$p" "$warm" %.2f)x warm (target <= 5x)"
echo "$PARALLEL parallel pooled runs, no refill: median ${qm} ms, slowest ${qx} ms"
echo "$PARALLEL parallel pooled runs, refill started: median ${rm_} ms, slowest ${rx} ms;" \
    "all ended $(ratio "$(awk -v a="$t1" -v b="$t0" 'BEGIN { print a - b }')" 1 %.0f) ms after the first started;" \
    "refill under way then: $filling; pool full again $(ratio "$(awk -v a="$t2" -v b="$t1" 'BEGIN { print a - b }')" 1000 %.0f) s later"
