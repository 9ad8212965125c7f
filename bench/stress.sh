#!/usr/bin/env bash
# Stress agent-workspace beyond what `cargo test` runs: many concurrent runs on one repository,
# many runs queued on one workspace, and kill storms against running supervisors. Prints what
# held as a markdown table. Usage: bench/stress.sh [ROUNDS]
# (env: N=64 parallel runs; BACKEND=jj or git, the backend of the scratch repository)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

rounds=${1:-3}
n=${N:-64}
backend=${BACKEND:-jj}
if [[ -z "${AGENT_WORKSPACE_BIN:-}" ]]; then
    cargo build --release --locked --quiet
    AGENT_WORKSPACE_BIN="$PWD/target/release/agent-workspace"
fi
aw=$AGENT_WORKSPACE_BIN

scratch=$(mktemp -d "${TMPDIR:-/tmp}/agent-workspace-stress.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
export HOME="$scratch/home" XDG_CONFIG_HOME="$scratch/config" XDG_DATA_HOME="$scratch/data"
export XDG_CACHE_HOME="$scratch/cache" XDG_STATE_HOME="$scratch/state"
export JJ_CONFIG="$scratch/jj.toml" AI_WORKSPACES_ROOT="$scratch/workspaces"
unset AGENT_WORKSPACE_ID AGENT_WORKSPACE_PATH AGENT_WORKSPACE_BACKEND DIRENV_DIR DIRENV_DIFF
mkdir -p "$HOME"
printf '[user]\nname = "Stress"\nemail = "stress@example.com"\n' >"$JJ_CONFIG"
printf '[user]\n\tname = Stress\n\temail = stress@example.com\n' >"$HOME/.gitconfig"

repo="$scratch/repo"
mkdir -p "$repo"
cd "$repo"
for i in $(seq 1 50); do echo "file $i" >"f$i.txt"; done
echo 'export STRESS=1' >.envrc
if [[ "$backend" == git ]]; then
    git init --quiet
    git add -A
    git commit --quiet -m "stress fixture"
else
    jj git init --quiet
    jj commit --quiet -m "stress fixture"
fi

results=()
record() { results+=("| $1 | $2 | $3 |"); }
valid_records() {
    local bad=0 f
    for f in "$AI_WORKSPACES_ROOT"/*/*/.agent-workflow.json; do
        [[ -e "$f" ]] || continue
        python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$f" 2>/dev/null || bad=$((bad + 1))
    done
    echo "$bad"
}
registered() {
    if [[ "$backend" == git ]]; then
        git worktree list --porcelain | grep -c '^branch refs/heads/agent-workspace/' || true
    else
        jj workspace list -T 'name ++ "\n"' | grep -c -v '^default$' || true
    fi
}
healthy() {
    if [[ "$backend" == git ]]; then git status >/dev/null 2>&1; else jj status >/dev/null 2>&1; fi
}

# 1. N concurrent cold runs with distinct ids, round after round.
for round in $(seq 1 "$rounds"); do
    start=$(date +%s%N)
    pids=()
    for i in $(seq 1 "$n"); do
        "$aw" run "p$round-$i" -- sh -c 'test "$STRESS" = 1' >/dev/null 2>"$scratch/err.$i" & pids+=($!)
    done
    ok=0
    for pid in "${pids[@]}"; do wait "$pid" && ok=$((ok + 1)); done
    ms=$((($(date +%s%N) - start) / 1000000))
    healthy=yes; healthy || healthy=no
    done_count=$("$aw" status --json | python3 -c 'import json,sys; print(sum(w["status"]=="done" for w in json.load(sys.stdin)["workspaces"]))')
    record "round $round: $n concurrent cold runs" "$ok/$n exit 0, $(registered) registered, $done_count done, $(valid_records) invalid records, main workspace healthy: $healthy" "${ms} ms wall"
    "$aw" clean --all >/dev/null
    left=$(registered)
    record "round $round: clean --all" "$left workspaces left registered, $(find "$AI_WORKSPACES_ROOT" -mindepth 2 -maxdepth 2 ! -name '.*' | wc -l) directories left" ""
done

# 2. N runs queued on one workspace with --wait: a non-atomic counter must reach N.
"$aw" run shared -- sh -c 'echo 0 > counter'
start=$(date +%s%N)
pids=()
for i in $(seq 1 "$n"); do
    "$aw" run shared --wait -- sh -c 'c=$(cat counter); sleep 0.01; echo $((c + 1)) > counter' & pids+=($!)
done
ok=0
for pid in "${pids[@]}"; do wait "$pid" && ok=$((ok + 1)); done
ms=$((($(date +%s%N) - start) / 1000000))
count=$(cat "$AI_WORKSPACES_ROOT"/*/shared/counter)
runs=$("$aw" status shared --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)["record"]["runs"]))')
record "$n runs of one id with --wait" "$ok/$n exit 0, counter $count/$n (no two ran at once), history kept $runs runs (bounded at 50)" "${ms} ms wall"

# 3. Kill storm: half the supervisors get SIGKILL, half SIGTERM, mid-run.
half=$((n / 2))
pids=()
for i in $(seq 1 "$n"); do
    "$aw" run "k$i" -- sleep 30 >/dev/null 2>&1 & pids+=($!)
done
# Wait until every run is recorded as running.
for _ in $(seq 1 600); do
    running=$("$aw" status --json | python3 -c 'import json,sys; print(sum(w["status"]=="running" for w in json.load(sys.stdin)["workspaces"]))')
    [[ "$running" -ge "$n" ]] && break
    sleep 0.1
done
for i in $(seq 0 $((n - 1))); do
    if ((i < half)); then kill -KILL "${pids[$i]}"; else kill -TERM "${pids[$i]}"; fi
done
term_codes=0
for i in $(seq 0 $((n - 1))); do
    code=0; wait "${pids[$i]}" 2>/dev/null || code=$?
    ((i >= half && code == 143)) && term_codes=$((term_codes + 1))
done
sleep 0.5
summary=$("$aw" status --json | python3 -c '
import json,sys
ws=[w for w in json.load(sys.stdin)["workspaces"] if w["workspace_id"].startswith("k")]
print(sum(w["status"]=="crashed" for w in ws), sum(w["status"]=="interrupted" for w in ws), sum(w["status"]=="running" for w in ws))')
read -r crashed interrupted still_running <<<"$summary"
orphans=$(pgrep -f 'sleep 30' | wc -l || true)
record "kill storm: $half SIGKILL + $((n - half)) SIGTERM" "$crashed/$half crashed, $interrupted/$((n - half)) interrupted (exit 143: $term_codes), $still_running still shown running, $orphans commands left running" ""
ok=0
for i in $(seq 1 "$n"); do "$aw" run "k$i" -- true >/dev/null 2>&1 && ok=$((ok + 1)); done
record "re-run after the storm" "$ok/$n crashed or interrupted workspaces ran again" ""
"$aw" clean --all >/dev/null
record "final clean --all" "$(registered) registered, $(valid_records) invalid records, main healthy: $(healthy && echo yes || echo no)" ""

echo "Backend: $backend"
echo
echo "| case | what held | time |"
echo "|---|---|---|"
printf '%s\n' "${results[@]}"
