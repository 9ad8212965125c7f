#!/usr/bin/env bash
# The sandbox case of docs/benchmarks.md (jj, or git with BACKEND=git): a sandboxed run against the same run
# unsandboxed, side by side, on one repository: cold (a new workspace: for the sandboxed run
# that includes making the workspace's own store, and the first run of a base also its pack),
# warm (`run w -- true` in an existing workspace, with direnv and without), and `land` of a
# workspace whose 100 changed files a run made and committed with jj (sandboxed: brought back
# from its own store at the run's end). With `sandbox.allowed_hosts` set: a warm sandboxed run
# (its proxy started and stopped), and HTTP requests to an allowed server on the host's
# loopback, through the proxy from inside a sandbox against the same requests made directly.
#
#   bench/sandbox.sh
#
# Sides alternate run by run (odd runs sandboxed first), so a drift of the machine hits both.
# Nothing is deleted between timed steps (see bench/pool.sh for why).
#
# Environment (all optional):
#   AGENT_WORKSPACE_BIN   binary to use; default: cargo build --release into a scratch target
#   BACKEND               jj or git [jj]: git times a git repository of the same files
#   FILES                 files in the synthetic repository [20000]
#   RUNS                  timed cold runs and lands per side [5]; warm runs are 4x that
#   KEEP_SCRATCH=1        keep the scratch directory
set -euo pipefail
export LC_ALL=C
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
project=$(cd "$here/.." && pwd -P)
# shellcheck source=bench/lib.sh
source "$here/lib.sh"
FILES=${FILES:-20000}
RUNS=${RUNS:-5}
BACKEND=${BACKEND:-jj}
[[ $BACKEND == jj || $BACKEND == git ]] || { echo "sandbox.sh: BACKEND must be jj or git" >&2; exit 2; }
for tool in jj git bwrap direnv awk curl python3; do
    command -v "$tool" >/dev/null || { echo "sandbox.sh: $tool is not on PATH" >&2; exit 1; }
done
scratch=$(mktemp -d "${TMPDIR:-/tmp}/aw-sandbox-bench.XXXXXX")
scratch=$(cd "$scratch" && pwd -P)
[[ ${KEEP_SCRATCH:-} == 1 ]] || trap 'rm -rf "$scratch"' EXIT
bin=$(release_binary "$scratch" "$project")
JJ=$(command -v jj)
export HOME=$scratch/home XDG_CACHE_HOME=$scratch/cache XDG_CONFIG_HOME=$scratch/config
export XDG_DATA_HOME=$scratch/data JJ_CONFIG=$scratch/jj.toml
mkdir -p "$HOME" "$XDG_CONFIG_HOME/agent-workspace"
printf '[user]\nname = "Bench"\nemail = "bench@example.com"\n' >"$JJ_CONFIG"
while read -r var; do unset "$var"; done < <(env | awk -F= '/^(AGENT_WORKSPACE_|DIRENV_)/ { print $1 }')
say() { printf '==> %s\n' "$*" >&2; }
# time_ms CMD... -> the wall time of one run of CMD in ms (its output discarded; must succeed)
time_ms() {
    local s e
    s=$EPOCHREALTIME
    "$@" >/dev/null 2>"$scratch/last.err" || { cat "$scratch/last.err" >&2; exit 1; }
    e=$EPOCHREALTIME
    awk -v s="$s" -v e="$e" 'BEGIN { printf "%.1f\n", (e - s) * 1000 }'
}
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }

repo=$scratch/repo
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
say "making a $BACKEND repository of $FILES files"
synthetic_repo "$repo" "$FILES"
commit100='jj commit -m edit100'
if [[ $BACKEND == git ]]; then
    # The same files as a plain git repository (jj's store and working copy dropped).
    rm -rf "$repo/.jj" "$repo/.git"
    git -C "$repo" init -q -b main
    git -C "$repo" -c user.name=Bench -c user.email=bench@example.com add -A
    git -C "$repo" -c user.name=Bench -c user.email=bench@example.com commit -q -m "synthetic repository of $FILES files"
    printf '[user]\n\tname = Bench\n\temail = bench@example.com\n' >"$HOME/.gitconfig"
    commit100='git add -A && git commit -q -m edit100'
    direnv allow "$repo" >/dev/null 2>&1
fi
cd "$repo"
edit100='for i in $(seq 0 99); do echo changed >> src/m0/s$((i / 50))/f$i.txt; done'

: >"$scratch/cold-s.ms"; : >"$scratch/cold-u.ms"
say "cold runs ($RUNS per side, alternating; the first sandboxed one also packs the base)"
for ((i = 1; i <= RUNS; i++)); do
    s() { time_ms "$bin" run --sandbox "cs$i" -- true >>"$scratch/cold-s.ms"; }
    u() { time_ms "$bin" run "cu$i" -- true >>"$scratch/cold-u.ms"; }
    if ((i % 2)); then s; u; else u; s; fi
done
say "warm runs ($((RUNS * 4)) per side, alternating; with direnv, then without)"
: >"$scratch/warm-s.ms"; : >"$scratch/warm-u.ms"
: >"$scratch/warm-no-direnv-s.ms"; : >"$scratch/warm-no-direnv-u.ms"
for ((i = 1; i <= RUNS * 4; i++)); do
    s() { time_ms "$bin" run --sandbox cs1 -- true >>"$scratch/warm-s.ms"; }
    u() { time_ms "$bin" run cu1 -- true >>"$scratch/warm-u.ms"; }
    if ((i % 2)); then s; u; else u; s; fi
done
for ((i = 1; i <= RUNS * 4; i++)); do
    s() { time_ms "$bin" run --no-direnv --sandbox cs1 -- true >>"$scratch/warm-no-direnv-s.ms"; }
    u() { time_ms "$bin" run --no-direnv cu1 -- true >>"$scratch/warm-no-direnv-u.ms"; }
    if ((i % 2)); then s; u; else u; s; fi
done
# The same warm runs with sandbox.allowed_hosts set (a configuration directory of its own).
hosts_config=$scratch/config-hosts
mkdir -p "$hosts_config/agent-workspace"
printf '[sandbox]\nallowed_hosts = ["127.0.0.2"]\n' >"$hosts_config/agent-workspace/config.toml"
say "warm runs with sandbox.allowed_hosts ($((RUNS * 4)) per side, alternating)"
: >"$scratch/warm-hosts-s.ms"; : >"$scratch/warm-hosts-u.ms"
for ((i = 1; i <= RUNS * 4; i++)); do
    s() { time_ms env XDG_CONFIG_HOME="$hosts_config" "$bin" run --sandbox cs1 -- true >>"$scratch/warm-hosts-s.ms"; }
    u() { time_ms "$bin" run cu1 -- true >>"$scratch/warm-hosts-u.ms"; }
    if ((i % 2)); then s; u; else u; s; fi
done
# HTTP requests (curl, one process each, a 1 MB file) to a server on 127.0.0.2: from inside a
# sandbox through the proxy, and directly from outside; each batch timed where it runs.
www=$scratch/www
mkdir -p "$www"
head -c 1048576 /dev/urandom >"$www/f"
python3 -u -m http.server --bind 127.0.0.2 --directory "$www" 0 >"$scratch/http.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null; [[ ${KEEP_SCRATCH:-} == 1 ]] || rm -rf "$scratch"' EXIT
port=
for _ in $(seq 100); do
    port=$(sed -n 's/.*port \([0-9]*\).*/\1/p' "$scratch/http.log" | head -1)
    [[ -n $port ]] && break
    sleep 0.05
done
[[ -n $port ]] || { echo "sandbox.sh: the HTTP server did not start" >&2; cat "$scratch/http.log" >&2; exit 1; }
batch='s=$(date +%s%N); for i in $(seq 20); do curl -sf -o /dev/null "$URL" || exit 1; done; e=$(date +%s%N); echo $(( (e - s) / 20000 ))'
say "HTTP requests to an allowed server ($RUNS batches of 20 per side, alternating)"
: >"$scratch/http-s.us"; : >"$scratch/http-u.us"
for ((i = 1; i <= RUNS; i++)); do
    s() { XDG_CONFIG_HOME="$hosts_config" URL="http://127.0.0.2:$port/f" "$bin" run --sandbox cs1 -- sh -c "$batch" | tail -1 >>"$scratch/http-s.us"; }
    u() { URL="http://127.0.0.2:$port/f" sh -c "$batch" | tail -1 >>"$scratch/http-u.us"; }
    if ((i % 2)); then s; u; else u; s; fi
done
kill "$server" 2>/dev/null || true
say "lands of 100 changed files ($RUNS per side, alternating)"
: >"$scratch/land-s.ms"; : >"$scratch/land-u.ms"; : >"$scratch/edit-s.ms"; : >"$scratch/edit-u.ms"
for ((i = 1; i <= RUNS; i++)); do
    time_ms "$bin" run --sandbox "ls$i" -- sh -c "$edit100 && $commit100" >>"$scratch/edit-s.ms"
    time_ms "$bin" run "lu$i" -- sh -c "$edit100 && $commit100" >>"$scratch/edit-u.ms"
done
for ((i = 1; i <= RUNS; i++)); do
    s() { time_ms "$bin" land "ls$i" >>"$scratch/land-s.ms"; }
    u() { time_ms "$bin" land "lu$i" >>"$scratch/land-u.ms"; }
    if ((i % 2)); then s; u; else u; s; fi
done

row() {
    local name=$1 target=$2 s u
    s=$(median <"$scratch/$name-s.ms")
    u=$(median <"$scratch/$name-u.ms")
    echo "| $name | $s | $u | $(ratio "$s" "$u")x | $target |"
}
echo
echo "repository: $BACKEND, $FILES files; $("$bin" --version); $("$JJ" --version); $(git --version); bwrap $(bwrap --version | awk '{ print $2 }')"
echo "load average before: $load_before; after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "machine: $(nproc) cores, $(uname -sr); $(date -u +%Y-%m-%d)"
echo
echo "| case | sandboxed (median ms) | unsandboxed (median ms) | ratio | target |"
echo "| --- | --- | --- | --- | --- |"
row cold "<= 1.5x"
row warm "<= 1.5x"
row warm-no-direnv "(bubblewrap's own start, ~15 ms here, is most of it)"
row edit "(a cold run that edits 100 files and commits them; sandboxed: brought back after)"
row land "<= 1.3x"
row warm-hosts "<= 1.5x (sandboxed with sandbox.allowed_hosts, against unsandboxed)"
hs=$(median <"$scratch/http-s.us"); hu=$(median <"$scratch/http-u.us")
echo "| http request (1 MB, curl; median us per request) | $hs | $hu | $(ratio "$hs" "$hu")x | <= 1.3x (through the proxy from a sandbox, against direct) |"
echo
for f in cold warm warm-no-direnv edit land warm-hosts; do
    echo "$f sandboxed: $(tr '\n' ' ' <"$scratch/$f-s.ms")"
    echo "$f unsandboxed: $(tr '\n' ' ' <"$scratch/$f-u.ms")"
done
echo "http sandboxed (us): $(tr '\n' ' ' <"$scratch/http-s.us")"
echo "http direct (us): $(tr '\n' ' ' <"$scratch/http-u.us")"
