"""The compiled graph on its own: driven with LangGraph's API only, no facade (DESIGN.md §8)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from canal import ABORT, Canal
from tests.conftest import project_steps, write_workflow

VALID = {"project_name": "billing", "host": "billing.example.com"}


@pytest.fixture
def graph_of(workflows: Path, tmp_path: Path, recorder: Any):
    """``graph_of(name)``: workflow ``name`` compiled by a new Canal on one SQLite file."""
    write_workflow(workflows, "create-project", project_steps())
    made: list[Canal] = []

    def make(name: str = "create-project", **options: Any) -> Any:
        canal = Canal(workflows=workflows, home=tmp_path / "home",
                      checkpointer=f"sqlite:///{tmp_path / 'state.db'}",
                      tools=options.pop("tools", recorder.client()))
        made.append(canal)
        return canal.compile(name, **options)

    yield make
    for canal in made:
        canal.close()


def config(thread: str = "t") -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def pause(result: dict[str, Any]) -> Any:
    (interrupt,) = result["__interrupt__"]
    return interrupt


def test_invoke_starts_a_run_and_pauses_with_the_step_and_its_schema(graph_of, recorder):
    result = graph_of().invoke({}, config())
    interrupt = pause(result)
    assert interrupt.value["step"]["id"] == "collect-project-info"
    assert interrupt.value["step"]["instructions"] == "Ask the user for the project name and its domain."
    assert interrupt.value["step"]["gate"]["host"]["required"] is True
    assert (interrupt.value["errors"], interrupt.value["missing"], interrupt.value["dropped"]) \
        == ([], [], [])
    schema = interrupt.response_schema
    assert schema["type"] == "object"
    assert schema["required"] == ["project_name", "host"]
    assert schema["properties"]["quota"] == {"type": "integer", "default": 10, "minimum": 1,
                                             "maximum": 100}
    assert result["status"] == "running" and result["gate"] == {} and recorder.calls == []


def test_bad_data_calls_nothing_stores_nothing_and_pauses_again_with_the_errors(graph_of,
                                                                               recorder):
    graph = graph_of()
    graph.invoke({}, config())
    result = graph.invoke(Command(resume={"project_name": 5, "colour": "red"}), config())
    value = pause(result).value
    assert value["step"]["id"] == "collect-project-info"
    assert value["errors"] == [{"code": "invalid", "message": "expected string, got integer",
                                "field": "project_name"}]
    assert value["missing"] == ["host"] and value["dropped"] == ["colour"]
    assert recorder.calls == []
    assert result["gate"] == {} and result["cursor"] == "collect-project-info"
    # a new graph object (a new session) sees the same pause and takes the corrected answer
    done = graph_of().invoke(Command(resume=VALID), config())
    assert pause(done).value["step"]["id"] == "summary"
    assert pause(done).value["errors"] == []
    assert [name for name, _ in recorder.calls] == ["create_project", "create_role"]


def test_valid_data_runs_the_chain_and_an_acknowledgement_completes(graph_of, recorder):
    graph = graph_of()
    graph.invoke({}, config())
    result = graph.invoke(Command(resume=VALID), config())
    assert pause(result).value["step"]["instructions"] == "Project 42 has role role-42."
    assert result["gate"]["collect-project-info"] == {**VALID, "admins": ["root"], "quota": 10}
    assert result["result"]["create-role"] == {"role_id": "role-42"}
    done = graph.invoke(Command(resume=True), config())
    assert done["status"] == "completed" and "__interrupt__" not in done
    assert len(recorder.calls) == 2


def test_a_falsy_resume_is_no_answer(graph_of):
    """LangGraph drops ``{}`` and ``None``: the run stays paused; ``True`` acknowledges."""
    graph = graph_of()
    graph.invoke({}, config())
    graph.invoke(Command(resume=VALID), config())
    assert pause(graph.invoke(Command(resume={}), config())).value["step"]["id"] == "summary"
    assert graph.invoke(Command(resume={"ack": True}), config())["status"] == "completed"


def test_an_input_pre_answers_steps_whose_data_passes_their_gate(graph_of, recorder):
    result = graph_of().invoke({"gate": {"collect-project-info": VALID}}, config())
    assert pause(result).value["step"]["id"] == "summary"
    assert result["gate"]["collect-project-info"]["quota"] == 10
    assert len(recorder.calls) == 2


def test_a_pre_answer_that_fails_its_gate_pauses_there_with_the_errors(graph_of, recorder):
    result = graph_of().invoke({"gate": {"collect-project-info": {"project_name": "x",
                                                                  "host": "no-dot"}}}, config())
    value = pause(result).value
    assert value["step"]["id"] == "collect-project-info"
    assert value["errors"][0]["field"] == "host" and recorder.calls == []
    assert result["gate"] == {}


def test_the_input_cannot_write_results_status_or_confirmations(graph_of, recorder):
    result = graph_of().invoke({"result": {"create-project": {"project": {"id": 1}}},
                                "status": "completed", "confirmed": {"x": 0}}, config())
    assert result["status"] == "running" and result["result"] == {}
    assert pause(result).value["step"]["id"] == "collect-project-info"


def test_an_input_on_a_paused_run_goes_back_to_where_it_stands(graph_of, recorder):
    graph = graph_of()
    graph.invoke({}, config())
    graph.invoke(Command(resume=VALID), config())
    again = graph.invoke({"gate": {"collect-project-info": {"project_name": "other"}}}, config())
    assert pause(again).value["step"]["id"] == "summary"
    assert again["gate"]["collect-project-info"]["project_name"] == "billing"
    assert len(recorder.calls) == 2


def test_abort_is_a_distinct_resume_value(graph_of, recorder):
    graph = graph_of()
    graph.invoke({}, config())
    result = graph.invoke(Command(resume=ABORT), config())
    assert result["status"] == "aborted" and "__interrupt__" not in result
    assert recorder.calls == []
    # a gate field that happens to be called "action" is still just data
    assert ABORT == {"$abort": True}


def test_a_failed_step_is_answered_retry_skip_or_abort(graph_of, recorder):
    recorder.fail.add("create_role")
    graph = graph_of()
    graph.invoke({}, config())
    failed = graph.invoke(Command(resume=VALID), config())
    value = pause(failed).value
    assert failed["status"] == "failed"
    assert value["step"]["id"] == "create-role"
    assert value["errors"] == [{"code": "tool_error",
                                "message": "create_role: RuntimeError: role backend down",
                                "step": "create-role", "tool": "create_role",
                                "key": "t:create-role:0", "kind": "tool_error"}]
    assert pause(failed).response_schema["properties"]["action"]["enum"] == [
        "retry", "skip", "abort", "edit"]
    bad = graph.invoke(Command(resume={"action": "later"}), config())
    assert pause(bad).value["errors"][0]["field"] == "action"
    assert [name for name, _ in recorder.calls] == ["create_project", "create_role"]
    again = graph.invoke(Command(resume={"action": "retry"}), config())
    assert [name for name, _ in recorder.calls][-1] == "create_role"
    assert pause(again).value["errors"][0]["key"] == "t:create-role:1"
    skipped = graph.invoke(Command(resume={"action": "skip"}), config())
    assert pause(skipped).value["step"]["id"] == "summary"
    assert "create-role" not in skipped["result"]


def test_a_failed_step_answered_abort_runs_the_compensations(workflows, graph_of, recorder):
    steps = project_steps()
    front, body = steps["02-create-project.md"]
    steps["02-create-project.md"] = ({**front, "compensate": {
        "tool": "delete_project", "input_mapping": {"id": "{{result.create-project.project.id}}"}}},
        body)
    write_workflow(workflows, "undo", steps)
    recorder.fail.add("create_role")
    deleted: list[Any] = []
    tools = recorder.client()
    tools._tools["delete_project"] = lambda **kw: deleted.append(kw) or {"deleted": True}
    graph = graph_of("undo", tools=tools)
    graph.invoke({}, config())
    graph.invoke(Command(resume=VALID), config())
    result = graph.invoke(Command(resume={"action": "abort"}), config())
    assert result["status"] == "aborted" and result["compensating"] is False
    assert deleted == [{"id": 42}]


def test_a_confirmation_step_shows_the_call_and_waits(workflows, graph_of, recorder):
    steps = project_steps()
    front, body = steps["03-create-role.md"]
    steps["03-create-role.md"] = ({**front, "confirm": True}, body)
    write_workflow(workflows, "careful", steps)
    graph = graph_of("careful")
    graph.invoke({}, config())
    asked = graph.invoke(Command(resume=VALID), config())
    value = pause(asked).value
    assert value["step"]["call"] == {"tool": "create_role", "arguments": {
        "project_id": 42, "first_admin": "root", "label": "role of billing (10)"}}
    assert pause(asked).response_schema["required"] == ["confirm"]
    assert [name for name, _ in recorder.calls] == ["create_project"]
    declined = graph.invoke(Command(resume={"confirm": False}), config())
    assert pause(declined).value["errors"][0]["kind"] == "declined"
    asked_again = graph.invoke(Command(resume={"action": "retry"}), config())
    assert pause(asked_again).value["step"]["call"]["tool"] == "create_role"
    # Confirmed: the answer is saved by the step's node, then its call node makes the call
    # (a step that needs no confirmation makes it in its own node).
    updates = [next(iter(chunk)) for chunk in graph.stream(
        Command(resume={"confirm": True}), config(), stream_mode="updates")]
    assert updates == ["create-role", "create-role.call", "__interrupt__"]
    assert graph.get_state(config()).values["cursor"] == "summary"
    assert [name for name, _ in recorder.calls] == ["create_project", "create_role"]


def test_every_automated_step_has_its_confirmation_node_drawn(graph_of):
    mermaid = graph_of().get_graph().draw_mermaid()
    for node in ("create-project", "create-project.call", "create-project.recover",
                 "create-role.call", "abort.compensate", "run.begin"):
        assert node in mermaid


def login_steps(more: dict[str, Any] | None = None) -> dict[str, Any]:
    """Ask for a sensitive token, then pass it to the tool ``use``."""
    return {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "token": {"type": "string", "required": True, "sensitive": True}}}},
        "02-use.md": {"type": "automated", "automation": {
            "tool": "use", "input_mapping": {"token": "{{gate.ask.token}}"}}},
        **(more or {}),
    }


def test_sensitive_values_are_sealed_in_the_state(workflows, graph_of):
    received: list[dict[str, Any]] = []
    write_workflow(workflows, "login", login_steps(
        {"03-done.md": ({"type": "notification"}, "used {{gate.ask.token}}")}))
    from canal import PythonTools

    graph = graph_of("login", tools=PythonTools({"use": lambda **kw: received.append(kw) or {}}))
    graph.invoke({}, config())
    result = graph.invoke(Command(resume={"token": "s3cr3t-value"}), config())
    assert received == [{"token": "s3cr3t-value"}]
    stored = result["gate"]["ask"]["token"]
    assert stored.startswith("canal:sealed:") and "s3cr3t" not in str(result)
    assert pause(result).value["step"]["instructions"] == "used ********"


def test_a_sealed_answer_keeps_the_secret_out_of_the_pending_writes(workflows, tmp_path):
    import sqlite3

    from langgraph.checkpoint.sqlite import SqliteSaver

    from canal import PythonTools

    received: list[dict[str, Any]] = []
    write_workflow(workflows, "login", login_steps())
    canal = Canal(workflows=workflows, home=tmp_path / "home", checkpointer="memory:",
                  tools=PythonTools({"use": lambda **kw: received.append(kw) or {}}))
    mine = tmp_path / "mine.db"
    graph = canal.compile("login", checkpointer=SqliteSaver(
        sqlite3.connect(mine, check_same_thread=False)))
    graph.invoke({}, config())
    answer = canal.seal_answer("login", "ask", {"token": "s3cr3t-value"})
    assert graph.invoke(Command(resume=answer), config())["status"] == "completed"
    assert received == [{"token": "s3cr3t-value"}]
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("mine.db*"))
    assert b"s3cr3t" not in stored and b"canal:sealed:" in stored


def test_a_graph_without_its_dependencies_is_refused_before_anything_runs():
    from canal.errors import ConfigError
    from canal.nodes.deps import Deps

    with pytest.raises(ConfigError, match="a canal graph needs its journal"):
        Deps(tools=object(), journal=None, registry=object(), sealer=object())  # type: ignore[arg-type]


def test_async_durability_shares_the_sqlite_connection_safely(graph_of, recorder):
    """Checkpoints written from LangGraph's background thread and the journal written by a
    node use one SQLite connection under one lock."""
    graph = graph_of()
    for number in range(8):
        thread = config(f"t{number}")
        graph.invoke({}, thread, durability="async")
        out = graph.invoke(Command(resume=VALID), thread, durability="async")
        assert pause(out).value["step"]["id"] == "summary"
    assert len(recorder.calls) == 16


def test_an_input_cannot_forge_accepted_gate_data(graph_of, recorder):
    from canal.errors import UsageError

    graph = graph_of()
    with pytest.raises(UsageError, match="starts with '\\$' is canal's own"):
        graph.invoke({"gate": {"$accepted": {"collect-project-info": {"project_name": "x"}}}},
                     config())
    assert graph.get_state(config()).values == {}
    assert recorder.calls == []
