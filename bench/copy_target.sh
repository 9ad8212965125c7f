#!/usr/bin/env bash
# The warm-cache case of docs/benchmarks.md: the first `cargo build` in a new workspace of this
# project with `target/` copied by `copy.include`, against the same build from scratch.
#
#   bench/copy_target.sh
#
# A clone of this project (git backend) gets a full `cargo build` in its main workspace (timed:
# "from scratch, main workspace"); then `run scratch -- cargo build` (no copy.include, timed:
# "from scratch, new workspace") and `run warm -- cargo build` with copy.include = ["target/"]
# (timed: the copy included). Builds are offline and locked (the registry must be populated).
#
# Environment (all optional):
#   AGENT_WORKSPACE_BIN   binary to use; default: cargo build --release into a scratch target
#   SKIP_SCRATCH_WS=1     skip the from-scratch build in a new workspace (the main one stands
#                         in for it)
#   KEEP_SCRATCH=1        keep the scratch directory
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
project=$(cd "$here/.." && pwd -P)
scratch=$(mktemp -d "${TMPDIR:-/tmp}/aw-copy-bench.XXXXXX")
[[ ${KEEP_SCRATCH:-} == 1 ]] || trap 'rm -rf "$scratch"' EXIT
unset CARGO_TARGET_DIR
bin=${AGENT_WORKSPACE_BIN:-}
if [[ -z $bin ]]; then
    CARGO_TARGET_DIR=$scratch/aw-target cargo build --release --locked -q --manifest-path "$project/Cargo.toml"
    bin=$scratch/aw-target/release/agent-workspace
fi
export XDG_CACHE_HOME=$scratch/cache XDG_CONFIG_HOME=$scratch/config
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b - a }'; }

git clone -q "$project" "$scratch/repo"
cd "$scratch/repo"
build=(cargo build --locked --offline -q)

t0=$(now); "${build[@]}"; t1=$(now)
main_s=$(elapsed "$t0" "$t1")
echo "from scratch, main workspace: ${main_s}s ($(du -sh target | cut -f1) in target/)"

if [[ ${SKIP_SCRATCH_WS:-} != 1 ]]; then
    t0=$(now); "$bin" run --no-direnv scratch -- "${build[@]}"; t1=$(now)
    echo "from scratch, new workspace: $(elapsed "$t0" "$t1")s"
    "$bin" clean scratch >/dev/null
fi

printf '[copy]\ninclude = ["target/"]\n' >agent-workspace.toml
t0=$(now); "$bin" run --no-direnv warm -- true; t1=$(now)
echo "new workspace with target/ copied (run -- true): $(elapsed "$t0" "$t1")s"
"$bin" status warm --json | grep -A8 '"copied"' || true
t0=$(now); "$bin" run --no-direnv warm -- "${build[@]}"; t1=$(now)
echo "first cargo build there: $(elapsed "$t0" "$t1")s"
