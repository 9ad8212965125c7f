#!/usr/bin/env bash
# The warm run's own work, side by side for several binaries: CPU time, instructions and
# system calls of `run w<i> -- true` in a workspace whose record holds a full history.
#
#   bench/warm_cpu.sh setup DIR BIN...          a repository, and per binary i a workspace
#                                               w<i> run RUNS_KEPT times (kept; ~1-3 min)
#   bench/warm_cpu.sh cpu DIR BIN...            ROUNDS rounds of perf stat -r REPEAT task-clock:
#                                               the whole run (supervisor, direnv, guard, true)
#                                               and the supervisor alone (--no-inherit)
#   bench/warm_cpu.sh instructions DIR BIN...   callgrind's instruction counts of the
#                                               supervisor and of the guard (one run each)
#   bench/warm_cpu.sh syscalls DIR BIN...       system calls of the supervisor and of the guard
#                                               (strace -ff, one run each)
#   bench/warm_cpu.sh wall DIR BIN...           wall time: ITERATIONS iterations, each running
#                                               every binary once in a rotating order; medians,
#                                               and the median per-iteration ratio to the first
#
# The binaries are given in the same order to every mode: binary i has its own workspace
# root DIR/root-i and its workspace w<i> (jj's workspace names are the repository's). The guard runs behind `direnv exec`; to count its instructions a
# `direnv` first in PATH runs the real one with the guard under callgrind (valgrind keeps
# the process, so the guard still sees its supervisor as its parent). Under valgrind the
# guard's C runtime reads /proc/self/maps, whose length is valgrind's layout: its count
# moves by a few thousand instructions with the binary's size, whatever the code.
#
# Environment (all optional): FILES repository size [10000]; RUNS_KEPT runs made in setup
# [50: a record's full history]; ROUNDS [5]; REPEAT perf stat's -r [30]; ITERATIONS [60].
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

die() {
    printf 'warm_cpu.sh: %s\n' "$*" >&2
    exit 1
}
[[ $# -ge 3 ]] || die "usage: warm_cpu.sh setup|cpu|instructions|syscalls|wall DIR BIN..."
what=$1
mkdir -p "$2"
dir=$(cd "$2" && pwd -P)
shift 2
bins=()
for b in "$@"; do bins+=("$(cd "$(dirname "$b")" && pwd -P)/$(basename "$b")"); done
FILES=${FILES:-10000} RUNS_KEPT=${RUNS_KEPT:-50} ROUNDS=${ROUNDS:-5} REPEAT=${REPEAT:-30}
ITERATIONS=${ITERATIONS:-60}
DIRENV=$(command -v direnv)

isolated_env "$dir"

# aw I ARGS...: binary I in its own workspace root, in the repository.
aw() {
    local i=$1
    shift
    (cd "$dir/repo" && AI_WORKSPACES_ROOT=$dir/root-$i "${bins[$i]}" "$@")
}

case $what in
setup)
    mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_STATE_HOME"
    printf '[user]\nname = "Bench"\nemail = "bench@example.invalid"\n' >"$JJ_CONFIG"
    [[ -d $dir/repo ]] || synthetic_repo "$dir/repo" "$FILES" >/dev/null 2>&1
    for ((r = 0; r < RUNS_KEPT; r++)); do
        for i in "${!bins[@]}"; do aw "$i" run "w$i" -- true >/dev/null; done
    done
    # Workspaces made one after the other differ: an operation after a workspace's last
    # checkout (the next one's creation) makes its warm run list jj's operation heads to
    # learn whether it is stale, which the last one made skips. One operation after all of
    # them, and a run each to note it, puts every workspace in the same (the usual) state.
    jj -R "$dir/repo" --quiet --ignore-working-copy bookmark create warm-cpu -r 'root()+'
    for i in "${!bins[@]}"; do aw "$i" run "w$i" -- true >/dev/null; done
    echo "workspace w<i> of each binary i run $RUNS_KEPT times in $dir"
    ;;
cpu)
    # task-clock in ms of REPEAT runs (the mean perf stat prints); extra args to perf stat.
    cpu() {
        local i=$1
        shift
        (cd "$dir/repo" && AI_WORKSPACES_ROOT=$dir/root-$i perf stat -x, "$@" -r "$REPEAT" \
            -e task-clock -- "${bins[$i]}" run "w$i" -- true 2>&1 >/dev/null) |
            awk -F, '/task-clock/ { printf "%.2f", $1 }'
    }
    median() {
        sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2];
            else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
    }
    echo "task-clock, ms per run (mean of $REPEAT), whole run | supervisor alone; load average"
    declare -A all=() alone=()
    for ((r = 0; r < ROUNDS; r++)); do
        line="round $r:"
        for i in "${!bins[@]}"; do
            a=$(cpu "$i") b=$(cpu "$i" --no-inherit)
            all[$i]+="$a " alone[$i]+="$b "
            line+=" [$i] $a | $b"
        done
        echo "$line; $(cut -d' ' -f1 /proc/loadavg)"
    done
    for i in "${!bins[@]}"; do
        echo "[$i] median of the rounds: whole run $(tr ' ' '\n' <<<"${all[$i]}" | grep . | median) ms," \
            "supervisor alone $(tr ' ' '\n' <<<"${alone[$i]}" | grep . | median) ms (${bins[$i]})"
    done
    ;;
instructions)
    mkdir -p "$dir/wrap" "$dir/cg"
    cat >"$dir/wrap/direnv" <<EOF
#!/usr/bin/env bash
if [[ \$1 == exec ]]; then
    d=\$2 bin=\$3
    shift 3
    exec "$DIRENV" exec "\$d" valgrind --tool=callgrind --trace-children=no \\
        --callgrind-out-file="\$CG_OUT.guard" "\$bin" "\$@" 2>"\$CG_OUT.guard.log"
fi
exec "$DIRENV" "\$@"
EOF
    chmod +x "$dir/wrap/direnv"
    for i in "${!bins[@]}"; do
        out=$dir/cg/$i
        rm -f "$out".*
        (cd "$dir/repo" && PATH=$dir/wrap:$PATH CG_OUT=$out AI_WORKSPACES_ROOT=$dir/root-$i \
            valgrind --tool=callgrind --trace-children=no --callgrind-out-file="$out.supervisor" \
            "${bins[$i]}" run "w$i" -- true >/dev/null 2>"$out.supervisor.log")
        echo "[$i] supervisor $(awk '/^summary:/ { print $2 }' "$out.supervisor")" \
            "guard $(awk '/^summary:/ { print $2 }' "$out.guard") (${bins[$i]})"
    done
    echo "profiles in $dir/cg (callgrind_annotate --inclusive=yes FILE)"
    ;;
syscalls)
    for i in "${!bins[@]}"; do
        out=$dir/strace-$i
        rm -rf "$out"
        mkdir -p "$out"
        (cd "$dir/repo" && AI_WORKSPACES_ROOT=$dir/root-$i strace -ff -o "$out/t" \
            "${bins[$i]}" run "w$i" -- true >/dev/null)
        sup=$(grep -l "^execve(\"${bins[$i]}\", \[\"${bins[$i]}\", \"run\"" "$out"/t.* | head -n1)
        # direnv execs the guard from one of its threads; the new image goes on in the
        # thread group leader's file, after strace's "superseded by execve".
        leader=$(grep -l "^execve(\"$DIRENV\".*\"__exec\"" "$out"/t.* | head -n1)
        grep -v '^---\|^+++\|resumed>' "$sup" >"$out/supervisor"
        awk '/superseded by execve/ { f = 1; next } f' "$leader" |
            grep -v '^---\|^+++\|resumed>' >"$out/guard"
        echo "[$i] supervisor $(wc -l <"$out/supervisor") guard $(wc -l <"$out/guard")" \
            "(${bins[$i]}; per call in $out/supervisor and $out/guard)"
    done
    ;;
wall)
    declare -A times=() ratios=()
    n=${#bins[@]}
    for ((r = 0; r < ITERATIONS; r++)); do
        declare -A us=()
        for ((k = 0; k < n; k++)); do
            i=$(((k + r) % n))
            s=${EPOCHREALTIME/./}
            aw "$i" run "w$i" -- true >/dev/null
            us[$i]=$((${EPOCHREALTIME/./} - s))
            times[$i]+="${us[$i]} "
        done
        for i in "${!bins[@]}"; do
            ratios[$i]+="$(awk -v a="${us[$i]}" -v b="${us[0]}" 'BEGIN { printf "%.3f", a / b }') "
        done
        unset us
    done
    median() {
        tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END {
            if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
    }
    echo "$ITERATIONS iterations; load average $(cut -d' ' -f1-3 /proc/loadavg) at the end"
    for i in "${!bins[@]}"; do
        echo "[$i] median $(median <<<"${times[$i]}" | awk '{ printf "%.1f", $1 / 1000 }') ms," \
            "median ratio to [0] $(median <<<"${ratios[$i]}")x (${bins[$i]})"
    done
    ;;
*) die "unknown mode $what (setup, cpu, instructions, syscalls or wall)" ;;
esac
