"""Stdio MCP servers stay quiet and never outlive canal: their stderr goes to a log file,
they are stopped when canal is stopped (SIGTERM, SIGINT) or killed (SIGKILL), and a failing
tool reads the same through ``canal call`` and through a workflow step.

The servers are real (tests/servers/toolbox.py) and so are the ``canal`` processes that
get the signals. ``blocking`` tools hold their server for the whole call without looking
at stdin: the kind of server that lingered after canal was gone."""

from __future__ import annotations

import json
import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import Cli, ProcessCli, write_workflow
from tests.servers.toolbox import NOISY_TRACEBACK

CALL_SECONDS = 20  # how long a blocking call would hold its server
MARGIN = 8         # how long a server may take to go once canal is gone (GRACE is 2 s;
                   # the rest is slack for a loaded 2-core machine)


def automated(tool: str) -> dict:
    return {"01-ask.md": {"type": "interactive", "gate": {"schema": {
                "note": {"type": "string", "required": False}}}},
            "02-call.md": {"type": "automated", "automation": {"tool": tool,
                                                               "input_mapping": {}}},
            "03-done.md": {"type": "notification"}}


@pytest.fixture
def project(tmp_path, toolbox):
    toolbox.add("box", [{"name": "noisy", "behavior": "noisy"},
                        {"name": "broken", "behavior": "error", "result": "quota exceeded"},
                        {"name": "crashing", "behavior": "crash"},
                        {"name": "hanging", "behavior": "hang"},
                        {"name": "blocking", "behavior": "blocking",
                         "seconds": CALL_SECONDS}], timeout=1.5)
    for tool in ("noisy", "broken", "crashing", "hanging", "blocking", "ghost"):
        write_workflow(tmp_path / "workflows", f"use-{tool}", automated(tool))
    assert Cli(tmp_path)("discover").code == 0
    return tmp_path


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (ProcessLookupError, FileNotFoundError):
        return False
    return state != "Z"  # a zombie has exited; only its exit status is left


def gone_within(pids: list[int], seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while any(alive(p) for p in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def server_pids(project: Path) -> list[int]:
    """The last started server, and its supervisor (its parent, unless that is canal)."""
    line = (project / "servers" / "box" / "starts.log").read_text().splitlines()[-1]
    pid = int(line.split()[1])
    parent = int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    supervised = "supervisor.py" in Path(f"/proc/{parent}/cmdline").read_text()
    return [pid, parent] if supervised else [pid]


def advance_in_flight(project: Path, cli: ProcessCli) -> tuple[subprocess.Popen, str, list[int]]:
    """A ``canal advance`` process inside a blocking call, the run's thread and the pids of
    the server and its supervisor."""
    thread = cli("start", "use-blocking").json["thread_id"]
    proc = subprocess.Popen([sys.executable, "-m", "canal", "advance", thread], cwd=project,
                            env=cli.env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    calls = project / "servers" / "box" / "calls.log"
    deadline = time.monotonic() + 60
    while not (calls.exists() and "blocking" in calls.read_text()):
        assert time.monotonic() < deadline and proc.poll() is None, proc.communicate()
        time.sleep(0.05)
    return proc, thread, server_pids(project)


def test_a_servers_stderr_goes_to_its_log_never_to_the_terminal(project):
    cli = ProcessCli(project)
    called = cli("call", "noisy")
    log = project / ".canal" / "logs" / "box.log"
    assert called.code == 7
    message = called.json["error"]["message"]
    assert message.startswith("noisy: MCP server 'box' failed: the server closed the "
                              "connection (it may have crashed)")
    assert "noisy: the backend connection is gone" in message  # the log's last words
    assert message.endswith(f"; see {log}")
    assert called.json["error"]["log"] == str(log)
    assert "Traceback" not in called.stderr and "backend.py" not in called.stderr
    assert called.stderr == ""  # nothing of the server, and canal prints errors as JSON only

    thread = cli("start", "use-noisy").json["thread_id"]
    advanced = cli("advance", thread)
    assert advanced.json["errors"][0]["message"] == message
    assert advanced.stderr == ""

    text = log.read_text()
    assert text.count(NOISY_TRACEBACK) == 2
    assert text.count(" starts ") == 3  # discover, call, advance: a header per start
    assert stat.S_IMODE(log.stat().st_mode) == 0o600
    assert stat.S_IMODE(log.parent.stat().st_mode) == 0o700


@pytest.mark.parametrize("sig, code, error", [(signal.SIGTERM, 143, "terminated"),
                                              (signal.SIGINT, 130, "interrupted")])
def test_a_stopped_canal_stops_its_servers(project, sig, code, error):
    cli = ProcessCli(project)
    proc, thread, pids = advance_in_flight(project, cli)
    began = time.monotonic()
    proc.send_signal(sig)
    out, err = proc.communicate(timeout=30)
    assert (proc.returncode, json.loads(out)["error"]["code"]) == (code, error), err
    assert gone_within(pids, 1), "the servers stop before canal exits, or right after"
    assert time.monotonic() - began < MARGIN
    assert b"Traceback" not in err
    assert "may or may not have happened" in cli("current", thread).json["errors"][0]["message"]


def test_a_killed_canal_leaves_no_server_behind(project):
    proc, _, pids = advance_in_flight(project, ProcessCli(project))
    proc.send_signal(signal.SIGKILL)
    began = time.monotonic()
    proc.communicate(timeout=30)
    assert gone_within(pids, MARGIN), "the server outlived canal"
    assert time.monotonic() - began < CALL_SECONDS / 2
    assert "Traceback" not in (project / ".canal" / "logs" / "box.log").read_text()


@pytest.mark.parametrize("tool, words", [
    ("broken", "broken: quota exceeded"),
    ("crashing", "crashing: MCP server 'box' failed: the server closed the connection (it "
                 "may have crashed); see {log}"),
    ("hanging", "hanging: MCP server 'box' failed: no answer within 1.5s (the server's "
                "timeout); see {log}"),
    ("ghost", "no tool 'ghost' in the tool cache (run 'canal discover' to sync the MCP "
              "servers' tools)"),
])
def test_call_and_a_step_word_a_failure_alike(project, tool, words):
    cli = Cli(project)
    words = words.format(log=project / ".canal" / "logs" / "box.log")
    called = cli("call", tool)
    assert called.json["error"]["message"] == words
    assert called.stderr == ""
    thread = cli("start", f"use-{tool}").json["thread_id"]
    advanced = cli("advance", thread)
    assert advanced.json["status"] == "failed"
    assert advanced.json["errors"][0]["message"] == words
    assert cli("current", thread).json["errors"][0]["message"] == words
