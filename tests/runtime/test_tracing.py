"""Traces: a workflow with sensitive fields is never traced; others trace as configured.

A real HTTP server on loopback stands in for the LangSmith endpoint and records every body
the tracer posts.
"""

from __future__ import annotations

import gzip
import http.server
import threading
import time

import pytest

from canal import Canal, PythonTools
from tests.conftest import write_workflow

SECRET = "Trace-Me-Not-77aa"


class Recorder(http.server.BaseHTTPRequestHandler):
    bodies: list[bytes] = []

    def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.headers.get("Content-Encoding") == "gzip":
            body = gzip.decompress(body)
        Recorder.bodies.append(body)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    do_PATCH = do_POST

    def do_GET(self) -> None:  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: object) -> None:
        pass


def _forget_langsmith_settings() -> None:
    """langsmith caches environment lookups and its client: start from the environment."""
    import langsmith.run_trees
    import langsmith.utils

    langsmith.utils.get_env_var.cache_clear()
    langsmith.utils.get_tracer_project.cache_clear()
    langsmith.run_trees._CLIENT = None


@pytest.fixture
def endpoint(monkeypatch):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    Recorder.bodies = []
    monkeypatch.setenv("LANGSMITH_TRACING", "true")
    monkeypatch.setenv("LANGSMITH_ENDPOINT", f"http://127.0.0.1:{server.server_port}")
    monkeypatch.setenv("LANGSMITH_API_KEY", "test-key")
    _forget_langsmith_settings()
    yield Recorder.bodies
    monkeypatch.undo()
    _forget_langsmith_settings()
    server.shutdown()


def sent(bodies: list[bytes], wait: float) -> bool:
    """Whether the secret reached the endpoint within ``wait`` seconds."""
    deadline = time.monotonic() + wait
    while True:
        if any(SECRET.encode() in body for body in bodies):
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)


def run(workflows, tmp_path, sensitive: bool, listen: bool = False) -> None:
    from langchain_core.tracers.langchain import wait_for_all_tracers

    write_workflow(workflows, "w", {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "token": {"type": "string", "required": True, "sensitive": sensitive}}}},
        "02-use.md": {"type": "automated", "automation": {
            "tool": "use", "input_mapping": {"token": "{{gate.ask.token}}"}}},
        "03-done.md": {"type": "notification"},
    })
    canal = Canal(workflows=workflows, home=tmp_path / ".canal",
                  tools=PythonTools({"use": lambda token: {"used": True}}))
    events: list[dict] = []
    if listen:  # the graph then streams, its nodes running in LangGraph's worker threads
        canal.on_event = events.append
    canal.start("w", thread_id="t")
    canal.advance("t", {"token": SECRET})
    assert len(events) == (2 if listen else 0)
    wait_for_all_tracers()


def test_a_sensitive_workflow_sends_no_trace(workflows, tmp_path, endpoint):
    run(workflows, tmp_path, sensitive=True)
    assert not sent(endpoint, wait=2)


def test_a_sensitive_workflow_sends_no_trace_while_events_stream(workflows, tmp_path,
                                                                 endpoint):
    run(workflows, tmp_path, sensitive=True, listen=True)
    assert not sent(endpoint, wait=2)


def test_other_workflows_are_traced(workflows, tmp_path, endpoint):
    run(workflows, tmp_path, sensitive=False)
    assert sent(endpoint, wait=10), "the tracer sent nothing"
