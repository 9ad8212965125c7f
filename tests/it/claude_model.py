"""A scripted stand-in for the model behind the real Claude Code client, for the tests.

Serves the Messages API on 127.0.0.1 (the port is printed on the first line of stdout):
a streamed request offering the Bash tool and holding no tool result yet is answered with
one Bash call running the command in $MODEL_BASH; every other request (the call's result
back, side requests) with the text "done". Each request's tools and whether it streamed are
appended to $MODEL_LOG as a JSON line (with whether the request offered agent-workspace's
skill), so a test can see what the client asked.
"""

import json
import os
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


def has_tool_result(messages):
    for message in messages:
        content = message.get("content")
        if isinstance(content, list):
            for block in content:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    return True
    return False


def events(blocks, stop_reason):
    yield "message_start", {
        "type": "message_start",
        "message": {
            "id": "msg_scripted",
            "type": "message",
            "role": "assistant",
            "model": "scripted",
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        },
    }
    for index, block in enumerate(blocks):
        if block["type"] == "text":
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            start = {"type": "tool_use", "id": block["id"], "name": block["name"], "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        yield "content_block_start", {"type": "content_block_start", "index": index, "content_block": start}
        yield "content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}
        yield "content_block_stop", {"type": "content_block_stop", "index": index}
    yield "message_delta", {
        "type": "message_delta",
        "delta": {"stop_reason": stop_reason, "stop_sequence": None},
        "usage": {"output_tokens": 1},
    }
    yield "message_stop", {"type": "message_stop"}


class Handler(BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        self.reply_json({})

    def do_HEAD(self):
        self.send_response(200)
        self.end_headers()

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            body = {}
        tools = [t.get("name") for t in body.get("tools", []) if isinstance(t, dict)]
        messages = body.get("messages", [])
        log = os.environ.get("MODEL_LOG")
        if log:
            with open(log, "a") as f:
                f.write(json.dumps({
                    "path": self.path,
                    "stream": bool(body.get("stream")),
                    "tools": tools,
                    "skill_offered": b"agent-workspace" in raw and b"isolated, resumable workspace" in raw,
                }) + "\n")
        if not self.path.startswith("/v1/messages") or self.path.startswith("/v1/messages/count_tokens"):
            self.reply_json({"input_tokens": 1})
            return
        command = os.environ.get("MODEL_BASH")
        if command and "Bash" in tools and not has_tool_result(messages):
            blocks = [{"type": "tool_use", "id": "toolu_scripted", "name": "Bash",
                       "input": {"command": command, "description": "scripted"}}]
            stop = "tool_use"
        else:
            blocks = [{"type": "text", "text": "done"}]
            stop = "end_turn"
        if body.get("stream"):
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.end_headers()
            for name, data in events(blocks, stop):
                self.wfile.write(f"event: {name}\ndata: {json.dumps(data)}\n\n".encode())
            self.wfile.flush()
        else:
            content = [b if b["type"] == "text" else dict(b) for b in blocks]
            self.reply_json({
                "id": "msg_scripted", "type": "message", "role": "assistant", "model": "scripted",
                "content": content, "stop_reason": stop, "stop_sequence": None,
                "usage": {"input_tokens": 1, "output_tokens": 1},
            })

    def reply_json(self, value):
        data = json.dumps(value).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    print(server.server_address[1], flush=True)
    sys.stdout.close()
    server.serve_forever()


if __name__ == "__main__":
    main()
