#!/usr/bin/env bash
# End-to-end demo: a throw-away jj repository with two changes, the `consolidate` workflow from
# agents.just run in its own agent-workspace, then status, diff, checkpoint, land (dry run,
# then for real) and clean --landed. Everything happens in a
# scratch directory with its own HOME, XDG dirs, jj config and workspace root, so your jj
# config, direnv trust database and cache are never touched.
#
# Usage: scripts/demo.sh   (AGENT_WORKSPACE_BIN=path/to/agent-workspace, KEEP=1 keeps the scratch dir)
set -euo pipefail

project_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)

die() {
  echo "demo: error: $*" >&2
  exit 1
}
step() { printf '\n=== %s\n' "$*"; }
show() {
  printf '$ %s\n' "$*"
  "$@"
}

aw=${AGENT_WORKSPACE_BIN:-agent-workspace}
# A relative path must survive the cd into the scratch directory.
case $aw in
  */*) aw=$(cd "$(dirname "$aw")" && pwd)/$(basename "$aw") ;;
esac
command -v "$aw" >/dev/null 2>&1 ||
  die "$aw not found: run scripts/quickstart.sh, or set AGENT_WORKSPACE_BIN"
for tool in jj just direnv git; do
  command -v "$tool" >/dev/null 2>&1 || die "$tool not found: run scripts/install-tools.sh"
done
# pyenv shims find their root through HOME unless told; HOME is about to change.
if [ -z "${PYENV_ROOT:-}" ] && command -v pyenv >/dev/null 2>&1; then
  PYENV_ROOT=$(pyenv root)
  export PYENV_ROOT
fi

scratch=$(mktemp -d "${TMPDIR:-/tmp}/agent-workspace-demo.XXXXXX")
scratch=$(cd "$scratch" && pwd -P)
finish() {
  local status=$?
  if [ "${KEEP:-0}" = 1 ]; then
    echo "demo: kept $scratch" >&2
  else
    rm -rf "$scratch"
    [ "$status" -eq 0 ] || echo "demo: failed (exit $status); rerun with KEEP=1 to inspect" >&2
  fi
}
trap finish EXIT

export HOME="$scratch/home"
export XDG_CONFIG_HOME="$HOME/.config" XDG_DATA_HOME="$HOME/.local/share"
export XDG_CACHE_HOME="$HOME/.cache" XDG_STATE_HOME="$HOME/.local/state"
export JJ_CONFIG="$scratch/jj-config.toml"
export AI_WORKSPACES_ROOT="$scratch/workspaces"
export AGENT_WORKSPACE_BIN="$aw"
# Leftovers from a surrounding direnv shell or agent workflow would leak into the demo.
unset DIRENV_DIR DIRENV_FILE DIRENV_DIFF DIRENV_WATCHES
unset AGENT_WORKSPACE_ID AGENT_WORKSPACE_PATH AGENT_WORKSPACE_METADATA AGENT_WORKSPACE_REPO_ROOT
mkdir -p "$XDG_CONFIG_HOME" "$XDG_DATA_HOME" "$XDG_CACHE_HOME" "$XDG_STATE_HOME"
cat >"$JJ_CONFIG" <<'TOML'
user.name = "Demo User"
user.email = "demo@example.com"
ui.paginate = "never"
TOML

step "A jj repository with two changes ($scratch/repo)"
cd "$scratch"
jj git init repo
cd repo
cp "$project_dir/justfile" "$project_dir/agents.just" .
printf '# Demo project\n\nA scratch repository for the agent-workspace demo.\n' >README.md
printf 'export DEMO_GREETING="hello from direnv"\n' >.envrc
mkdir -p src
printf 'first note\n' >src/notes.txt
jj commit -m "Add the demo project"
printf 'second note\n' >>src/notes.txt
printf 'echo "hello"\n' >src/hello.sh
jj commit -m "Extend the notes and add a script"
first=$(jj log --no-graph -r @-- -T change_id)
second=$(jj log --no-graph -r @- -T change_id)
show jj log
# You trust your own repository's .envrc; workspaces get their own copy of it.
direnv allow .

step "Run the consolidate workflow in workspace demo-1"
show just agents::consolidate demo-1 "$first" "$second"

step "agent-workspace status"
show "$aw" status

step "agent-workspace status demo-1"
show "$aw" status demo-1

step "The summary the workflow wrote in its workspace"
summary=$(find "$AI_WORKSPACES_ROOT" -path '*/demo-1/consolidation/summary.md' -print | head -n 1)
[ -n "$summary" ] || die "no consolidation/summary.md under $AI_WORKSPACES_ROOT"
workspace=${summary%/consolidation/summary.md}
echo "($summary)"
cat "$summary"
grep -qF "nested step ran in: $workspace (" "$summary" || die "the nested step ran elsewhere"

step "A later run in the same workspace sees its .envrc through direnv"
# shellcheck disable=SC2016 # expanded by the inner shell
greeting=$("$aw" run demo-1 -- sh -c 'printf "%s\n" "${DEMO_GREETING:-unset}"')
echo "DEMO_GREETING=$greeting"
[ "$greeting" = "hello from direnv" ] || die "expected DEMO_GREETING from the workspace's .envrc"

step "What the workspace changed since it started: agent-workspace diff demo-1"
show "$aw" diff demo-1

step "Keep a known-good point: agent-workspace checkpoint demo-1"
show "$aw" checkpoint demo-1 -m "consolidated"

step "What landing it would do (changes nothing): agent-workspace land demo-1 --dry-run"
show "$aw" land demo-1 --dry-run

step "Land it: its commits go below the main working copy (the printed Undo line takes it back out, and nothing done after it)"
show "$aw" land demo-1
[ -f consolidation/summary.md ] || die "the landed summary is not in the main working copy"

step "agent-workspace clean --landed"
show "$aw" clean --landed
[ ! -e "$workspace" ] || die "$workspace still exists after clean --landed"
show jj log

step "Done"
