#!/usr/bin/env bash
# The CPU time of `status` with 10 and with 1,000 workspaces, side by side for several
# binaries: the `status` at 1,000 workspaces figures of docs/benchmarks.md (every pass in
# docs/benchmarks-history.md).
#
#   bench/status_cpu.sh setup DIR            make the repositories in DIR (kept; ~3-10 min)
#   bench/status_cpu.sh cpu DIR BIN...       ROUNDS rounds of perf stat task-clock
#   bench/status_cpu.sh instructions DIR BIN...
#                                            callgrind's instruction counts (one run each)
#   bench/status_cpu.sh rss DIR BIN...       peak RSS (GNU time %M) at 1,000 workspaces, and
#                                            that of `jj workspace list` alone
#
# Two 1,000-file jj repositories (bench/lib.sh's synthetic_repo), one with 10 workspaces and
# one with STATUS_N (1,000): one made by `run`, the others `jj workspace add
# --sparse-patterns empty` with a copy of its record: its view `.agent-workflow.json` and its
# state `<namespace>/.state/<id>.json`, id, path and branch changed, the state sealing the
# copied view's digest (STATES=0: views only). With BACKEND=git, git repositories and `git
# worktree add --no-checkout` instead (their records copied the same way). `setup` checks
# that `status` lists every workspace as a normal row, with no problem or warning.
# Each round runs every binary on every repository: first repeated (one untimed `status`
# before the timed one), then right after a repository change (a new bookmark or branch
# before the timed run). Medians of the rounds are printed, in ms.
#
# Environment (all optional):
#   ROUNDS      rounds for `cpu` [10]
#   STATUS_N    workspaces of the big repository [1000]
#   BACKEND     jj or git [jj]
#   ARGS        arguments after `status` (such as --json) []
#   STATES      0: `setup` copies only the views, no state files (records as an older
#               version left them, read as legacy ones) [1]
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

die() {
    printf 'status_cpu.sh: %s\n' "$*" >&2
    exit 1
}
[[ $# -ge 2 ]] || die "usage: status_cpu.sh setup|cpu|instructions|rss DIR [BIN...]"
what=$1 dir=$2
shift 2
BACKEND=${BACKEND:-jj}
STATUS_N=${STATUS_N:-1000}
ROUNDS=${ROUNDS:-10}
STATES=${STATES:-1}
read -r -a extra <<<"${ARGS:-}"

environment() {
    isolated_env "$dir"
    export AI_WORKSPACES_ROOT=$dir/workspaces GIT_CONFIG_GLOBAL=$dir/gitconfig
}

# copy_record FROM TO [SED_ARGS...]: FROM (real's view or state) with b$i's id, path and
# branch in place of real's.
copy_record() {
    sed -e "s|\"workspace_id\": \"real\"|\"workspace_id\": \"b$i\"|" \
        -e "s|\"workspace_path\": \"$real\"|\"workspace_path\": \"$ns/b$i\"|" \
        -e "s|\"branch\": \"agent-workspace/real\"|\"branch\": \"agent-workspace/b$i\"|" \
        "${@:3}" "$1" >"$2"
}

# make_one REPO N BIN: a repository with N workspaces, one made by a real run.
make_one() {
    local repo=$1 n=$2 bin=$3 real ns template i sha
    if [[ $BACKEND == jj ]]; then
        synthetic_repo "$repo" 1000 >/dev/null 2>&1
    else
        mkdir -p "$repo"
        (
            cd "$repo"
            for ((i = 0; i < 1000; i++)); do
                d=src/m$((i / 500))/s$((i / 50 % 10))
                [[ -d $d ]] || mkdir -p "$d"
                printf 'file %d\nsome content\n' "$i" >"$d/f$i.txt"
            done
            git init -q && git add -A && git commit -qm "synthetic repository"
        )
    fi
    cd "$repo"
    # shellcheck disable=SC2016 # expanded by the inner shell
    real=$("$bin" run real -- sh -c 'printf %s "$AGENT_WORKSPACE_PATH"')
    ns=$(dirname "$real")
    template=$real/.agent-workflow.json
    for ((i = 2; i <= n; i++)); do
        if [[ $BACKEND == jj ]]; then
            jj --quiet workspace add --sparse-patterns empty --name "b$i" "$ns/b$i"
        else
            git worktree add -q --no-checkout -b "agent-workspace/b$i" "$ns/b$i" HEAD
        fi
        copy_record "$template" "$ns/b$i/.agent-workflow.json"
        if [[ $STATES == 1 ]]; then
            # The state is the view's text behind a header with the view's digest: the
            # same edits, and the digest of the copied view (no previous view).
            sha=$(sha256sum <"$ns/b$i/.agent-workflow.json")
            copy_record "$ns/.state/real.json" "$ns/.state/b$i.json" \
                -e "s|\"view_sha256\":\"[0-9a-f]*\"|\"view_sha256\":\"${sha%% *}\"|" \
                -e 's|"previous_view_sha256":"[0-9a-f]*"|"previous_view_sha256":null|'
        fi
    done
    check_rows "$repo" "$n" "$bin"
}

# check_rows REPO N BIN: `status` lists N workspaces and reports nothing else: every copied
# record reads as one `run` wrote (no problem, no warning).
check_rows() {
    local lines
    lines=$(cd "$1" && "$3" status 2>"$dir/status.err" | wc -l)
    [[ $lines == $(($2 + 1)) && ! -s $dir/status.err ]] ||
        die "status in $1 printed $lines lines for $2 workspaces: $(head -3 "$dir/status.err")"
}

change() { # change REPO: one repository change that touches no workspace
    ticks=$((${ticks:-0} + 1))
    if [[ $BACKEND == jj ]]; then
        jj -R "$1" --quiet --ignore-working-copy bookmark create "tick-$RANDOM-$ticks" -r 'root()+'
    else
        git -C "$1" branch "tick-$RANDOM-$ticks"
    fi
}

cpu_ms() { # cpu_ms BIN: task-clock of one `status` in the current directory, in ms
    perf stat -x, -e task-clock -o "$dir/perf.out" -- "$1" status "${extra[@]}" >/dev/null 2>"$dir/err"
    awk -F, '/task-clock/ { printf "%.3f\n", $1 }' "$dir/perf.out"
}

median() {
    sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
        else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

instructions() { # instructions BIN: callgrind's instruction count of one `status`
    valgrind --tool=callgrind --callgrind-out-file="$dir/cg.out" "$1" status "${extra[@]}" \
        >/dev/null 2>"$dir/cg.err"
    awk '/Collected/ { print $4 }' "$dir/cg.err"
}

environment
repos=("$dir/repos/s10" "$dir/repos/s$STATUS_N")
case $what in
setup)
    [[ $# -eq 1 ]] || die "setup needs the binary that makes the first workspace"
    mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_STATE_HOME" \
        "$AI_WORKSPACES_ROOT" "$dir/repos"
    printf '[user]\nname = "Bench"\nemail = "bench@example.invalid"\n' >"$JJ_CONFIG"
    printf '[user]\n\tname = Bench\n\temail = bench@example.invalid\n' >"$GIT_CONFIG_GLOBAL"
    make_one "${repos[0]}" 10 "$1"
    make_one "${repos[1]}" "$STATUS_N" "$1"
    ;;
cpu)
    declare -A samples
    for ((r = 1; r <= ROUNDS; r++)); do
        for bin in "$@"; do
            for repo in "${repos[@]}"; do
                cd "$repo"
                "$bin" status "${extra[@]}" >/dev/null 2>&1
                samples["$bin|$repo|repeated"]+="$(cpu_ms "$bin") "
                change "$repo"
                samples["$bin|$repo|changed"]+="$(cpu_ms "$bin") "
            done
        done
    done
    printf 'load %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)"
    for bin in "$@"; do
        for kind in repeated changed; do
            small=$(printf '%s\n' ${samples["$bin|${repos[0]}|$kind"]} | median)
            big=$(printf '%s\n' ${samples["$bin|${repos[1]}|$kind"]} | median)
            awk -v b="$bin" -v k="$kind" -v s="$small" -v g="$big" \
                'BEGIN { printf "%s %-8s 10: %.2f ms  %s: %.2f ms  ratio %.2fx\n", b, k, s, "N", g, g / s }'
        done
    done
    ;;
instructions)
    for bin in "$@"; do
        for repo in "${repos[@]}"; do
            cd "$repo"
            "$bin" status "${extra[@]}" >/dev/null 2>&1
            rep=$(instructions "$bin")
            change "$repo"
            chg=$(instructions "$bin")
            printf '%s %s repeated %s changed %s\n' "$bin" "$(basename "$repo")" "$rep" "$chg"
        done
    done
    ;;
rss)
    for bin in "$@"; do
        cd "${repos[1]}"
        "$bin" status "${extra[@]}" >/dev/null 2>&1
        rep=$(/usr/bin/time -f %M "$bin" status "${extra[@]}" 2>&1 >/dev/null | tail -1)
        change "${repos[1]}"
        chg=$(/usr/bin/time -f %M "$bin" status "${extra[@]}" 2>&1 >/dev/null | tail -1)
        printf '%s peak RSS KiB: repeated %s changed %s\n' "$bin" "$rep" "$chg"
    done
    if [[ $BACKEND == jj ]]; then # what status's jj child takes alone
        cd "${repos[1]}"
        rep=$(/usr/bin/time -f %M jj --ignore-working-copy workspace list 2>&1 >/dev/null | tail -1)
        printf 'jj workspace list peak RSS KiB: %s\n' "$rep"
    fi
    ;;
*) die "unknown step $what" ;;
esac
