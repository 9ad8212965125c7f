#!/usr/bin/env bash
# The pool case of docs/benchmarks.md: a cold `run new -- true` that takes a prepared workspace,
# against `jj workspace add` of the same repository and against a warm run, and 16 parallel
# runs taking prepared workspaces while the background refill works.
#
#   bench/pool.sh
#
# Environment (all optional):
#   AGENT_WORKSPACE_BIN   binary to use; default: cargo build --release into a scratch target
#   FILES                 files in the synthetic jj repository [50000]
#   RUNS                  timed iterations per cold side [5]; warm runs are 10x that
#   PARALLEL              parallel runs of the refill case [16]
#   KEEP_SCRATCH=1        keep the scratch directory
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
project=$(cd "$here/.." && pwd -P)
FILES=${FILES:-50000}
RUNS=${RUNS:-5}
PARALLEL=${PARALLEL:-16}
for tool in jj direnv hyperfine awk; do
    command -v "$tool" >/dev/null || { echo "pool.sh: $tool is not on PATH" >&2; exit 1; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/aw-pool-bench.XXXXXX")
scratch=$(cd "$scratch" && pwd -P)
[[ ${KEEP_SCRATCH:-} == 1 ]] || trap 'rm -rf "$scratch"' EXIT
bin=${AGENT_WORKSPACE_BIN:-}
if [[ -z $bin ]]; then
    CARGO_TARGET_DIR=$scratch/aw-target cargo build --release --locked -q \
        --manifest-path "$project/Cargo.toml"
    bin=$scratch/aw-target/release/agent-workspace
fi
bin=$(cd "$(dirname "$bin")" && pwd -P)/$(basename "$bin")
JJ=$(command -v jj)
export HOME=$scratch/home XDG_CACHE_HOME=$scratch/cache XDG_CONFIG_HOME=$scratch/config
export XDG_DATA_HOME=$scratch/data JJ_CONFIG=$scratch/jj.toml
mkdir -p "$HOME" "$XDG_CONFIG_HOME/agent-workspace"
printf '[user]\nname = "Bench"\nemail = "bench@example.com"\n' >"$JJ_CONFIG"
say() { printf '==> %s\n' "$*" >&2; }
median_ms() { # median_ms HYPERFINE_JSON -> the median in ms
    awk '/"median"/ { gsub(/[",]/, ""); printf "%.1f", $2 * 1000; exit }' "$1"
}

repo=$scratch/repo
say "making a jj repository of $FILES files"
mkdir -p "$repo"
(
    cd "$repo"
    for ((i = 0; i < FILES; i++)); do
        d=src/m$((i / 500))/s$((i / 50 % 10))
        [[ -d $d ]] || mkdir -p "$d"
        printf 'file %d\nsome content to make it a little less tiny\n' "$i" >"$d/f$i.txt"
    done
    echo 'export BENCH=1' >.envrc
    "$JJ" git init --quiet
    "$JJ" --quiet commit -m "synthetic repository of $FILES files"
)
cd "$repo"
direnv allow . >/dev/null 2>&1

say "floor: jj workspace add ($RUNS runs)"
floor=$scratch/floor
hyperfine -N --style basic --runs "$RUNS" --export-json "$scratch/floor.json" \
    --prepare "sh -c '$JJ -R $repo workspace forget floor >/dev/null 2>&1; rm -rf $floor'" \
    "$JJ -R $repo --quiet workspace add --name floor $floor" >&2
"$JJ" -R "$repo" workspace forget floor
rm -rf "$floor"

say "pooled cold runs ($RUNS runs; each prepare drains the last workspace and fills the pool)"
printf '[pool]\nsize = 1\n' >"$XDG_CONFIG_HOME/agent-workspace/config.toml"
"$bin" pool fill >/dev/null
hyperfine -N --style basic --runs "$RUNS" --export-json "$scratch/pooled.json" \
    --prepare "sh -c '$bin clean --all >/dev/null 2>&1; $bin pool fill >/dev/null'" \
    "$bin run new -- true" >&2
"$bin" clean --all >/dev/null 2>&1
"$bin" pool fill >/dev/null

say "warm runs ($((RUNS * 10)) runs)"
"$bin" run warm -- true
hyperfine -N --style basic --warmup 3 --runs $((RUNS * 10)) \
    --export-json "$scratch/warm.json" "$bin run warm -- true" >&2
"$bin" clean --all >/dev/null 2>&1

say "$PARALLEL parallel runs taking prepared workspaces, refill in the background"
printf '[pool]\nsize = %d\n' "$PARALLEL" >"$XDG_CONFIG_HOME/agent-workspace/config.toml"
"$bin" pool fill >/dev/null
times=$scratch/par-times
: >"$times"
for ((i = 0; i < PARALLEL; i++)); do
    (
        s=$(date +%s%N)
        "$bin" run "p$i" -- true
        e=$(date +%s%N)
        echo $(((e - s) / 1000000)) >>"$times"
    ) &
done
wait
filling=$("$bin" pool status --json | awk '/"filling"/ { print $2 }' | tr -d ,)
taken=$("$JJ" -R "$repo" workspace list -T 'name ++ "\n"' | grep -c '^p' || true)
sort -n "$times" >"$times.sorted"
par_median=$(awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }' "$times.sorted")
par_max=$(tail -1 "$times.sorted")
say "waiting for the refill"
t0=$(date +%s%N)
while [[ $("$bin" pool status --json | awk '/"ready"/ { print $2 }' | tr -d ,) != "$PARALLEL" ]]; do
    sleep 1
done
refill_s=$(awk -v n=$(($(date +%s%N) - t0)) 'BEGIN { printf "%.0f", n / 1e9 }')

f=$(median_ms "$scratch/floor.json")
p=$(median_ms "$scratch/pooled.json")
w=$(median_ms "$scratch/warm.json")
echo
echo "repository: $FILES files; $("$bin" --version); $("$JJ" --version)"
echo "jj workspace add (floor of a cold run): ${f} ms"
echo "pooled run new -- true: ${p} ms = $(awk -v a="$p" -v b="$f" 'BEGIN { printf "%.3f", a / b }')x the floor (target <= 0.05x)"
echo "warm run w -- true: ${w} ms; pooled = $(awk -v a="$p" -v b="$w" 'BEGIN { printf "%.2f", a / b }')x warm (target <= 5x)"
echo "$PARALLEL parallel pooled runs: median ${par_median} ms, slowest ${par_max} ms; $taken workspaces;" \
    "refill under way when they ended: $filling; pool full again ${refill_s}s later"
