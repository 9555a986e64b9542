"""``verify``: the read-back after a call, against a real MCP backend that keeps state.

The backend (tests/servers/toolbox.py, ``store``/``fetch``) can be told to answer "ok"
while storing something else: the read-back must catch it.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from typing import Any

import pytest

from canal import Canal
from canal.nodes.failure import STOPPED
from tests.conftest import schema, write_workflow

STEPS: dict[str, Any] = {
    "01-ask.md": {"type": "interactive", "gate": {"schema": {
        "sku": {"type": "string", "required": True},
        "quantity": {"type": "integer", "required": True}}}},
    "02-reserve.md": {
        "type": "automated",
        "automation": {"tool": "reserve", "input_mapping": {
            "sku": "{{gate.ask.sku}}", "quantity": "{{gate.ask.quantity}}"}},
        "verify": {"tool": "get", "input_mapping": {"id": "{{result.reserve.id}}"},
                   "expect": {"quantity": "{{gate.ask.quantity}}", "sku": "{{gate.ask.sku}}",
                              "id": {"matches": "^[0-9]+$"}}},
        "compensate": {"tool": "cancel", "input_mapping": {"id": "{{result.reserve.id}}"}}},
    "03-done.md": ({"type": "notification"}, "Reserved {{result.reserve.id}}."),
}
ORDER = {"sku": "A-1", "quantity": 10}


def tools(lie: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    return [{"name": "reserve", "behavior": "store", "result": lie,
             "inputSchema": schema("sku", "quantity", sku="string", quantity="integer")},
            {"name": "get", "behavior": "fetch", "annotations": {"readOnlyHint": True}},
            {"name": "cancel", "behavior": "echo"},
            {"name": "wipe", "behavior": "echo", "annotations": {"destructiveHint": True}}]


@pytest.fixture
def backend(tmp_path, toolbox):
    toolbox.add("stock", tools())
    write_workflow(tmp_path / "workflows", "reserve", STEPS)
    with Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
               mcp_config=tmp_path / ".mcp.json") as canal:
        canal.discover()
    return toolbox


@pytest.fixture
def canal(tmp_path, backend):
    with Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
               mcp_config=tmp_path / ".mcp.json") as canal:
        yield canal


def called(toolbox) -> list[str]:
    return [c["tool"] for c in toolbox.calls("stock")]


def lying(toolbox) -> None:
    toolbox.set_tools("stock", tools(lie={"quantity": 5}))


def store(tmp_path) -> Any:
    return tmp_path / "servers" / "stock" / "store.json"


def test_a_read_back_that_matches_lets_the_run_go_on(canal, backend):
    canal.start("reserve", thread_id="t")
    env = canal.advance("t", ORDER)
    assert env.status == "awaiting_input" and env.step.id == "done"
    assert called(backend) == ["reserve", "get"]
    history = canal.history("t")
    verify = [e for e in history["entries"] if e["kind"] == "verify"]
    assert verify == [{**verify[0], "step": "reserve", "tool": "get", "ok": True, "passed": 3,
                       "failed": 0, "arguments": {"id": "1"}, "recheck": 0,
                       "key": "t:reserve:0:verify:0"}]
    span = next(s for s in history["spans"] if s["step"] == "reserve")
    assert span["postconditions"] == {"passed": 3, "failed": 0}
    assert span["effects"] == {"requested": 1, "completed": 1}


def test_a_backend_that_says_ok_but_stored_something_else_is_caught(canal, backend, tmp_path):
    lying(backend)
    canal.start("reserve", thread_id="t")
    env = canal.advance("t", ORDER)
    assert env.status == "failed" and env.step.id == "reserve"
    assert json.loads(store(tmp_path).read_text())["1"]["quantity"] == 5
    error = env.errors[0]
    assert error["code"] == "postcondition_failed" and error["kind"] == "postcondition"
    assert error["tool"] == "get" and error["step"] == "reserve"
    assert error["errors"] == [{"path": "quantity", "expected": 10, "actual": 5}]
    assert "quantity is 5, expected 10" in error["message"]
    assert env.step.gate["action"]["enum"] == ["recheck", "retry", "skip", "abort", "edit"]
    assert canal.values("t")["result"]["reserve"] == {"id": "1", "status": "ok"}
    assert called(backend) == ["reserve", "get"]
    # Another session sees the same failure and the same choices.
    again = canal.current("t")
    assert again.status == "failed" and again.errors == env.errors


def test_recheck_reads_back_again_without_calling_the_tool(canal, backend, tmp_path):
    lying(backend)
    canal.start("reserve", thread_id="t")
    canal.advance("t", ORDER)
    still = canal.advance("t", {"action": "recheck"})
    assert still.status == "failed" and called(backend) == ["reserve", "get", "get"]
    records = json.loads(store(tmp_path).read_text())
    records["1"]["quantity"] = 10  # the backend catches up
    store(tmp_path).write_text(json.dumps(records))
    env = canal.advance("t", {"action": "recheck"})
    assert env.step.id == "done" and env.status == "awaiting_input"
    assert called(backend) == ["reserve", "get", "get", "get"]
    keys = [e["key"] for e in canal.history("t")["entries"] if e["kind"] == "verify"]
    assert keys == ["t:reserve:0:verify:0", "t:reserve:0:verify:1", "t:reserve:0:verify:2"]


def test_recheck_is_refused_after_a_failure_that_is_not_a_read_back(canal, backend):
    backend.set_tools("stock", [{"name": "reserve", "behavior": "error", "result": "down"},
                                *tools()[1:]])
    canal.start("reserve", thread_id="t")
    env = canal.advance("t", ORDER)
    assert env.status == "failed" and env.step.gate["action"]["enum"] == ["retry", "skip",
                                                                          "abort", "edit"]
    refused = canal.advance("t", {"action": "recheck"})
    assert refused.status == "rejected" and called(backend) == ["reserve"]


def test_retry_calls_the_tool_again_under_a_new_key(canal, backend):
    lying(backend)
    canal.start("reserve", thread_id="t")
    canal.advance("t", ORDER)
    backend.set_tools("stock", tools())  # the backend is fixed
    env = canal.advance("t", {"action": "retry"})
    assert env.step.id == "done"
    assert called(backend) == ["reserve", "get", "reserve", "get"]
    entries = canal.history("t")["entries"]
    assert [e["key"] for e in entries if e["kind"] == "tool"] == ["t:reserve:0", "t:reserve:1"]
    assert canal.values("t")["result"]["reserve"]["id"] == "2"


def test_skip_goes_on_with_the_result_the_call_gave(canal, backend):
    lying(backend)
    canal.start("reserve", thread_id="t")
    canal.advance("t", ORDER)
    env = canal.advance("t", {"action": "skip"})
    assert env.step.id == "done" and env.step.instructions == "Reserved 1."
    span = next(s for s in canal.history("t")["spans"] if s["step"] == "reserve")
    assert span["outcome"] == "skipped"
    assert span["postconditions"] == {"passed": 2, "failed": 1}


def test_abort_after_a_failed_read_back_undoes_the_call(canal, backend):
    lying(backend)
    canal.start("reserve", thread_id="t")
    canal.advance("t", ORDER)
    env = canal.abort("t")
    assert env.status == "aborted"
    assert called(backend) == ["reserve", "get", "cancel"]
    assert backend.calls("stock")[-1]["arguments"] == {"id": "1"}


def test_a_failed_read_back_call_parks_the_step_with_recheck(canal, backend):
    backend.set_tools("stock", [tools()[0], {"name": "get", "behavior": "error",
                                             "result": "read replica lagging"}])
    canal.start("reserve", thread_id="t")
    env = canal.advance("t", ORDER)
    assert env.status == "failed" and env.errors[0]["code"] == "postcondition_failed"
    assert "read replica lagging" in env.errors[0]["message"]
    backend.set_tools("stock", tools())
    assert canal.advance("t", {"action": "recheck"}).step.id == "done"
    assert called(backend) == ["reserve", "get", "get"]


def test_validate_refuses_a_destructive_read_back_tool(canal, tmp_path):
    steps = {**STEPS, "02-reserve.md": {**STEPS["02-reserve.md"], "verify": {
        "tool": "wipe", "expect": {"ok": True}}}}
    write_workflow(tmp_path / "workflows", "bad", steps)
    report = canal.validate(["bad"])[0]
    assert not report["valid"]
    assert [(p.path, p.key, p.text) for p in report["problems"]] == [
        ("references/02-reserve.md", "verify.tool", "wipe")]
    assert "destructive" in report["problems"][0].message


def _advance_killed(tmp_path, failpoint: str) -> None:
    env = {k: v for k, v in __import__("os").environ.items() if not k.startswith("CANAL_")}
    env["PYTHONPATH"] = str(tmp_path)
    env["CANAL_FAILPOINTS"] = failpoint
    proc = subprocess.run([sys.executable, "-m", "canal", "advance", "t", "--gate-data",
                           json.dumps(ORDER)], cwd=tmp_path, env=env, capture_output=True,
                          timeout=120)
    assert proc.returncode == -signal.SIGKILL, proc.stderr


@pytest.mark.parametrize("failpoint, reads_after_recovery", [
    ("before-verify:reserve", ["reserve", "get"]),        # the read had not started
    ("before-call:verify:reserve", ["reserve", "get"]),   # journaled as sent, never sent
    ("after-call:verify:reserve", ["reserve", "get"]),    # read, not yet saved: replayed
])
def test_a_process_killed_during_verification_verifies_again_on_recovery(
        tmp_path, backend, failpoint, reads_after_recovery):
    with Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
               mcp_config=tmp_path / ".mcp.json") as canal:
        canal.start("reserve", thread_id="t")
    _advance_killed(tmp_path, failpoint)
    assert called(backend)[:1] == ["reserve"]
    with Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
               mcp_config=tmp_path / ".mcp.json") as canal:
        stopped = canal.current("t")
        assert stopped.status == "failed" and stopped.step.id == "reserve"
        assert stopped.errors[0]["message"] == STOPPED["verifying"]
        env = canal.recover("t")
        assert env.step.id == "done" and env.status == "awaiting_input"
    assert called(backend) == reads_after_recovery  # the reservation was made once


def test_after_a_kill_during_verification_an_answer_can_recheck(tmp_path, backend):
    with Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
               mcp_config=tmp_path / ".mcp.json") as canal:
        canal.start("reserve", thread_id="t")
    _advance_killed(tmp_path, "before-verify:reserve")
    with Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
               mcp_config=tmp_path / ".mcp.json") as canal:
        env = canal.advance("t", {"action": "recheck"})
        assert env.step.id == "done"
    assert called(backend) == ["reserve", "get"]


def test_an_expected_value_whose_reference_does_not_resolve_is_a_mismatch(workflows, tmp_path):
    from canal import PythonTools

    steps = {"01-make.md": {"type": "automated", "automation": {"tool": "make"},
                            "verify": {"tool": "read", "expect": {
                                "owner": "{{result.make.owner}}"}}}}
    write_workflow(workflows, "w", steps)
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", checkpointer="memory:",
                  tools=PythonTools({"make": lambda: {"id": 1},
                                     "read": lambda: {"owner": "ann"}}))
    env = canal.start("w", thread_id="t")
    assert env.status == "failed"
    assert env.errors[0]["errors"] == [{"path": "owner", "expected": None, "actual": "ann"}]
