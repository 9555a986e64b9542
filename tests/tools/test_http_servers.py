"""HTTP MCP servers (streamable HTTP and SSE), run as real processes on loopback."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time

import pytest

from canal import Canal
from tests.conftest import ROOT


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(params=[("streamable-http", "http", "/mcp"), ("sse", "sse", "/sse")],
                ids=["streamable-http", "sse"])
def web(request, tmp_path):
    transport, kind, path = request.param
    port = free_port()
    proc = subprocess.Popen([sys.executable, str(ROOT / "tests" / "servers" / "web.py"),
                             str(port), transport], stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            break
        except OSError:
            time.sleep(0.1)
    else:
        proc.kill()
        pytest.fail("the HTTP MCP server did not start")
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"web": {
        "type": kind, "url": f"http://127.0.0.1:{port}{path}",
        "headers": {"X-Token": "${CANAL_TEST_TOKEN}"}}}}))
    yield Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
                mcp_config=tmp_path / ".mcp.json", checkpointer="memory:")
    proc.terminate()
    proc.wait(10)


def test_discover_and_call_over_http(web):
    summary = web.discover()
    assert summary["status"] == "ok" and summary["added"] == ["greet"]
    assert web.meta("greet")["description"] == "Greet someone by name."
    assert web.call("greet", {"name": "Ada"})["result"] == {"hello": "Ada"}


def test_an_unreachable_http_server_is_reported(tmp_path):
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"web": {
        "type": "http", "url": f"http://127.0.0.1:{free_port()}/mcp", "timeout": 3}}}))
    canal = Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
                  mcp_config=tmp_path / ".mcp.json", checkpointer="memory:")
    summary = canal.discover()
    assert summary["status"] == "error"
    assert summary["servers"]["web"]["error"].startswith(
        "cannot start MCP server 'web' (streamable_http http://127.0.0.1:")
