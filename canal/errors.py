"""Every exception canal raises on purpose.

::

    CanalError                    base; carries a stable ``code`` and a CLI ``exit_code``
    ├── UsageError                bad command line or malformed JSON input        (exit 2)
    │   ├── LimitExceeded         submitted data larger, longer or deeper than allowed
    │   └── NeedsConfirmation     a destructive tool called without --confirm
    ├── InvalidName               a workflow or thread name outside the safe set  (exit 2)
    ├── NotFound                                                                 (exit 4)
    │   ├── WorkflowNotFound      no such folder in the workflows directory
    │   ├── RunNotFound           no run with that thread id
    │   └── ToolNotFound          no such tool in the tool cache
    ├── WorkflowInvalid           loading or static validation found problems     (exit 5)
    ├── RunStateError             the run cannot take this action (finished, ...) (exit 6)
    │   ├── ThreadTaken           start with a thread id that names a run
    │   ├── RunConflict           another process is changing the run right now
    │   ├── RewindRefused         a rewind past a call that changed something
    │   └── MigrationRefused      the run cannot move onto the new definition
    ├── ConfigError               unreadable or contradictory configuration       (exit 8)
    ├── ToolError                 a tool call failed                              (exit 7)
    └── TemplateError             a reference could not be resolved               (exit 7)

Outside the tree, ``Terminated`` (a ``KeyboardInterrupt``) stands for SIGTERM or SIGHUP
arriving while canal holds MCP servers (``canal.tools.signals``): it unwinds the process as
Ctrl-C does, so the servers are stopped; the CLI exits with 128 + the signal's number.

A ``TemplateError`` is not a ``ToolError``: no tool was called. Inside a run, both become a
``canal.nodes.failure.Failure`` (kinds ``template`` and ``tool_error``) that parks the step.

Third-party exceptions are translated into this tree once, where canal calls the
third party, with ``raise ... from exc``. The CLI maps classes to exit codes in one
place (``CanalError.exit_code``); library code never calls ``sys.exit``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = [
    "CanalError",
    "ConfigError",
    "InvalidName",
    "LimitExceeded",
    "MigrationRefused",
    "NeedsConfirmation",
    "NotFound",
    "Problem",
    "RewindRefused",
    "RunConflict",
    "RunNotFound",
    "RunStateError",
    "TemplateError",
    "Terminated",
    "ThreadTaken",
    "ToolError",
    "ToolNotFound",
    "UsageError",
    "WorkflowInvalid",
    "WorkflowNotFound",
]


class CanalError(Exception):
    """Base of every error canal raises on purpose."""

    code = "error"
    exit_code = 1

    def __init__(self, message: str, **details: Any) -> None:
        super().__init__(message)
        self.message = message
        self.details = details

    def next_step(self) -> dict[str, Any] | None:
        """What to call next, for an agent that knows nothing else (``next`` in the error
        document): ``{"command", ..., "hint"}``; None when nothing canal offers helps."""
        return None

    def to_json(self) -> dict[str, Any]:
        error: dict[str, Any] = {"code": self.code, "message": self.message}
        error.update({k: v for k, v in self.details.items() if v is not None})
        return {"status": "error", "error": error, "next": self.next_step()}


class UsageError(CanalError):
    code = "usage"
    exit_code = 2

    def next_step(self) -> dict[str, Any] | None:
        return {"command": "help", "hint": "fix the command line: canal COMMAND --help shows "
                                           "its arguments and an example"}


class LimitExceeded(UsageError):
    code = "limit"


class NeedsConfirmation(UsageError):
    code = "needs_confirmation"

    def next_step(self) -> dict[str, Any] | None:
        return {"command": "call", "tool": self.details.get("tool"), "confirm": True,
                "hint": "the tool is marked destructive: show the call to the user, and only "
                        "with their consent repeat it with --confirm"}


class InvalidName(CanalError):
    code = "invalid_name"
    exit_code = 2

    def next_step(self) -> dict[str, Any] | None:
        return {"command": "runs", "hint": "names are letters, digits, '.', '_' and '-': "
                                           "runs lists the thread ids, index the workflows"}


class NotFound(CanalError):
    code = "not_found"
    exit_code = 4


class WorkflowNotFound(NotFound):
    code = "unknown_workflow"

    def next_step(self) -> dict[str, Any] | None:
        return {"command": "index", "hint": "index lists the workflows you can start"}


class RunNotFound(NotFound):
    code = "unknown_thread"

    def next_step(self) -> dict[str, Any] | None:
        return {"command": "runs", "hint": "runs lists the thread ids; start creates a run"}


class ToolNotFound(NotFound):
    code = "unknown_tool"

    def next_step(self) -> dict[str, Any] | None:
        return {"command": "index", "hint": "index lists the tools (discover refreshes them)"}


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a workflow definition: where, which key, what text, why.

    A ``warning`` does not make the workflow invalid; it points at something that works
    but may not do what the author meant (a reference to a step that may be skipped).
    """

    path: str
    message: str
    key: str | None = None
    text: str | None = None
    line: int | None = None
    warning: bool = False

    def __str__(self) -> str:
        where = self.path if self.line is None else f"{self.path}:{self.line}"
        parts = [where]
        if self.key:
            parts.append(self.key)
        if self.text is not None:
            parts.append(self.text)
        parts.append(("warning: " if self.warning else "") + self.message)
        return ": ".join(parts)

    def to_json(self) -> dict[str, Any]:
        data = {"path": self.path, "line": self.line, "key": self.key, "text": self.text,
                "message": self.message, "problem": str(self),
                "severity": "warning" if self.warning else None}
        return {k: v for k, v in data.items() if v is not None}


class WorkflowInvalid(CanalError):
    code = "invalid_workflow"
    exit_code = 5

    def __init__(self, workflow: str, problems: list[Problem]) -> None:
        noun = "problem" if len(problems) == 1 else "problems"
        super().__init__(f"workflow {workflow!r} has {len(problems)} {noun}", workflow=workflow)
        self.workflow = workflow
        self.problems = list(problems)

    def to_json(self) -> dict[str, Any]:
        data = super().to_json()
        data["error"]["problems"] = [p.to_json() for p in self.problems]
        return data

    def next_step(self) -> dict[str, Any] | None:
        return {"command": "validate", "workflow": self.workflow,
                "hint": "the workflow's files need fixing (see problems); validate checks them"}


class RunStateError(CanalError):
    code = "invalid_state"
    exit_code = 6

    def next_step(self) -> dict[str, Any] | None:
        thread = self.details.get("thread_id")
        if self.details.get("status") in ("completed", "aborted"):
            return {"command": "history", "thread_id": thread,
                    "hint": "the run is finished: history shows what it did; start a new run "
                            "to do more"}
        return {"command": "current", "thread_id": thread}


class ThreadTaken(RunStateError):
    """``start`` with a thread id that already names a run."""

    def next_step(self) -> dict[str, Any] | None:
        return {"command": "start", "hint": "choose another thread id, or leave it out"}


class RunConflict(RunStateError):
    """Another process holds the run's lock: nothing was changed; try again when it is done."""

    code = "conflict"

    def next_step(self) -> dict[str, Any] | None:
        return {"command": "current", "thread_id": self.details.get("thread_id"),
                "hint": "another process is changing this run: read where it stands now, "
                        "then answer"}


class RewindRefused(RunStateError):
    """``rewind`` to a step the run cannot go back to (``canal.nodes.rewind``)."""

    code = "rewind_refused"

    def next_step(self) -> dict[str, Any] | None:
        return {"command": "current", "thread_id": self.details.get("thread_id"),
                "hint": "the run stays where it is: answer its step, or abort it (which runs "
                        "the compensations the message names)"}


class MigrationRefused(RunStateError):
    code = "migration_refused"

    def next_step(self) -> dict[str, Any] | None:
        return {"command": "current", "thread_id": self.details.get("thread_id"),
                "hint": "the run stays on its own definition; go on with it as it is"}

    def __init__(self, thread_id: str, reasons: list[str]) -> None:
        super().__init__(f"run {thread_id!r} cannot move to the new definition: "
                         + "; ".join(reasons), thread_id=thread_id, reasons=reasons)


class ConfigError(CanalError):
    code = "config"
    exit_code = 8

    def next_step(self) -> dict[str, Any] | None:
        return {"command": None, "hint": "a person must fix the configuration the message "
                                         "names; nothing else will work until then"}


class ToolError(CanalError):
    """A tool call did not produce a result. ``message`` is what the tool (or canal) said.

    ``transient`` marks failures of the connection rather than of the call (a server that
    could not start, crashed or did not answer in time): worth retrying when the tool is
    safe to repeat.
    """

    code = "tool_error"
    exit_code = 7

    def __init__(self, message: str, transient: bool = False, **details: Any) -> None:
        super().__init__(message, **details)
        self.transient = transient

    def next_step(self) -> dict[str, Any] | None:
        tool = self.details.get("tool")
        if tool is None:
            return None
        return {"command": "meta", "tool": tool,
                "hint": "meta shows the tool's arguments; correct them and call again"}


class TemplateError(CanalError):
    code = "template_error"
    exit_code = 7


class Terminated(KeyboardInterrupt):
    """The process got a signal (``signal``, its number) that ends it, while canal held
    MCP servers: raised in the main thread so that everything unwinds and the servers are
    stopped, as ``KeyboardInterrupt`` does for Ctrl-C."""

    def __init__(self, signal: int) -> None:
        super().__init__(signal)
        self.signal = signal
