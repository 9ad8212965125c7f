# What the benchmark scripts share (sourced, not run): the binary they time and the
# synthetic jj repository they time it in.

# release_binary SCRATCH PROJECT: prints the absolute path of the binary to time:
# $AGENT_WORKSPACE_BIN, else a release build of PROJECT into SCRATCH/aw-target.
release_binary() {
    local bin=${AGENT_WORKSPACE_BIN:-}
    if [[ -z $bin ]]; then
        CARGO_TARGET_DIR=$1/aw-target cargo build --release --locked -q \
            --manifest-path "$2/Cargo.toml"
        bin=$1/aw-target/release/agent-workspace
    fi
    echo "$(cd "$(dirname "$bin")" && pwd -P)/$(basename "$bin")"
}

# synthetic_repo DIR FILES: a jj repository of FILES small files (500 a directory) with an
# .envrc exporting BENCH=1, committed and allowed by direnv.
synthetic_repo() {
    local repo=$1 files=$2
    mkdir -p "$repo"
    (
        cd "$repo"
        for ((i = 0; i < files; i++)); do
            d=src/m$((i / 500))/s$((i / 50 % 10))
            [[ -d $d ]] || mkdir -p "$d"
            printf 'file %d\nsome content to make it a little less tiny\n' "$i" >"$d/f$i.txt"
        done
        echo 'export BENCH=1' >.envrc
        jj git init --quiet
        jj --quiet commit -m "synthetic repository of $files files"
    )
    direnv allow "$repo" >/dev/null 2>&1
}
