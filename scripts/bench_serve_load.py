"""
The closed-loop load client of ``bench_serve.py``, run in its own process.

Each client thread holds keep-alive connections made with ``http.client`` and sends one
``tools/call`` at a time, timing it from the request's first byte to the reply's last.
Transports: ``mcp-2025`` (initialize handshake, then calls with the session header when the
server gave one), ``mcp-2026`` (stateless requests carrying their protocol ``_meta``) and
``sse`` (GET /sse stream, POSTs to the endpoint it names, replies read from the stream).

Protocol with the parent: the JSON settings are argv[1]; after every client is connected
and initialized it prints ``ready``, waits for one line on stdin, runs for the duration
and prints one JSON line of results.
"""

from __future__ import annotations

import http.client
import itertools
import json
import sys
import threading
import time

LEGACY_VERSION = "2025-11-25"
STATELESS_VERSION = "2026-07-28"
META = {
    "io.modelcontextprotocol/protocolVersion": STATELESS_VERSION,
    "io.modelcontextprotocol/clientInfo": {"name": "bench-serve", "version": "1"},
    "io.modelcontextprotocol/clientCapabilities": {},
}
INITIALIZE = {
    "protocolVersion": LEGACY_VERSION,
    "capabilities": {},
    "clientInfo": {"name": "bench-serve", "version": "1"},
}


class CallFailed(Exception):
    """A reply that is not a successful tool result."""


def _reply_json(body: bytes, content_type: str) -> dict:
    if "text/event-stream" in content_type:
        for line in body.splitlines():
            if line.startswith(b"data:"):
                return json.loads(line[5:])
        raise CallFailed(f"no data in event stream: {body[:200]!r}")
    return json.loads(body)


def _check(reply: dict) -> None:
    result = reply.get("result")
    if not isinstance(result, dict) or result.get("isError"):
        raise CallFailed(json.dumps(reply)[:300])


class Client:
    """One closed-loop client on one transport."""

    def __init__(self, settings: dict) -> None:
        self.host = settings["host"]
        self.port = settings["port"]
        self.tool = settings["tool"]
        self.arguments = settings["arguments"]
        self.transport = settings["transport"]
        self.ids = itertools.count(1)
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        self.headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "host": f"{self.host}:{self.port}",
        }
        self.stream = None
        self.endpoint = "/mcp"

    def _request(self, name: str, params: dict, *, notify: bool = False) -> dict:
        message = {"jsonrpc": "2.0", "method": name, "params": params}
        if not notify:
            message["id"] = next(self.ids)
        return message

    def _post(self, message: dict, headers: dict) -> http.client.HTTPResponse:
        self.conn.request("POST", self.endpoint, json.dumps(message).encode(), headers)
        return self.conn.getresponse()

    # -- set-up ------------------------------------------------------------------------------

    def setup(self) -> None:
        if self.transport == "sse":
            self._open_stream()
        if self.transport in ("mcp-2025", "sse"):
            reply = self._exchange(self._request("initialize", INITIALIZE))
            if "result" not in reply:
                raise CallFailed(f"initialize failed: {reply}")
            self.headers["mcp-protocol-version"] = LEGACY_VERSION
            self._exchange(self._request("notifications/initialized", {}, notify=True))
        else:
            self.headers.update(
                {
                    "mcp-protocol-version": STATELESS_VERSION,
                    "mcp-method": "tools/call",
                    "mcp-name": self.tool,
                }
            )

    def _open_stream(self) -> None:
        self.stream = http.client.HTTPConnection(self.host, self.port, timeout=30)
        self.stream.request("GET", "/sse", headers={"accept": "text/event-stream"})
        self.events = self.stream.getresponse()
        if self.events.status != 200:
            raise CallFailed(f"GET /sse answered {self.events.status}")
        event, data = self._next_event()
        if event != "endpoint":
            raise CallFailed(f"first SSE event is {event!r}, not the endpoint")
        self.endpoint = data

    def _next_event(self) -> tuple[str, str]:
        event, data = "message", []
        while True:
            line = self.events.readline()
            if not line:
                raise CallFailed("SSE stream closed")
            line = line.rstrip(b"\r\n")
            if not line:
                if data:
                    return event, "\n".join(data)
                continue
            if line.startswith(b"event:"):
                event = line[6:].strip().decode()
            elif line.startswith(b"data:"):
                data.append(line[5:].strip().decode())

    # -- one exchange ------------------------------------------------------------------------

    def _exchange(self, message: dict) -> dict:
        response = self._post(message, self.headers)
        body = response.read()
        if self.transport != "sse":
            session = response.getheader("mcp-session-id")
            if session:
                self.headers["mcp-session-id"] = session
            if "id" not in message:
                return {}
            return _reply_json(body, response.getheader("content-type", ""))
        if response.status >= 300:
            raise CallFailed(f"POST {self.endpoint} answered {response.status}: {body[:200]!r}")
        if "id" not in message:
            return {}
        while True:
            event, data = self._next_event()
            if event == "message":
                reply = json.loads(data)
                if reply.get("id") == message["id"]:
                    return reply

    def call(self) -> None:
        params = {"name": self.tool, "arguments": self.arguments}
        if self.transport == "mcp-2026":
            params["_meta"] = META
        _check(self._exchange(self._request("tools/call", params)))


def run(settings: dict) -> dict:
    clients = [Client(settings) for _ in range(settings["clients"])]
    for client in clients:
        client.setup()
        for _ in range(settings["warmup"]):
            client.call()
    print("ready", flush=True)
    sys.stdin.readline()
    stop_at = time.perf_counter() + settings["duration"]
    latencies: list[list[float]] = [[] for _ in clients]
    errors: list[str] = []

    def loop(client: Client, into: list[float]) -> None:
        clock = time.perf_counter
        try:
            while clock() < stop_at:
                started = clock()
                client.call()
                into.append(clock() - started)
        except Exception as error:  # reported to the parent, which fails the run
            errors.append(repr(error))

    started = time.perf_counter()
    threads = [
        threading.Thread(target=loop, args=(client, into))
        for client, into in zip(clients, latencies, strict=True)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    merged = sorted(value for values in latencies for value in values)
    count = len(merged)

    def percentile(fraction: float) -> float:
        return merged[min(count - 1, int(fraction * count))] * 1000 if count else float("nan")

    return {
        "calls": count,
        "seconds": elapsed,
        "calls_per_s": count / elapsed,
        "p50_ms": percentile(0.50),
        "p99_ms": percentile(0.99),
        "errors": errors[:3],
    }


if __name__ == "__main__":
    print(json.dumps(run(json.loads(sys.argv[1]))), flush=True)
