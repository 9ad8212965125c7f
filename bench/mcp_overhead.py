"""The MCP server's own cost per call, measured from its client (bench/mcp.sh runs this).

Usage: python3 mcp_overhead.py AGENT_WORKSPACE_BIN WORKSPACE_ID SAMPLES [BASELINE_BIN]

Run in the repository, whose workspace WORKSPACE_ID exists. Each side is timed the same way,
from one client process, the samples of the two sides interleaved (so a change of load
falls on both):

  bare   a client with no SDK: the CLI's warm `run ID -- true` started with subprocess.run,
         against one `workspace_run` of `true` as a JSON-RPC line written to the server's
         stdin and its answer read from its stdout (a server started once, then kept);
  sdk    the Python MCP SDK's client (anyio): the CLI started with anyio.run_process, against
         session.call_tool("workspace_run"); and session.send_ping(), the SDK's own cost of
         one request and its answer, which the server answers without work.

With BASELINE_BIN (another build, such as the previous release), the bare client also calls
a server of that build in the same loop ("baseline"), so the two servers meet the same load.
It prints one JSON document: for each series its samples in seconds.
"""

import json
import os
import subprocess
import sys
import time

import anyio


class Server:
    """`agent-workspace mcp` driven with bare JSON-RPC lines."""

    def __init__(self, aw):
        self.process = subprocess.Popen(
            [aw, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
        )
        self.answers = open(
            self.process.stdout.fileno(), "rb", buffering=1 << 16, closefd=False
        )
        self.ids = iter(range(1, 1 << 30))
        self.request(
            "initialize",
            {
                "protocolVersion": "2025-06-18",
                "capabilities": {},
                "clientInfo": {"name": "bench", "version": "0"},
            },
        )
        self.request("notifications/initialized", notify=True)

    def request(self, method, params=None, notify=False):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            message["id"] = next(self.ids)
        self.process.stdin.write((json.dumps(message) + "\n").encode())
        if not notify:
            answer = json.loads(self.answers.readline())
            if "error" in answer:
                raise SystemExit(f"{method}: {answer['error']}")
            return answer["result"]

    def timed_run(self, ws):
        call = {"name": "workspace_run", "arguments": {"id": ws, "command": ["true"]}}
        started = time.perf_counter()
        result = self.request("tools/call", call)
        took = time.perf_counter() - started
        if result.get("isError") or result["structuredContent"]["exit_code"] != 0:
            raise SystemExit(f"workspace_run failed: {result}")
        return took

    def close(self):
        self.process.stdin.close()
        self.process.wait()


def bare(aw, ws, samples, baseline):
    servers = {"mcp": Server(aw)}
    if baseline:
        servers["baseline"] = Server(baseline)
    series = {"cli": [], **{name: [] for name in servers}}
    for n in range(samples + 5):
        started = time.perf_counter()
        subprocess.run(
            [aw, "run", ws, "--", "true"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        took = {"cli": time.perf_counter() - started}
        for name, server in servers.items():
            took[name] = server.timed_run(ws)
        if n >= 5:  # the first few warm every side up
            for name, seconds in took.items():
                series[name].append(seconds)
    for server in servers.values():
        server.close()
    return series


async def sdk(aw, ws, samples):
    from mcp import ClientSession, StdioServerParameters, stdio_client

    params = StdioServerParameters(
        command=aw, args=["mcp"], env=dict(os.environ), cwd=os.getcwd()
    )
    cli, mcp, ping = [], [], []
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            await session.list_tools()
            for n in range(samples + 5):
                started = time.perf_counter()
                await anyio.run_process([aw, "run", ws, "--", "true"])
                took_cli = time.perf_counter() - started
                started = time.perf_counter()
                result = await session.call_tool(
                    "workspace_run", {"id": ws, "command": ["true"]}
                )
                took_mcp = time.perf_counter() - started
                if result.is_error or result.structured_content["exit_code"] != 0:
                    raise SystemExit(f"workspace_run failed: {result}")
                started = time.perf_counter()
                await session.send_ping()
                took_ping = time.perf_counter() - started
                if n >= 5:
                    cli.append(took_cli)
                    mcp.append(took_mcp)
                    ping.append(took_ping)
    return {"cli": cli, "mcp": mcp, "ping": ping}


def main():
    aw, ws, samples = sys.argv[1], sys.argv[2], int(sys.argv[3])
    baseline = sys.argv[4] if len(sys.argv) > 4 else None
    out = {
        "bare": bare(aw, ws, samples, baseline),
        "sdk": anyio.run(sdk, aw, ws, samples),
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
