#!/usr/bin/env bash
# Every target of a busy repository side by side in one run, for each repository size: the
# busy-repository case of docs/benchmarks.md (N agents, 8 by default, each looping "edit a
# file, `agent-workspace checkpoint`" in their own workspaces of one jj repository, while a
# further workspace's warm `run w -- true` is timed against `direnv exec <ws> true` in the
# same minutes, the two alternating run by run; the same pairs with the agents stopped, the
# quiet repository; `status` and `diff` under the load), then, with the agents stopped:
# `clean` of a fresh workspace against `jj workspace forget` + `rm -rf` of an identical one;
# git `diff` in a git repository of the same files (two worktrees of 100 changed files: 5
# untracked, and 15 untracked beside 15 deleted) against `git diff --stat <base>` + `git
# ls-files --others --exclude-standard`, and the second shape also against git's own pairing
# of untracked files with deleted ones (`git add -N .` to a copy of the index, then `git diff
# --stat <base>`), which that floor leaves out and `diff` does; and `status` with STATUS_N (1,000) workspaces
# against 10 (bench/status_cpu.sh's two 1,000-file repositories, made once: `status` reads
# no files, so the size does not matter to it), CPU time and peak RSS.
#
#   bench/busy.sh                       # 20,000 and 50,000 files, ~35-45 min on 2 busy cores
#   FILES=2000 RUNS=6 CLEAN_RUNS=2 STATUS_N=30 STATUS_ROUNDS=3 bench/busy.sh   # a quick check
#   CASES=warm bench/busy.sh            # the busy-repository case alone, ~13 min
#
# Each size prints its raw figures (tab-separated, medians in ms), then a markdown table: case,
# metric, ours, floor, ratio, target, met, load (1-minute average at the end of the case;
# agents running), command. Where two rows measure one case, the first decides "met" and the
# second's verdict is in parentheses. Wall times are medians of the rounds; "pair" ratios
# the median of the per-round ratios (ours and the floor alternate, the order rotating, so a
# change of load hits both). CPU time is user + system of the command and its waited-for
# children (bash's `times`, in 1 ms steps), which load slows but does not inflate.
#
# Environment (all optional):
#   AGENT_WORKSPACE_BIN   binary to use; default: cargo build --release into a scratch target
#   FILES                 repository sizes in files, one run each ["20000 50000"]
#   CASES                 parts to run ["warm clean gitdiff status"]: warm is the busy case
#   AGENTS                busy agents [8]
#   AGENT_PAUSE           seconds each agent waits between checkpoints [0.5]
#   RUNS                  timed pairs per warm phase (quiet, busy) and per git diff shape [30];
#                         status and jj diff under load: RUNS / 3
#   CLEAN_RUNS            cleans per side (a fresh workspace each) [5]
#   STATUS_N              workspaces of the big status repository [1000]
#   STATUS_ROUNDS         rounds of bench/status_cpu.sh cpu at each size [10]
#   STATUS_DIR            a directory already made by `bench/status_cpu.sh setup` (kept);
#                         default: made in the scratch directory (~3-10 min for 1,000)
#   BASELINE_BIN          another agent-workspace binary (e.g. an older release) whose warm
#                         run is timed in the same rounds, quiet and busy [none]
#   KEEP_SCRATCH=1        keep the scratch directory
set -Eeuo pipefail
trap 'echo "busy.sh: line $LINENO: status $? from: $BASH_COMMAND" >&2' ERR
export LC_ALL=C
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
    sed -n '2,/^set -Eeuo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
project=$(cd "$here/.." && pwd -P)
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
FILES=${FILES:-20000 50000}
CASES=${CASES:-warm clean gitdiff status}
AGENTS=${AGENTS:-8}
AGENT_PAUSE=${AGENT_PAUSE:-0.5}
RUNS=${RUNS:-30}
CLEAN_RUNS=${CLEAN_RUNS:-5}
STATUS_N=${STATUS_N:-1000}
STATUS_ROUNDS=${STATUS_ROUNDS:-10}
wants() { [[ " $CASES " == *" $1 "* ]]; } # wants CASE: whether CASES names it
for case in $CASES; do
    [[ $case =~ ^(warm|clean|gitdiff|status)$ ]] || {
        echo "busy.sh: unknown case $case in CASES (warm clean gitdiff status)" >&2
        exit 2
    }
done
for tool in jj direnv awk git sha256sum perf /usr/bin/time; do
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
    if [[ ${KEEP_SCRATCH:-} == 1 ]]; then echo "kept $scratch" >&2; else rm -rf "$scratch"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
bin=$(release_binary "$scratch" "$project")
JJ=$(command -v jj)
isolated_home "$scratch"
export AI_WORKSPACES_ROOT=$scratch/workspaces
export GIT_CONFIG_GLOBAL=$scratch/gitconfig GIT_CONFIG_NOSYSTEM=1
mkdir -p "$AI_WORKSPACES_ROOT"
printf '[user]\n\tname = Bench\n\temail = bench@example.invalid\n' >"$GIT_CONFIG_GLOBAL"
say() { printf '==> %s\n' "$*" >&2; }
# must CMD...: runs CMD, its output in the scratch log; on failure shows the log's tail and stops.
must() {
    "$@" >>"$scratch/log" 2>&1 || {
        tail -n 20 "$scratch/log" >&2
        echo "busy.sh: failed: $*" >&2
        exit 1
    }
}
# children_us FILE: the children's user + system time in FILE (bash's `times` output) in µs, in CH.
children_us() {
    local u s t
    { read -r _ && read -r u s; } <"$1"
    CH=0
    for t in "$u" "$s"; do
        [[ $t =~ ^([0-9]+)m([0-9]+)\.([0-9]{3})s$ ]] || {
            echo "busy.sh: unexpected output of times: $t" >&2
            exit 1
        }
        CH=$((CH + (BASH_REMATCH[1] * 60 + 10#${BASH_REMATCH[2]}) * 1000000 + 10#${BASH_REMATCH[3]} * 1000))
    done
}
# time_us CMD...: one run of CMD (output discarded, failure fatal): its wall time in µs in US,
# the user + system CPU time of it and its children in µs in CUS.
time_us() {
    times >"$scratch/times.0"
    local s=${EPOCHREALTIME/./} before
    "$@" >/dev/null 2>"$scratch/err" || {
        cat "$scratch/err" >&2
        echo "busy.sh: failed: $*" >&2
        exit 1
    }
    US=$((${EPOCHREALTIME/./} - s))
    times >"$scratch/times.1"
    children_us "$scratch/times.0"
    before=$CH
    children_us "$scratch/times.1"
    CUS=$((CH - before))
}
median() { sort -n | awk '{ a[NR] = $1 } END { printf "%.1f", a[int((NR + 1) / 2)] / 1000 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
ops() { "$JJ" -R "$1" --ignore-working-copy op log --no-graph -T '"x\n"' | wc -l; }
load1() { cut -d' ' -f1 /proc/loadavg; }

# pairs REPO NAME ROUNDS OURS... :: FLOOR... [:: BASELINE...]: ROUNDS rounds, each timing
# every command once, the order rotated every round; prints "NAME ours_ms floor_ms ratio
# pair_ratio baseline_ms baseline_pair_ratio ours_cpu_ms floor_cpu_ms cpu_pair_ratio
# jj_ops_during rounds load1": medians of the samples, the ratio of the medians and the
# median of the per-round ratios to the floor; the same in WALL (ours floor pair) and CPU
# (ours floor pair). REPO is a jj repository whose operations are counted, or -. Before
# each round, $PREPARE ROUND is called if set; @I@ in an argument is the round's number.
pairs() {
    local repo=$1 name=$2 n=$3
    shift 3
    local cmds=() k=0 arg
    for arg in "$@"; do
        if [[ $arg == :: ]]; then k=$((k + 1)); continue; fi
        cmds[k]+="${cmds[k]:+$'\x1f'}$arg"
    done
    local before=- i j c argv
    for ((c = 0; c <= k; c++)); do : >"$scratch/$name.$c" && : >"$scratch/$name.$c.cpu"; done
    [[ $repo == - ]] || before=$(ops "$repo")
    for ((i = 0; i < n; i++)); do
        [[ -z ${PREPARE:-} ]] || "$PREPARE" "$i"
        for ((j = 0; j <= k; j++)); do
            c=$(((i + j) % (k + 1)))
            IFS=$'\x1f' read -r -a argv <<<"${cmds[c]}"
            time_us "${argv[@]//@I@/$i}"
            echo "$US" >>"$scratch/$name.$c"
            echo "$CUS" >>"$scratch/$name.$c.cpu"
        done
    done
    local med=() pair=() cmed=() cpair during=-
    [[ $repo == - ]] || during=$(($(ops "$repo") - before))
    for ((c = 0; c <= k; c++)); do
        med[c]=$(median <"$scratch/$name.$c")
        cmed[c]=$(median <"$scratch/$name.$c.cpu")
        pair[c]=$(paste "$scratch/$name.$c" "$scratch/$name.1" |
            awk '{ printf "%.0f\n", $1 / $2 * 1000000 }' | median)
    done
    # A floor's CPU time can read 0 (1 ms steps): such rounds have no ratio.
    cpair=$(paste "$scratch/$name.0.cpu" "$scratch/$name.1.cpu" |
        awk '$2 > 0 { printf "%.0f\n", $1 / $2 * 1000000 }' | median)
    WALL=("${med[0]}" "${med[1]}" "$(ratio "${pair[0]}" 1000)")
    CPU=("${cmed[0]}" "${cmed[1]}" "$(ratio "$cpair" 1000)")
    LOAD=$(load1)
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "${med[0]}" \
        "${med[1]}" "$(ratio "${med[0]}" "${med[1]}")" "${WALL[2]}" "${med[2]:--}" \
        "$([[ -n ${pair[2]:-} ]] && ratio "${pair[2]}" 1000 || echo -)" "${CPU[@]}" \
        "$during" "$n" "$LOAD"
}

# row CASE METRIC OURS FLOOR RATIO TARGET DECIDES COMMAND: a line of the size's table. met
# compares RATIO (OURS where RATIO is -) with TARGET's number; in parentheses unless DECIDES.
row() {
    local met=- target=$6
    if [[ $target != - ]]; then
        met=$(awk -v r="$([[ $5 == - ]] && echo "$3" || echo "$5")" -v t="$target" \
            'BEGIN { print (r + 0 <= t + 0) ? "yes" : "no" }')
        [[ $7 == 1 ]] || met="($met)"
        target="≤ $target"
    fi
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$3" "$4" "$5" \
        "$target" "$met" "$LOAD" "$8" >>"$table"
}
# pair_rows CASE TARGET DECIDES COMMAND: the wall and CPU rows of the last pairs, DECIDES
# (wall or cpu) the one that decides met.
pair_rows() {
    local w=0 c=0
    [[ $3 == wall ]] && w=1 || c=1
    local wall="wall, median; ratio: median of per-round ratios"
    local cpu="CPU (user + sys, children), median; ratio: median of per-round ratios"
    if ((w)); then
        row "$1" "$wall" "${WALL[0]} ms" "${WALL[1]} ms" "${WALL[2]}x" "$2" 1 "$4"
        row "$1" "$cpu" "${CPU[0]} ms" "${CPU[1]} ms" "${CPU[2]}x" "$2" 0 "$4"
    else
        row "$1" "$cpu" "${CPU[0]} ms" "${CPU[1]} ms" "${CPU[2]}x" "$2" 1 "$4"
        row "$1" "$wall" "${WALL[0]} ms" "${WALL[1]} ms" "${WALL[2]}x" "$2" 0 "$4"
    fi
}
# shown ARGS...: a command as the table shows it (an argument with other characters than
# letters, digits and _./@:=,+- in single quotes): `agent-workspace` for the binary, `jj`,
# $SCRATCH for the scratch directory.
shown() {
    local a s=""
    for a in "$@"; do
        [[ $a =~ ^[A-Za-z0-9_./@:=,+-]+$ ]] || a="'$a'"
        s+="${s:+ }$a"
    done
    s=${s//"$bin"/agent-workspace}
    s=${s//"$JJ"/jj}
    # shellcheck disable=SC2016 # backquotes, for markdown
    printf '`%s`' "${s//"$scratch"/\$SCRATCH}"
}
# ws_path ID: the path of workspace ID, as its own run reports it (a run: made if missing).
ws_path() {
    # shellcheck disable=SC2016 # expanded by the inner shell, in the workspace's environment
    "$bin" run "$1" -- sh -c 'printf %s "$AGENT_WORKSPACE_PATH"' 2>>"$scratch/log" || {
        tail -n 20 "$scratch/log" >&2
        echo "busy.sh: failed: run $1" >&2
        exit 1
    }
}

# agent ID NAMESPACE: edits a file of its own and checkpoints it, until killed; a failed
# checkpoint is counted in $scratch/agent-failures.
agent() {
    local id=$1 ws=$AI_WORKSPACES_ROOT/$2/$1 n=0
    while :; do
        n=$((n + 1))
        echo "edit $n" >>"$ws/agent-$id.txt"
        "$bin" checkpoint "$id" -m "edit $n" >/dev/null 2>&1 || echo "$id" >>"$scratch/agent-failures"
        sleep "$AGENT_PAUSE"
    done
}

# bench_warm FILES REPO: the busy-repository case: warm runs quiet, busy (with `status` and
# `diff` under the load) and quiet again.
bench_warm() {
    local files=$1 repo=$2 ws ns a i base
    cd "$repo"
    say "making workspace w and $AGENTS agent workspaces"
    ws=$(ws_path w)
    ns=$(basename "$(dirname "$ws")")
    for ((a = 1; a <= AGENTS; a++)); do must "$bin" run "a$a" -- true; done
    # Work in w for diff: 20 files changed and 5 new ones, unrecorded.
    for ((i = 0; i < 20; i++)); do echo changed >>"$ws/src/m0/s0/f$i.txt"; done
    for ((i = 0; i < 5; i++)); do echo new >"$ws/new$i.txt"; done
    base=$("$JJ" -R "$repo" --ignore-working-copy log --no-graph -r 'w@-' -T commit_id)
    must "$bin" run w -- true
    must direnv exec "$ws" true

    say "$files files, quiet: $RUNS pairs"
    sync
    sleep 2
    local baseline=() warm floor
    [[ -z ${BASELINE_BIN:-} ]] || baseline=(:: "$BASELINE_BIN" run w -- true)
    warm=("$bin" run w -- true) floor=(direnv exec "$ws" true)
    pairs "$repo" quiet-warm "$RUNS" "${warm[@]}" :: "${floor[@]}" "${baseline[@]}"
    pair_rows "warm run, quiet" 1.25x wall "$(shown "${warm[@]}") vs $(shown "${floor[@]}")"
    say "$files files, busy: starting $AGENTS agents"
    : >"$scratch/agent-failures"
    for ((a = 1; a <= AGENTS; a++)); do
        agent "a$a" "$ns" &
        agents_pids+=($!)
    done
    sleep 5
    local t0=${EPOCHREALTIME/./} ops0 loaded=$(((RUNS + 2) / 3))
    ops0=$(ops "$repo")
    pairs "$repo" busy-warm "$RUNS" "${warm[@]}" :: "${floor[@]}" "${baseline[@]}"
    LOAD="$LOAD, $AGENTS agents"
    pair_rows "warm run, busy" 1.3x wall "$(shown "${warm[@]}") vs $(shown "${floor[@]}")"
    local status=("$bin" status) list=("$JJ" -R "$repo" --ignore-working-copy workspace list)
    pairs "$repo" busy-status "$loaded" "${status[@]}" :: "${list[@]}"
    LOAD="$LOAD, $AGENTS agents"
    pair_rows "\`status\`, $((AGENTS + 1)) workspaces, busy" - cpu \
        "$(shown "${status[@]}") vs $(shown "${list[@]}")"
    local diff=("$bin" diff w) jdiff=("$JJ" -R "$ws" diff --from "$base" --stat)
    pairs "$repo" busy-diff "$loaded" "${diff[@]}" :: "${jdiff[@]}"
    LOAD="$LOAD, $AGENTS agents"
    pair_rows "jj \`diff\` of 25 changed files, busy" - cpu \
        "$(shown "${diff[@]}") vs $(shown "${jdiff[@]}")"
    local secs
    secs=$(awk -v t="$((${EPOCHREALTIME/./} - t0))" 'BEGIN { printf "%.0f", t / 1e6 }')
    printf 'ops\t%s\t%s\tfailed checkpoints\t%s\n' "$(($(ops "$repo") - ops0))" "$secs" \
        "$(wc -l <"$scratch/agent-failures")"
    stop_agents
    say "$files files, quiet again: $RUNS pairs"
    sleep 2
    pairs "$repo" quiet-warm-after "$RUNS" "${warm[@]}" :: "${floor[@]}" "${baseline[@]}"
    pair_rows "warm run, quiet again" 1.25x wall "$(shown "${warm[@]}") vs $(shown "${floor[@]}")"
}

# clean_prepare ROUND: a fresh workspace for each side: c<ROUND> by `run`, f<ROUND> by jj.
clean_prepare() {
    must "$bin" run "c$1" -- true
    must "$JJ" --quiet workspace add --name "f$1" "$scratch/floor/f$1"
    sync
}

# bench_clean FILES REPO: `clean` of a fresh workspace against `jj workspace forget` +
# `rm -rf` of an identical one, in the repository's main workspace.
bench_clean() {
    local files=$1 repo=$2
    cd "$repo"
    mkdir -p "$scratch/floor"
    say "$files files, clean: $CLEAN_RUNS rounds"
    local ours=("$bin" clean c@I@)
    # shellcheck disable=SC2016 # the floor's script, expanded by sh
    local floor=(sh -c '"$1" --quiet workspace forget "$2" && rm -rf "$3"' _ "$JJ" f@I@
        "$scratch/floor/f@I@")
    PREPARE=clean_prepare pairs "$repo" clean "$CLEAN_RUNS" "${ours[@]}" :: "${floor[@]}"
    pair_rows "\`clean\`" 1.2x cpu "$(shown "${ours[@]}") vs $(shown "${floor[@]}") (I: the round)"
}

# git_changes WS SHAPE: 100 changed files in the worktree WS. untracked: 50 modified and
# committed, then 45 modified and 5 created left as they are. deletions: lib.sh's
# change_files, all but its 15 created files committed (`commit -a`), so 15 untracked files
# are left beside 15 deleted ones, which git pairs.
git_changes() {
    local ws=$1 i
    if [[ $2 == deletions ]]; then
        change_files "$ws"
        must git -C "$ws" commit -q -am "85 changed files"
        return
    fi
    for ((i = 0; i < 95; i++)); do
        ((i == 50)) && must git -C "$ws" commit -q -am "50 edits"
        echo "edit" >>"$ws/src/m0/s$((i / 50 % 10))/f$i.txt"
    done
    for ((i = 0; i < 5; i++)); do echo "new file $i" >"$ws/new$i.txt"; done
}

# bench_git_diff FILES: git `diff` against `git diff --stat <base>` + `git ls-files --others
# --exclude-standard` in a git repository of the same files, one worktree per shape.
bench_git_diff() {
    local files=$1 grepo=$scratch/git-$1 gbase shape ws
    say "$files files: a git repository and two worktrees of 100 changed files"
    must make_git_repo "$grepo" "$files"
    must direnv allow "$grepo"
    cd "$grepo"
    gbase=$(git rev-parse HEAD)
    for shape in untracked deletions; do
        ws=$(ws_path "$shape")
        git_changes "$ws" "$shape"
        local ours=("$bin" diff "$shape")
        # shellcheck disable=SC2016 # the floor's script, expanded by sh
        local floor=(sh -c 'git -C "$1" diff --stat "$2" && git -C "$1" ls-files -z --others --exclude-standard' _ "$ws" "$gbase")
        must "${ours[@]}"
        must "${floor[@]}"
        say "$files files, git diff ($shape): $RUNS pairs"
        pairs - "git-diff-$shape" "$RUNS" "${ours[@]}" :: "${floor[@]}"
        pair_rows "git \`diff\` of 100 changed files ($shape)" 1.2x cpu \
            "$(shown "${ours[@]}") vs $(shown "${floor[@]}")"
        [[ $shape == deletions ]] || continue
        # The floor above does not pair the untracked files with the deleted ones, which
        # `diff` does (as git does for files it knows of). git's own way to show the same
        # pairs: the untracked files added as intended (`add -N`) to a copy of the index.
        local index
        index=$(git -C "$ws" rev-parse --path-format=absolute --git-path index)
        # shellcheck disable=SC2016 # the floor's script, expanded by sh
        local paired=(sh -c 'cp -p "$3" "$4" && GIT_INDEX_FILE=$4 git -C "$1" add -N . && GIT_INDEX_FILE=$4 git -C "$1" diff --stat "$2"' _ "$ws" "$gbase" "$index" "$scratch/paired-index")
        must "${paired[@]}"
        say "$files files, git diff ($shape) against git's own pairing: $RUNS pairs"
        pairs - "git-diff-$shape-paired" "$RUNS" "${ours[@]}" :: "${paired[@]}"
        pair_rows "git \`diff\` of 100 changed files ($shape), renames paired as git pairs them" \
            1.2x cpu "$(shown "${ours[@]}") vs $(shown "${paired[@]}")"
    done
    cd "$scratch"
    rm -rf "$grepo" "$(dirname "$ws")"
}

# field OUTPUT PATTERN N: the field N from the end (0: the last) of OUTPUT's line matching
# PATTERN; stops the run when there is none.
field() {
    local f
    f=$(awk -v n="$3" "/$2/ && NF > n { print \$(NF - n); exit }" <<<"$1")
    [[ -n $f ]] || { printf 'busy.sh: no /%s/ in:\n%s\n' "$2" "$1" >&2; exit 1; }
    echo "$f"
}
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }

# bench_status: `status` with STATUS_N workspaces against 10, by bench/status_cpu.sh.
bench_status() {
    local out kind big small r when jj
    say "status: $STATUS_ROUNDS rounds at 10 and $STATUS_N workspaces"
    out=$(status_cpu cpu "$bin")
    LOAD=$(load1)
    for kind in repeated changed; do
        big=$(field "$out" " $kind +10: " 3)
        small=$(field "$out" " $kind +10: " 6)
        r=$(field "$out" " $kind +10: " 0)
        when="after an untimed one"
        [[ $kind == repeated ]] || when="right after \`jj bookmark create\`"
        row "\`status\`, $STATUS_N workspaces vs 10, $kind" \
            "CPU (perf stat task-clock, children), median of $STATUS_ROUNDS; ratio of medians" \
            "$big ms" "$small ms" "$r" 3x 1 "$(shown "$bin" status) ($when)"
    done
    out=$(status_cpu rss "$bin")
    LOAD=$(load1)
    jj=$(field "$out" "^jj workspace list peak RSS KiB: " 0)
    jj=$(mib "$jj")
    for kind in repeated changed; do
        big=$(field "$out" " peak RSS KiB: repeated " "$([[ $kind == repeated ]] && echo 2 || echo 0)")
        row "peak RSS, \`status\`, $STATUS_N workspaces, $kind" \
            "GNU time %M: agent-workspace or its largest child (\`jj workspace list\` alone: $jj)" \
            "$(mib "$big")" - - "10 MiB" 1 "$(shown "$bin" status)"
    done
}
# status_cpu STEP ARGS...: bench/status_cpu.sh on the status repositories.
status_cpu() {
    STATUS_N=$STATUS_N ROUNDS=$STATUS_ROUNDS BACKEND=jj ARGS='' STATES=${STATES:-1} \
        "$here/status_cpu.sh" "$1" "$status_dir" "${@:2}"
}

bench_size() {
    local files=$1 repo=$scratch/repo-$1
    table=$scratch/table-$1
    : >"$table"
    if wants warm || wants clean; then
        say "making a jj repository of $files files"
        must synthetic_repo "$repo" "$files"
        cd "$repo"
    fi
    if wants warm; then bench_warm "$files" "$repo"; fi
    if wants clean; then bench_clean "$files" "$repo"; fi
    if wants gitdiff; then bench_git_diff "$files"; fi
    if wants status; then bench_status; fi
    cd "$scratch"
    [[ ! -d $repo ]] || rm -rf "$repo" "$AI_WORKSPACES_ROOT"/repo-"$files"-* "$scratch/floor"
    echo
    echo "## $files files$(wants warm && echo ", $AGENTS agents pausing ${AGENT_PAUSE}s between checkpoints")"
    echo
    echo '| case | metric | ours | floor | ratio | target | met | load | command |'
    echo '| --- | --- | ---: | ---: | ---: | --- | --- | --- | --- |'
    cat "$table"
    echo
}

say "$(uname -srm), $(nproc) cores, $("$JJ" --version), $(git --version), direnv $(direnv version)"
say "binary $bin; started $(date -u +%Y-%m-%dT%H:%M:%SZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
status_dir=${STATUS_DIR:-}
if wants status && [[ -z $status_dir ]]; then
    status_dir=$scratch/status
    say "status: making repositories of 10 and $STATUS_N workspaces (bench/status_cpu.sh setup)"
    must status_cpu setup "$bin"
fi
for files in $FILES; do
    echo "# $files files: raw figures (ms; pair: median of per-round ratios; CPU: user + sys)"
    printf '# %s\n' "case	ours_ms	floor_ms	ratio	pair_ratio	baseline_ms	baseline_pair_ratio	ours_cpu_ms	floor_cpu_ms	cpu_pair_ratio	jj_ops_during	rounds	load1"
    bench_size "$files"
done
say "ended $(date -u +%Y-%m-%dT%H:%M:%SZ), load $(cut -d' ' -f1-3 /proc/loadavg)"
