"""An independent MCP client (the Python SDK, `pip install mcp`) driving `agent-workspace mcp`.

Usage: python3 mcp_client.py PLAN_JSON. The plan is {"server": [argv...], "cwd": DIR,
"steps": [...]}; each step is one of
  {"list_tools": true}                  the tools, each schema checked to be a valid JSON Schema,
                                        and "bytes": the size of the list as JSON
  {"tool": NAME, "args": {...}}         a call: isError, structuredContent, text, progress seen,
                                        and "bytes": the size of the result as JSON
      "cancel_after": SECONDS           cancel the call (notifications/cancelled) after that long
      "repeat": N                       call N times and give each call's seconds
      "delay": SECONDS                  wait that long first
  {"poll_status": ID, "timeout": S}     workspace_status until its status is not running
  {"wait_gone": PIDFILE, "timeout": S}  until the process PIDFILE names has ended: the seconds
  {"parallel": [CALL, ...]}             the calls at once; their results and the seconds in all
It prints one JSON document: the initialize result and one result per step. The server's
environment is this process's (the test's isolated HOME, XDG dirs and PATH).
"""

import json
import os
import sys
import time

import anyio
from jsonschema.validators import validator_for
from mcp import ClientSession, MCPError, StdioServerParameters, stdio_client


def dump(model):
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


def size(model):
    """What a model's context pays for an answer: its JSON, as the SDK received it."""
    return len(json.dumps(dump(model), separators=(",", ":"), ensure_ascii=False).encode())


async def call(session, step):
    progress = []

    async def on_progress(value, total, message):
        progress.append({"progress": value, "message": message})

    await anyio.sleep(step.get("delay", 0))
    started = time.monotonic()
    result = {"tool": step["tool"]}
    try:
        if "cancel_after" in step:
            with anyio.move_on_after(step["cancel_after"]) as scope:
                answer = await session.call_tool(
                    step["tool"], step.get("args", {}), progress_callback=on_progress
                )
            if scope.cancelled_caught:
                result["cancelled"] = True
                result["progress"] = progress
                return result
        else:
            answer = await session.call_tool(
                step["tool"], step.get("args", {}), progress_callback=on_progress
            )
    except MCPError as e:
        result["rpc_error"] = {"code": e.error.code, "message": e.error.message}
        return result
    result["seconds"] = time.monotonic() - started
    result["bytes"] = size(answer)
    result["is_error"] = bool(answer.is_error)
    result["structured"] = answer.structured_content
    result["text"] = [c.text for c in answer.content if getattr(c, "type", "") == "text"]
    result["progress"] = progress
    return result


async def main(plan):
    params = StdioServerParameters(
        command=plan["server"][0],
        args=plan["server"][1:],
        env=dict(os.environ),
        cwd=plan.get("cwd"),
    )
    out = {"steps": []}
    async with stdio_client(params) as (read, write):
        async with ClientSession(read, write) as session:
            init = await session.initialize()
            out["initialize"] = dump(init)
            for step in plan["steps"]:
                if step.get("list_tools"):
                    listed = await session.list_tools()
                    tools = []
                    for tool in listed.tools:
                        entry = dump(tool)
                        for key in ("inputSchema", "outputSchema"):
                            schema = entry.get(key)
                            if schema is not None:
                                validator_for(schema).check_schema(schema)
                        tools.append(entry)
                    out["steps"].append({"tools": tools, "bytes": size(listed)})
                elif "wait_gone" in step:
                    started = time.monotonic()
                    with open(step["wait_gone"]) as f:
                        pid = f.read().strip()
                    while True:
                        try:
                            with open(f"/proc/{pid}/stat") as f:
                                gone = f.read().rsplit(")", 1)[1].split()[0] == "Z"
                        except OSError:
                            gone = True
                        elapsed = time.monotonic() - started
                        if gone or elapsed > step.get("timeout", 5):
                            break
                        await anyio.sleep(0.02)
                    out["steps"].append({"gone": gone, "seconds": elapsed})
                elif "poll_status" in step:
                    started = time.monotonic()
                    while True:
                        answer = await session.call_tool(
                            "workspace_status", {"id": step["poll_status"]}
                        )
                        status = (answer.structured_content or {}).get("status")
                        elapsed = time.monotonic() - started
                        if status != "running" or elapsed > step.get("timeout", 5):
                            break
                        await anyio.sleep(0.05)
                    out["steps"].append(
                        {"status": status, "seconds": elapsed, "structured": answer.structured_content}
                    )
                elif "parallel" in step:
                    results = [None] * len(step["parallel"])
                    started = time.monotonic()

                    async def one(i, inner):
                        results[i] = await call(session, inner)

                    async with anyio.create_task_group() as group:
                        for i, inner in enumerate(step["parallel"]):
                            group.start_soon(one, i, inner)
                    out["steps"].append(
                        {"results": results, "seconds": time.monotonic() - started}
                    )
                elif "repeat" in step:
                    seconds = []
                    for _ in range(step["repeat"]):
                        result = await call(session, step)
                        if result.get("is_error") or "rpc_error" in result:
                            raise SystemExit(f"a repeated call failed: {result}")
                        seconds.append(result["seconds"])
                    out["steps"].append({"seconds": seconds})
                else:
                    out["steps"].append(await call(session, step))
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    anyio.run(main, json.loads(sys.argv[1]))
