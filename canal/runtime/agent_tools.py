"""canal's commands as LangChain tools, for an agent to drive workflows (``Canal.as_tools``).

A thin door onto the facade, like the CLI: each tool calls one ``Canal`` method and answers
exactly the JSON document the CLI prints for the same command (an envelope, a tool
document, or ``CanalError.to_json()`` for a request canal refuses). A refusal is an answer,
never an exception, so the agent reads what was wrong and what to do next; an unexpected
exception (a bug) still propagates. The tool message's content is the document as JSON
text; its ``artifact`` is the document itself, for code that wants the dict.

The names and argument names are those of canal's MCP tools (DESIGN.md §9), so both doors
speak one vocabulary. ``workflows`` lists what can be started, ``show`` what one would do
(its steps, fixed values and where the others come from), ``index`` lists the workflows
and the tools (one line per server when there are many), and ``search`` ranks both for a
task. ``call`` (one raw tool call, outside any workflow) is offered only when asked for by
name, since a workflow is the checked way to change things. One set of tools answers one
call at a time: an agent that emits several calls in one message gets them answered one
after another.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field

from canal.errors import CanalError, UsageError
from canal.runtime.envelope import Envelope

if TYPE_CHECKING:
    from langchain_core.tools import BaseTool


class Facade(Protocol):
    """What the tools need of ``Canal``."""

    def index(self, full: bool = False) -> dict[str, Any]: ...
    def search(self, query: str, limit: int = 5) -> dict[str, Any]: ...
    def show(self, name: str) -> dict[str, Any]: ...
    def meta(self, tool: str, required_only: bool = False) -> dict[str, Any]: ...
    def call(self, tool: str, arguments: Any, confirm: bool = False) -> dict[str, Any]: ...
    def start(self, name: str, thread_id: str | None = None) -> Envelope: ...
    def advance(self, thread_id: str, data: Any = None, step: str | None = None
                ) -> Envelope: ...
    def plan(self, thread_id: str, data: Any = None) -> dict[str, Any]: ...
    def current(self, thread_id: str) -> Envelope: ...
    def runs(self) -> list[dict[str, Any]]: ...
    def abort(self, thread_id: str) -> Envelope: ...
    def rewind(self, thread_id: str, step: str) -> Envelope: ...


# -- arguments (their descriptions are part of what the model reads) -------------------------

class _Arguments(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NoArguments(_Arguments):
    pass


class ThreadArguments(_Arguments):
    thread_id: str = Field(description="the run's thread id (from start's answer)")


class RewindArguments(_Arguments):
    thread_id: str = Field(description="the run's thread id (from start's answer)")
    step: str = Field(description="the earlier interactive step to answer again (its id, "
                                  "from current's completed)")


class ShowArguments(_Arguments):
    workflow: str = Field(description="the workflow's name, as workflows or index lists it")


class StartArguments(_Arguments):
    workflow: str = Field(description="the workflow's name, as workflows or index lists it")
    thread_id: str | None = Field(None, description="a thread id of your choosing "
                                  "(default: a new one); keep the one in the answer")


class AdvanceArguments(ThreadArguments):
    gate_data: dict[str, Any] | None = Field(
        None, description="the fields of the current step's gate, as a JSON object; "
        "leave it out to acknowledge a notification")
    step: str | None = Field(None, description="the id of the step this data answers: "
                             "if the run has moved past it, nothing is applied (stale)")


class PlanArguments(ThreadArguments):
    gate_data: dict[str, Any] | None = Field(
        None, description="the data you would give advance, as a JSON object")


class SearchArguments(_Arguments):
    query: str = Field(description="a few words about the task: what it does, what it acts "
                                   "on (e.g. 'create a project')")
    limit: int = Field(5, description="at most this many workflows and this many tools")


class MetaArguments(_Arguments):
    tool: str = Field(description="the tool's name, as the index lists it")
    required_only: bool = Field(False, description="only the fields a call must give")


class CallArguments(_Arguments):
    tool: str = Field(description="the tool's name, as the index lists it")
    args: dict[str, Any] = Field(default_factory=dict,
                                 description="the tool's arguments (see meta)")
    confirm: bool = Field(False, description="go ahead with a destructive tool; only "
                          "after the user agreed")


class RunsArguments(_Arguments):
    status: str | None = Field(None, description="only runs with this status, e.g. "
                               "awaiting_input or failed")


# -- the commands ----------------------------------------------------------------------------

def _workflows(canal: Facade) -> dict[str, Any]:
    return {"status": "ok", "workflows": canal.index()["workflows"]}


def _runs(canal: Facade, status: str | None = None) -> dict[str, Any]:
    listed = [run for run in canal.runs() if status in (None, run["status"])]
    return {"status": "ok", "count": len(listed), "runs": listed}


def _call(canal: Facade, tool: str, args: dict[str, Any] | None = None,
          confirm: bool = False) -> dict[str, Any]:
    return canal.call(tool, {} if args is None else args, confirm=confirm)


def _start(canal: Facade, workflow: str, thread_id: str | None = None) -> dict[str, Any]:
    return canal.start(workflow, thread_id=thread_id).to_json()


def _advance(canal: Facade, thread_id: str, gate_data: dict[str, Any] | None = None,
             step: str | None = None) -> dict[str, Any]:
    return canal.advance(thread_id, gate_data, step=step).to_json()


def _plan(canal: Facade, thread_id: str,
          gate_data: dict[str, Any] | None = None) -> dict[str, Any]:
    return canal.plan(thread_id, gate_data)


ANSWERS = ("Every answer is one JSON document; status \"error\" means the request was "
           "refused or failed, and error.message says why.")

ENVELOPE = (
    "The answer is the run's envelope: thread_id, status, and step, the one step to do now "
    "(its instructions, and its gate: the fields to submit). Then call advance.")

# name -> (description, arguments, handler(canal, **arguments) -> document)
Command = tuple[str, type[_Arguments], Callable[..., dict[str, Any]]]
COMMANDS: dict[str, Command] = {
    "workflows": (
        "List the workflows you can start, one 'name: description' line each. Pick the one "
        "that fits the user's task (show tells you what it would do) and call start with "
        "its name. (search finds the workflows and tools for a task among many.)",
        NoArguments, _workflows),
    "show": (
        "What a workflow would do, before you start it: its steps in order (type, title), "
        "the fields each interactive step asks (asks), the tool each automated step calls "
        "(tool) with the fixed values it always sends (constants) and the arguments taken "
        "from earlier steps (from: the gate field or result they come from). Check that "
        "its fixed values fit the user's request; if they do not, do not start it.",
        ShowArguments, lambda canal, workflow: canal.show(workflow)),
    "index": (
        "canal's compact index: the workflows first, then the tools, one line each. Prefer "
        "a workflow (start); meta shows one tool's fields. With many tools it lists one line "
        "per server instead: then use search.",
        NoArguments, lambda canal: canal.index()),
    "search": (
        "The workflows and the tools that best match a task, best first, one line each as "
        "in index (ranked by the words of their names, descriptions and fields). Then start "
        "the workflow that fits, or read a tool's fields with meta.",
        SearchArguments, lambda canal, query, limit=5: canal.search(query, limit)),
    "meta": (
        "The fields of one tool from the index after its rules: name, type, whether "
        "required, allowed values and notes.",
        MetaArguments, lambda canal, tool, required_only=False: canal.meta(tool, required_only)),
    "call": (
        "Call one tool outside any workflow; the arguments are checked against its meta "
        "first and nothing is sent when they fail (status rejected). A destructive tool needs "
        "confirm=true, which you give only after the user agreed.",
        CallArguments, _call),
    "start": (
        "Start a run of a workflow. " + ENVELOPE + " Keep the thread_id: current gives the "
        "whole state back from it alone, in any later session.",
        StartArguments, _start),
    "advance": (
        "Submit data for the run's current step; the answer is the next envelope. By its "
        "status:\n"
        "- awaiting_input: do step.instructions, then advance with gate_data holding the "
        "fields of step.gate (every required one). A notification (empty gate): tell the "
        "user, then advance with no gate_data. A confirmation: show step.call to the user, "
        "then advance with {\"confirm\": true} or {\"confirm\": false}.\n"
        "- rejected: nothing was applied; fix the fields in errors and missing, advance again.\n"
        "- failed: a tool failed (errors says why); ask the user, then advance with gate_data "
        "{\"action\": \"retry\"}, {\"action\": \"skip\"}, {\"action\": \"abort\"} or, when "
        "the data given earlier was wrong, {\"action\": \"edit\"} to answer that step again.\n"
        "- stale: the run had moved on; call current.\n"
        "- completed or aborted: the run is over; tell the user.",
        AdvanceArguments, _advance),
    "plan": (
        "A dry run of advance: checks gate_data like advance (status rejected: fix errors "
        "and missing) and lists, without calling anything or changing the run, the calls "
        "advance would make with it, in order: plan[].tool and arguments (a result not "
        "known yet stays as its {{result...}} text), when (true, false: skipped, or "
        "undecided), confirm (the run would ask first); stops_at is the step it would "
        "stop at (null: the run ends). Use it to show the user what will happen before a "
        "step that changes things.",
        PlanArguments, _plan),
    "current": (
        "Where a run stands, from its thread_id alone: the step to do now with its gate, the "
        "steps completed with their data and results, and the fields still missing. Use it "
        "to take up a run in a new session, then advance.",
        ThreadArguments, lambda canal, thread_id: canal.current(thread_id).to_json()),
    "runs": (
        "List the runs: thread_id, workflow, status and step of each.",
        RunsArguments, _runs),
    "rewind": (
        "Go back to an earlier interactive step of a run to answer it again (the user "
        "corrected something). Refused, changing nothing, when a later step already made a "
        "change (the message says which); then abort, or go on. " + ENVELOPE,
        RewindArguments, lambda canal, thread_id, step: canal.rewind(thread_id, step)
        .to_json()),
    "abort": (
        "Stop a run for good, wherever it is (the workflow's compensations undo what it "
        "did). Only when the user asks.",
        ThreadArguments, lambda canal, thread_id: canal.abort(thread_id).to_json()),
}
OFFERED = ("workflows", "show", "index", "search", "meta", "start", "advance", "plan",
           "current", "runs", "rewind", "abort")


def agent_tools(canal: Facade, include: Iterable[str] | None = None) -> list[BaseTool]:
    """The tools named in ``include`` (default: every one but ``call``), in that order."""
    from langchain_core.tools import StructuredTool

    names = list(OFFERED if include is None else include)
    unknown = [name for name in names if name not in COMMANDS]
    if unknown:
        raise UsageError(f"no agent tool named {', '.join(map(repr, unknown))} (known: "
                         f"{', '.join(COMMANDS)})")
    one_at_a_time = threading.Lock()
    tools: list[BaseTool] = []
    for name in names:
        description, arguments, _ = COMMANDS[name]
        tools.append(StructuredTool.from_function(
            func=_door(canal, name, one_at_a_time), name=name,
            description=f"{description}\n{ANSWERS}", args_schema=arguments,
            response_format="content_and_artifact"))
    return tools


def respond(canal: Facade, name: str, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """The document the CLI prints for command ``name`` with ``arguments``: what every door
    (these tools, ``canal serve``) answers. Arguments that do not fit the command's model,
    an unknown command and a request canal refuses are the error document, not an
    exception."""
    from pydantic import ValidationError

    try:
        if name not in COMMANDS:
            raise UsageError(f"no tool named {name!r} (known: {', '.join(COMMANDS)})")
        _, model, handler = COMMANDS[name]
        try:
            given = model.model_validate(arguments or {})
        except ValidationError as exc:
            problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or name}: {e['msg']}"
                                 for e in exc.errors())
            raise UsageError(f"{name}: bad arguments: {problems}") from exc
        return handler(canal, **given.model_dump())
    except CanalError as exc:
        return exc.to_json()


def _door(canal: Facade, name: str, lock: threading.Lock
          ) -> Callable[..., tuple[str, dict[str, Any]]]:
    def run(**arguments: Any) -> tuple[str, dict[str, Any]]:
        with lock:
            document = respond(canal, name, arguments)
        return json.dumps(document, ensure_ascii=False, allow_nan=False), document

    return run
