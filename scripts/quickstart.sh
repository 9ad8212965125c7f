#!/usr/bin/env bash
# Quick start: installs the tools (scripts/install-tools.sh), installs agent-workspace from this
# checkout with cargo, then runs the end-to-end demo (scripts/demo.sh).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

scripts/install-tools.sh
cargo install --locked --path .

# Where install-tools.sh and cargo put jj, just and agent-workspace, in case PATH lacks them.
cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
export PATH="$cargo_bin:$PATH:$HOME/.local/bin"
AGENT_WORKSPACE_BIN="$cargo_bin/agent-workspace" scripts/demo.sh
