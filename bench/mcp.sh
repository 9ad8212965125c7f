#!/usr/bin/env bash
# The MCP server's own cost: a workspace_run of `true` in an existing workspace, timed from the
# client, against the CLI's warm `agent-workspace run w -- true` started by the same client.
# Target: <= 1.2x. Both sides are timed the same way, from one client process, their samples
# interleaved (bench/mcp_overhead.py says how): a bare JSON-RPC client against subprocess.run,
# and the Python MCP SDK's client against anyio.run_process (with the SDK's own cost of one
# request, a ping). hyperfine's time of the CLI is given beside them. See docs/benchmarks.md.
#
#   bench/mcp.sh
#
# Environment (all optional):
#   AGENT_WORKSPACE_BIN   binary to measure; default: build the release binary with
#                         CARGO_TARGET_DIR (default ${TMPDIR:-/tmp}/aw-bench-target)
#   RUNS, ROUNDS          samples per side and round, rounds [30, 3]
#   PYTHON                interpreter with the `mcp` package [python3]
#   ENVRC=0               no `.envrc` in the repository (default 1: one exporting a variable,
#                         as in bench/bench.sh, so every run goes through `direnv exec`)
#   BASELINE              another build's binary: its server is called in the same loop as
#                         the measured one (bare client), for a side-by-side comparison
#   KEEP_SCRATCH=1        keep the scratch directory (its path is printed)
set -euo pipefail
export LC_ALL=C

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
project=$(cd "$here/.." && pwd -P)
case ${1:-} in
-h | --help)
    sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
    exit 0
    ;;
esac
RUNS=${RUNS:-30}
ROUNDS=${ROUNDS:-3}
PYTHON=${PYTHON:-python3}

ENVRC=${ENVRC:-1}
tools=(jj hyperfine "$PYTHON")
[[ $ENVRC == 1 ]] && tools+=(direnv)
for tool in "${tools[@]}"; do
    command -v "$tool" >/dev/null || { echo "mcp.sh: $tool is missing" >&2; exit 1; }
done
"$PYTHON" -c 'import mcp' 2>/dev/null || {
    echo "mcp.sh: $PYTHON cannot import mcp: $PYTHON -m pip install 'mcp>=2'" >&2
    exit 1
}
# The interpreter itself, and where mcp is: the scratch HOME below hides pyenv and user sites.
python_exe=$("$PYTHON" -c 'import sys; print(sys.executable)')
python_path=$("$PYTHON" -c 'import os, mcp; print(os.path.dirname(os.path.dirname(mcp.__file__)))')

if [[ -z ${AGENT_WORKSPACE_BIN:-} ]]; then
    export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-${TMPDIR:-/tmp}/aw-bench-target}
    (cd "$project" && cargo build --release --locked --quiet)
    AGENT_WORKSPACE_BIN=$CARGO_TARGET_DIR/release/agent-workspace
fi
aw=$AGENT_WORKSPACE_BIN

scratch=$(mktemp -d "${TMPDIR:-/tmp}/aw-mcp-bench.XXXXXX")
if [[ ${KEEP_SCRATCH:-0} == 1 ]]; then
    echo "scratch: $scratch" >&2
else
    trap 'rm -rf "$scratch"' EXIT
fi
export HOME=$scratch/home XDG_CONFIG_HOME=$scratch/config XDG_CACHE_HOME=$scratch/cache \
    XDG_DATA_HOME=$scratch/data XDG_STATE_HOME=$scratch/state JJ_CONFIG=$scratch/jj.toml
mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_CACHE_HOME" "$XDG_DATA_HOME" "$XDG_STATE_HOME"
printf '[user]\nname = "Bench"\nemail = "bench@example.com"\n' >"$JJ_CONFIG"

repo=$scratch/repo
jj git init -q "$repo" 2>/dev/null || jj git init "$repo" >/dev/null 2>&1
(cd "$repo" && for i in $(seq 1 1000); do echo "$i" >"f$i.txt"; done)
[[ $ENVRC == 1 ]] && echo 'export BENCH_VAR=1' >"$repo/.envrc"
(cd "$repo" && jj commit -m base >/dev/null 2>&1)
(cd "$repo" && "$aw" create w >/dev/null)

median() { sort -g | awk '{ a[NR] = $1 } END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)
samples=$scratch/samples
mkdir -p "$samples"
for round in $(seq 1 "$ROUNDS"); do
    (cd "$repo" && hyperfine -N --warmup 5 --runs "$RUNS" --export-json "$scratch/cli.json" \
        "$aw run w -- true" >/dev/null)
    "$PYTHON" -c 'import json, sys; [print(t) for t in json.load(open(sys.argv[1]))["results"][0]["times"]]' \
        "$scratch/cli.json" >>"$samples/hyperfine"
    (cd "$repo" && PYTHONPATH=$python_path "$python_exe" "$here/mcp_overhead.py" "$aw" w "$RUNS" ${BASELINE:+"$BASELINE"}) \
        >"$scratch/round.json"
    "$PYTHON" -c '
import json, sys
doc = json.load(open(sys.argv[1]))
for client, series in doc.items():
    for side, times in series.items():
        with open(f"{sys.argv[2]}/{client}-{side}", "a") as f:
            f.writelines(f"{t}\n" for t in times)
' "$scratch/round.json" "$samples"
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)

ms() { awk '{ printf "%.2f", $1 * 1000 }'; }
stat() { # file -> "median | p25 | fastest | n"
    local n p25
    n=$(wc -l <"$1")
    p25=$(sort -g "$1" | sed -n "$(((n + 3) / 4))p" | ms)
    echo "$(median <"$1" | ms) ms | $p25 ms | $(sort -g "$1" | head -n 1 | ms) ms | $n"
}
ratio() { # mcp-file cli-file -> "median ratio | p25 ratio | fastest ratio"
    local a b
    a=$(median <"$1"); b=$(median <"$2")
    local r1 r2 r3 n1 n2
    r1=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')
    n1=$(wc -l <"$1"); n2=$(wc -l <"$2")
    a=$(sort -g "$1" | sed -n "$(((n1 + 3) / 4))p"); b=$(sort -g "$2" | sed -n "$(((n2 + 3) / 4))p")
    r2=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')
    a=$(sort -g "$1" | head -n 1); b=$(sort -g "$2" | head -n 1)
    r3=$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')
    echo "${r1}x | ${r2}x | ${r3}x"
}
echo "| case | median | p25 | fastest | samples |"
echo "|---|---|---|---|---|"
echo "| bare client: CLI \`run w -- true\` (subprocess.run) | $(stat "$samples/bare-cli") |"
echo "| bare client: \`workspace_run\` of \`true\` (one JSON-RPC round trip) | $(stat "$samples/bare-mcp") |"
echo "| **ratio, bare client (target <= 1.20)** | $(ratio "$samples/bare-mcp" "$samples/bare-cli") | |"
if [[ -n ${BASELINE:-} ]]; then
    echo "| bare client: \`workspace_run\` on the BASELINE build's server | $(stat "$samples/bare-baseline") |"
    echo "| ratio, BASELINE build / CLI | $(ratio "$samples/bare-baseline" "$samples/bare-cli") | |"
fi
echo "| SDK client: CLI (anyio.run_process) | $(stat "$samples/sdk-cli") |"
echo "| SDK client: \`workspace_run\` (session.call_tool) | $(stat "$samples/sdk-mcp") |"
echo "| ratio, SDK client | $(ratio "$samples/sdk-mcp" "$samples/sdk-cli") | |"
echo "| SDK client: a ping (the SDK's own cost of a request) | $(stat "$samples/sdk-ping") |"
echo "| hyperfine: CLI \`run w -- true\` | $(stat "$samples/hyperfine") |"
echo "repository: 1,000 files, $([[ $ENVRC == 1 ]] && echo "an .envrc (runs go through direnv exec)" || echo "no .envrc")"
echo "load average: before $load_before, after $load_after"
