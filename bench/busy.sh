#!/usr/bin/env bash
# The busy-repository case of docs/benchmarks.md: N agents (8 by default) each loop
# "edit a file, `agent-workspace checkpoint`" in their own workspaces of one jj repository,
# while a further workspace's warm `run w -- true` is timed against `direnv exec <ws> true`
# in the same minutes, the two alternating run by run. The same pairs are timed with the
# agents stopped (the quiet repository), and `status` and `diff` are timed under the load.
#
#   bench/busy.sh
#   FILES=2000 RUNS=10 bench/busy.sh      # a quick check
#
# Environment (all optional):
#   AGENT_WORKSPACE_BIN   binary to use; default: cargo build --release into a scratch target
#   FILES                 repository sizes in files, one run each ["20000 50000"]
#   AGENTS                busy agents [8]
#   AGENT_PAUSE           seconds each agent waits between checkpoints [0.5]
#   RUNS                  timed pairs per phase (quiet, busy) [30]; status/diff: RUNS / 3
#   BASELINE_BIN          another agent-workspace binary (e.g. an older release) whose warm
#                         run is timed in the same rounds, quiet and busy [none]
#   KEEP_SCRATCH=1        keep the scratch directory
set -euo pipefail
export LC_ALL=C
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
project=$(cd "$here/.." && pwd -P)
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
FILES=${FILES:-20000 50000}
AGENTS=${AGENTS:-8}
AGENT_PAUSE=${AGENT_PAUSE:-0.5}
RUNS=${RUNS:-30}
for tool in jj direnv awk; do
    command -v "$tool" >/dev/null || { echo "busy.sh: $tool is not on PATH" >&2; exit 1; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/aw-busy-bench.XXXXXX")
scratch=$(cd "$scratch" && pwd -P)
agents_pids=()
stop_agents() {
    local pid
    for pid in "${agents_pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    for pid in "${agents_pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    agents_pids=()
}
cleanup() {
    stop_agents
    [[ ${KEEP_SCRATCH:-} == 1 ]] && echo "kept $scratch" >&2 || rm -rf "$scratch"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bin=$(release_binary "$scratch" "$project")
JJ=$(command -v jj)
while IFS= read -r var; do
    case $var in AGENT_WORKSPACE_* | DIRENV_*) unset "$var" ;; esac
done < <(compgen -e)
export HOME=$scratch/home XDG_CACHE_HOME=$scratch/cache XDG_CONFIG_HOME=$scratch/config
export XDG_DATA_HOME=$scratch/data XDG_STATE_HOME=$scratch/state JJ_CONFIG=$scratch/jj.toml
export AI_WORKSPACES_ROOT=$scratch/workspaces DIRENV_LOG_FORMAT=
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$AI_WORKSPACES_ROOT"
printf '[user]\nname = "Bench"\nemail = "bench@example.invalid"\n' >"$JJ_CONFIG"
say() { printf '==> %s\n' "$*" >&2; }
# time_us CMD...: one run of CMD (output discarded, failure fatal); its wall time in µs in US.
time_us() {
    local s=${EPOCHREALTIME/./}
    "$@" >/dev/null 2>"$scratch/err" || { cat "$scratch/err" >&2; exit 1; }
    US=$((${EPOCHREALTIME/./} - s))
}
median() { sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
ops() { "$JJ" -R "$1" --ignore-working-copy op log --no-graph -T '"x\n"' | wc -l; }

# pairs REPO NAME OURS... :: FLOOR... [:: BASELINE...]: RUNS rounds, each timing every
# command once, the order rotated every round; prints "NAME ours_ms floor_ms ratio
# pair_ratio baseline_ms baseline_pair_ratio jj_ops_during rounds load1": medians of the
# samples, the ratio of the medians and the median of the per-round ratios to the floor.
pairs() {
    local repo=$1 name=$2 n=$RUNS
    shift 2
    local cmds=() k=0 arg
    for arg in "$@"; do
        if [[ $arg == :: ]]; then k=$((k + 1)); continue; fi
        cmds[k]+="${cmds[k]:+$'\x1f'}$arg"
    done
    [[ $name == *status* || $name == *diff* ]] && n=$(((RUNS + 2) / 3))
    local before i j c
    for ((c = 0; c <= k; c++)); do : >"$scratch/$name.$c"; done
    before=$(ops "$repo")
    for ((i = 0; i < n; i++)); do
        for ((j = 0; j <= k; j++)); do
            c=$(((i + j) % (k + 1)))
            IFS=$'\x1f' read -r -a argv <<<"${cmds[c]}"
            time_us "${argv[@]}"
            echo "$US" >>"$scratch/$name.$c"
        done
    done
    local med=() pair=()
    for ((c = 0; c <= k; c++)); do
        med[c]=$(median <"$scratch/$name.$c")
        pair[c]=$(paste "$scratch/$name.$c" "$scratch/$name.1" |
            awk '{ printf "%.0f\n", $1 / $2 * 1000000 }' | median)
    done
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${med[0]}" "${med[1]}" \
        "$(ratio "${med[0]}" "${med[1]}")" "$(ratio "${pair[0]}" 1000)" "${med[2]:--}" \
        "$([[ -n ${pair[2]:-} ]] && ratio "${pair[2]}" 1000 || echo -)" \
        "$(($(ops "$repo") - before))" "$n" "$(cut -d' ' -f1 /proc/loadavg)"
}

# agent ID: edits a file of its own and checkpoints it, until killed.
agent() {
    local id=$1 ws=$AI_WORKSPACES_ROOT/$2/$1 n=0
    while :; do
        n=$((n + 1))
        echo "edit $n" >>"$ws/agent-$id.txt"
        "$bin" checkpoint "$id" -m "edit $n" >/dev/null 2>&1 || true
        sleep "$AGENT_PAUSE"
    done
}

bench_size() {
    local files=$1 repo=$scratch/repo-$1
    say "making a jj repository of $files files"
    synthetic_repo "$repo" "$files"
    cd "$repo"
    say "making workspace w and $AGENTS agent workspaces"
    local ws ns
    ws=$("$bin" run w -- pwd 2>/dev/null)
    ns=$(basename "$(dirname "$ws")")
    for ((a = 1; a <= AGENTS; a++)); do "$bin" run "a$a" -- true >/dev/null 2>&1; done
    # Work in w for diff: 20 files changed and 5 new ones, unrecorded.
    for ((i = 0; i < 20; i++)); do echo changed >>"$ws/src/m0/s0/f$i.txt"; done
    for ((i = 0; i < 5; i++)); do echo new >"$ws/new$i.txt"; done
    local base
    base=$("$JJ" -R "$repo" --ignore-working-copy log --no-graph -r 'w@-' -T commit_id)
    "$bin" run w -- true >/dev/null 2>&1
    direnv exec "$ws" true >/dev/null 2>&1

    say "$files files, quiet: $RUNS pairs"
    sync
    sleep 2
    local baseline=()
    [[ -z ${BASELINE_BIN:-} ]] || baseline=(:: "$BASELINE_BIN" run w -- true)
    pairs "$repo" "quiet-warm" "$bin" run w -- true :: direnv exec "$ws" true "${baseline[@]}"
    say "$files files, busy: starting $AGENTS agents"
    for ((a = 1; a <= AGENTS; a++)); do
        agent "a$a" "$ns" &
        agents_pids+=($!)
    done
    sleep 5
    local t0=${EPOCHREALTIME/./} ops0
    ops0=$(ops "$repo")
    pairs "$repo" "busy-warm" "$bin" run w -- true :: direnv exec "$ws" true "${baseline[@]}"
    pairs "$repo" "busy-status" "$bin" status :: "$JJ" -R "$repo" --ignore-working-copy \
        workspace list
    pairs "$repo" "busy-diff" "$bin" diff w :: "$JJ" -R "$ws" diff --from "$base" --stat
    local secs
    secs=$(awk -v t="$((${EPOCHREALTIME/./} - t0))" 'BEGIN { printf "%.0f", t / 1e6 }')
    printf 'ops\t%s\t%s\n' "$(($(ops "$repo") - ops0))" "$secs"
    stop_agents
    say "$files files, quiet again: $RUNS pairs"
    sleep 2
    pairs "$repo" "quiet-warm-after" "$bin" run w -- true :: direnv exec "$ws" true \
        "${baseline[@]}"
    cd "$scratch"
    rm -rf "$repo" "${AI_WORKSPACES_ROOT:?}/$ns"
}

say "$(uname -srm), $(nproc) cores, $("$JJ" --version), direnv $(direnv version)"
say "started $(date -u +%Y-%m-%dT%H:%M:%SZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
for files in $FILES; do
    echo "# $files files, $AGENTS agents pausing ${AGENT_PAUSE}s between checkpoints"
    printf '# %s\n' "case	ours_ms	floor_ms	ratio	pair_ratio	baseline_ms	baseline_pair_ratio	jj_ops_during	rounds	load1"
    bench_size "$files"
done
say "ended $(date -u +%Y-%m-%dT%H:%M:%SZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
