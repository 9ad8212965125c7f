#!/usr/bin/env bash
# Installs the tools agent-workspace and its tests use, skipping those already present:
# jj 0.45.1, direnv, bubblewrap (for --sandbox), groff (man page tests), tmux and script (terminal tests), zsh and fish (completion tests), just >= 1.31, the Python MCP SDK >= 2 (the MCP tests' client), rustfmt/clippy and, with --with-nix or INSTALL_NIX=1, Debian's
# nix-bin (only for `nix-instantiate --parse flake.nix`). git must already be installed; cargo is
# needed to build jj. With --with-jj-0.46 (or INSTALL_JJ_046=1), also jj 0.46.0 beside 0.45.1 in
# its own root (`$CARGO_HOME/jj-0.46.0/bin/jj`, never over 0.45.1), for the suite's second pass.
# Safe to rerun; never prompts.
#
# Usage: scripts/install-tools.sh [--with-nix] [--with-jj-0.46]
set -euo pipefail

JJ_VERSION=0.45.1
JJ_NEXT_VERSION=0.46.0
JUST_MIN_VERSION=1.31.0
MCP_MIN_VERSION=2.0.0
# Claude Code, the real client tests/it/claude_code.rs drives (from npm, pinned).
CLAUDE_CODE_VERSION=2.1.328

with_nix=${INSTALL_NIX:-0}
with_jj_next=${INSTALL_JJ_046:-0}
for arg in "$@"; do
  case $arg in
    --with-nix) with_nix=1 ;;
    --with-jj-0.46) with_jj_next=1 ;;
    -h | --help)
      sed -n '2,9p' "$0" | sed 's/^# \{0,1\}//'
      exit 0
      ;;
    *)
      echo "install-tools: unknown argument: $arg (see --help)" >&2
      exit 2
      ;;
  esac
done

die() {
  echo "install-tools: error: $*" >&2
  exit 1
}
note() { echo "==> $*" >&2; }
report() { printf '%-16s %-10s %s\n' "$1" "$2" "$3"; }

# Tools installed by cargo or `pip --user` must be found by the checks below, whatever the
# caller's PATH. Cargo's bin goes first so the jj built here wins over any other jj.
cargo_bin="${CARGO_HOME:-$HOME/.cargo}/bin"
original_path=$PATH
PATH="$cargo_bin:$PATH"
PATH="$PATH:$HOME/.local/bin"
if user_base=$(python3 -m site --user-base 2>/dev/null); then
  PATH="$PATH:$user_base/bin"
fi
export PATH

# First x.y.z in a tool's version output.
version_of() {
  local out
  out=$("$@" 2>/dev/null | head -n 1) || return 1
  [[ $out =~ ([0-9]+\.[0-9]+\.[0-9]+) ]] || return 1
  echo "${BASH_REMATCH[1]}"
}

# version_ge HAVE WANT: true when the dotted version HAVE >= WANT.
version_ge() {
  local i have want
  IFS=. read -r -a have <<<"$1"
  IFS=. read -r -a want <<<"$2"
  for i in 0 1 2; do
    ((${have[i]:-0} > ${want[i]:-0})) && return 0
    ((${have[i]:-0} < ${want[i]:-0})) && return 1
  done
  return 0
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then
    "$@"
  elif command -v sudo >/dev/null 2>&1; then
    # Never wait for a password nobody can type.
    if [ -t 0 ] && [ -z "${CI:-}" ]; then sudo "$@"; else sudo -n "$@"; fi
  else
    die "installing needs root: rerun as root, install sudo, or run: $*"
  fi
}

apt_updated=0
system_install() {
  local package=$1
  if [ "$(uname -s)" = Darwin ]; then
    command -v brew >/dev/null 2>&1 || die "install $package (e.g. with Homebrew: brew install $package)"
    note "brew install $package"
    brew install "$package"
  elif command -v apt-get >/dev/null 2>&1; then
    if [ "$apt_updated" = 0 ]; then
      note "apt-get update"
      as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q
      apt_updated=1
    fi
    note "apt-get install $package"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "$package"
  else
    die "no apt-get or brew here: install $package with your package manager"
  fi
}

require_cargo() {
  command -v cargo >/dev/null 2>&1 || die "cargo is needed to $1: install Rust from https://rustup.rs"
}

ensure_git() {
  command -v git >/dev/null 2>&1 || die "git is required: install it with your package manager"
  report git present "$(git --version)"
}

ensure_jj() {
  local have
  have=$(version_of jj --version || true)
  if [ "$have" = "$JJ_VERSION" ]; then
    report jj present "jj $have"
    return
  fi
  require_cargo "build jj $JJ_VERSION"
  note "building jj $JJ_VERSION with cargo (found: ${have:-none}); a cold build takes ~15 minutes"
  cargo install --locked "jj-cli@$JJ_VERSION"
  hash -r
  have=$(version_of jj --version || true)
  [ "$have" = "$JJ_VERSION" ] || die "jj --version says '${have:-nothing}' after installing $JJ_VERSION"
  report jj installed "jj $have"
}

# jj 0.46.0 declares rustc 1.97 but builds on older stable toolchains once
# `std::assert_matches` is allowed; installed in a root of its own so 0.45.1 stays the default.
ensure_jj_next() {
  local root="${CARGO_HOME:-$HOME/.cargo}/jj-$JJ_NEXT_VERSION" have
  have=$(version_of "$root/bin/jj" --version || true)
  if [ "$have" = "$JJ_NEXT_VERSION" ]; then
    report jj-next present "jj $have ($root/bin/jj)"
    return
  fi
  require_cargo "build jj $JJ_NEXT_VERSION"
  note "building jj $JJ_NEXT_VERSION with cargo into $root; a cold build takes ~10 minutes"
  RUSTC_BOOTSTRAP=1 RUSTFLAGS='-Zcrate-attr=feature(assert_matches)' \
    cargo install --locked --ignore-rust-version --root "$root" "jj-cli@$JJ_NEXT_VERSION"
  have=$(version_of "$root/bin/jj" --version || true)
  [ "$have" = "$JJ_NEXT_VERSION" ] || die "$root/bin/jj --version says '${have:-nothing}' after installing $JJ_NEXT_VERSION"
  report jj-next installed "jj $have ($root/bin/jj)"
}

# ensure_command CMD PACKAGE LABEL VERSION-COMMAND...: installs PACKAGE (apt or brew) when CMD is
# missing, then reports CMD's version under LABEL.
ensure_command() {
  local cmd=$1 package=$2 label=$3
  shift 3
  if command -v "$cmd" >/dev/null 2>&1; then
    report "$label" present "$("$@" 2>&1 | head -n 1)"
    return
  fi
  system_install "$package"
  hash -r
  command -v "$cmd" >/dev/null 2>&1 || die "$cmd is still missing after installing $package"
  report "$label" installed "$("$@" 2>&1 | head -n 1)"
}

ensure_direnv() {
  ensure_command direnv direnv direnv sh -c 'echo "direnv $(direnv version)"'
}

just_ok() {
  local have
  have=$(version_of just --version) && version_ge "$have" "$JUST_MIN_VERSION"
}

# pip first (rust-just ships the real binary, no compiling), else cargo. pip refuses to install
# into an externally managed Python (PEP 668, e.g. Debian's python3); cargo covers that case.
install_just() {
  local python log
  log=$(mktemp)
  for python in python3 python; do
    command -v "$python" >/dev/null 2>&1 || continue
    "$python" -m pip --version >/dev/null 2>&1 || continue
    note "$python -m pip install rust-just"
    if "$python" -m pip install --no-input --quiet --upgrade rust-just >"$log" 2>&1 ||
      "$python" -m pip install --no-input --quiet --upgrade --user rust-just >"$log" 2>&1; then
      hash -r
      if just_ok; then
        rm -f "$log"
        return
      fi
    fi
    note "pip could not provide just >= $JUST_MIN_VERSION; last output:"
    tail -n 5 "$log" >&2
    break
  done
  rm -f "$log"
  require_cargo "build just"
  note "cargo install --locked just"
  cargo install --locked just
  hash -r
}

ensure_bwrap() {
  ensure_command bwrap bubblewrap bubblewrap bwrap --version
}

# groff renders the man pages in the tests (Debian: groff-base, usually present with man-db).
ensure_groff() {
  local package=groff
  command -v apt-get >/dev/null 2>&1 && package=groff-base
  ensure_command groff "$package" groff groff --version
}

# tmux drives `status --watch` in the tests; script (util-linux) gives a command a terminal.
# zsh and fish check their completion scripts in the tests (fish also completes through it).
ensure_shells() {
  ensure_command zsh zsh zsh zsh --version
  ensure_command fish fish fish fish --version
}

ensure_tmux() {
  ensure_command tmux tmux tmux tmux -V
  local package=util-linux
  command -v apt-get >/dev/null 2>&1 && package=bsdutils
  ensure_command script "$package" script sh -c 'command -v script'
}

ensure_just() {
  if just_ok; then
    report just present "just $(version_of just --version)"
    return
  fi
  install_just
  just_ok || die "just >= $JUST_MIN_VERSION is still not on PATH after installing it"
  report just installed "just $(version_of just --version)"
}

# The Python MCP SDK (with jsonschema, its dependency): the independent client tests/it/mcp.rs
# drives `agent-workspace mcp` with.
mcp_client_version() {
  python3 -c 'import importlib.metadata as m, jsonschema, mcp; print(m.version("mcp"))' 2>/dev/null
}

mcp_client_ok() {
  local have
  have=$(version_of mcp_client_version) && version_ge "$have" "$MCP_MIN_VERSION"
}

# pip into the interpreter, else the user's site; a Python that refuses both (PEP 668) gets the
# user's site anyway, which leaves the system's packages alone.
ensure_mcp_client() {
  if mcp_client_ok; then
    report mcp-client present "python mcp $(mcp_client_version)"
    return
  fi
  command -v python3 >/dev/null 2>&1 || system_install python3
  python3 -m pip --version >/dev/null 2>&1 || system_install python3-pip
  local spec="mcp>=$MCP_MIN_VERSION" log
  log=$(mktemp)
  note "python3 -m pip install '$spec'"
  python3 -m pip install --no-input --quiet --upgrade "$spec" >"$log" 2>&1 ||
    python3 -m pip install --no-input --quiet --upgrade --user "$spec" >"$log" 2>&1 ||
    python3 -m pip install --no-input --quiet --upgrade --user --break-system-packages "$spec" >"$log" 2>&1 ||
    { cat "$log" >&2; die "pip could not install $spec (it needs Python >= 3.10)"; }
  rm -f "$log"
  mcp_client_ok || die "python3 cannot import mcp >= $MCP_MIN_VERSION after installing it"
  report mcp-client installed "python mcp $(mcp_client_version)"
}

# Claude Code from npm (node and npm from the system's packages when missing), in a root of
# its own beside jj 0.46; its install scripts are not run (the native binary is in the
# platform's package).
claude_code_bin() {
  local root="${CARGO_HOME:-$HOME/.cargo}/claude-code-$CLAUDE_CODE_VERSION" bin
  for bin in "$root"/node_modules/@anthropic-ai/claude-code-*/claude; do
    [ -x "$bin" ] && { echo "$bin"; return 0; }
  done
  return 1
}

ensure_claude_code() {
  local root="${CARGO_HOME:-$HOME/.cargo}/claude-code-$CLAUDE_CODE_VERSION" bin have
  if bin=$(claude_code_bin) && [ "$(version_of "$bin" --version || true)" = "$CLAUDE_CODE_VERSION" ]; then
    report claude-code present "claude $CLAUDE_CODE_VERSION ($bin)"
    return
  fi
  command -v npm >/dev/null 2>&1 || system_install npm
  hash -r
  command -v npm >/dev/null 2>&1 || die "npm is still missing after installing it"
  note "npm install @anthropic-ai/claude-code@$CLAUDE_CODE_VERSION into $root"
  mkdir -p "$root"
  npm install --prefix "$root" --no-audit --no-fund --ignore-scripts --loglevel=error \
    "@anthropic-ai/claude-code@$CLAUDE_CODE_VERSION" >/dev/null
  bin=$(claude_code_bin) || die "npm installed no Claude Code binary under $root"
  have=$(version_of "$bin" --version || true)
  [ "$have" = "$CLAUDE_CODE_VERSION" ] || die "$bin --version says '${have:-nothing}' after installing $CLAUDE_CODE_VERSION"
  report claude-code installed "claude $have ($bin)"
}

# rustup's minimal profile has neither; `cargo fmt` and `cargo clippy` are part of CI.
ensure_rust_components() {
  command -v cargo >/dev/null 2>&1 || return 0
  local missing=()
  cargo fmt --version >/dev/null 2>&1 || missing+=(rustfmt)
  cargo clippy --version >/dev/null 2>&1 || missing+=(clippy)
  if [ ${#missing[@]} -eq 0 ]; then
    report rustfmt+clippy present "$(cargo clippy --version)"
    return
  fi
  command -v rustup >/dev/null 2>&1 || die "install ${missing[*]} for your Rust toolchain"
  rustup component add "${missing[@]}"
  report rustfmt+clippy installed "$(cargo clippy --version)"
}

ensure_nix_instantiate() {
  if ! command -v nix-instantiate >/dev/null 2>&1 && [ "$(uname -s)" = Darwin ]; then
    die "install Nix (https://nixos.org/download) for nix-instantiate"
  fi
  ensure_command nix-instantiate nix-bin nix-instantiate nix-instantiate --version
}

ensure_git
ensure_direnv
ensure_bwrap
ensure_groff
ensure_tmux
ensure_shells
ensure_just
ensure_mcp_client
ensure_claude_code
ensure_rust_components
if [ "$with_nix" = 1 ]; then ensure_nix_instantiate; fi
ensure_jj
if [ "$with_jj_next" = 1 ]; then ensure_jj_next; fi

case ":$original_path:" in
  *":$cargo_bin:"*) ;;
  *) note "add $cargo_bin to your PATH to use jj (and agent-workspace after cargo install)" ;;
esac
