"""Values no checkpointer can hold as they are: integers outside 64 bits and lone UTF-16
surrogates. Submitted, they are refused before anything is stored; returned by a tool,
they are stored in a safe form (README, "Tool results")."""

from __future__ import annotations

import json

import pytest
from langgraph.types import Command

from canal import Canal, PythonTools
from canal.errors import UsageError
from tests.conftest import TOOLS_MODULE, project_steps, write_workflow

BIG = 2**70
VALID = {"project_name": "billing", "host": "billing.example.com"}


def checkpoints(canal: Canal, thread: str) -> int:
    return len(list(canal.store.saver().list({"configurable": {"thread_id": thread}})))


@pytest.mark.parametrize("value, where, why", [
    ([BIG], "admins[0]", f"the integer {BIG} is outside the 64-bit range "
                         "(-9223372036854775808 to 9223372036854775807)"),
    ([{"k": -(2**63) - 1}], "admins[0].k", "is outside the 64-bit range"),
    (["a\ud800b"], "admins[0]", "holds a lone UTF-16 surrogate (\\ud800)"),
    ([{"\udfff": 1}], "admins[0]", "holds a lone UTF-16 surrogate (\\udfff)"),
])
@pytest.mark.parametrize("how", ["--gate-data", "--gate-file"])
def test_unstorable_gate_data_is_a_rejection_that_stores_nothing(cli, project, value, where,
                                                                 why, how):
    thread = cli("start", "create-project").json["thread_id"]
    text = json.dumps({**VALID, "admins": value})
    if how == "--gate-file":
        result = cli("advance", thread, "--gate-file", "-", stdin=text)
    else:
        result = cli("advance", thread, "--gate-data", text)
    assert result.code == 3 and result.json["status"] == "rejected"
    (error,) = result.json["errors"]
    assert error["field"] == "admins"
    assert error["message"].startswith(where + ": ") and why in error["message"]
    with Canal(workflows=project / "workflows", home=project / ".canal") as canal:
        assert canal.values(thread)["gate"] == {}
    assert cli("current", thread).json["step"]["id"] == "collect-project-info"
    assert cli("advance", thread, "--gate-data", json.dumps(VALID)).json["status"] \
        == "awaiting_input"


def test_scripted_answers_with_a_huge_integer_are_rejected(cli, project):
    (project / "answers.yaml").write_text(
        f"collect-project-info: {{project_name: p, host: p.example.com, quota: {BIG}}}\n")
    result = cli("run", "create-project", "--answers", "answers.yaml")
    assert result.code == 2 and result.json["error"]["message"].endswith(
        "collect-project-info.quota is not a JSON value: an integer outside the 64-bit range")
    assert cli("runs").json["count"] == 0  # refused before the run starts


@pytest.fixture
def graph(workflows, tmp_path, recorder):
    write_workflow(workflows, "create-project", project_steps())
    canal = Canal(workflows=workflows, home=tmp_path / ".canal",
                  checkpointer=f"sqlite:///{tmp_path / 'state.db'}", tools=recorder.client())
    yield canal, canal.compile("create-project")
    canal.close()


def config(thread: str) -> dict:
    return {"configurable": {"thread_id": thread}}


@pytest.mark.parametrize("answer, where", [
    ({**VALID, "quota": BIG}, "resume.quota"),
    ({**VALID, "undeclared": {"deep": [BIG]}}, "resume.undeclared.deep[0]"),
    ({**VALID, "project_name": "x\ud800"}, "resume.project_name"),
])
def test_the_compiled_graph_refuses_an_unstorable_resume_before_storing_it(graph, answer,
                                                                           where):
    canal, compiled = graph
    compiled.invoke({}, config("t"))
    before = checkpoints(canal, "t")
    with pytest.raises(UsageError) as caught:
        compiled.invoke(Command(resume=answer), config("t"))
    assert caught.value.message.startswith(f"the graph input cannot be stored: {where}: ")
    assert checkpoints(canal, "t") == before
    assert compiled.invoke(Command(resume=VALID), config("t"))["status"] == "running"


def test_the_compiled_graph_refuses_unstorable_pre_answers_and_state_updates(graph):
    canal, compiled = graph
    with pytest.raises(UsageError, match=r"gate\.collect-project-info\.quota: the integer"):
        compiled.invoke({"gate": {"collect-project-info": {**VALID, "quota": BIG}}},
                        config("new"))
    assert checkpoints(canal, "new") == 0 and not canal.has_run("new")
    compiled.invoke({}, config("t"))
    before = checkpoints(canal, "t")
    with pytest.raises(UsageError, match=r"result\.x: the integer"):
        compiled.update_state(config("t"), {"result": {"x": BIG}})
    assert checkpoints(canal, "t") == before


def test_a_python_tool_result_with_a_huge_integer_is_stored_as_its_digits(cli, project):
    (project / "project_tools.py").write_text(TOOLS_MODULE.replace('"id": 42', '"id": 2**70'))
    thread = cli("start", "create-project").json["thread_id"]
    result = cli("advance", thread, "--gate-data", json.dumps(VALID))
    assert result.code == 0 and result.json["status"] == "awaiting_input"
    assert result.json["executed"][0]["result"]["project"]["id"] == str(BIG)
    assert result.json["step"]["instructions"] == f"Project {BIG} has role role-{BIG}."
    assert cli("current", thread).json["completed"][1]["result"]["project"]["id"] == str(BIG)
    assert cli("advance", thread).json["status"] == "completed"


def test_tool_results_are_made_storable_whatever_the_client(workflows, tmp_path):
    steps = {"01-call.md": {"type": "automated", "automation": {"tool": "odd",
                                                                "input_mapping": {}}}}
    write_workflow(workflows, "odd", steps)

    class Odd:  # a client of the user's own, not one of canal's
        def call(self, tool, arguments, timeout=None):
            return {"big": -BIG, "small": 7, "text": "a\ud800b", "pair": "\ud83d\ude00"}

        def prepare(self, tool): pass
        def safe_to_repeat(self, tool): return False
        def destructive(self, tool): return False
        def server_of(self, tool): return None
        def close(self): pass  # no check_arguments or read_only: both are optional

    home = tmp_path / ".canal"
    with Canal(workflows=workflows, home=home, tools=Odd()) as canal:
        env = canal.start("odd", thread_id="t")
    assert env.status == "completed"
    with Canal(workflows=workflows, home=home, tools=PythonTools({})) as canal:
        assert canal.values("t")["result"]["call"] == {
            "big": str(-BIG), "small": 7, "text": "a\ufffdb", "pair": "\U0001f600"}


def test_an_integer_too_long_to_write_fails_the_step_clearly(workflows, tmp_path):
    steps = {"01-call.md": {"type": "automated", "automation": {"tool": "huge",
                                                                "input_mapping": {}}}}
    write_workflow(workflows, "huge", steps)
    tools = PythonTools({"huge": lambda: {"n": 10**5000}})
    with Canal(workflows=workflows, home=tmp_path / ".canal", tools=tools) as canal:
        env = canal.start("huge", thread_id="t")
        assert env.status == "failed"
        assert "huge: the result is not JSON data" in env.errors[0]["message"]
        assert canal.advance("t", {"action": "skip"}).status == "completed"


MCP_TOOLS = [
    {"name": "structured", "result": {"big": BIG}},
    {"name": "texty", "behavior": "text", "result": {"big": BIG}},
    {"name": "plain", "behavior": "plain", "result": "NaN"},
]


def test_mcp_tool_results_are_made_storable(tmp_path, toolbox, workflows):
    toolbox.add("alpha", MCP_TOOLS, timeout=20)
    steps = {"01-one.md": {"type": "automated", "automation": {
                 "tool": "structured", "input_mapping": {}}},
             "02-two.md": {"type": "automated", "automation": {
                 "tool": "texty", "input_mapping": {"big": "{{result.one.big}}"}}}}
    write_workflow(workflows, "mcp", steps)
    options = {"workflows": workflows, "home": tmp_path / ".canal",
               "mcp_config": tmp_path / ".mcp.json"}
    with Canal(**options) as canal:
        canal.discover()
        assert canal.call("structured", {})["result"]["big"] == str(BIG)
        assert canal.call("texty", {})["result"] == {"big": str(BIG)}
        assert canal.call("plain", {})["result"] == "NaN"
        env = canal.start("mcp", thread_id="t")
    assert env.status == "completed"
    with Canal(**options) as canal:
        result = canal.values("t")["result"]
    assert result["one"]["big"] == str(BIG)
    assert result["two"]["big"] == str(BIG)
    assert toolbox.calls("alpha")[-1]["arguments"] == {"big": str(BIG)}


@pytest.mark.parametrize("extra, field, message", [
    ({"undeclared": [BIG]}, "undeclared", "undeclared[0]: the integer"),
    ({"x\ud800": 1}, "x\ud800", "a key holds a lone UTF-16 surrogate (\\ud800)"),
])
def test_undeclared_fields_are_held_to_it_too(process_cli, project, extra, field, message):
    # a new process: its stdout, unlike a test's, cannot take a lone surrogate as it is
    thread = process_cli("start", "create-project").json["thread_id"]
    result = process_cli("advance", thread, "--gate-data", json.dumps({**VALID, **extra}))
    assert result.code == 3 and result.json["status"] == "rejected"
    assert [e["field"] for e in result.json["errors"]] == [field]
    assert result.json["errors"][0]["message"].startswith(message)
    assert process_cli("current", thread).json["step"]["id"] == "collect-project-info"


def test_canal_call_sends_nothing_it_could_not_store(tmp_path, toolbox):
    toolbox.add("alpha", MCP_TOOLS, timeout=20)
    with Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
               mcp_config=tmp_path / ".mcp.json") as canal:
        canal.discover()
        out = canal.call("structured", {"a": "x\ud800", "b": [BIG]})
    assert out["status"] == "rejected" and [e["field"] for e in out["errors"]] == ["a", "b"]
    assert out["errors"][0]["message"] == "a: the text holds a lone UTF-16 surrogate (\\ud800)"
    assert toolbox.calls("alpha") == []
