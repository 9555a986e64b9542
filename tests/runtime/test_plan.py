"""``Canal.plan``: a dry run of the next ``advance`` calls nothing, changes nothing, and
lists exactly the calls that ``advance`` then makes."""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from canal import Canal, PythonTools, RunNotFound, RunStateError
from canal.nodes.masking import MASK
from tests.conftest import ProcessCli, schema, write_workflow


def state_of(canal: Canal, thread: str) -> tuple[Any, ...]:
    """Everything a plan must leave as it was: the latest checkpoint, where the run stands
    and every transition in its history (the open span is timed as it is read)."""
    return (canal.reader.head(thread).checkpoint["id"], canal.current(thread).to_json(),
            canal.history(thread)["entries"])


# -- a real MCP server: nothing starts, nothing is called, nothing changes ------------------


def mcp_steps() -> dict[str, Any]:
    return {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "name": {"type": "string", "required": True}}}},
        "02-one.md": {"type": "automated", "automation": {
            "tool": "first", "input_mapping": {"name": "{{gate.ask.name}}"}}},
        "03-two.md": {"type": "automated", "automation": {
            "tool": "zap", "input_mapping": {"target": "{{result.one.arguments.name}}"}}},
        "04-done.md": ({"type": "notification"}, "Done."),
    }


@pytest.fixture
def mcp_project(tmp_path, toolbox):
    toolbox.add("alpha", [{"name": "first", "inputSchema": schema("name", name="string"),
                           "annotations": {"idempotentHint": True}}])
    toolbox.add("beta", [{"name": "zap", "annotations": {"destructiveHint": True}}])
    write_workflow(tmp_path / "workflows", "chain", mcp_steps())
    with mcp_canal(tmp_path) as canal:
        canal.discover()
    return tmp_path


def mcp_canal(root: Path) -> Canal:
    return Canal(workflows=root / "workflows", home=root / ".canal",
                 mcp_config=root / ".mcp.json")


def test_a_plan_starts_no_server_calls_no_tool_and_changes_no_state(mcp_project, toolbox):
    with mcp_canal(mcp_project) as canal:
        canal.start("chain", thread_id="t")
    logs = lambda: ({s: toolbox.starts(s) for s in ("alpha", "beta")},  # noqa: E731
                    {s: toolbox.calls(s) for s in ("alpha", "beta")})
    before_logs = logs()
    with mcp_canal(mcp_project) as canal:
        before = state_of(canal, "t")
        planned = canal.plan("t", {"name": "n"})
        assert state_of(canal, "t") == before
    assert logs() == before_logs
    assert planned == {
        "status": "ok", "thread_id": "t", "workflow": "chain", "step": "ask",
        "plan": [
            {"step": "one", "tool": "first", "arguments": {"name": "n"}, "when": True,
             "confirm": False, "hints": {"idempotentHint": True}},
            {"step": "two", "tool": "zap", "arguments": {"target": "{{result.one.arguments.name}}"},
             "when": True, "confirm": True, "hints": {"destructiveHint": True}}],
        "stops_at": "two", "dropped": [],
        "next": {"command": "advance", "thread_id": "t", "step": "ask",
                 "hint": "advance with the same data makes these calls; plan changed nothing"}}

    with mcp_canal(mcp_project) as canal:  # the plan was right: one call, then the question
        env = canal.advance("t", {"name": "n"})
    assert env.step.id == "two" and env.step.gate.keys() == {"confirm"}
    assert [c["tool"] for c in toolbox.calls("alpha")] == ["first"]
    assert toolbox.calls("beta") == []

    asked_logs = logs()
    with mcp_canal(mcp_project) as canal:
        before = state_of(canal, "t")
        yes = canal.plan("t", {"confirm": True})
        no = canal.plan("t", {"confirm": False})
        assert state_of(canal, "t") == before
    assert logs() == asked_logs
    assert yes["plan"] == [{"step": "two", "tool": "zap", "arguments": {"target": "n"},
                            "when": True, "confirm": False,
                            "hints": {"destructiveHint": True}}]
    assert yes["stops_at"] == "done"
    assert (no["plan"], no["stops_at"]) == ([], "two")
    with mcp_canal(mcp_project) as canal:
        assert canal.advance("t", {"confirm": True}).step.id == "done"
    assert toolbox.calls("beta") == [{"server": "beta", "tool": "zap",
                                      "arguments": {"target": "n"}}]


def test_the_plan_command_imports_no_mcp_client_and_no_graph_engine(mcp_project):
    with mcp_canal(mcp_project) as canal:
        canal.start("chain", thread_id="t")
    probe = (
        "import sys, io, contextlib, json\n"
        "from canal.cli.main import run\n"
        "out = io.StringIO()\n"
        "with contextlib.redirect_stdout(out):\n"
        "    assert run(['plan', 't', '--gate-data', '{\"name\": \"n\"}']) == 0\n"
        "assert json.loads(out.getvalue())['stops_at'] == 'two'\n"
        "print(sorted(m for m in sys.modules if m.startswith(('langgraph.graph', "
        "'langgraph.pregel', 'mcp', 'langchain_mcp_adapters'))))\n"
    )
    env = ProcessCli(mcp_project).env
    out = subprocess.run([sys.executable, "-c", probe], cwd=mcp_project, env=env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"


# -- the property: advance makes exactly the calls the plan lists -----------------------------


TOOLS = ("t_big", "t_rush", "t_color", "t_note", "t_nonote", "t_any", "t_first", "t_uses",
         "t_reads", "t_after")


def property_steps() -> dict[str, Any]:
    def call(tool: str, mapping: dict[str, Any], when: dict[str, Any] | None = None
             ) -> dict[str, Any]:
        step: dict[str, Any] = {"type": "automated",
                                "automation": {"tool": tool, "input_mapping": mapping}}
        if when is not None:
            step["when"] = when
        return step

    return {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "count": {"type": "integer", "required": True, "min": 0, "max": 20},
            "color": {"type": "string", "required": True, "enum": ["red", "green", "blue"]},
            "rush": {"type": "boolean", "required": True},
            "note": {"type": "string"}}}},
        "02-big.md": call("t_big", {"count": "{{gate.ask.count}}",
                                    "color": "{{gate.ask.color}}"},
                          {"gate.ask.count": {"gte": 10}}),
        "03-rush.md": call("t_rush", {"note": "{{gate.ask.note}}", "fast": True},
                           {"gate.ask.rush": True}),
        "04-color.md": call("t_color", {"label": "{{gate.ask.color}} x{{gate.ask.count}}"},
                            {"gate.ask.color": {"in": ["red", "blue"]}}),
        "05-note.md": call("t_note", {"note": "{{gate.ask.note}}"},
                           {"gate.ask.note": {"matches": "^urgent"}}),
        "06-nonote.md": call("t_nonote", {"count": "{{gate.ask.count}}"},
                             {"gate.ask.note": {"exists": False}}),
        "07-any.md": call("t_any", {"rush": "{{gate.ask.rush}}"},
                          {"gate.ask.color": {"not_equals": "green"},
                           "any": [{"gate.ask.rush": True}, {"gate.ask.count": {"lt": 3}}]}),
        "08-first.md": call("t_first", {"count": "{{gate.ask.count}}"}),
        "09-uses.md": call("t_uses", {"value": "{{result.first.value}}",
                                      "text": "v={{result.first.value}} c={{gate.ask.color}}"}),
        "10-reads.md": call("t_reads", {"count": "{{gate.ask.count}}"},
                            {"result.first.value": {"gt": 10}}),
        "11-after.md": call("t_after", {"big": "{{result.big.count}}",
                                        "color": "{{gate.ask.color}}"}),
        "12-done.md": ({"type": "notification"}, "Done."),
    }


class Calls:
    def __init__(self) -> None:
        self.made: list[tuple[str, dict[str, Any]]] = []

    def client(self) -> PythonTools:
        def tool(name: str) -> Any:
            def call(**kwargs: Any) -> dict[str, Any]:
                self.made.append((name, kwargs))
                if name == "t_first":
                    return {"value": kwargs["count"] * 2}
                if name == "t_big":
                    return {"count": kwargs["count"]}
                return {"ok": True}
            return call

        return PythonTools({name: tool(name) for name in TOOLS})


@pytest.fixture(scope="module")
def planner(tmp_path_factory):
    root = tmp_path_factory.mktemp("plan")
    write_workflow(root / "workflows", "branches", property_steps())
    calls = Calls()
    canal = Canal(workflows=root / "workflows", home=root / ".canal", checkpointer="memory:",
                  tools=calls.client())
    yield canal, calls
    canal.close()


answers = st.fixed_dictionaries(
    {"count": st.integers(0, 20), "color": st.sampled_from(["red", "green", "blue"]),
     "rush": st.booleans()},
    optional={"note": st.one_of(
        st.none(), st.sampled_from(["urgent: today", "not urgent", "urgently"]),
        st.text(st.characters(codec="utf-8", exclude_characters="\x00"), max_size=12))})


@settings(max_examples=40, deadline=None)
@given(data=answers)
def test_advance_makes_exactly_the_calls_the_plan_lists(planner, data):
    canal, calls = planner
    thread = f"p-{uuid.uuid4().hex[:8]}"
    canal.start("branches", thread_id=thread)
    planned = canal.plan(thread, data)
    assert planned["status"] == "ok" and calls.made == []
    env = canal.advance(thread, data)
    made, calls.made = calls.made, []

    items = planned["plan"]
    by_step = {item["step"]: item for item in items}
    assert [item["tool"] for item in items] == list(TOOLS)  # every call, in order
    undecided = {i["tool"] for i in items if i["when"] == "undecided"}
    assert undecided == {"t_reads"}  # its condition reads t_first's result
    sure = [i for i in items if i["when"] is True]
    assert [tool for tool, _ in made if tool not in undecided] == [i["tool"] for i in sure]
    for item, (_, arguments) in zip(sure, [m for m in made if m[0] not in undecided],
                                    strict=True):
        if "{{" not in json.dumps(item["arguments"]):
            assert item["arguments"] == arguments
    assert not {i["tool"] for i in items if i["when"] is False} & {tool for tool, _ in made}
    assert by_step["uses"]["arguments"] == {
        "value": "{{result.first.value}}",
        "text": "v={{result.first.value}} c=" + data["color"]}
    # a result of a step that is skipped is absent; one that will be produced is pending
    after = by_step["after"]["arguments"]
    assert after == ({"big": "{{result.big.count}}", "color": data["color"]}
                     if data["count"] >= 10 else {"color": data["color"]})
    assert planned["stops_at"] == env.step.id == "done"


# -- rejections, finished runs -------------------------------------------------------------


@pytest.fixture
def flow(workflows, make_canal, recorder):
    """The project workflow (collect -> create project -> create role -> summary); create
    project has a compensation."""
    from tests.conftest import project_steps

    steps = project_steps()
    front, body = steps["02-create-project.md"]
    steps["02-create-project.md"] = ({**front, "compensate": {
        "tool": "delete_project", "input_mapping": {
            "id": "{{result.create-project.project.id}}"}}}, body)
    write_workflow(workflows, "flow", steps)
    return lambda: make_canal()


VALID = {"project_name": "billing", "host": "billing.example.com"}


def test_a_rejection_is_the_envelope_advance_answers(flow):
    flow().start("flow", thread_id="t")
    canal = flow()
    before = state_of(canal, "t")
    for bad in ({"project_name": "billing"}, {**VALID, "host": "nope", "extra": 1}, [1]):
        rejected = canal.plan("t", bad)
        assert rejected["status"] == "rejected"
        assert rejected == flow().advance("t", bad).to_json()
    assert state_of(canal, "t") == before


def test_a_plan_needs_a_run_that_is_not_finished(flow):
    with pytest.raises(RunNotFound):
        flow().plan("nope", VALID)
    flow().start("flow", thread_id="t")
    flow().abort("t")
    with pytest.raises(RunStateError):
        flow().plan("t", VALID)


def test_results_known_resolve_and_results_to_come_stay_templates(flow, recorder):
    flow().start("flow", thread_id="t")
    planned = flow().plan("t", {**VALID, "extra": 1})
    assert planned["plan"] == [
        {"step": "create-project", "tool": "create_project", "when": True, "confirm": False,
         "hints": {}, "arguments": {"name": "billing", "host": "billing.example.com",
                                    "admins": ["root"], "quota": 10}},
        {"step": "create-role", "tool": "create_role", "when": True, "confirm": False,
         "hints": {}, "arguments": {
             "project_id": "{{result.create-project.project.id}}",
             "first_admin": "{{result.create-project.project.admins[0]}}",
             "label": "role of {{result.create-project.project.name}} (10)"}}]
    assert (planned["stops_at"], planned["dropped"]) == ("summary", ["extra"])
    assert recorder.calls == []


# -- a failed step: retry, skip, abort ----------------------------------------------------


def test_a_failed_step_plans_retry_skip_and_abort(flow, recorder):
    recorder.fail.add("create_role")
    flow().start("flow", thread_id="t")
    assert flow().advance("t", VALID).status == "failed"
    canal = flow()
    before, made = state_of(canal, "t"), len(recorder.calls)

    retry = canal.plan("t", {"action": "retry"})
    assert retry["step"] == "create-role"
    assert retry["plan"] == [{"step": "create-role", "tool": "create_role", "when": True,
                              "confirm": False, "hints": {}, "arguments": {
                                  "project_id": 42, "first_admin": "root",
                                  "label": "role of billing (10)"}}]
    assert retry["stops_at"] == "summary"
    skip = canal.plan("t", {"action": "skip"})
    assert (skip["plan"], skip["stops_at"]) == ([], "summary")
    abort = canal.plan("t", {"action": "abort"})
    assert abort["plan"] == [{"step": "create-project", "tool": "delete_project",
                              "arguments": {"id": 42}, "when": True, "confirm": False,
                              "hints": {}, "compensation": True}]
    assert abort["stops_at"] is None
    assert state_of(canal, "t") == before and len(recorder.calls) == made

    recorder.fail.clear()
    env = flow().advance("t", {"action": "retry"})
    assert env.step.id == "summary"
    assert recorder.calls[made:] == [("create_role", retry["plan"][0]["arguments"])]


def test_a_retry_of_a_step_that_asks_stops_at_its_confirmation(workflows, make_canal, recorder):
    steps = {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "name": {"type": "string", "required": True}}}},
        "02-make.md": {"type": "automated", "confirm": True, "automation": {
            "tool": "create_project", "input_mapping": {"name": "{{gate.ask.name}}",
                                                        "admins": ["a"]}}},
        "03-done.md": {"type": "notification"},
    }
    write_workflow(workflows, "w", steps)
    canal = make_canal()
    canal.start("w", thread_id="t")
    asked = canal.plan("t", {"name": "x"})
    assert [(i["step"], i["confirm"]) for i in asked["plan"]] == [("make", True)]
    assert asked["stops_at"] == "make"
    canal.advance("t", {"name": "x"})
    assert canal.advance("t", {"confirm": False}).status == "failed"  # declined
    again = canal.plan("t", {"action": "retry"})  # a new attempt asks again
    assert ([(i["step"], i["confirm"]) for i in again["plan"]], again["stops_at"]) == (
        [("make", True)], "make")
    assert recorder.calls == []
    assert canal.advance("t", {"action": "retry"}).step.gate.keys() == {"confirm"}


# -- a failed read-back: recheck ------------------------------------------------------------


def test_a_failed_read_back_plans_the_recheck_alone(workflows, make_canal):
    seen: list[tuple[str, dict[str, Any]]] = []
    held = {"quantity": 1}

    def reserve(**kwargs: Any) -> dict[str, Any]:
        seen.append(("reserve", kwargs))
        return {"id": "r-1"}

    def get_reservation(**kwargs: Any) -> dict[str, Any]:
        seen.append(("get_reservation", kwargs))
        return dict(held)

    write_workflow(workflows, "stock", {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "quantity": {"type": "integer", "required": True}}}},
        "02-reserve.md": {
            "type": "automated",
            "automation": {"tool": "reserve", "input_mapping": {
                "quantity": "{{gate.ask.quantity}}"}},
            "verify": {"tool": "get_reservation",
                       "input_mapping": {"id": "{{result.reserve.id}}"},
                       "expect": {"quantity": "{{gate.ask.quantity}}"}}},
        "03-ship.md": {"type": "automated", "automation": {
            "tool": "ship", "input_mapping": {"id": "{{result.reserve.id}}"}}},
        "04-done.md": {"type": "notification"},
    })
    tools = PythonTools({"reserve": reserve, "get_reservation": get_reservation,
                         "ship": lambda **kw: seen.append(("ship", kw)) or {"shipped": True}})
    canal = make_canal(tools=tools)
    canal.start("stock", thread_id="t")
    first = canal.plan("t", {"quantity": 3})
    assert first["plan"][0]["verify"] == {"tool": "get_reservation",
                                          "arguments": {"id": "{{result.reserve.id}}"}}
    assert canal.advance("t", {"quantity": 3}).errors[0]["code"] == "postcondition_failed"
    made = len(seen)

    recheck = canal.plan("t", {"action": "recheck"})
    assert recheck["plan"] == [
        {"step": "reserve", "tool": "get_reservation", "arguments": {"id": "r-1"},
         "when": True, "confirm": False, "hints": {}, "read_back": True},
        {"step": "ship", "tool": "ship", "arguments": {"id": "r-1"}, "when": True,
         "confirm": False, "hints": {}}]
    assert recheck["stops_at"] == "done"
    retry = canal.plan("t", {"action": "retry"})  # the call again, then its read-back
    assert [(i["tool"], i["arguments"]) for i in retry["plan"]] == [
        ("reserve", {"quantity": 3}), ("ship", {"id": "{{result.reserve.id}}"})]
    assert retry["plan"][0]["verify"]["arguments"] == {"id": "{{result.reserve.id}}"}
    assert len(seen) == made

    held["quantity"] = 3  # the backend caught up: the recheck passes, and the run goes on
    assert canal.advance("t", {"action": "recheck"}).step.id == "done"
    assert seen[made:] == [(i["tool"], i["arguments"]) for i in recheck["plan"]]


# -- what advance would park, and what is never shown ----------------------------------------


def test_a_mapping_that_cannot_resolve_ends_the_plan_where_advance_parks(workflows,
                                                                          make_canal):
    write_workflow(workflows, "w", {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "name": {"type": "string", "required": True}}}},
        "02-make.md": {"type": "automated", "automation": {
            "tool": "make", "input_mapping": {"name": "{{gate.ask.name}}"}}},
        "03-use.md": {"type": "automated", "automation": {
            "tool": "use", "input_mapping": {"id": "{{result.make.nothing.here}}"}}},
        "04-done.md": {"type": "notification"},
    })
    canal = make_canal(tools=PythonTools({"make": lambda **kw: {"id": 1},
                                          "use": lambda **kw: {}}))
    canal.start("w", thread_id="t")
    first = canal.plan("t", {"name": "n"})  # the result is not known yet: no error
    assert first["plan"][1]["arguments"] == {"id": "{{result.make.nothing.here}}"}
    assert canal.advance("t", {"name": "n"}).status == "failed"
    retry = canal.plan("t", {"action": "retry"})  # now it is known, and has no such path
    assert retry["plan"] == [{"step": "use", "tool": "use", "arguments": None, "when": True,
                              "confirm": False, "hints": {},
                              "error": "{{result.make.nothing.here}}: result of 'make' has "
                                       "no 'nothing'"}]
    assert retry["stops_at"] == "use"


def test_sensitive_values_are_masked_in_the_plan(workflows, make_canal):
    write_workflow(workflows, "w", {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "user": {"type": "string", "required": True},
            "password": {"type": "string", "required": True, "sensitive": True}}}},
        "02-login.md": {"type": "automated", "automation": {
            "tool": "login", "input_mapping": {"user": "{{gate.ask.user}}",
                                               "password": "{{gate.ask.password}}",
                                               "line": "{{gate.ask.user}}:{{gate.ask.password}}"}}},
        "03-done.md": {"type": "notification"},
    })
    canal = make_canal(tools=PythonTools({"login": lambda **kw: {}}))
    canal.start("w", thread_id="t")
    planned = canal.plan("t", {"user": "ann", "password": "hunter2-secret"})
    assert "hunter2" not in json.dumps(planned)
    assert planned["plan"][0]["arguments"] == {"user": "ann", "password": MASK,
                                               "line": f"ann:{MASK}"}


def test_the_idempotency_key_argument_is_the_key_the_call_gets(workflows, make_canal):
    sent: list[dict[str, Any]] = []
    write_workflow(workflows, "w", {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "name": {"type": "string", "required": True}}}},
        "02-make.md": {"type": "automated", "automation": {
            "tool": "make", "idempotency_key": "request_id",
            "input_mapping": {"name": "{{gate.ask.name}}"}}},
        "03-done.md": {"type": "notification"},
    })
    canal = make_canal(tools=PythonTools({"make": lambda **kw: sent.append(kw) or {}}))
    canal.start("w", thread_id="t")
    planned = canal.plan("t", {"name": "n"})
    assert planned["plan"][0]["arguments"] == {"name": "n", "request_id": "t:make:0"}
    canal.advance("t", {"name": "n"})
    assert sent == [planned["plan"][0]["arguments"]]
