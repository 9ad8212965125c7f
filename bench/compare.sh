#!/usr/bin/env bash
# Two builds of agent-workspace side by side, in the same minutes, against the same floors:
# the warm run (`run w -- true` against `direnv exec <ws> true`) and the cold run plus its
# clean (`run new-<i> -- true` against `jj workspace add` + `direnv allow` + `direnv exec`;
# `clean` against `jj workspace forget` + `rm -rf`), on one synthetic jj repository. Each
# iteration runs the floor and both builds one after the other, in a rotating order, so a
# change of load hits all three alike; the figures are medians of per-iteration ratios.
#
#   bench/compare.sh OLD_BINARY NEW_BINARY
#
# Environment (optional): FILES repository size [20000]; RUNS warm iterations [30];
# COLD_RUNS cold iterations [8]; KEEP_SCRATCH=1 keeps the scratch directory.
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
# shellcheck source=bench/lib.sh
. "$here/lib.sh"

[[ $# -eq 2 ]] || {
    echo "usage: bench/compare.sh OLD_BINARY NEW_BINARY" >&2
    exit 2
}
OLD=$(cd "$(dirname "$1")" && pwd -P)/$(basename "$1")
NEW=$(cd "$(dirname "$2")" && pwd -P)/$(basename "$2")
FILES=${FILES:-20000} RUNS=${RUNS:-30} COLD_RUNS=${COLD_RUNS:-8}
JJ=$(command -v jj) DIRENV=$(command -v direnv)

SCRATCH=$(mktemp -d "${TMPDIR:-/tmp}/aw-compare.XXXXXX")
cleanup() { [[ ${KEEP_SCRATCH:-0} == 1 ]] && echo "scratch kept: $SCRATCH" || rm -rf "$SCRATCH"; }
trap cleanup EXIT
isolated_home "$SCRATCH"
mkdir -p "$SCRATCH/floor"
LOG=$SCRATCH/log.txt

quiet() { "$@" >>"$LOG" 2>&1 || { tail -n 20 "$LOG" >&2; echo "failed: $*" >&2; exit 1; }; }
# timed CMD...: the wall time of CMD in microseconds, in $US.
timed() { local s=${EPOCHREALTIME/./}; quiet "$@"; US=$((${EPOCHREALTIME/./} - s)); }
median() { printf '%s\n' "$@" | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", a / b }'; }
# aw WHICH ARGS...: the build WHICH (old or new), in its own workspace root.
aw() {
    local bin=$NEW
    [[ $1 == old ]] && bin=$OLD
    AI_WORKSPACES_ROOT=$SCRATCH/root-$1 "$bin" "${@:2}"
}
old() { aw old "$@"; }
new() { aw new "$@"; }

echo "repository of $FILES files..."
synthetic_repo "$SCRATCH/repo" "$FILES" >>"$LOG" 2>&1
cd "$SCRATCH/repo"
load_start=$(cut -d' ' -f1-3 /proc/loadavg)

# Warm: each build's workspace w made once, then RUNS iterations of floor, old, new.
# (jj's workspace names are the repository's: each build's ids carry its name.)
quiet old run w-old -- true
quiet new run w-new -- true
# w-new's creation is an operation after w-old's checkout, which makes w-old's warm runs
# list jj's operation heads (to learn whether it is stale) and w-new's not: one operation
# after both, and a run of each to note it, puts both in the same (the usual) state.
quiet "$JJ" --ignore-working-copy bookmark create compare-tick -r 'root()+'
quiet old run w-old -- true
quiet new run w-new -- true
# shellcheck disable=SC2016 # expanded by the inner shell, in the workspace's environment
ws=$(old run w-old -- sh -c 'printf %s "$AGENT_WORKSPACE_PATH"')
# A kept direnv environment is used only once every file the evaluation read is older than
# the run by a margin (a file changed within the same second could be missed): w-new's files
# are a cold run younger than w-old's, so without this wait the loop timed w-new evaluating
# and w-old reusing. Both past the margin, then one run each to keep what they load.
sleep 3
quiet old run w-old -- true
quiet new run w-new -- true
declare -a wr_old=() wr_new=()
for ((i = 0; i < RUNS; i++)); do
    declare -A t=()
    order=(floor old new)
    order=("${order[@]:i%3}" "${order[@]:0:i%3}")
    for side in "${order[@]}"; do
        case $side in
        floor) timed "$DIRENV" exec "$ws" true ;;
        *) timed "$side" run "w-$side" -- true ;;
        esac
        t[$side]=$US
    done
    wr_old+=("$(ratio "${t[old]}" "${t[floor]}")")
    wr_new+=("$(ratio "${t[new]}" "${t[floor]}")")
    unset t
done

# Cold: a new id per iteration and its clean, against jj's and direnv's own steps.
declare -a cr_old=() cr_new=() kr_old=() kr_new=()
for ((i = 0; i < COLD_RUNS; i++)); do
    declare -A c=() k=()
    order=(floor old new)
    order=("${order[@]:i%3}" "${order[@]:0:i%3}")
    for side in "${order[@]}"; do
        case $side in
        floor)
            timed sh -c '"$1" --quiet workspace add --name "$2" "$3" && "$4" allow "$3" && "$4" exec "$3" true' \
                _ "$JJ" "f$i" "$SCRATCH/floor/f$i" "$DIRENV"
            c[floor]=$US
            timed sh -c '"$1" --quiet workspace forget "$2" && rm -rf "$3"' _ "$JJ" "f$i" "$SCRATCH/floor/f$i"
            k[floor]=$US
            ;;
        *)
            timed "$side" run "c$i-$side" -- true
            c[$side]=$US
            timed "$side" clean "c$i-$side"
            k[$side]=$US
            ;;
        esac
    done
    cr_old+=("$(ratio "${c[old]}" "${c[floor]}")") cr_new+=("$(ratio "${c[new]}" "${c[floor]}")")
    kr_old+=("$(ratio "${k[old]}" "${k[floor]}")") kr_new+=("$(ratio "${k[new]}" "${k[floor]}")")
    unset c k
done

load_end=$(cut -d' ' -f1-3 /proc/loadavg)
cat <<EOF

$FILES files; $RUNS warm and $COLD_RUNS cold iterations; load average $load_start at the start, $load_end at the end
old: $OLD
new: $NEW

| case (median of per-iteration ratios to the floor) | old | new |
|---|---|---|
| warm \`run w -- true\` / \`direnv exec <ws> true\` | $(median "${wr_old[@]}")x | $(median "${wr_new[@]}")x |
| cold \`run c<i> -- true\` / \`jj workspace add\` + \`direnv allow\` + \`direnv exec\` | $(median "${cr_old[@]}")x | $(median "${cr_new[@]}")x |
| \`clean c<i>\` / \`jj workspace forget\` + \`rm -rf\` | $(median "${kr_old[@]}")x | $(median "${kr_new[@]}")x |
EOF
