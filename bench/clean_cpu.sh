#!/usr/bin/env bash
# `clean`'s CPU time against its floor, one or more builds side by side in the same rounds.
#
#   bench/clean_cpu.sh BINARY...
#
# Each round makes a fresh workspace for each build (`run c<round>-<build> -- true`) and one
# for the floor, then times, in an order that rotates from round to round, each build's
# `clean` and the floor: jj `jj workspace forget` + `rm -rf` (BACKEND=git: `git worktree
# remove --force`), each under GNU time (user + system of the process and its children).
# CPU time, not wall time: the removal's wall time is the disk's, and other work on the
# machine changes it several times over.
#
# Environment (optional): BACKEND jj or git [jj]; FILES repository size [20000]; ROUNDS [10];
# KEEP_SCRATCH=1 keeps the scratch directory.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

[[ $# -ge 1 ]] || {
    echo "usage: bench/clean_cpu.sh BINARY..." >&2
    exit 2
}
bins=()
for b in "$@"; do bins+=("$(cd "$(dirname "$b")" && pwd -P)/$(basename "$b")"); done
BACKEND=${BACKEND:-jj} FILES=${FILES:-20000} ROUNDS=${ROUNDS:-10}
command -v /usr/bin/time >/dev/null || { echo "needs GNU time (/usr/bin/time)" >&2; exit 2; }

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/aw-clean-cpu.XXXXXX")
cleanup() { [[ ${KEEP_SCRATCH:-0} == 1 ]] && echo "scratch kept: $SCRATCH" || rm -rf "$SCRATCH"; }
trap cleanup EXIT
isolated_home "$SCRATCH"
mkdir -p "$SCRATCH/floor"
LOG=$SCRATCH/log.txt
quiet() { "$@" >>"$LOG" 2>&1 || { tail -n 20 "$LOG" >&2; echo "failed: $*" >&2; exit 1; }; }
# cpu CMD...: the user + system seconds of CMD and its children, in $CPU.
cpu() {
    quiet /usr/bin/time -o "$SCRATCH/time" -f "%U %S" "$@"
    CPU=$(awk '{ printf "%.3f", $1 + $2 }' "$SCRATCH/time")
}
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "$BACKEND repository of $FILES files..."
repo=$SCRATCH/repo
if [[ $BACKEND == git ]]; then
    (
        mkdir -p "$repo" && cd "$repo"
        for ((i = 0; i < FILES; i++)); do
            d=src/m$((i / 500))/s$((i / 50 % 10))
            [[ -d $d ]] || mkdir -p "$d"
            printf 'file %d\nsome content to make it a little less tiny\n' "$i" >"$d/f$i.txt"
        done
        echo 'export BENCH=1' >.envrc
        git init --quiet --initial-branch=main
        git -c user.name=Bench -c user.email=bench@example.invalid add -A
        git -c user.name=Bench -c user.email=bench@example.invalid commit --quiet -m synthetic
    ) >>"$LOG" 2>&1
    direnv allow "$repo" >/dev/null 2>&1
else
    synthetic_repo "$repo" "$FILES" >>"$LOG" 2>&1
fi
cd "$repo"
echo "load average at the start: $(cut -d' ' -f1-3 /proc/loadavg)"

# shellcheck disable=SC2016 # expanded by the inner shell
FORGET_AND_REMOVE='jj --quiet workspace forget "$1" && rm -rf "$2"'
declare -A samples=()
for ((i = 0; i < ROUNDS; i++)); do
    for b in "${!bins[@]}"; do
        AI_WORKSPACES_ROOT=$SCRATCH/root-$b quiet "${bins[$b]}" run "c$i-$b" -- true
    done
    floor=$SCRATCH/floor/f$i
    case $BACKEND in
    git) quiet git worktree add --quiet -b "floor/f$i" "$floor" ;;
    *) quiet jj --quiet workspace add --name "f$i" "$floor" ;;
    esac
    order=(floor "${!bins[@]}")
    k=$((i % ${#order[@]}))
    order=("${order[@]:k}" "${order[@]:0:k}")
    line="round $i:"
    for side in "${order[@]}"; do
        case $side/$BACKEND in
        floor/git) cpu git worktree remove --force "$floor" ;;
        floor/*) cpu sh -c "$FORGET_AND_REMOVE" _ "f$i" "$floor" ;;
        *) AI_WORKSPACES_ROOT=$SCRATCH/root-$side cpu "${bins[$side]}" clean "c$i-$side" ;;
        esac
        samples[$side]+=" $CPU"
        line+=" $side=$CPU"
    done
    echo "$line (load $(cut -d' ' -f1 /proc/loadavg))"
done

echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
# shellcheck disable=SC2086 # the samples are words
floor_median=$(median ${samples[floor]})
echo "| build | median CPU (s) | ratio to the floor's median ($floor_median s) |"
echo "| --- | ---: | ---: |"
for b in "${!bins[@]}"; do
    # shellcheck disable=SC2086
    m=$(median ${samples[$b]})
    echo "| ${bins[$b]} | $m | $(awk -v a="$m" -v b="$floor_median" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else printf "-" }') |"
done
