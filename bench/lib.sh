# shellcheck shell=bash
# What the benchmark scripts share (sourced, not run): the environment they time in, the
# binary they time and the synthetic repositories they time it in.

# isolated_env DIR: this shell's environment kept from the user's: no agent-workspace,
# direnv or jj identity variable inherited; HOME, the XDG directories and jj's configuration
# inside DIR (not made); direnv's status lines silenced for both sides (agent-workspace
# sets DIRENV_LOG_FORMAT only when it is unset).
isolated_env() {
    local var
    while IFS= read -r var; do
        case $var in AGENT_WORKSPACE_* | DIRENV_*) unset "$var" ;; esac
    done < <(compgen -e)
    unset JJ_USER JJ_EMAIL JJ_TIMESTAMP JJ_OP_TIMESTAMP JJ_RANDOMNESS_SEED
    export HOME=$1/home XDG_CONFIG_HOME=$1/config XDG_DATA_HOME=$1/data
    export XDG_CACHE_HOME=$1/cache XDG_STATE_HOME=$1/state
    export JJ_CONFIG=$1/jj-config.toml DIRENV_LOG_FORMAT=
}

# isolated_home DIR: isolated_env DIR, with its directories made and jj's user configured.
isolated_home() {
    isolated_env "$1"
    mkdir -p "$HOME" "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_STATE_HOME"
    printf '[user]\nname = "Bench"\nemail = "bench@example.invalid"\n' >"$JJ_CONFIG"
}

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

# synthetic_files FILES: FILES small files (50 a directory, 500 a top directory) and an
# .envrc exporting BENCH=1, in the current directory.
synthetic_files() {
    local i d
    for ((i = 0; i < $1; i++)); do
        d=src/m$((i / 500))/s$((i / 50 % 10))
        [[ -d $d ]] || mkdir -p "$d"
        printf 'file %d\nsome content to make it a little less tiny\n' "$i" >"$d/f$i.txt"
    done
    echo 'export BENCH=1' >.envrc
}

# synthetic_repo DIR FILES: a jj repository of synthetic_files, committed, its .envrc
# allowed by direnv.
synthetic_repo() {
    local repo=$1 files=$2
    mkdir -p "$repo"
    (
        cd "$repo" || exit
        synthetic_files "$files"
        jj git init --quiet
        jj --quiet commit -m "synthetic repository of $files files"
    )
    direnv allow "$repo" >/dev/null 2>&1
}

# make_git_repo DIR FILES: the same files in a plain git repository on branch main,
# committed (the .envrc not allowed).
make_git_repo() {
    local dir=$1 n=$2
    mkdir -p "$dir"
    (
        cd "$dir" || exit
        synthetic_files "$n"
        git init --quiet --initial-branch=main
        git config user.name Bench
        git config user.email bench@example.invalid
        git add -A
        git commit --quiet -m "synthetic repository of $n files"
    )
}

# change_files WS: 100 changed files in the workspace WS: 50 modified and committed (the
# caller commits), then 20 modified, 15 created and 15 deleted left unrecorded.
change_files() {
    local ws=$1 f i=0
    for f in "$ws"/src/m0/s*/f*.txt; do
        if ((i < 50)); then
            echo "committed edit" >>"$f"
        elif ((i < 70)); then
            echo "unrecorded edit" >>"$f"
        elif ((i < 85)); then
            rm "$f"
        else
            break
        fi
        i=$((i + 1))
    done
    for ((i = 0; i < 15; i++)); do echo "new file $i" >"$ws/new$i.txt"; done
}
