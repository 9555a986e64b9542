"""``Canal.as_tools()``: LangChain agents drive canal's workflows through its tools.

The agents are LangChain's own (``create_agent``); only the LLM is replaced, by a model
whose every turn reads canal's last answer and nothing else (it keeps no notes), so a run
that completes shows that canal's answers alone tell an agent what to do next. canal, its
store, the shipped workflow and the example MCP server are real, and each test asserts
canal's own state afterwards, not the script.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from canal import Canal, PythonTools, UsageError
from tests.cli.test_tools_cli import SERVER, SHIPPED
from tests.conftest import Cli, Recorder, project_steps, write_workflow

WORKFLOW = SHIPPED.name
PROJECT = {"project_name": ["billing"], "host": ["billing.example.com"], "auth_mode": [1],
           "admins": ["ann,bob"]}
ROLE = {"role_name": ["reader"], "permissions": [["read", "list"]]}


class ScriptedModel(BaseChatModel):
    """The LLM's stand-in: ``policy`` reads the conversation and gives the model's turn."""

    policy: Callable[[list[BaseMessage]], AIMessage]

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.policy(messages))])

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:
        return self  # the policy knows the tools' names


class Operator:
    """What the model does, from canal's last answer alone and the user's answers.

    ``user`` maps a field to the values the user gives for it, in order: when canal rejects
    a field, the user's next value corrects it. The task is a workflow to start or a thread
    id to take up. A field the user has no answer for ends the session (the model asks).
    """

    def __init__(self, user: dict[str, list[Any]], workflow: str | None = None,
                 thread_id: str | None = None, on_failure: str = "abort") -> None:
        self.user = {name: list(values) for name, values in user.items()}
        self.workflow, self.thread_id, self.on_failure = workflow, thread_id, on_failure
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.answers: list[dict[str, Any]] = []  # canal's documents, in order

    def __call__(self, messages: list[BaseMessage]) -> AIMessage:
        last = messages[-1]
        if not isinstance(last, ToolMessage):
            if self.thread_id is not None:
                return self.use("current", thread_id=self.thread_id)
            return self.use("start", workflow=self.workflow)
        answer = json.loads(str(last.content))
        self.answers.append(answer)
        status = answer["status"]
        if status in ("completed", "aborted", "error"):
            return AIMessage(content=f"The run is {status}.")
        thread, step = answer["thread_id"], answer["step"]
        if status == "failed":
            return self.use("advance", thread_id=thread, step=step["id"],
                            gate_data={"action": self.on_failure})
        if status == "rejected":
            for error in answer["errors"]:
                self.user[error["field"]].pop(0)  # the user corrects it
        gate = step["gate"]
        unknown = [name for name, field in gate.items()
                   if field.get("required") and name not in self.user]
        if unknown:
            return AIMessage(content=f"Please tell me: {', '.join(unknown)}.")
        data = {name: self.user[name][0] for name in gate if name in self.user}
        return self.use("advance", thread_id=thread, step=step["id"],
                        **({"gate_data": data} if data else {}))

    def use(self, tool: str, **args: Any) -> AIMessage:
        self.calls.append((tool, args))
        call = {"name": tool, "args": args, "id": f"call-{len(self.calls)}",
                "type": "tool_call"}
        return AIMessage(content="", tool_calls=[call])

    def statuses(self) -> list[str]:
        return [answer["status"] for answer in self.answers]


def run_agent(canal: Canal, operator: Operator) -> dict[str, Any]:
    agent = create_agent(ScriptedModel(policy=operator), canal.as_tools(),
                         system_prompt="Drive canal's workflows for the user.")
    return agent.invoke({"messages": [HumanMessage("Set up a permission set for billing.")]})


@pytest.fixture
def platform(tmp_path: Path) -> Path:
    """A project folder with the shipped workflow and the example MCP server, discovered."""
    shutil.copytree(SHIPPED, tmp_path / "workflows" / WORKFLOW)
    server = {"command": sys.executable, "args": [str(SERVER)],
              "env": {"PERMISSION_PLATFORM_DB": str(tmp_path / "platform.db")}}
    (tmp_path / ".mcp.json").write_text(json.dumps({"mcpServers": {"platform": server}}))
    with open_canal(tmp_path) as canal:
        assert canal.discover()["added_count"] == 5
    return tmp_path


def open_canal(folder: Path) -> Canal:
    """A new ``Canal`` on the project folder's state, as a new session would open it."""
    return Canal(workflows=folder / "workflows", home=folder / ".canal",
                 mcp_config=folder / ".mcp.json")


def projects(canal: Canal) -> list[dict[str, Any]]:
    """What the platform holds, asked of the MCP server itself."""
    listed = canal.call("list_projects", {})["result"]["projects"]
    return [canal.call("get_project", {"project_id": p["id"]})["result"] for p in listed]


# -- agents ----------------------------------------------------------------------------------


def test_an_agent_completes_the_shipped_workflow(platform: Path) -> None:
    operator = Operator({**PROJECT, **ROLE}, workflow=WORKFLOW)
    with open_canal(platform) as canal:
        out = run_agent(canal, operator)
        thread = operator.answers[0]["thread_id"]
        assert [tool for tool, _ in operator.calls] == ["start", "advance", "advance",
                                                        "advance"]
        assert operator.statuses() == ["awaiting_input"] * 3 + ["completed"]
        assert out["messages"][-1].content == "The run is completed."
        # the notification was acknowledged with no data
        assert "gate_data" not in operator.calls[-1][1]
        assert operator.calls[-1][1]["step"] == "summary"

        with open_canal(platform) as other:
            now = other.current(thread).to_json()
            assert now["status"] == "completed"
            assert other.runs()[0]["status"] == "completed"
            [project] = projects(other)
    assert project["name"] == "billing" and project["admins"] == ["ann", "bob"]
    assert [(r["role_name"], r["permissions"]) for r in project["roles"]] == [
        ("reader", ["read", "list"])]


def test_an_agent_corrects_a_rejected_submission(platform: Path) -> None:
    user = {**PROJECT, **ROLE, "host": ["not a domain", "billing.example.com"],
            "auth_mode": [7, 2]}
    operator = Operator(user, workflow=WORKFLOW)
    with open_canal(platform) as canal:
        run_agent(canal, operator)
        assert operator.statuses() == ["awaiting_input", "rejected", "awaiting_input",
                                       "awaiting_input", "completed"]
        rejected = operator.answers[1]
        assert sorted(e["field"] for e in rejected["errors"]) == ["auth_mode", "host"]
        assert rejected["step"]["id"] == "collect-project-info" and rejected["executed"] == []
        # the corrected answer is the one the tool got: the rejected one reached nothing
        created = operator.answers[2]["executed"]
        assert [(e["tool"], e["arguments"]["host"], e["arguments"]["auth_mode"])
                for e in created] == [("create_project", "billing.example.com", 2)]
        thread = rejected["thread_id"]
        history = canal.history(thread)
        [project] = projects(canal)
    # the run recorded one submission for the step: the corrected one
    assert [e["data"]["host"] for e in history["entries"]
            if e["kind"] == "submit" and e["step"] == "collect-project-info"] == [
        "billing.example.com"]
    assert project["host"] == "billing.example.com" and project["auth_mode"] == 2


def test_a_second_agent_finishes_a_run_from_its_thread_id(platform: Path) -> None:
    first = Operator(PROJECT, workflow=WORKFLOW)  # the user knows no role yet
    with open_canal(platform) as canal:
        out = run_agent(canal, first)
    assert out["messages"][-1].content == "Please tell me: role_name."
    thread = first.answers[-1]["thread_id"]

    second = Operator(ROLE, thread_id=thread)  # a new session: only the thread id
    with open_canal(platform) as canal:
        run_agent(canal, second)
        assert [tool for tool, _ in second.calls] == ["current", "advance", "advance"]
        resumed = second.answers[0]
        assert resumed["step"]["id"] == "collect-role-info"
        assert resumed["missing"] == ["role_name"]
        assert [c["step"] for c in resumed["completed"]] == ["collect-project-info",
                                                             "create-project"]
        assert second.statuses()[-1] == "completed"
        assert canal.current(thread).status == "completed"
        [project] = projects(canal)
    assert [r["role_name"] for r in project["roles"]] == ["reader"]


def test_an_agent_takes_over_a_failed_step(platform: Path) -> None:
    with open_canal(platform) as canal:
        canal.call("create_project", {"name": "billing", "host": "billing.example.com",
                                      "auth_mode": 1, "admins": "zoe"})
        operator = Operator({**PROJECT, **ROLE}, workflow=WORKFLOW, on_failure="abort")
        run_agent(canal, operator)
        assert operator.statuses() == ["awaiting_input", "failed", "aborted"]
        assert "already exists" in operator.answers[1]["errors"][0]["message"]
        assert operator.calls[-1][1]["gate_data"] == {"action": "abort"}
        assert canal.current(operator.answers[0]["thread_id"]).status == "aborted"
        assert [p["admins"] for p in projects(canal)] == [["zoe"]]


# -- the tools themselves --------------------------------------------------------------------


def test_tools_speak_the_mcp_servers_vocabulary(tmp_path: Path) -> None:
    canal = Canal(workflows=tmp_path, home=tmp_path / ".canal", checkpointer="memory:")
    tools = {tool.name: tool for tool in canal.as_tools(include=[
        "workflows", "show", "index", "search", "meta", "call", "start", "advance", "plan",
        "current", "runs", "rewind", "abort"])}
    assert {name: list(tool.args) for name, tool in tools.items()} == {
        "workflows": [], "show": ["workflow"], "index": [], "search": ["query", "limit"],
        "meta": ["tool", "required_only"],
        "call": ["tool", "args", "confirm"], "start": ["workflow", "thread_id"],
        "advance": ["thread_id", "gate_data", "step"], "plan": ["thread_id", "gate_data"],
        "current": ["thread_id"], "runs": ["status"], "rewind": ["thread_id", "step"],
        "abort": ["thread_id"]}
    assert [t.name for t in canal.as_tools()] == ["workflows", "show", "index", "search",
                                                  "meta", "start", "advance", "plan",
                                                  "current", "runs", "rewind", "abort"]
    for word in ("rejected", "failed", '"action": "retry"', "notification", "completed"):
        assert word in tools["advance"].description, word
    with pytest.raises(UsageError, match="no agent tool named 'discover'"):
        canal.as_tools(include=["start", "discover"])


def test_each_tool_answers_what_the_cli_prints(platform: Path) -> None:
    cli = Cli(platform)
    with open_canal(platform) as canal:
        tools = {tool.name: tool for tool in canal.as_tools(include=[
            "workflows", "show", "index", "search", "meta", "call", "start", "advance", "plan",
            "current", "runs"])}

        def ask(name: str, **args: Any) -> dict[str, Any]:
            message = tools[name].invoke({"name": name, "args": args, "id": "1",
                                          "type": "tool_call"})
            assert json.loads(message.content) == message.artifact  # the text is the document
            return message.artifact

        started = ask("start", workflow=WORKFLOW, thread_id="t1")
        assert started["status"] == "awaiting_input"
        bad = ask("advance", thread_id="t1", gate_data={"host": "x"})
        assert bad == cli("advance", "t1", "--gate-data", '{"host": "x"}').json
        assert bad["status"] == "rejected"
        assert ask("plan", thread_id="t1", gate_data={"host": "x"}) == cli(
            "plan", "t1", "--gate-data", '{"host": "x"}').json == bad
        data = {"project_name": "billing", "host": "billing.example.com", "auth_mode": 1,
                "admins": "ann"}
        planned = ask("plan", thread_id="t1", gate_data=data)
        assert planned == cli("plan", "t1", "--gate-data", json.dumps(data)).json
        assert [(i["tool"], i["arguments"]) for i in planned["plan"]] == [
            ("create_project", {"name": "billing", "host": "billing.example.com",
                                "auth_mode": 1, "admins": "ann"})]
        assert planned["stops_at"] == "collect-role-info"
        assert ask("current", thread_id="t1") == cli("current", "t1").json
        assert ask("runs", status="awaiting_input") == cli("runs", "--status",
                                                            "awaiting_input").json
        assert ask("runs", status="completed") == {"status": "ok", "count": 0, "runs": []}
        assert ask("show", workflow=WORKFLOW) == cli("show", WORKFLOW).json
        assert ask("index") == cli("index").json
        found = ask("search", query="delete a project", limit=2)
        assert found == cli("search", "delete a project", "--limit", "2").json
        assert found["tools"][0].startswith("delete_project ")
        assert ask("workflows") == {"status": "ok", "workflows": cli("index").json["workflows"]}
        assert ask("meta", tool="create_role", required_only=True) == cli(
            "meta", "create_role", "--required-only").json
        # a refusal is the CLI's error document, not an exception
        for args, command in (({"tool": "nope"}, ["meta", "nope"]),
                              ({"query": " "}, ["search", " "]),
                              ({"workflow": "nope"}, ["start", "nope"]),
                              ({"workflow": "nope"}, ["show", "nope"]),
                              ({"thread_id": "nope"}, ["current", "nope"])):
            tool = command[0]
            answer = ask(tool, **args)
            assert answer["status"] == "error" and answer == cli(*command).json
        destructive = ask("call", tool="delete_project", args={"project_id": 1})
        assert destructive == cli("call", "delete_project", "--args",
                                  '{"project_id": 1}').json
        assert destructive["error"]["code"] == "needs_confirmation"


def test_calls_in_one_message_are_answered_one_after_another(workflows: Path, tmp_path: Path,
                                                             recorder: Recorder) -> None:
    """LangChain runs the calls of one message in parallel threads; the tools take them one
    at a time, so the second advance sees where the first left the run (stale) instead of
    colliding with it (conflict)."""
    write_workflow(workflows, "create-project", project_steps())

    def slow_create_project(**kwargs: Any) -> dict[str, Any]:
        time.sleep(0.5)  # the first advance is still running when the second arrives
        return recorder.create_project(**kwargs)

    tools = PythonTools({"create_project": slow_create_project,
                         "create_role": recorder.create_role})
    data = {"project_name": "billing", "host": "billing.example.com"}

    def policy(messages: list[BaseMessage]) -> AIMessage:
        if not isinstance(messages[-1], ToolMessage):
            return AIMessage(content="", tool_calls=[{
                "name": "start", "args": {"workflow": "create-project", "thread_id": "t1"},
                "id": "start", "type": "tool_call"}])
        if len(messages) == 3:  # the start's answer: the same answer twice, at once
            return AIMessage(content="", tool_calls=[{
                "name": "advance", "id": f"advance-{n}", "type": "tool_call",
                "args": {"thread_id": "t1", "step": "collect-project-info",
                         "gate_data": data}} for n in (1, 2)])
        return AIMessage(content="done")

    with Canal(workflows=workflows, home=tmp_path / ".canal", tools=tools) as canal:
        out = create_agent(ScriptedModel(policy=policy), canal.as_tools()).invoke(
            {"messages": [HumanMessage("Create the billing project.")]})
        answers = [json.loads(m.content) for m in out["messages"]
                   if isinstance(m, ToolMessage) and m.name == "advance"]
        assert sorted(a["status"] for a in answers) == ["awaiting_input", "stale"]
        assert [name for name, _ in recorder.calls] == ["create_project", "create_role"]
        assert canal.current("t1").step.id == "summary"
