"""retry: and timeout: on automated steps: transient failures retried only when safe."""

from __future__ import annotations

import time

import pytest

from canal import Canal, PythonTools
from tests.conftest import schema, write_workflow


def flaky(failures: int):
    """A tool whose first ``failures`` calls lose the connection."""
    calls = []

    def tool(**kwargs):
        calls.append(kwargs)
        if len(calls) <= failures:
            raise ConnectionError(f"connection reset ({len(calls)})")
        return {"ok": len(calls)}

    return tool, calls


def one_step(workflows, **extra):
    automation = {"tool": "flaky", **extra.pop("automation", {})}
    write_workflow(workflows, "w", {
        "01-call.md": {"type": "automated", "automation": automation, **extra},
        "02-done.md": {"type": "notification"},
    })


def log_of(canal, thread="t"):
    return canal.history(thread)["entries"]


def test_transient_failures_are_retried_when_safe(workflows, tmp_path):
    one_step(workflows, retry={"attempts": 3, "backoff": 0}, automation={"idempotent": True})
    tool, calls = flaky(2)
    canal = Canal(workflows=workflows, home=tmp_path / "h", tools=PythonTools({"flaky": tool}))
    env = canal.start("w", thread_id="t")
    assert env.status == "awaiting_input" and len(calls) == 3
    record = env.executed[0]
    assert record["result"] == {"ok": 3}
    assert [t["error"] for t in record["tries"]] == [
        "flaky: ConnectionError: connection reset (1)",
        "flaky: ConnectionError: connection reset (2)"]
    assert log_of(canal)[1]["tries"] == record["tries"]


NO_JOURNAL: object = object()  # with_retries uses only the tools and the sleep


def test_backoff_doubles(workflows):
    from canal.nodes.automated import Call, with_retries
    from canal.nodes.deps import Deps
    from canal.spec import load_workflow

    one_step(workflows, retry={"attempts": 4, "backoff": 0.25}, automation={"idempotent": True})
    step = load_workflow(workflows / "w").steps[0]
    tool, calls = flaky(3)
    waits: list[float] = []
    deps = Deps(tools=PythonTools({"flaky": tool}), journal=NO_JOURNAL, registry=NO_JOURNAL,
                sealer=NO_JOURNAL, sleep=waits.append)
    outcome, tries = with_retries(Call.of(step), deps, lambda: deps.tools.call("flaky", {}),
                                  safe=True)
    assert outcome == {"ok": True, "result": {"ok": 4}} and len(tries) == 3
    assert waits == [0.25, 0.5, 1.0]


def test_an_unsafe_tool_is_not_retried(workflows, tmp_path):
    one_step(workflows, retry=5)
    tool, calls = flaky(1)
    canal = Canal(workflows=workflows, home=tmp_path / "h", tools=PythonTools({"flaky": tool}))
    env = canal.start("w", thread_id="t")
    assert env.status == "failed" and len(calls) == 1
    assert env.errors[0]["message"] == "flaky: ConnectionError: connection reset (1)"


def test_a_tool_error_is_not_retried(workflows, tmp_path):
    one_step(workflows, retry=5, automation={"idempotent": True})
    calls = []

    def refuses(**kwargs):
        calls.append(kwargs)
        raise ValueError("bad input")

    canal = Canal(workflows=workflows, home=tmp_path / "h",
                  tools=PythonTools({"flaky": refuses}))
    assert canal.start("w", thread_id="t").status == "failed" and len(calls) == 1


def test_a_step_timeout_bounds_an_mcp_call(workflows, tmp_path, toolbox):
    toolbox.add("slow", [{"name": "flaky", "behavior": "hang", "inputSchema": schema(),
                          "annotations": {"readOnlyHint": True}}], timeout=30)
    one_step(workflows, timeout=1, retry={"attempts": 2, "backoff": 0})
    canal = Canal(workflows=workflows, home=tmp_path / "h", mcp_config=tmp_path / ".mcp.json")
    canal.discover()
    began = time.monotonic()
    env = canal.start("w", thread_id="t")
    elapsed = time.monotonic() - began
    assert env.status == "failed"
    assert env.errors[0]["message"] == ("flaky: MCP server 'slow' failed: no answer within 1s "
                                      f"(the step's timeout); see {tmp_path}/h/logs/slow.log")
    assert len(env.executed[0]["tries"]) == 1, "read-only, so the timeout was retried once"
    assert elapsed < 15
    assert toolbox.starts("slow") == 3  # discover, then one session per try


@pytest.mark.parametrize("key, value, message", [
    ("retry", {"attempts": 0}, "greater than or equal to 1"),
    ("retry", {"tries": 2}, "unknown key"),
    ("timeout", -1, "greater than 0"),
])
def test_bad_retry_and_timeout_settings(workflows, key, value, message):
    from canal.spec import check_workflow

    one_step(workflows, **{key: value})
    _, problems = check_workflow(workflows / "w")
    assert any(message in str(p) for p in problems), [str(p) for p in problems]


def test_retry_belongs_to_automated_steps(workflows):
    from canal.spec import check_workflow

    write_workflow(workflows, "w", {"01-x.md": {"type": "notification", "retry": 2}})
    _, problems = check_workflow(workflows / "w")
    assert [str(p) for p in problems] == [
        "references/01-x.md: retry: only automated steps call tools"]
