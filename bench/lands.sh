#!/usr/bin/env bash
# The "agents landing together" case of docs/benchmarks.md: AGENTS workspaces, each with one
# new file of its own, land at the same moment; then the same number land one after another.
# Prints the wall time of both, how many landed, and checks what must hold: every land that
# said "Landed" has its file in main, main's working-copy change is not divergent (jj) and
# main's working copy holds nothing but what landed.
#
#   bench/lands.sh
#
# Environment (all optional):
#   AGENT_WORKSPACE_BIN   binary to use; default: cargo build --release into a scratch target
#   BACKEND               jj or git [jj]
#   FILES                 files in the synthetic repository [10000]
#   AGENTS                workspaces landing at once [8]
#   ROUNDS                rounds of each side [3]
#   KEEP_SCRATCH=1        keep the scratch directory
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
project=$(cd "$here/.." && pwd -P)
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
BACKEND=${BACKEND:-jj}
FILES=${FILES:-10000}
AGENTS=${AGENTS:-8}
ROUNDS=${ROUNDS:-3}
for tool in jj git direnv awk; do
    command -v "$tool" >/dev/null || { echo "lands.sh: $tool is not on PATH" >&2; exit 1; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/aw-lands-bench.XXXXXX")
scratch=$(cd "$scratch" && pwd -P)
[[ ${KEEP_SCRATCH:-} == 1 ]] || trap 'rm -rf "$scratch"' EXIT
bin=$(release_binary "$scratch" "$project")
isolated_home "$scratch"
export AI_WORKSPACES_ROOT=$scratch/workspaces
repo=$scratch/repo
case $BACKEND in
    jj) synthetic_repo "$repo" "$FILES" ;;
    git) make_git_repo "$repo" "$FILES" ;;
    *) echo "lands.sh: BACKEND is jj or git, not $BACKEND" >&2; exit 2 ;;
esac
cd "$repo"

now() { date +%s.%N; }

# agents ROUND: AGENTS workspaces r<ROUND>-<n>, each of whose runs wrote its own file.
agents() {
    local n
    for ((n = 1; n <= AGENTS; n++)); do
        "$bin" run "r$1-$n" --no-direnv -- sh -c "echo r$1-$n > r$1-$n.txt" >/dev/null
    done
}

# check ROUND: every workspace of the round landed, its file in main; main not divergent.
check() {
    local n id landed=0
    for ((n = 1; n <= AGENTS; n++)); do
        id=r$1-$n
        if grep -q '^Landed ' "$scratch/out-$id"; then
            [[ $(cat "$id.txt") == "$id" ]] || { echo "lands.sh: $id said Landed, its file is not in main" >&2; exit 1; }
            landed=$((landed + 1))
        fi
    done
    if [[ $BACKEND == jj ]]; then
        [[ -z $(jj log --no-graph -r 'all()' -T 'if(divergent, change_id ++ "\n")') ]] ||
            { echo "lands.sh: main's change is divergent" >&2; exit 1; }
        [[ -z $(jj diff --name-only) ]] || { echo "lands.sh: main's working copy changed" >&2; exit 1; }
    else
        [[ -z $(git status --porcelain) ]] || { echo "lands.sh: main's working copy changed" >&2; exit 1; }
    fi
    echo "$landed"
}

printf '%-10s %-8s %6s %8s %10s\n' backend side round landed seconds
round=0
for ((r = 1; r <= ROUNDS; r++)); do
    for side in together sequence; do
        round=$((round + 1))
        agents "$round"
        start=$(now)
        if [[ $side == together ]]; then
            pids=()
            for ((n = 1; n <= AGENTS; n++)); do
                "$bin" land "r$round-$n" >"$scratch/out-r$round-$n" 2>&1 &
                pids+=($!)
            done
            for pid in "${pids[@]}"; do wait "$pid" || true; done
        else
            for ((n = 1; n <= AGENTS; n++)); do
                "$bin" land "r$round-$n" >"$scratch/out-r$round-$n" 2>&1 || true
            done
        fi
        end=$(now)
        landed=$(check "$round")
        printf '%-10s %-8s %6d %5d/%-2d %10.2f\n' "$BACKEND" "$side" "$round" "$landed" "$AGENTS" \
            "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')"
        [[ $landed == "$AGENTS" ]] || { echo "lands.sh: only $landed of $AGENTS landed" >&2; exit 1; }
    done
done
