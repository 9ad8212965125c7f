#!/usr/bin/env bash
# Stress agent-workspace beyond what `cargo test` runs: many concurrent runs on one repository,
# many runs queued on one workspace, kill storms against running supervisors, and a hostile
# round of agents that write what no commit keeps, tamper and leave daemons (section 4), and the
# pool of prepared workspaces under concurrent takes and a kill storm (section 5). Prints what
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
trap 'pkill -f hostile-daemon 2>/dev/null || true; [[ -n "${KEEP_SCRATCH:-}" ]] || rm -rf "$scratch"' EXIT
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
    "$aw" run "k$i" -- sleep 30 >/dev/null 2>"$scratch/kerr.$i" & pids+=($!)
done
# Wait until every run is recorded as running.
for _ in $(seq 1 600); do
    running=$("$aw" status --json | python3 -c 'import json,sys; print(sum(w["status"]=="running" for w in json.load(sys.stdin)["workspaces"]))')
    [[ "$running" -ge "$n" ]] && break
    sleep 0.1
done
early=0
for i in $(seq 0 $((n - 1))); do
    if ((i < half)); then sig=KILL; else sig=TERM; fi
    if ! kill -"$sig" "${pids[$i]}" 2>/dev/null; then
        early=$((early + 1))
        echo "stress: run k$((i + 1)) ended before the kill storm: $(head -n 3 "$scratch/kerr.$((i + 1))")" >&2
    fi
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
record "kill storm: $half SIGKILL + $((n - half)) SIGTERM" "$early ended before the signal, $crashed/$half crashed, $interrupted/$((n - half)) interrupted (exit 143: $term_codes), $still_running still shown running, $orphans commands left running" ""
ok=0
for i in $(seq 1 "$n"); do "$aw" run "k$i" -- true >/dev/null 2>&1 && ok=$((ok + 1)); done
record "re-run after the storm" "$ok/$n crashed or interrupted workspaces ran again" ""
"$aw" clean --all >/dev/null
record "final clean --all" "$(registered) registered, $(valid_records) invalid records, main healthy: $(healthy && echo yes || echo no)" ""

# 4. Hostile round: agents that write what no commit keeps (big, ignored and nested-repository
# files), move HEAD away from their branch or commit and start anew, tamper with their records,
# leave daemons behind and get SIGKILLed, then bulk clean. Every file they wrote must end up in a
# commit or in a kept-aside directory: zero lost, no survivor, nothing outside the root touched.
outside="$scratch/outside"
mkdir -p "$outside"
echo untouched >"$outside/canary"
m=$((n / 4))
hostile_agent() {
    local i=$1
    cat <<EOF
set -e
printf 'hostile-$i-tracked\n' >tracked-$i.txt
head -c 2097152 /dev/zero | tr '\0' x >big-$i.bin && printf 'hostile-$i-big\n' >>big-$i.bin
printf 'hostile-$i-ignored\n' >.env
mkdir -p nested-$i && (cd nested-$i && git init -q && printf 'hostile-$i-nested\n' >n.txt && git add n.txt && git -c user.name=a -c user.email=a@b commit -qm nested)
if [ "$backend" = git ]; then
    git add -A && git commit -qm "agent $i work" && git checkout -q --detach && printf 'hostile-$i-detached\n' >detached-$i.txt && git add detached-$i.txt && git commit -qm detached
else
    jj commit -m "agent $i work" >/dev/null 2>&1 && printf 'hostile-$i-after-commit\n' >later-$i.txt
fi
python3 - <<PY
import json, os
p = os.environ["AGENT_WORKSPACE_METADATA"]
r = json.load(open(p))
r["workspace_path"] = "$outside"
r["base_envrc_sha256"] = "0" * 64
r["backend"] = "git" if r.get("backend") == "jj" else "jj"
json.dump(r, open(p, "w"))
PY
(setsid sh -c 'while :; do printf "hostile-daemon\n" >>daemon-$i.log; sleep 0.05; done' </dev/null >/dev/null 2>&1 &)
exec sleep 30
EOF
}
printf '.env\n' >>"$repo/.git/info/exclude"
pids=()
for i in $(seq 1 "$m"); do
    "$aw" run "h$i" -- sh -c "$(hostile_agent "$i")" >/dev/null 2>"$scratch/herr.$i" & pids+=($!)
done
for _ in $(seq 1 600); do
    ready=$(find "$AI_WORKSPACES_ROOT" -mindepth 3 -maxdepth 3 -name 'daemon-*.log' | wc -l)
    [[ "$ready" -ge "$m" ]] && break
    sleep 0.1
done
for pid in "${pids[@]}"; do kill -KILL "$pid" 2>/dev/null || true; done
for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
"$aw" clean --all --force --json >"$scratch/hostile-clean.json" 2>"$scratch/hostile-clean.err" || true
sleep 0.5
survivors=$(pgrep -f 'hostile-daemon' | wc -l || true)
kinds=(tracked big ignored nested)
if [[ "$backend" == git ]]; then kinds+=(detached); else kinds+=(after-commit); fi
if [[ "$backend" == git ]]; then
    mapfile -t all_commits < <(git rev-list --all)
else
    mapfile -t all_commits < <(jj log -r 'all() ~ root()' --no-graph -T 'commit_id ++ "\n"' 2>/dev/null)
fi
found=0 kept=0 lost=0 lost_list=()
for i in $(seq 1 "$m"); do
    for kind in "${kinds[@]}"; do
        pattern="hostile-$i-$kind"
        if git grep -q -F -e "$pattern" "${all_commits[@]}" -- 2>/dev/null; then
            found=$((found + 1))
        elif grep -r -q -F -e "$pattern" "$AI_WORKSPACES_ROOT"/*/.kept 2>/dev/null; then
            kept=$((kept + 1))
        else
            lost=$((lost + 1))
            lost_list+=("$pattern")
        fi
    done
done
kept_files=$( (find "$AI_WORKSPACES_ROOT"/*/.kept -type f 2>/dev/null || true) | wc -l)
kept_bytes=$( (du -sb "$AI_WORKSPACES_ROOT"/*/.kept 2>/dev/null || true) | awk '{s += $1} END {print s + 0}')
canary=CHANGED
[[ "$(cat "$outside/canary")" == untouched && $(ls -A "$outside" | wc -l) -eq 1 ]] && canary=untouched
left=$(find "$AI_WORKSPACES_ROOT" -mindepth 2 -maxdepth 2 -name 'h*' | wc -l)
total=$((m * ${#kinds[@]}))
record "hostile: $m agents SIGKILLed, then clean --all --force" "$((found + kept))/$total files accounted for ($found in commits, $kept kept aside: $kept_files files, $kept_bytes bytes), $lost lost${lost_list:+ (${lost_list[*]})}, $survivors daemons survived, outside dir $canary, $left workspaces left" ""
[[ "$lost" -eq 0 && "$survivors" -eq 0 && "$canary" == untouched ]] || hostile_failed=1

# 5. Pool: N concurrent runs taking prepared workspaces while the background refill works,
# then a kill storm on runs that are taking them; afterwards every id runs, no take is left
# half done and no prepared workspace is incomplete.
"$aw" clean --all --force >/dev/null 2>&1 || true
mkdir -p "$XDG_CONFIG_HOME/agent-workspace"
printf '[pool]\nsize = 8\n' >"$XDG_CONFIG_HOME/agent-workspace/config.toml"
"$aw" pool fill >/dev/null
pool_json() { "$aw" pool status --json; }
settle_pool() { # waits for the background refill, at most a minute
    local i
    for i in $(seq 1 600); do
        [[ $(pool_json | python3 -c 'import json,sys; print(json.load(sys.stdin)["filling"])') == False ]] && return
        sleep 0.1
    done
}
start=$(date +%s%N)
pids=()
for i in $(seq 1 "$n"); do
    "$aw" run "q$i" -- sh -c 'test "$STRESS" = 1' >/dev/null 2>"$scratch/qerr.$i" & pids+=($!)
done
ok=0
for pid in "${pids[@]}"; do wait "$pid" && ok=$((ok + 1)); done
ms=$((($(date +%s%N) - start) / 1000000))
settle_pool
q_done=$("$aw" status --json | python3 -c 'import json,sys; print(sum(w["status"]=="done" and w["workspace_id"].startswith("q") for w in json.load(sys.stdin)["workspaces"]))')
record "pool: $n concurrent runs taking prepared workspaces, refill in the background" "$ok/$n exit 0, $q_done done" "${ms} ms wall"
pids=()
for i in $(seq 1 "$n"); do
    "$aw" run "t$i" -- sleep 30 >/dev/null 2>&1 & pids+=($!)
done
sleep 0.5
for pid in "${pids[@]::$half}"; do kill -KILL "$pid" 2>/dev/null || true; done
for pid in "${pids[@]:$half}"; do kill -TERM "$pid" 2>/dev/null || true; done
for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
again=0
for i in $(seq 1 "$n"); do "$aw" run "t$i" -- true >/dev/null 2>&1 && again=$((again + 1)); done
settle_pool
takings=$( (ls "$AI_WORKSPACES_ROOT"/*/.pool/*.taking 2>/dev/null || true) | wc -l)
incomplete=$(pool_json | python3 -c 'import json,sys; print(sum(e["state"]=="incomplete" for e in json.load(sys.stdin)["entries"]))')
problems=$("$aw" status --json | python3 -c 'import json,sys; print(sum(w["problem"] is not None for w in json.load(sys.stdin)["workspaces"]))')
record "pool: $n runs taking prepared workspaces, half SIGKILLed and half SIGTERMed" "$again/$n ids run afterwards, $takings takes left half done, $incomplete incomplete prepared workspaces after the next fill, $problems workspaces with a problem" ""
"$aw" pool fill >/dev/null 2>&1 || true
incomplete=$(pool_json | python3 -c 'import json,sys; print(sum(e["state"]=="incomplete" for e in json.load(sys.stdin)["entries"]))')
"$aw" clean --all --force >/dev/null 2>&1 || true
"$aw" pool drain >/dev/null
left=$(registered)
record "pool: pool fill, clean --all --force, pool drain" "$incomplete incomplete after the fill, $left workspaces left registered" ""
[[ "$ok" -eq "$n" && "$again" -eq "$n" && "$takings" -eq 0 && "$incomplete" -eq 0 && "$left" -eq 0 ]] || pool_failed=1

echo "Backend: $backend"
echo
echo "| case | what held | time |"
echo "|---|---|---|"
printf '%s\n' "${results[@]}"
if [[ -n "${pool_failed:-}" ]]; then
    echo "stress: a pooled run failed, a take was left half done or a prepared workspace incomplete" >&2
    exit 1
fi
if [[ -n "${hostile_failed:-}" ]]; then
    echo "stress: the hostile round lost files, left survivors or touched the outside dir" >&2
    exit 1
fi
