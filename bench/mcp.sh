#!/usr/bin/env bash
# The MCP server's own cost: a workspace_run of `true` in an existing workspace, timed from an
# independent client (the Python MCP SDK, tests/it/mcp_client.py), against the CLI's warm
# `agent-workspace run w -- true` timed by hyperfine. Target: <= 1.2x. See docs/benchmarks.md.
#
#   bench/mcp.sh
#
# Environment (all optional):
#   AGENT_WORKSPACE_BIN   binary to measure; default: build the release binary with
#                         CARGO_TARGET_DIR (default ${TMPDIR:-/tmp}/aw-bench-target)
#   RUNS, ROUNDS          calls per side and round, rounds (alternating the sides) [30, 3]
#   PYTHON                interpreter with the `mcp` package [python3]
#   ENVRC=0               no `.envrc` in the repository (default 1: one exporting a variable,
#                         as in bench/bench.sh, so every run goes through `direnv exec`)
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

cli_samples=$scratch/cli.txt
mcp_samples=$scratch/mcp.txt
: >"$cli_samples"
: >"$mcp_samples"
plan=$(printf '{"server": ["%s", "mcp"], "cwd": "%s", "steps": [{"tool": "workspace_run", "args": {"id": "w", "command": ["true"]}, "repeat": 5}, {"tool": "workspace_run", "args": {"id": "w", "command": ["true"]}, "repeat": %d}]}' "$aw" "$repo" "$RUNS")
for round in $(seq 1 "$ROUNDS"); do
    cli() {
        (cd "$repo" && hyperfine -N --warmup 5 --runs "$RUNS" --export-json "$scratch/cli.json" \
            "$aw run w -- true" >/dev/null)
        "$PYTHON" -c 'import json, sys; [print(t) for t in json.load(open(sys.argv[1]))["results"][0]["times"]]' \
            "$scratch/cli.json" >>"$cli_samples"
    }
    mcp() {
        (cd "$repo" && PYTHONPATH=$python_path "$python_exe" "$project/tests/it/mcp_client.py" "$plan") \
            | "$PYTHON" -c 'import json, sys; [print(t) for t in json.load(sys.stdin)["steps"][1]["seconds"]]' \
                >>"$mcp_samples"
    }
    if ((round % 2)); then cli; mcp; else mcp; cli; fi
done

ms() { awk '{ printf "%.1f", $1 * 1000 }'; }
cli_ms=$(median <"$cli_samples" | ms)
mcp_ms=$(median <"$mcp_samples" | ms)
cli_min=$(sort -g "$cli_samples" | head -n 1 | ms)
mcp_min=$(sort -g "$mcp_samples" | head -n 1 | ms)
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
echo "| case | median | fastest | samples |"
echo "|---|---|---|---|"
echo "| CLI: \`run w -- true\` (hyperfine) | $cli_ms ms | $cli_min ms | $(wc -l <"$cli_samples") |"
echo "| MCP: \`workspace_run\` of \`true\` (from the client) | $mcp_ms ms | $mcp_min ms | $(wc -l <"$mcp_samples") |"
echo "| ratio MCP / CLI (target <= 1.20) | $(ratio "$mcp_ms" "$cli_ms")x | $(ratio "$mcp_min" "$cli_min")x | |"
echo "repository: 1,000 files, $([[ $ENVRC == 1 ]] && echo "an .envrc (runs go through direnv exec)" || echo "no .envrc")"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || uptime)"
