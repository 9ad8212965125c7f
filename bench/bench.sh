#!/usr/bin/env bash
# Benchmarks agent-workspace against the floor of the jj and direnv commands it wraps, on
# synthetic jj repositories of 1,000, 10,000 and 50,000 files. See docs/benchmarks.md.
#
#   bench/bench.sh              full run (~10-25 min on 2 cores)
#   QUICK=1 bench/bench.sh      1,000-file repository only, fewer iterations (~3 min)
#
# Environment (all optional):
#   QUICK=1                 quick mode (also: --quick)
#   AGENT_WORKSPACE_BIN     binary to measure; default: build the release binary with
#                           CARGO_TARGET_DIR (default ${TMPDIR:-/tmp}/aw-bench-target)
#   SIZES                   repository sizes in files   [full: 1000 10000 50000; quick: 1000]
#   PAR_SIZES               sizes for the 16-parallel case [full: 1000 10000; quick: 1000]
#   WARM_RUNS, WARM_ROUNDS  hyperfine runs per warm command and round, rounds (alternating
#                           the order of the commands) [full: 20, 3; quick: 10, 2]
#   COLD_RUNS               cold runs (and cleans) per side, for every size
#                           [full: 10 / 8 / 3 for 1k / 10k / 50k; quick: 5]
#   PAR_N, PAR_REPS         parallel runs per batch [16]; batches per side
#                           [full: 2; quick: 1]
#   STATUS_N                workspaces for the big status case [1000]
#   STATUS_FRESH_RUNS       status runs right after a repository change [full: 9; quick: 5]
#   RESULTS                 results file [bench/results/<full|quick>.md]
#   RAW_DIR                 hyperfine JSON/CSV, samples and logs [bench/results/<mode>-raw]
#   CASES                   cases to run [warm sandbox cold parallel status diff land];
#                           sandbox and land run on the first size only
#   DIFF_RUNS               hyperfine runs per side of the diff case [full: 20; quick: 10]
#   LAND_RUNS               lands per side and backend in the land case [full: 10; quick: 5]
#   SETTLE_SECONDS          pause after `sync` before timed loops [3]
#   KEEP_SCRATCH=1          keep the scratch directory (its path is printed)
set -euo pipefail
export LC_ALL=C # EPOCHREALTIME and awk number formats need a '.' decimal point

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
project=$(cd "$here/.." && pwd -P)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

for arg in "$@"; do
    case $arg in
    --quick) QUICK=1 ;;
    -h | --help)
        sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
        exit 0
        ;;
    *)
        echo "bench.sh: unknown argument $arg (try --help)" >&2
        exit 2
        ;;
    esac
done

QUICK=${QUICK:-0}
[[ $QUICK == 0 ]] && mode=full || mode=quick
if [[ $mode == quick ]]; then
    SIZES=${SIZES:-1000}
    PAR_SIZES=${PAR_SIZES:-1000}
    WARM_RUNS=${WARM_RUNS:-10}
    WARM_ROUNDS=${WARM_ROUNDS:-2}
else
    SIZES=${SIZES:-1000 10000 50000}
    PAR_SIZES=${PAR_SIZES:-1000 10000}
    WARM_RUNS=${WARM_RUNS:-20}
    WARM_ROUNDS=${WARM_ROUNDS:-3}
fi
CASES=${CASES:-warm sandbox cold parallel status diff land}
LAND_RUNS=${LAND_RUNS:-$([[ $mode == quick ]] && echo 5 || echo 10)}
STATUS_FRESH_RUNS=${STATUS_FRESH_RUNS:-$([[ $mode == quick ]] && echo 5 || echo 9)}
PAR_N=${PAR_N:-16}
STATUS_N=${STATUS_N:-1000}
RESULTS=${RESULTS:-$here/results/$mode.md}
RAW_DIR=${RAW_DIR:-$here/results/$mode-raw}
GNU_TIME=${GNU_TIME:-/usr/bin/time}

cold_runs_for() { # size -> iterations per side of the cold-run and clean cases
    if [[ -n ${COLD_RUNS:-} ]]; then
        echo "$COLD_RUNS"
    elif [[ $mode == quick ]]; then
        echo 5
    elif (($1 <= 1000)); then
        echo 10
    elif (($1 <= 10000)); then
        echo 8
    else
        echo 3
    fi
}

par_reps_for() { # size -> batches per side of the parallel case
    if [[ -n ${PAR_REPS:-} ]]; then
        echo "$PAR_REPS"
    elif [[ $mode == full ]]; then
        echo 2
    else
        echo 1
    fi
}

wants() { [[ " $CASES " == *" $1 "* ]]; } # wants CASE: whether CASES includes it

say() { printf '==> %s\n' "$*" >&2; }
die() {
    printf 'bench.sh: %s\n' "$*" >&2
    exit 1
}

# --- tools and the binary (before HOME changes: cargo and rustup need the real one) -------
for tool in jj git direnv hyperfine awk sed sort; do
    command -v "$tool" >/dev/null || die "$tool is not on PATH"
done
have_strace=0
command -v strace >/dev/null && have_strace=1
have_time=0
"$GNU_TIME" --version 2>&1 | grep -q GNU && have_time=1
((have_strace)) || say "strace not found: subprocess counts skipped (apt-get install -y strace)"
((have_time)) || say "GNU time not found: peak RSS skipped (apt-get install -y time)"

if [[ -n ${AGENT_WORKSPACE_BIN:-} ]]; then
    AW=$AGENT_WORKSPACE_BIN
    built="given by AGENT_WORKSPACE_BIN"
else
    target=${CARGO_TARGET_DIR:-${TMPDIR:-/tmp}/aw-bench-target}
    say "building the release binary (CARGO_TARGET_DIR=$target)"
    CARGO_TARGET_DIR=$target cargo build --release --locked \
        --manifest-path "$project/Cargo.toml" >&2
    AW=$target/release/agent-workspace
    built="cargo build --release --locked"
fi
[[ -x $AW ]] || die "$AW is not an executable"
AW=$(cd "$(dirname "$AW")" && pwd -P)/$(basename "$AW")
JJ=$(command -v jj)
DIRENV=$(command -v direnv)
jj_version=$("$JJ" --version)
direnv_version=$("$DIRENV" version)
hyperfine_version=$(hyperfine --version)
aw_version=$("$AW" --version)
git_rev=$(git -C "$project" rev-parse --short HEAD 2>/dev/null || echo unknown)
git_dirty=$(git -C "$project" status --porcelain -- src Cargo.toml Cargo.lock 2>/dev/null | head -1)
[[ -n $git_dirty ]] && git_rev="$git_rev (+ uncommitted changes in src/)"

# --- isolated environment ------------------------------------------------------------------
SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/aw-bench.XXXXXX")
SCRATCH=$(cd "$SCRATCH" && pwd -P) # direnv hashes the path it is given: use canonical paths
cleanup() {
    local code=$?
    jobs -p | xargs -r kill 2>/dev/null || true
    if [[ ${KEEP_SCRATCH:-0} == 1 ]]; then
        say "kept $SCRATCH"
    else
        rm -rf "$SCRATCH"
    fi
    exit "$code"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

isolated_home "$SCRATCH"
export AI_WORKSPACES_ROOT=$SCRATCH/workspaces
mkdir -p "$AI_WORKSPACES_ROOT" "$SCRATCH/floor" "$SCRATCH/repos"

rm -rf "$RAW_DIR"
mkdir -p "$RAW_DIR" "$(dirname "$RESULTS")"
LOG=$RAW_DIR/log.txt
: >"$LOG"
ROWS=$SCRATCH/rows.tsv # case, size, ours ms, floor ms, kind, target, note, load average
: >"$ROWS"
EXECS=$SCRATCH/execs.tsv
: >"$EXECS"
NOTES=$SCRATCH/notes.txt
: >"$NOTES"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
t_start=${EPOCHREALTIME/./}

# --- helpers -------------------------------------------------------------------------------

# Runs a command with its output in the log; on failure shows the log's tail and stops.
quiet() {
    if ! "$@" >>"$LOG" 2>&1; then
        tail -n 20 "$LOG" >&2
        die "failed: $*"
    fi
}

# timed CMD...: runs CMD quietly, leaving its wall time in microseconds in $US.
timed() {
    local s=${EPOCHREALTIME/./}
    quiet "$@"
    US=$((${EPOCHREALTIME/./} - s))
}

# median of numbers, one per argument
median() {
    printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 }
        END { if (NR == 0) print "nan"; else if (NR % 2) print v[(NR + 1) / 2];
              else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

# range_ms MICROSECONDS...: "min-max" in ms
range_ms() {
    printf '%s\n' "$@" | sort -g |
        awk 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.0f-%.0f ms", lo / 1000, hi / 1000 }'
}

# spread LABEL OURS_NAME FLOOR_NAME: notes the range of two sample arrays (named)
spread() {
    local -n _o=$2 _f=$3
    local i ratios=()
    for ((i = 0; i < ${#_o[@]} && i < ${#_f[@]}; i++)); do
        ratios+=("$(awk -v a="${_o[i]}" -v b="${_f[i]}" 'BEGIN { printf "%.4f", a / b }')")
    done
    echo "$1 samples, min-max: ours $(range_ms "${_o[@]}"), floor $(range_ms "${_f[@]}");" \
        "median of the per-iteration ratios ours/floor: $(awk -v r="$(median "${ratios[@]}")" 'BEGIN { printf "%.2fx", r }')" >>"$NOTES"
}

us_to_ms() { awk -v u="$1" 'BEGIN { printf "%.2f", u / 1000 }'; }

# row CASE SIZE OURS_MS FLOOR_MS KIND TARGET [NOTE]; also records the 1-minute load average
row() {
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" "$5" "$6" "${7:-}" \
        "$(cut -d' ' -f1 /proc/loadavg)" >>"$ROWS"
}

# hyperfine_medians NAME ARGS...: runs hyperfine -N with the given -n/command pairs and
# prints "name median_ms" lines.
hyperfine_medians() {
    local name=$1
    shift
    hyperfine -N --style basic --export-json "$RAW_DIR/$name.json" \
        --export-csv "$RAW_DIR/$name.csv" "$@" >>"$LOG" 2>&1 ||
        { tail -n 20 "$LOG" >&2 && die "hyperfine $name failed"; }
    awk -F, 'NR > 1 { printf "%s %.2f\n", $1, $4 * 1000 }' "$RAW_DIR/$name.csv"
}

pick() { awk -v n="$2" '$1 == n { print $2 }' <<<"$1"; } # pick MEDIANS NAME

size_label() { # 1000 -> 1k
    if (($1 % 1000 == 0)); then echo "$(($1 / 1000))k"; else echo "$1"; fi
}

# make_repo DIR FILES: bench/lib.sh's synthetic repository (FILES small files, 50 per
# directory, two levels deep, a trivial .envrc, all committed and allowed), its output logged.
make_repo() {
    quiet synthetic_repo "$@"
}

# execs_of FILE: successful execve calls in an strace -f log, as "program×count ..." and total.
execs_of() {
    awk '/execve\("/ && (/= 0$/ || /pid changed to/) {
            match($0, /execve\("[^"]+"/); p = substr($0, RSTART + 8, RLENGTH - 9)
            n = split(p, parts, "/"); b = parts[n]; c[b]++; t++ }
         END { s = ""; for (b in c) s = s sprintf("%s %s×%d", (s == "" ? "" : ","), b, c[b]);
               printf "%d\t%d\t%s\n", t, c["jj"] + 0, substr(s, 2) }' "$1"
}

# count_execs LABEL CMD...: runs CMD under strace and records its subprocesses. With
# TWICE=1 (a warm run), it runs twice and the second is counted: a warm run starts as a run
# just like it did before it (the first under strace keeps what direnv loaded for the same
# caller environment). Once otherwise: a creation or a removal cannot run again.
count_execs() {
    local label=$1 out=$SCRATCH/strace.txt
    shift
    ((have_strace)) || return 0
    if [[ ${TWICE:-0} == 1 ]]; then
        strace -f -qq -e trace=execve -e signal=none -o "$out" "$@" >>"$LOG" 2>&1 ||
            die "strace $label failed"
    fi
    strace -f -qq -e trace=execve -e signal=none -o "$out" "$@" >>"$LOG" 2>&1 ||
        die "strace $label failed"
    cp "$out" "$RAW_DIR/strace-${label// /_}.txt"
    printf '%s\t%s\n' "$label" "$(execs_of "$out")" >>"$EXECS"
}

# peak_rss_kb_once CMD...: GNU time's maximum RSS (KiB) of CMD. GNU time reports the peak of
# the process or of its largest waited-for child, whichever is larger.
peak_rss_kb_once() {
    "$GNU_TIME" -f %M -o "$SCRATCH/rss" "$@" >>"$LOG" 2>&1 || die "time $* failed"
    tail -n 1 "$SCRATCH/rss"
}

# peak_rss_kb CMD...: the largest of 5 peak_rss_kb_once.
peak_rss_kb() {
    local best=0 i kb
    for i in 1 2 3 4 5; do
        kb=$(peak_rss_kb_once "$@")
        ((kb > best)) && best=$kb
    done
    echo "$best"
}

# own_peak_kb CMD...: the VmHWM (KiB) of CMD itself, children excluded, read from /proc while
# CMD is blocked writing to a pipe that is not read yet. Needs more output than a pipe holds
# (64 KiB); prints "n/a" when CMD finished before filling it.
own_peak_kb() {
    local gate=$SCRATCH/rss.gate pidfile=$SCRATCH/rss.pid pid="" hwm="n/a" i job
    rm -f "$gate" "$pidfile"
    { echo "$BASHPID" >"$pidfile" && exec "$@" 2>>"$LOG"; } |
        { while [[ ! -e $gate ]]; do sleep 0.01; done && cat >/dev/null; } &
    job=$!
    for ((i = 0; i < 500; i++)); do
        [[ -s $pidfile ]] && pid=$(<"$pidfile") && [[ -n $pid ]] && break
        sleep 0.01
    done
    for ((i = 0; i < 1000; i++)); do
        case $(cat "/proc/$pid/wchan" 2>/dev/null) in
        *pipe_write*)
            hwm=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status")
            break
            ;;
        esac
        [[ $(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null) == [SRD] ]] || break
        sleep 0.01
    done
    touch "$gate"
    wait "$job" || true
    echo "$hwm"
}

# settle: flush dirty data (creating or deleting thousands of files leaves writeback and, on a
# filesystem mounted with discard, block discards behind) so it does not land in a measurement.
settle() {
    sync
    sleep "${SETTLE_SECONDS:-3}"
}

# ws_path ID: the path of workspace ID, as its own run reports it (a run, so it exists after)
ws_path() {
    # shellcheck disable=SC2016 # expanded by the inner shell, in the workspace's environment
    "$AW" run "$1" -- sh -c 'printf %s "$AGENT_WORKSPACE_PATH"' 2>>"$LOG"
}

forget_and_remove() { # forget_and_remove NAME DIR: the floor of `clean`
    "$JJ" --quiet workspace forget "$1" && rm -rf "$2"
}

floor_cold() { # floor_cold NAME DIR: the floor of a cold run
    "$JJ" --quiet workspace add --name "$1" "$2" &&
        "$DIRENV" allow "$2" &&
        "$DIRENV" exec "$2" true
}

# --- cases ---------------------------------------------------------------------------------

bench_warm() { # bench_warm SIZE REPO
    local size=$1 repo=$2 label ws med ours floor
    label=$(size_label "$size")
    cd "$repo"
    quiet "$AW" run w -- true
    ws=$(ws_path w)
    ws=$(cd "$ws" && pwd -P)
    [[ -f $ws/.envrc ]] || die "workspace $ws has no .envrc"
    # A warm run: the workspace's files (its .envrc among them) were not just written. A run
    # keeps what direnv loaded only for files changed at least 2 s before it evaluated.
    settle
    say "[$label] warm runs ($WARM_ROUNDS rounds of $WARM_RUNS runs each, hyperfine -N)"
    # Rounds in alternating command order, so a change in background load hits both sides;
    # the reported median is the median of the rounds' medians. hyperfine gives every run a
    # variable of a random length (HYPERFINE_RANDOMIZED_ENVIRONMENT_OFFSET): a caller whose
    # environment changes every time, for which a run evaluates the .envrc every time. Both
    # direnv sides run through `env -u` so the caller's environment is the same run by run,
    # as an agent's is.
    local unrandom="env -u HYPERFINE_RANDOMIZED_ENVIRONMENT_OFFSET"
    local round all=""
    for ((round = 1; round <= WARM_ROUNDS; round++)); do
        if ((round % 2)); then
            all+=$(hyperfine_medians "warm-$label-$round" --warmup 5 --runs "$WARM_RUNS" \
                -n ours-direnv "$unrandom $AW run w -- true" \
                -n floor-direnv "$unrandom $DIRENV exec $ws true" \
                -n ours-no-direnv "$AW run --no-direnv w -- true" \
                -n floor-true "true")$'\n'
        else
            all+=$(hyperfine_medians "warm-$label-$round" --warmup 5 --runs "$WARM_RUNS" \
                -n floor-true "true" \
                -n ours-no-direnv "$AW run --no-direnv w -- true" \
                -n floor-direnv "$unrandom $DIRENV exec $ws true" \
                -n ours-direnv "$unrandom $AW run w -- true")$'\n'
        fi
    done
    med=$(for name in ours-direnv floor-direnv ours-no-direnv floor-true; do
        # shellcheck disable=SC2046 # one number per round
        echo "$name $(median $(awk -v n="$name" '$1 == n { print $2 }' <<<"$all"))"
    done)
    ours=$(pick "$med" ours-direnv)
    floor=$(pick "$med" floor-direnv)
    row "warm \`run w -- true\` vs \`direnv exec <ws> true\`" "$label" "$ours" "$floor" ratio 1.25
    ours=$(pick "$med" ours-no-direnv)
    floor=$(pick "$med" floor-true)
    row "warm \`run --no-direnv w -- true\` vs \`true\`" "$label" "$ours" "$floor" diff 10
    if [[ $size == "${SIZES%% *}" ]]; then
        TWICE=1 count_execs "warm run (direnv)" "$AW" run w -- true
        TWICE=1 count_execs "warm run --no-direnv" "$AW" run --no-direnv w -- true
        TWICE=1 count_execs "floor: direnv exec <ws> true" "$DIRENV" exec "$ws" true
    fi
    if ((have_time)); then
        local kb
        kb=$(peak_rss_kb "$AW" run --no-direnv w -- true)
        row "peak RSS, warm \`run --no-direnv w -- true\` (GNU time %M)" "$label" \
            "$(kb_to_mib "$kb")" - abs-mib 10
    fi
}

bench_sandbox() { # bench_sandbox SIZE REPO: a sandboxed warm run against an unsandboxed one
    local size=$1 repo=$2 label med round all=""
    label=$(size_label "$size")
    cd "$repo"
    quiet "$AW" run w -- true
    quiet "$AW" run --sandbox w -- true || die "run --sandbox fails here (is bubblewrap usable?)"
    say "[$label] sandboxed warm runs ($WARM_ROUNDS rounds of $WARM_RUNS runs each, hyperfine -N)"
    for ((round = 1; round <= WARM_ROUNDS; round++)); do
        if ((round % 2)); then
            all+=$(hyperfine_medians "sandbox-$label-$round" --warmup 5 --runs "$WARM_RUNS" \
                -n sandboxed "$AW run --sandbox w -- true" \
                -n unsandboxed "$AW run w -- true")$'\n'
        else
            all+=$(hyperfine_medians "sandbox-$label-$round" --warmup 5 --runs "$WARM_RUNS" \
                -n unsandboxed "$AW run w -- true" \
                -n sandboxed "$AW run --sandbox w -- true")$'\n'
        fi
    done
    med=$(for name in sandboxed unsandboxed; do
        # shellcheck disable=SC2046 # one number per round
        echo "$name $(median $(awk -v n="$name" '$1 == n { print $2 }' <<<"$all"))"
    done)
    row "warm \`run --sandbox w -- true\` vs \`run w -- true\`" "$label" \
        "$(pick "$med" sandboxed)" "$(pick "$med" unsandboxed)" ratio 1.5
}

bench_cold_and_clean() { # bench_cold_and_clean SIZE REPO
    local size=$1 repo=$2 label n i ours=() floor=() cours=() cfloor=() ns
    label=$(size_label "$size")
    n=$(cold_runs_for "$size")
    cd "$repo"
    say "[$label] cold runs: $n per side, interleaved (after one untimed pair)"
    quiet "$AW" run c0 -- true
    quiet floor_cold f0 "$SCRATCH/floor/f0"
    quiet "$AW" clean c0
    quiet forget_and_remove f0 "$SCRATCH/floor/f0"
    settle
    for ((i = 1; i <= n; i++)); do
        if ((i % 2)); then
            timed "$AW" run "c$i" -- true && ours+=("$US")
            timed floor_cold "f$i" "$SCRATCH/floor/f$i" && floor+=("$US")
        else
            timed floor_cold "f$i" "$SCRATCH/floor/f$i" && floor+=("$US")
            timed "$AW" run "c$i" -- true && ours+=("$US")
        fi
    done
    printf '%s\n' "${ours[@]}" >"$RAW_DIR/cold-$label-ours-us.txt"
    printf '%s\n' "${floor[@]}" >"$RAW_DIR/cold-$label-floor-us.txt"
    row "cold \`run new-<i> -- true\` vs \`jj workspace add\` + \`direnv allow\` + \`direnv exec\`" \
        "$label" "$(us_to_ms "$(median "${ours[@]}")")" "$(us_to_ms "$(median "${floor[@]}")")" \
        ratio 1.10 "n=$n"
    spread "cold run $label" ours floor
    settle
    say "[$label] clean: $n per side, interleaved"
    for ((i = 1; i <= n; i++)); do
        if ((i % 2)); then
            timed "$AW" clean "c$i" && cours+=("$US")
            timed forget_and_remove "f$i" "$SCRATCH/floor/f$i" && cfloor+=("$US")
        else
            timed forget_and_remove "f$i" "$SCRATCH/floor/f$i" && cfloor+=("$US")
            timed "$AW" clean "c$i" && cours+=("$US")
        fi
    done
    printf '%s\n' "${cours[@]}" >"$RAW_DIR/clean-$label-ours-us.txt"
    printf '%s\n' "${cfloor[@]}" >"$RAW_DIR/clean-$label-floor-us.txt"
    row "\`clean w\` vs \`jj workspace forget\` + \`rm -rf\`" "$label" \
        "$(us_to_ms "$(median "${cours[@]}")")" "$(us_to_ms "$(median "${cfloor[@]}")")" \
        ratio 1.20 "n=$n"
    spread "clean $label" cours cfloor
    if [[ $size == "${SIZES%% *}" ]]; then
        count_execs "cold run" "$AW" run counted -- true
        count_execs "clean" "$AW" clean counted
        count_execs "floor: jj workspace add" "$JJ" --quiet workspace add --name fc "$SCRATCH/floor/fc"
        count_execs "floor: jj workspace forget" "$JJ" --quiet workspace forget fc
        rm -rf "$SCRATCH/floor/fc"
    fi
}

par_serial() { # par_serial BATCH: appends the wall time to ser
    local i s=${EPOCHREALTIME/./}
    for ((i = 1; i <= PAR_N; i++)); do
        quiet "$AW" run "s$1-$i" -- true
    done
    ser+=($((${EPOCHREALTIME/./} - s)))
}

par_parallel() { # par_parallel BATCH: appends the wall time to par
    local i pid pids=() failed=0 s=${EPOCHREALTIME/./}
    for ((i = 1; i <= PAR_N; i++)); do
        "$AW" run "p$1-$i" -- true >>"$LOG" 2>&1 &
        pids+=($!)
    done
    for pid in "${pids[@]}"; do wait "$pid" || failed=$((failed + 1)); done
    par+=($((${EPOCHREALTIME/./} - s)))
    ((failed == 0)) || die "$failed of $PAR_N parallel runs failed (see $LOG)"
}

bench_parallel() { # bench_parallel SIZE REPO
    local size=$1 repo=$2 label rep reps i ser=() par=() ns names name
    label=$(size_label "$size")
    reps=$(par_reps_for "$size")
    cd "$repo"
    ns=$(dirname "$(ws_path w)")
    say "[$label] $PAR_N cold runs in parallel vs one after another ($reps batch(es) each)"
    for ((rep = 1; rep <= reps; rep++)); do
        settle
        # Alternate which side goes first, so a change in background load hits both.
        if ((rep % 2)); then
            par_serial "$rep"
            par_parallel "$rep"
        else
            par_parallel "$rep"
            par_serial "$rep"
        fi
        # Remove this batch's workspaces the cheap way (untimed) before the next one.
        names=()
        for ((i = 1; i <= PAR_N; i++)); do names+=("s$rep-$i" "p$rep-$i"); done
        quiet "$JJ" --quiet workspace forget "${names[@]}"
        for name in "${names[@]}"; do rm -rf "${ns:?}/$name" "$ns/.locks/$name.lock"; done
    done
    printf '%s\n' "${ser[@]}" >"$RAW_DIR/parallel-$label-serial-us.txt"
    printf '%s\n' "${par[@]}" >"$RAW_DIR/parallel-$label-parallel-us.txt"
    row "$PAR_N parallel cold runs (wall) vs the same $PAR_N one after another" "$label" \
        "$(us_to_ms "$(median "${par[@]}")")" "$(us_to_ms "$(median "${ser[@]}")")" \
        ratio 1.0 "batches=$reps"
    spread "$PAR_N parallel (ours) vs serial (floor) $label" par ser
}

# tick: one harmless jj operation (a new bookmark) in the current repository, so its operation
# heads change and anything keyed on them (agent-workspace caches the workspace list) is stale.
TICKS=0
tick() {
    TICKS=$((TICKS + 1))
    quiet "$JJ" --quiet --ignore-working-copy bookmark create "bench-tick-$TICKS" -r 'root()+'
}

kb_to_mib() { awk -v k="$1" 'BEGIN { printf "%.1f", k / 1024 }'; }

# move_one: one workspace's working-copy commit moves (a new description for b5, as an
# agent's checkpoint would make), so `status` has to read that workspace's changes again.
MOVES=0
move_one() {
    MOVES=$((MOVES + 1))
    quiet "$JJ" --quiet --ignore-working-copy describe -r 'b5@' -m "bench move $MOVES"
}

# status_times N: measures `status` on the current repository, which has N workspaces:
# repeated (hyperfine; the repository does not change in between), right after a
# repository change (own loop, one tick before each run), and right after one workspace's
# commit moved (one move_one before each run). Sets REPEATED, FRESH and MOVED (ms).
status_times() {
    local n=$1 i samples=() moved=()
    tick
    REPEATED=$(pick "$(hyperfine_medians "status-$n" --warmup 3 --runs 20 -n "status-$n" \
        "$AW status")" "status-$n")
    for ((i = 1; i <= STATUS_FRESH_RUNS; i++)); do
        tick
        timed "$AW" status && samples+=("$US")
    done
    printf '%s\n' "${samples[@]}" >"$RAW_DIR/status-$n-after-change-us.txt"
    FRESH=$(us_to_ms "$(median "${samples[@]}")")
    for ((i = 1; i <= STATUS_FRESH_RUNS; i++)); do
        move_one
        timed "$AW" status && moved+=("$US")
    done
    printf '%s\n' "${moved[@]}" >"$RAW_DIR/status-$n-after-a-move-us.txt"
    MOVED=$(us_to_ms "$(median "${moved[@]}")")
}

# bench_status: a dedicated 1,000-file repository with STATUS_N workspaces. One is made by a
# real run; the others are `jj workspace add --sparse-patterns empty` (no files checked out)
# with a copy of the real record, id and path changed. `status` never reads the files.
bench_status() {
    local repo=$SCRATCH/repos/status real ns template made s lines
    local small_rep small_fresh small_moved big_rep big_fresh big_moved
    say "[status] repository, 1 real workspace + sparse-empty ones"
    make_repo "$repo" 1000
    cd "$repo"
    quiet "$AW" run real -- true
    real=$(ws_path real)
    ns=$(dirname "$real")
    template=$real/.agent-workflow.json
    made=1
    add_bulk() { # add_bulk UPTO
        while ((made < $1)); do
            made=$((made + 1))
            quiet "$JJ" --quiet workspace add --sparse-patterns empty --name "b$made" "$ns/b$made"
            sed -e "s|\"workspace_id\": \"real\"|\"workspace_id\": \"b$made\"|" \
                -e "s|\"workspace_path\": \"$real\"|\"workspace_path\": \"$ns/b$made\"|" \
                "$template" >"$ns/b$made/.agent-workflow.json"
        done
    }
    check_status() { # check_status N: N rows, no warnings
        lines=$("$AW" status 2>"$SCRATCH/status.err" | wc -l)
        [[ $lines == $(($1 + 1)) && ! -s $SCRATCH/status.err ]] ||
            die "status with $1 workspaces printed $lines lines: $(head -3 "$SCRATCH/status.err")"
    }
    add_bulk 10
    settle
    check_status 10
    say "[status] 10 workspaces"
    status_times 10
    small_rep=$REPEATED small_fresh=$FRESH small_moved=$MOVED
    s=${EPOCHREALTIME/./}
    say "[status] adding $((STATUS_N - 10)) sparse-empty workspaces"
    add_bulk "$STATUS_N"
    echo "status case: $((STATUS_N - 10)) sparse-empty \`jj workspace add\` took $(us_to_ms $((${EPOCHREALTIME/./} - s))) ms" >>"$NOTES"
    settle
    check_status "$STATUS_N"
    say "[status] $STATUS_N workspaces"
    status_times "$STATUS_N"
    big_rep=$REPEATED big_fresh=$FRESH big_moved=$MOVED
    row "\`status\` with $STATUS_N workspaces vs with 10, repeated (no repository change in between)" 1k \
        "$big_rep" "$small_rep" ratio 3
    row "\`status\` with $STATUS_N workspaces vs with 10, right after a repository change" 1k \
        "$big_fresh" "$small_fresh" ratio 3 "n=$STATUS_FRESH_RUNS"
    row "\`status\` with $STATUS_N workspaces vs with 10, right after one workspace's commit moved" 1k \
        "$big_moved" "$small_moved" ratio 3 "n=$STATUS_FRESH_RUNS"
    local jjlist
    jjlist=$(hyperfine_medians "jj-list-$STATUS_N" --warmup 3 --runs 10 -n jj-list \
        "$JJ --no-pager --color=never --quiet -R $repo --ignore-working-copy workspace list")
    echo "status case: \`jj workspace list\` alone with $STATUS_N workspaces: median $(pick "$jjlist" jj-list) ms" >>"$NOTES"
    quiet "$AW" status
    count_execs "status ($STATUS_N workspaces), repeated" "$AW" status
    tick
    count_execs "status ($STATUS_N workspaces), after a repository change" "$AW" status
    if ((have_time)); then
        local i kb tree=0 own jjkb
        quiet "$AW" status
        kb=$(peak_rss_kb "$AW" status)
        row "peak RSS, \`status\` with $STATUS_N workspaces, repeated (GNU time %M)" 1k \
            "$(kb_to_mib "$kb")" - abs-mib 10
        for i in 1 2 3; do
            tick
            kb=$(peak_rss_kb_once "$AW" status)
            ((kb > tree)) && tree=$kb
        done
        row "peak RSS, \`status\` with $STATUS_N workspaces, after a change (GNU time %M: agent-workspace + its jj child)" 1k \
            "$(kb_to_mib "$tree")" - abs-mib 10
        tick
        own=$(own_peak_kb "$AW" status)
        if [[ $own != n/a ]]; then
            row "peak RSS, \`status\` with $STATUS_N workspaces, after a change (agent-workspace alone: VmHWM)" 1k \
                "$(kb_to_mib "$own")" - abs-mib 10
        fi
        jjkb=$(peak_rss_kb "$JJ" --no-pager --color=never --quiet -R "$repo" \
            --ignore-working-copy workspace list -T 'name ++ "\t" ++ if(root, root.absolute(), "") ++ "\n"')
        echo "status case: peak RSS of the \`jj workspace list\` it runs, alone: $(kb_to_mib "$jjkb") MiB" >>"$NOTES"
    fi
}

# diff_rows LABEL WHAT OURS_CMD RAW_NAME RAW_CMD WRAPPED_CMD: hyperfine of `diff` against
# the raw command a user would type and against the exact calls it makes, as a script.
diff_rows() {
    local label=$1 what=$2 ours=$3 raw_name=$4 raw=$5 wrapped=$6 med runs
    runs=${DIFF_RUNS:-$([[ $mode == quick ]] && echo 10 || echo 20)}
    med=$(hyperfine_medians "diff-$what-$label" --warmup 3 --runs "$runs" \
        -n ours "$ours" -n raw "$raw" -n wrapped "$wrapped")
    row "\`diff\` of 100 changed files vs $raw_name" "$label" "$(pick "$med" ours)" \
        "$(pick "$med" raw)" ratio 1.2 "$what"
    row "\`diff\` of 100 changed files vs the calls it makes (sh script)" "$label" \
        "$(pick "$med" ours)" "$(pick "$med" wrapped)" ratio 1.2 "$what"
}

bench_diff() { # bench_diff SIZE REPO
    local size=$1 repo=$2 label ws base wc git_dir grepo gws gbase
    label=$(size_label "$size")
    say "[$label] diff of 100 changed files, jj and git"
    # jj asks `tput` for the terminal size on every call without these: agent-workspace sets
    # them for its own jj calls, so the raw commands get them too.
    export COLUMNS=200 LINES=50
    cd "$repo"
    quiet "$AW" run d -- true
    ws=$(cd "$(ws_path d)" && pwd -P)
    base=$("$JJ" --ignore-working-copy log --no-graph -r @- -T commit_id)
    change_files "$ws"
    quiet "$JJ" -R "$ws" --quiet commit -m "50 committed edits"
    wc=$("$JJ" -R "$ws" log --no-graph -r @ -T commit_id)
    git_dir=$repo/.git
    cat >"$SCRATCH/diff-jj.sh" <<SCRIPT
"$JJ" --no-pager --color=never --quiet -R "$ws" log --no-graph -T 'commit_id ++ "\\0"' -r '$base..@' >/dev/null
git --git-dir "$git_dir" diff -z --raw --numstat -M --no-ext-diff --no-textconv $base $wc >/dev/null
SCRIPT
    diff_rows "$label" jj "$AW diff d" "\`jj diff --from <base> --stat\` in the workspace" \
        "$JJ --no-pager --color=never -R $ws diff --from $base --stat" "sh $SCRATCH/diff-jj.sh"
    # git: a plain git repository of the same files, the workspace a worktree of it.
    grepo=$SCRATCH/repos/git-$label
    mkdir -p "$grepo"
    (cd "$repo" && git --git-dir "$git_dir" archive "$base" | tar -x -C "$grepo")
    cd "$grepo"
    quiet git init -q
    quiet git add -A
    quiet git -c user.name=Bench -c user.email=bench@example.invalid commit -q -m base
    gbase=$(git rev-parse HEAD)
    quiet "$AW" run d -- true
    gws=$(cd "$(ws_path d)" && pwd -P)
    change_files "$gws"
    quiet git -C "$gws" -c user.name=Bench -c user.email=bench@example.invalid commit -q -am "committed edits"
    cat >"$SCRATCH/diff-git.sh" <<SCRIPT
cd "$gws"
read -r _ gitdir <.git
cp "\$gitdir/index" "$SCRATCH/diff.index"
export GIT_INDEX_FILE="$SCRATCH/diff.index"
git add --all -- .
git write-tree >/dev/null
git diff -z --raw --numstat -M --no-ext-diff --no-textconv --cached $gbase >/dev/null
git log -z --format=%H%x00%B $gbase..HEAD >/dev/null
rm -f "$SCRATCH/diff.index"
SCRIPT
    diff_rows "$label" git "$AW diff d" "\`git diff --stat <base>\` in the worktree (untracked files left out)" \
        "git -C $gws diff --stat $gbase" "sh $SCRATCH/diff-git.sh"
    # The floor with untracked files listed the way git finds them (not counted in lines).
    local med runs
    runs=${DIFF_RUNS:-$([[ $mode == quick ]] && echo 10 || echo 20)}
    cat >"$SCRATCH/diff-git-untracked.sh" <<SCRIPT
cd "$gws"
git diff --stat $gbase >/dev/null
git ls-files -z --others --exclude-standard >/dev/null
SCRIPT
    med=$(hyperfine_medians "diff-git-untracked-$label" --warmup 3 --runs "$runs" \
        -n ours "$AW diff d" -n floor "sh $SCRATCH/diff-git-untracked.sh")
    row "\`diff\` of 100 changed files vs \`git diff --stat <base>\` + \`git ls-files --others --exclude-standard\` (sh script)" \
        "$label" "$(pick "$med" ours)" "$(pick "$med" floor)" ratio 1.2 git
    if [[ $size == "${SIZES%% *}" ]]; then
        count_execs "diff (jj)" sh -c "cd '$repo' && '$AW' diff d"
        count_execs "diff (git)" sh -c "cd '$grepo' && '$AW' diff d"
    fi
    unset COLUMNS LINES
    cd "$repo"
}

# --- land: a workspace with 100 changed files, next to the raw commands it wraps ----------

# land_change_files DIR FROM: appends a line to the 100 files f<FROM>..f<FROM+99> of a repository
# made by make_repo (or make_git_repo) checked out in DIR.
land_change_files() {
    local dir=$1 from=$2 i
    for ((i = from; i < from + 100; i++)); do
        echo "changed by $dir" >>"$dir/src/m$((i / 500))/s$((i / 50 % 10))/f$i.txt"
    done
}

# land_pair_jj I: one land of ours and one of the floor, each of a workspace of its own with
# 100 changed (unrecorded) files, on disjoint files so neither conflicts; interleaved.
land_pair_jj() {
    local i=$1 ws fl=$SCRATCH/floor/l$1
    ws=$(ws_path "l$i")
    quiet "$JJ" --quiet workspace add --name "fl$i" "$fl"
    land_change_files "$ws" $(((i - 1) * 200))
    land_change_files "$fl" $(((i - 1) * 200 + 100))
    # What `land` wraps: record the edits, rebase below the main working copy (one
    # operation), bring the workspace's files up to date.
    land_floor_jj() {
        "$JJ" --quiet -R "$fl" commit -m "work of fl$i" &&
            "$JJ" --quiet rebase -r "fl$i@-" -B default@ -B "fl$i@" &&
            "$JJ" --quiet -R "$fl" workspace update-stale
    }
    if ((i % 2)); then
        timed "$AW" land "l$i" && ours+=("$US")
        timed land_floor_jj && floor+=("$US")
    else
        timed land_floor_jj && floor+=("$US")
        timed "$AW" land "l$i" && ours+=("$US")
    fi
}

# land_pair_git I REPO: as land_pair_jj, with worktrees: ours `land`, the floor `git add -A`
# + `git commit` in the worktree and `git merge` of its branch in the main worktree.
land_pair_git() {
    local i=$1 repo=$2 ws fl=$SCRATCH/floor/gl$1
    ws=$(AGENT_WORKSPACE_BACKEND=git ws_path "g$i")
    quiet git worktree add --quiet -b "floor/gl$i" "$fl"
    land_change_files "$ws" $(((i - 1) * 200))
    land_change_files "$fl" $(((i - 1) * 200 + 100))
    land_floor_git() {
        git -C "$fl" add -A &&
            git -C "$fl" commit --quiet -m "work of gl$i" &&
            git -C "$repo" merge --quiet --no-edit "floor/gl$i"
    }
    if ((i % 2)); then
        timed env AGENT_WORKSPACE_BACKEND=git "$AW" land "g$i" && ours+=("$US")
        timed land_floor_git && floor+=("$US")
    else
        timed land_floor_git && floor+=("$US")
        timed env AGENT_WORKSPACE_BACKEND=git "$AW" land "g$i" && ours+=("$US")
    fi
}

bench_land() { # bench_land SIZE REPO
    local size=$1 repo=$2 label i ours=() floor=() grepo=$SCRATCH/repos/git$1
    label=$(size_label "$size")
    ((size >= 200 * LAND_RUNS)) || die "the land case needs $((200 * LAND_RUNS)) files; SIZES has $size"
    cd "$repo"
    say "[$label] jj land of 100 changed files: $LAND_RUNS per side, interleaved"
    quiet "$AW" run l0 -- true
    settle
    for ((i = 1; i <= LAND_RUNS; i++)); do land_pair_jj "$i"; done
    printf '%s\n' "${ours[@]}" >"$RAW_DIR/land-jj-$label-ours-us.txt"
    printf '%s\n' "${floor[@]}" >"$RAW_DIR/land-jj-$label-floor-us.txt"
    row "jj \`land w\` (100 changed files) vs \`jj commit\` + \`jj rebase -r w@- -B default@ -B w@\` + \`jj workspace update-stale\`" \
        "$label" "$(us_to_ms "$(median "${ours[@]}")")" "$(us_to_ms "$(median "${floor[@]}")")" \
        ratio 1.20 "n=$LAND_RUNS"
    spread "jj land $label" ours floor
    say "[$label] git land of 100 changed files: $LAND_RUNS per side, interleaved"
    quiet make_git_repo "$grepo" "$size"
    cd "$grepo"
    ours=() floor=()
    settle
    for ((i = 1; i <= LAND_RUNS; i++)); do land_pair_git "$i" "$grepo"; done
    printf '%s\n' "${ours[@]}" >"$RAW_DIR/land-git-$label-ours-us.txt"
    printf '%s\n' "${floor[@]}" >"$RAW_DIR/land-git-$label-floor-us.txt"
    row "git \`land w\` (100 changed files) vs \`git add -A\` + \`git commit\` + \`git merge\`" \
        "$label" "$(us_to_ms "$(median "${ours[@]}")")" "$(us_to_ms "$(median "${floor[@]}")")" \
        ratio 1.20 "n=$LAND_RUNS"
    spread "git land $label" ours floor
    rm -rf "$grepo"
    cd "$repo"
}

# --- main ----------------------------------------------------------------------------------
say "mode: $mode; sizes: $SIZES; scratch: $SCRATCH"
say "binary: $AW ($aw_version, $built)"
for size in $SIZES; do
    repo=$SCRATCH/repos/r$(size_label "$size")
    say "[$(size_label "$size")] creating a repository of $size files"
    s=${EPOCHREALTIME/./}
    make_repo "$repo" "$size"
    echo "repository of $size files: created and committed in $(us_to_ms $((${EPOCHREALTIME/./} - s))) ms" >>"$NOTES"
    settle
    wants warm && bench_warm "$size" "$repo"
    if wants sandbox && [[ $size == "${SIZES%% *}" ]]; then
        bench_sandbox "$size" "$repo"
    fi
    wants cold && bench_cold_and_clean "$size" "$repo"
    wants diff && bench_diff "$size" "$repo"
    if wants parallel && [[ " $PAR_SIZES " == *" $size "* ]]; then
        bench_parallel "$size" "$repo"
    fi
    if wants land && [[ $size == "${SIZES%% *}" ]]; then
        bench_land "$size" "$repo"
    fi
    # Free the disk space of this size before the next (untimed), from outside it: in a
    # removed directory, direnv fails (it cannot find its working directory).
    cd "$SCRATCH"
    rm -rf "$repo" "${AI_WORKSPACES_ROOT:?}"/* "${SCRATCH:?}"/floor/*
done
if wants status; then bench_status; fi

# --- report --------------------------------------------------------------------------------
load_end=$(cut -d' ' -f1-3 /proc/loadavg)
elapsed=$(awk -v u=$((${EPOCHREALTIME/./} - t_start)) 'BEGIN { printf "%.0f", u / 1e6 }')
cpu=$(awk -F': *' '/^model name/ { print $2; exit }' /proc/cpuinfo)
command_line="bench/bench.sh"
[[ $mode == quick ]] && command_line="QUICK=1 bench/bench.sh"

table() {
    echo "| case | repo | ours (median) | floor (median) | ratio / difference | target | met? | load |"
    echo "| --- | --- | ---: | ---: | ---: | --- | --- | ---: |"
    awk -F'\t' '{
        c = $1; sz = $2; o = $3; f = $4; k = $5; t = $6; note = $7
        if (note != "") c = c " (" note ")"
        if (k == "ratio") {
            r = o / f; cmp = sprintf("%.2fx", r); tgt = "<= " t "x"; met = (r <= t + 1e-9)
            os = sprintf("%.1f ms", o); fs = sprintf("%.1f ms", f)
        } else if (k == "diff") {
            d = o - f; cmp = sprintf("+%.2f ms", d); tgt = "< " t " ms over"; met = (d < t)
            os = sprintf("%.2f ms", o); fs = sprintf("%.2f ms", f)
        } else {
            cmp = "-"; tgt = "<= " t " MiB"; met = (o <= t); os = o " MiB"; fs = "-"
        }
        printf "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c, sz, os, fs, cmp, tgt, (met ? "yes" : "**no**"), $8
    }' "$ROWS"
}

execs_table() {
    echo "| command | processes exec'd | of which jj | programs |"
    echo "| --- | ---: | ---: | --- |"
    awk -F'\t' '{ printf "| %s | %s | %s | %s |\n", $1, $2, $3, $4 }' "$EXECS"
}

{
    echo "# agent-workspace benchmark results ($mode)"
    echo
    echo "- command: \`$command_line\`"
    echo "- date: $started, took ${elapsed} s"
    echo "- binary: $aw_version, $built, source $git_rev"
    echo "- machine: $(nproc) CPUs, $cpu, Linux $(uname -r)"
    echo "- tools: $jj_version, direnv $direnv_version, $hyperfine_version"
    echo "- load average (1/5/15 min): $load_start at start, $load_end at end;" \
        "other work (builds, tests) may have been running on this shared machine"
    echo "- sizes: $SIZES files; warm: hyperfine -N, $WARM_ROUNDS rounds of $WARM_RUNS runs + 5 warmup;" \
        "cold/clean: own loop, ours and floor interleaved; parallel: $PAR_N runs a batch"
    echo "- load: the 1-minute load average when the case finished (2 CPUs: above 2 means waiting for a CPU)"
    echo
    table
    if [[ -s $EXECS ]]; then
        echo
        echo "Subprocesses (strace -f -e trace=execve, successful execs; the first line is the process itself):"
        echo
        execs_table
    fi
    if [[ -s $NOTES ]]; then
        echo
        echo "Notes:"
        echo
        sed 's/^/- /' "$NOTES"
    fi
} >"$RESULTS"
cp "$ROWS" "$RAW_DIR/rows.tsv"
cat "$RESULTS"
say "results written to $RESULTS (raw data in $RAW_DIR)"
if grep -q "warm run" "$EXECS" 2>/dev/null; then
    jj_warm=$(awk -F'\t' '$1 ~ /^warm run/ { s += $3 } END { print s + 0 }' "$EXECS")
    ((jj_warm == 0)) || say "WARNING: the warm path ran jj $jj_warm time(s)"
fi
