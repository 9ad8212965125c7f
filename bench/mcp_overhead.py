"""The MCP server's own cost per call, measured from its client (bench/mcp.sh runs this).

Usage: python3 mcp_overhead.py AGENT_WORKSPACE_BIN WORKSPACE_ID SAMPLES

Run in the repository, whose workspace WORKSPACE_ID exists. Each side is timed the same way,
from one client process, the samples of the two sides interleaved (so a change of load
falls on both):

  bare   a client with no SDK: the CLI's warm `run ID -- true` started with subprocess.run,
         against one `workspace_run` of `true` as a JSON-RPC line written to the server's
         stdin and its answer read from its stdout (a server started once, then kept);
  sdk    the Python MCP SDK's client (anyio): the CLI started with anyio.run_process, against
         session.call_tool("workspace_run"); and session.send_ping(), the SDK's own cost of
         one request and its answer, which the server answers without work.

It prints one JSON document: for each series its samples in seconds.
"""

import json
import os
import subprocess
import sys
import time

import anyio


def bare(aw, ws, samples):
    server = subprocess.Popen(
        [aw, "mcp"], stdin=subprocess.PIPE, stdout=subprocess.PIPE, bufsize=0
    )
    answers = open(server.stdout.fileno(), "rb", buffering=1 << 16, closefd=False)
    ids = iter(range(1, 1 << 30))

    def request(method, params=None, notify=False):
        message = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        if not notify:
            message["id"] = next(ids)
        server.stdin.write((json.dumps(message) + "\n").encode())
        if not notify:
            answer = json.loads(answers.readline())
            if "error" in answer:
                raise SystemExit(f"{method}: {answer['error']}")
            return answer["result"]

    request(
        "initialize",
        {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "bench", "version": "0"},
        },
    )
    request("notifications/initialized", notify=True)
    call = {"name": "workspace_run", "arguments": {"id": ws, "command": ["true"]}}
    cli, mcp = [], []
    for n in range(samples + 5):
        started = time.perf_counter()
        subprocess.run(
            [aw, "run", ws, "--", "true"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            check=True,
        )
        took_cli = time.perf_counter() - started
        started = time.perf_counter()
        result = request("tools/call", call)
        took_mcp = time.perf_counter() - started
        if result.get("isError") or result["structuredContent"]["exit_code"] != 0:
            raise SystemExit(f"workspace_run failed: {result}")
        if n >= 5:  # the first few warm both sides up
            cli.append(took_cli)
            mcp.append(took_mcp)
    server.stdin.close()
    server.wait()
    return {"cli": cli, "mcp": mcp}


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
    out = {"bare": bare(aw, ws, samples), "sdk": anyio.run(sdk, aw, ws, samples)}
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
