"""A local, stdlib-only fake of the Anthropic Messages API, for driving the real
Claude Code CLI offline.

    def policy(req):            # req = the JSON body of POST /v1/messages
        return [{"type": "text", "text": "hello"}]

    with FakeAPI(policy, log_dir) as api:
        env["ANTHROPIC_BASE_URL"] = api.base_url
        ...
    api.requests          # list of logged request records (dicts)
    api.max_inflight      # max concurrent in-flight POST /v1/messages

A policy returns a list of content blocks:
    {"type": "text", "text": "..."}
    {"type": "tool_use", "name": "Write", "input": {...}}   (id is added if missing)
    {"type": "thinking", "thinking": "..."}                  (rarely needed)
It may instead return a dict {"content": [...], "stop_reason": "...", "usage": {...}},
or {"http_status": 500} to answer that request with an API error.
The stop_reason defaults to "tool_use" when a tool_use block is present, else
"end_turn". If the policy raises, the server answers a text block carrying the
error (and records it in api.errors) so the client never hangs.

Every request (any method, any path) is logged to log_dir as
NNNN-<slug>.json (the parsed JSON body, or the raw text) and one line in
log_dir/index.jsonl: {"n","method","path","bytes","t_start","t_end","inflight",
"stream","model","role"}.
"""

from __future__ import annotations

import json
import os
import re
import threading
import time
import traceback
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable, Dict, List, Optional

Policy = Callable[[Dict[str, Any]], Any]


# ---------------------------------------------------------------- request helpers
def system_text(req: Dict[str, Any]) -> str:
    """The system prompt of a Messages request as one string."""
    s = req.get("system")
    if isinstance(s, str):
        return s
    if isinstance(s, list):
        return "\n".join(b.get("text", "") for b in s if isinstance(b, dict))
    return ""


def tool_names(req: Dict[str, Any]) -> List[str]:
    return [t.get("name", "") for t in req.get("tools") or []]


def block_text(content: Any) -> str:
    """All text of a message content (str or list of blocks), tool_result text included."""
    if isinstance(content, str):
        return content
    out = []
    for b in content or []:
        if not isinstance(b, dict):
            continue
        if b.get("type") == "text":
            out.append(b.get("text", ""))
        elif b.get("type") == "tool_result":
            out.append(block_text(b.get("content")))
    return "\n".join(out)


def first_user_text(req: Dict[str, Any]) -> str:
    for m in req.get("messages") or []:
        if m.get("role") == "user":
            return block_text(m.get("content"))
    return ""


def last_user_text(req: Dict[str, Any]) -> str:
    msgs = req.get("messages") or []
    for m in reversed(msgs):
        if m.get("role") == "user":
            return block_text(m.get("content"))
    return ""


def tool_results(req: Dict[str, Any], last_only: bool = True) -> List[Dict[str, Any]]:
    """tool_result blocks after the last assistant message (or in all messages).

    Note: Claude Code 2.1.332 puts role "system" messages into `messages` (after
    tool results too), so "the last message" is not always the user's turn.
    """
    msgs = req.get("messages") or []
    if last_only:
        k = max([i for i, m in enumerate(msgs) if m.get("role") == "assistant"], default=-1)
        pool = msgs[k + 1:]
    else:
        pool = msgs
    out = []
    for m in pool:
        if m.get("role") != "user" or not isinstance(m.get("content"), list):
            continue
        out += [b for b in m["content"] if isinstance(b, dict) and b.get("type") == "tool_result"]
    return out


def n_assistant_turns(req: Dict[str, Any]) -> int:
    return sum(1 for m in req.get("messages") or [] if m.get("role") == "assistant")


def classify(req: Dict[str, Any]) -> str:
    """Best-effort role of a request, from the request alone.

    "subagent"  a sub-agent started through the Agent tool: the first system block
                (billing header) contains "cc_is_subagent=true", and the prompt says
                "You are an agent for Claude Code, Anthropic's official CLI for Claude."
    "aux"       a side request with no tools (none seen with the env of run_claude.py)
    "main"      everything else (the -p session itself)
    See tests/e2e/NOTES.md for the markers.
    """
    sysm = system_text(req)
    names = tool_names(req)
    if "cc_is_subagent=true" in sysm[:400] or "You are an agent for Claude Code, Anthropic's official CLI" in sysm:
        return "subagent"
    if not names:
        return "aux"
    return "main"


# ---------------------------------------------------------------- the server
class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeAnthropic/1.0"

    def log_message(self, fmt, *args):  # quiet
        pass

    # --- plumbing
    def _read_body(self) -> bytes:
        n = int(self.headers.get("Content-Length") or 0)
        if n:
            return self.rfile.read(n)
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            chunks = []
            while True:
                line = self.rfile.readline().strip()
                size = int(line.split(b";")[0] or b"0", 16)
                if size == 0:
                    self.rfile.readline()
                    break
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
            return b"".join(chunks)
        return b""

    def _send_json(self, code: int, obj: Any, extra_headers: Optional[Dict[str, str]] = None):
        data = json.dumps(obj).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", "req_fake_%d" % int(time.time() * 1000))
        for k, v in (extra_headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _any(self):
        api: FakeAPI = self.server.api  # type: ignore[attr-defined]
        body = self._read_body() if self.command in ("POST", "PUT", "PATCH") else b""
        path = self.path.split("?")[0]
        rec = api._log_start(self.command, self.path, body, dict(self.headers))
        try:
            if self.command == "POST" and path.rstrip("/").endswith("/v1/messages"):
                self._messages(api, rec)
            elif self.command == "POST" and path.endswith("/v1/messages/count_tokens"):
                self._send_json(200, {"input_tokens": api.count_tokens(rec.get("json") or {})})
            elif self.command == "HEAD":
                self.send_response(200)
                self.send_header("Content-Length", "0")
                self.end_headers()
            elif path.endswith("/v1/models") or path.endswith("/v1/models/"):
                self._send_json(200, {"data": [], "has_more": False, "first_id": None, "last_id": None})
            elif path.startswith("/api/hello"):
                self._send_json(200, {"message": "hello"})
            else:
                self._send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": "fake: %s" % path}})
        except (BrokenPipeError, ConnectionResetError):
            pass
        finally:
            api._log_end(rec)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = _any

    # --- /v1/messages
    def _messages(self, api: "FakeAPI", rec: Dict[str, Any]):
        req = rec.get("json") or {}
        with api._lock:
            api._inflight += 1
            api.max_inflight = max(api.max_inflight, api._inflight)
            rec["inflight"] = api._inflight
        try:
            if api.latency:
                time.sleep(api.latency)
            content, stop_reason, usage = api._run_policy(req)
            if isinstance(content, int):  # the policy asked for an HTTP error
                rec["reply"] = {"http_status": content}
                self._send_json(content, {"type": "error", "error": {
                    "type": "api_error", "message": "fake: scripted HTTP %d" % content}})
                return
            rec["reply"] = content
            model = req.get("model", "claude-fake")
            msg_id = "msg_fake_%06d" % rec["n"]
            if req.get("stream"):
                self._stream(msg_id, model, content, stop_reason, usage)
            else:
                self._send_json(200, {
                    "id": msg_id, "type": "message", "role": "assistant", "model": model,
                    "content": content, "stop_reason": stop_reason, "stop_sequence": None,
                    "usage": usage,
                })
        finally:
            with api._lock:
                api._inflight -= 1

    def _stream(self, msg_id, model, content, stop_reason, usage):
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream; charset=utf-8")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Connection", "keep-alive")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("request-id", msg_id.replace("msg", "req"))
        self.end_headers()

        def ev(name, obj):
            payload = ("event: %s\ndata: %s\n\n" % (name, json.dumps(obj))).encode()
            self.wfile.write(b"%x\r\n%s\r\n" % (len(payload), payload))
            self.wfile.flush()

        # as the real API streams it: input and cache counts at the start, output at the end
        start_usage = {"input_tokens": usage.get("input_tokens", 1), "output_tokens": 1,
                       "cache_creation_input_tokens": usage.get("cache_creation_input_tokens", 0),
                       "cache_read_input_tokens": usage.get("cache_read_input_tokens", 0)}
        ev("message_start", {"type": "message_start", "message": {
            "id": msg_id, "type": "message", "role": "assistant", "model": model, "content": [],
            "stop_reason": None, "stop_sequence": None, "usage": start_usage}})
        ev("ping", {"type": "ping"})
        for i, b in enumerate(content):
            t = b.get("type")
            if t == "text":
                ev("content_block_start", {"type": "content_block_start", "index": i,
                                           "content_block": {"type": "text", "text": ""}})
                text = b.get("text", "")
                for k in range(0, max(len(text), 1), 200):
                    ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "text_delta", "text": text[k:k + 200]}})
            elif t == "tool_use":
                ev("content_block_start", {"type": "content_block_start", "index": i, "content_block": {
                    "type": "tool_use", "id": b["id"], "name": b["name"], "input": {}}})
                js = json.dumps(b.get("input") or {})
                for k in range(0, len(js), 300):
                    ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                               "delta": {"type": "input_json_delta", "partial_json": js[k:k + 300]}})
            elif t == "thinking":
                ev("content_block_start", {"type": "content_block_start", "index": i,
                                           "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
                ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                           "delta": {"type": "thinking_delta", "thinking": b.get("thinking", "")}})
                ev("content_block_delta", {"type": "content_block_delta", "index": i,
                                           "delta": {"type": "signature_delta", "signature": b.get("signature", "fake")}})
            ev("content_block_stop", {"type": "content_block_stop", "index": i})
        ev("message_delta", {"type": "message_delta",
                             "delta": {"stop_reason": stop_reason, "stop_sequence": None},
                             "usage": {"output_tokens": usage.get("output_tokens", 1)}})
        ev("message_stop", {"type": "message_stop"})
        self.wfile.write(b"0\r\n\r\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 64

    def handle_error(self, request, client_address):
        # a client killed mid-request (the resume test does that) is not a server error
        import sys
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


def estimate_tokens(req: Dict[str, Any]) -> int:
    """count_tokens stand-in: ceil(characters of system + message text + tool JSON / 4).

    `claude plugin details` calls /v1/messages/count_tokens once per component with
    the always-on text ("plugin:skill description") and the SKILL.md body, so this
    decides the numbers it prints when ANTHROPIC_BASE_URL points here.
    """
    chars = len(system_text(req))
    for m in req.get("messages") or []:
        chars += len(block_text(m.get("content")))
    if req.get("tools"):
        chars += len(json.dumps(req["tools"]))
    return max(1, -(-chars // 4))


def default_policy(req: Dict[str, Any]) -> List[Dict[str, Any]]:
    return [{"type": "text", "text": "ok"}]


class FakeAPI:
    def __init__(self, policy: Optional[Policy] = None, log_dir: Optional[str] = None,
                 latency: float = 0.0, host: str = "127.0.0.1", port: int = 0,
                 count_tokens: Optional[Callable[[Dict[str, Any]], int]] = None):
        self.policy = policy or default_policy
        self.count_tokens = count_tokens or estimate_tokens
        self.log_dir = log_dir
        self.latency = latency
        self.host, self.port = host, port
        self.requests: List[Dict[str, Any]] = []
        self.errors: List[str] = []
        self.max_inflight = 0
        self._inflight = 0
        self._lock = threading.Lock()
        self._n = 0
        self._tool_n = 0
        self._srv: Optional[_Server] = None
        self._thread: Optional[threading.Thread] = None

    # --- lifecycle
    def start(self) -> "FakeAPI":
        if self.log_dir:
            os.makedirs(self.log_dir, exist_ok=True)
        self._srv = _Server((self.host, self.port), _Handler)
        self._srv.api = self  # type: ignore[attr-defined]
        self.port = self._srv.server_address[1]
        self._thread = threading.Thread(target=self._srv.serve_forever, kwargs={"poll_interval": 0.1}, daemon=True)
        self._thread.start()
        return self

    def stop(self):
        if self._srv:
            self._srv.shutdown()
            self._srv.server_close()
            self._srv = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    @property
    def base_url(self) -> str:
        return "http://%s:%d" % (self.host, self.port)

    # --- views
    def messages_requests(self) -> List[Dict[str, Any]]:
        return [r for r in self.requests if r["method"] == "POST" and r["path"].split("?")[0].rstrip("/").endswith("/v1/messages")]

    # --- internals
    def _log_start(self, method, path, body: bytes, headers) -> Dict[str, Any]:
        with self._lock:
            self._n += 1
            n = self._n
        try:
            parsed = json.loads(body) if body else None
        except ValueError:
            parsed = None
        rec: Dict[str, Any] = {"n": n, "method": method, "path": path, "bytes": len(body),
                               "t_start": time.time(), "json": parsed,
                               "headers": {k.lower(): v for k, v in headers.items()
                                           if k.lower() not in ("x-api-key", "authorization")}}
        if isinstance(parsed, dict):
            rec["stream"] = bool(parsed.get("stream"))
            rec["model"] = parsed.get("model")
            if "messages" in parsed:
                rec["role"] = classify(parsed)
        with self._lock:
            self.requests.append(rec)
        if self.log_dir:
            slug = re.sub(r"[^A-Za-z0-9]+", "_", path.split("?")[0]).strip("_")[:60] or "root"
            fn = os.path.join(self.log_dir, "%04d-%s-%s.json" % (n, method, slug))
            with open(fn, "w") as f:
                if parsed is not None:
                    json.dump(parsed, f, indent=1)
                else:
                    f.write(body.decode("utf-8", "replace"))
        return rec

    def _log_end(self, rec: Dict[str, Any]):
        rec["t_end"] = time.time()
        if self.log_dir:
            line = {k: rec.get(k) for k in ("n", "method", "path", "bytes", "t_start", "t_end",
                                            "inflight", "stream", "model", "role")}
            with self._lock, open(os.path.join(self.log_dir, "index.jsonl"), "a") as f:
                f.write(json.dumps(line) + "\n")
            if "reply" in rec:
                fn = os.path.join(self.log_dir, "%04d-reply.json" % rec["n"])
                with open(fn, "w") as f:
                    json.dump(rec["reply"], f, indent=1)

    def _run_policy(self, req: Dict[str, Any]):
        stop_reason = None
        usage = None
        try:
            out = self.policy(req)
        except Exception:  # never hang the client
            err = traceback.format_exc()
            self.errors.append(err)
            out = [{"type": "text", "text": "fake policy error:\n" + err[-500:]}]
        if isinstance(out, dict) and "http_status" in out:
            return int(out["http_status"]), None, None
        if isinstance(out, dict):
            stop_reason = out.get("stop_reason")
            usage = out.get("usage")
            out = out.get("content", [])
        if isinstance(out, str):
            out = [{"type": "text", "text": out}]
        content = []
        for b in out or [{"type": "text", "text": ""}]:
            b = dict(b)
            if b.get("type") == "tool_use":
                with self._lock:
                    self._tool_n += 1
                    b.setdefault("id", "toolu_fake_%06d" % self._tool_n)
                b.setdefault("input", {})
            content.append(b)
        if stop_reason is None:
            stop_reason = "tool_use" if any(b.get("type") == "tool_use" for b in content) else "end_turn"
        if usage is None:
            usage = {"input_tokens": max(1, len(json.dumps(req)) // 4),
                     "output_tokens": max(1, len(json.dumps(content)) // 4)}
        return content, stop_reason, usage
