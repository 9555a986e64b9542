"""A copy of the repository's project served by a real ``langgraph dev`` process on loopback.

The copy holds the shipped ``langgraph.json``, ``workflows/`` and the example MCP server;
its ``.mcp.json`` runs that server with this interpreter and an absolute database path, and
its tool cache is filled by ``discover`` before the server starts. The server is its own
process group, so stopping it stops whatever it started; it reaches nothing outside the
machine (analytics off, no browser, no tracing).
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
READY_SECONDS = 90  # a cold start imports langgraph-api and canal: ~3 s idle, more when busy


def copy_project(target: Path) -> Path:
    """The shipped project in ``target`` with its tools discovered; returns the platform's
    database path."""
    from canal import Canal
    from canal.config import load_settings

    shutil.copy(ROOT / "langgraph.json", target / "langgraph.json")
    shutil.copytree(ROOT / "workflows", target / "workflows")
    shutil.copytree(ROOT / "examples" / "permission_platform",
                    target / "examples" / "permission_platform")
    database = target / ".canal" / "permission-platform.db"
    server = {"command": sys.executable,
              "args": [str(target / "examples" / "permission_platform" / "server.py")],
              "env": {"PERMISSION_PLATFORM_DB": str(database)}}
    (target / ".mcp.json").write_text(json.dumps({"mcpServers": {"permission-platform": server}}),
                                      encoding="utf-8")
    with Canal(settings=load_settings(cwd=target, environ={})) as canal:
        summary = canal.discover()
    assert summary["status"] == "ok", summary
    return database


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(f"{url}/ok", timeout=2) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@contextmanager
def langgraph_dev(project: Path) -> Iterator[str]:
    """``langgraph dev`` serving ``project``; yields its URL once ``/ok`` answers, and kills
    its process group on the way out. Fails with the server's log if it is not ready within
    ``READY_SECONDS`` or exits early."""
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("CANAL_", "LANGSMITH_",
                                                                       "LANGCHAIN_"))}
    env.update(LANGGRAPH_CLI_NO_ANALYTICS="1", LANGSMITH_TRACING="false")
    log = project / "langgraph-dev.log"
    command = [str(Path(sys.executable).with_name("langgraph")), "dev", "--no-browser",
               "--no-reload", "--host", "127.0.0.1", "--port", str(port)]
    with log.open("wb") as out:
        process = subprocess.Popen(command, cwd=project, env=env, stdout=out,
                                   stderr=subprocess.STDOUT, start_new_session=True)
    try:
        deadline = time.monotonic() + READY_SECONDS
        while not _ready(url):
            if process.poll() is not None or time.monotonic() > deadline:
                text = log.read_text(encoding="utf-8", errors="replace")[-4000:]
                raise RuntimeError(f"langgraph dev did not start (exit {process.poll()}):\n{text}")
            time.sleep(0.2)
        yield url
    finally:
        _stop(process)


def _stop(process: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the group, then SIGKILL to whatever of it is left (the MCP servers the
    graphs started are in it too)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            continue
