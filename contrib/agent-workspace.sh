#!/usr/bin/env bash
# Drop-in for the old `scripts/agent-workspace.sh`: its command line, mapped to agent-workspace
# (`$AGENT_WORKSPACE_BIN`, else `agent-workspace` on PATH). See docs/migrating.md.
#
#   run <id> [--workflow NAME] [--base-change CHANGE] [--cleanup] [--no-direnv] -- CMD...
#   status [id]      the table, or one workspace's record as JSON (the script's fields)
#   shell <id>       an interactive shell in the workspace
#   clean <id>       remove the workspace (files no commit holds are kept aside)
#
# Exit codes: the command's own for `run`; 2 for bad usage; 127 when agent-workspace is not
# found; otherwise agent-workspace's (see its README).
set -u

prog=${0##*/}
usage="usage: $prog run <id> [--workflow NAME] [--base-change CHANGE] [--cleanup] [--no-direnv] -- CMD... | status [id] | shell <id> | clean <id>"

fail_usage() {
    printf 'Error: %s\nHint: %s\n' "$1" "$usage" >&2
    exit 2
}

aw=${AGENT_WORKSPACE_BIN:-agent-workspace}
if ! command -v "$aw" >/dev/null 2>&1; then
    printf 'Error: %s not found\nHint: %s\n' "$aw" \
        "install agent-workspace, put it on PATH or set AGENT_WORKSPACE_BIN to its path" >&2
    exit 127
fi

# An id is one argument that is not an option; agent-workspace checks the rest.
need_id() {
    if [ "$2" -lt 1 ] || [ -z "$1" ] || [ "${1#-}" != "$1" ]; then
        fail_usage "$sub needs a workspace id"
    fi
}

[ $# -ge 1 ] || fail_usage "no subcommand given"
sub=$1
shift
case $sub in
run)
    need_id "${1:-}" $#
    id=$1
    shift
    flags=()
    while [ $# -gt 0 ]; do
        case $1 in
        --workflow | --base-change)
            [ $# -ge 2 ] || fail_usage "$1 needs a value"
            flags+=("$1" "$2")
            shift 2
            ;;
        --workflow=* | --base-change=*)
            flags+=("$1")
            shift
            ;;
        --cleanup | --no-direnv)
            flags+=("$1")
            shift
            ;;
        --)
            shift
            break
            ;;
        -*) fail_usage "unknown option for run: $1" ;;
        *) break ;;
        esac
    done
    [ $# -ge 1 ] || fail_usage "run needs a command after --"
    exec "$aw" run "$id" "${flags[@]}" -- "$@"
    ;;
status)
    [ $# -le 1 ] || fail_usage "status takes at most one workspace id"
    if [ $# -eq 0 ]; then
        exec "$aw" status
    fi
    need_id "$1" $#
    exec "$aw" status "$1" --json --record
    ;;
shell | clean)
    [ $# -le 1 ] || fail_usage "$sub takes one workspace id"
    need_id "${1:-}" $#
    exec "$aw" "$sub" "$1"
    ;;
-h | --help | help)
    printf '%s\n' "$usage"
    exit 0
    ;;
*) fail_usage "unknown subcommand: $sub" ;;
esac
