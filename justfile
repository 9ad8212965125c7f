# Developer recipes for agent-workspace. Agent workflow recipes live in agents.just
# (`just agents::<recipe>`).

mod agents

# List the recipes, including the agents module's
default:
    @{{quote(just_executable())}} --list --list-submodules

# Run the test suite (the command CI runs)
test:
    cargo test --locked

# Check formatting and lints
lint:
    cargo fmt --all -- --check
    cargo clippy --all-targets --locked -- -D warnings

# Run the end-to-end demo in a scratch directory (KEEP=1 keeps it)
demo:
    scripts/demo.sh

# Benchmark agent-workspace against the jj/direnv primitives it wraps
bench:
    bench/bench.sh
