#!/usr/bin/env bash
# The test suite's second pass: every test that drives jj, run with jj 0.46.0 first on PATH
# (the suite's git-only tests are left out: they run in the first pass, `cargo test --locked`,
# which tests jj 0.45.1). jj 0.46.0 comes from `scripts/install-tools.sh --with-jj-0.46`.
#
# Usage: scripts/test-jj-0.46.sh [extra cargo test arguments after --]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

root="${CARGO_HOME:-$HOME/.cargo}/jj-0.46.0"
if [[ $("$root/bin/jj" --version 2>/dev/null) != "jj 0.46.0"* ]]; then
    echo "test-jj-0.46: no jj 0.46.0 at $root/bin/jj: run scripts/install-tools.sh --with-jj-0.46" >&2
    exit 1
fi
export PATH="$root/bin:$PATH"
echo "== the jj tests with $(jj --version)"
cargo test --locked --test it -- \
    --skip ::git:: --skip git_backend --skip land_git --skip land_safety_git \
    --skip unresolved_git --skip sandbox_store_git --skip clean_gitlinks --skip stress_model_git "$@"
