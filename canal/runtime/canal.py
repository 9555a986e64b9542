"""``Canal``: the one object every interface (CLI, LangChain tools, servers) calls.

Each method is one operation on a run and returns an ``Envelope``. Writing operations
(``start``, ``advance``, ``abort``, ``recover``, ``migrate``) take the run's lock and compile
its pinned definition's graph; reading ones (``current``, ``runs``, ``history``) only read
the latest checkpoint, so they never import LangGraph's graph engine. Tool commands live in
``canal.runtime.tools``, history and retention in ``canal.runtime.retention``.
"""

from __future__ import annotations

import json
import secrets
from pathlib import Path
from typing import Any

from canal.checkpoints import Store, open_store
from canal.config import Settings, load_settings
from canal.errors import CanalError, RunNotFound, RunStateError, UsageError, WorkflowNotFound
from canal.limits import check as check_limits
from canal.nodes.gate import check_gate
from canal.runtime.envelope import (
    Envelope,
    completed_steps,
    envelope_of,
    gate_of,
    missing_fields,
    stopped_mid_step,
)
from canal.runtime.retention import Retention
from canal.runtime.tools import ToolCommands
from canal.spec.loader import (
    check_name,
    digest_of,
    list_workflows,
    load_files,
    load_workflow,
    workflow_dir,
    workflow_files,
)
from canal.spec.models import WorkflowSpec
from canal.tools.cache import ToolCache
from canal.tools.client import PythonTools, ToolClient
from canal.tools.routed import RoutedTools

FINISHED = ("completed", "aborted")


class Canal(ToolCommands, Retention):
    """Start, advance, inspect and abort workflow runs.

    Every argument is optional and defaults as the CLI does (see ``canal.config``):
    ``workflows`` is the folder of workflow folders, ``home`` the state folder,
    ``checkpointer`` a URL (``sqlite:///...``, ``memory:``, ``postgresql://...``) or a
    LangGraph checkpointer object, ``mcp_config`` the ``.mcp.json`` file, ``tools`` the
    ``ToolClient`` automated steps call (default: Python tools from ``canal.yaml``, then the
    MCP tools in the tool cache).
    """

    def __init__(self, workflows: str | Path | None = None, home: str | Path | None = None,
                 checkpointer: Any = None, tools: ToolClient | None = None,
                 mcp_config: str | Path | None = None,
                 settings: Settings | None = None) -> None:
        self.settings = settings or load_settings(workflows=workflows, home=home,
                                                  checkpointer=checkpointer,
                                                  mcp_config=mcp_config)
        self.tool_cache = ToolCache(self.settings.home / "tools")
        self.tools: ToolClient = tools or RoutedTools(
            PythonTools(self.settings.python_tools), self.tool_cache, self.settings.mcp_config)
        self._store: Store | None = None
        self._graphs: dict[str, Any] = {}  # "digest|confirm steps" -> compiled graph
        self._specs: dict[str, WorkflowSpec] = {}  # content digest -> pinned definition

    # -- plumbing ----------------------------------------------------------------------

    @property
    def store(self) -> Store:
        if self._store is None:
            from canal.crypto import Sealer

            self._store = open_store(self.settings.checkpointer, Sealer(self.settings.home))
        return self._store

    def close(self) -> None:
        """Close the database connection (the object can still be used; it reopens)."""
        if self._store is not None:
            self._store.close()
            self._store = None
            self._graphs.clear()
            self._specs.clear()

    def __enter__(self) -> "Canal":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def workflow(self, name: str) -> WorkflowSpec:
        """The validated spec of workflow ``name`` (WorkflowInvalid lists every problem)."""
        return load_workflow(workflow_dir(self.settings.workflows, name))

    def workflows(self) -> list[str]:
        return list_workflows(self.settings.workflows)

    @staticmethod
    def _config(thread_id: str) -> dict[str, Any]:
        return {"configurable": {"thread_id": thread_id}}

    def _values(self, thread_id: str) -> dict[str, Any]:
        check_name(thread_id, "thread")
        if self.store.lookup(thread_id) is None:
            raise RunNotFound(f"no run with thread id {thread_id!r}", thread_id=thread_id)
        found = self.store.saver().get_tuple(self._config(thread_id))
        if found is None:
            raise RunNotFound(f"run {thread_id!r} has no saved state", thread_id=thread_id)
        return dict(found.checkpoint["channel_values"])

    def _run(self, thread_id: str) -> tuple[WorkflowSpec, dict[str, Any]]:
        """The run's pinned definition and its latest state."""
        values = self._values(thread_id)
        return self._pinned(thread_id, values), values

    def _pinned(self, thread_id: str, values: dict[str, Any]) -> WorkflowSpec:
        """The definition the run started with (or migrated to), never the one on disk."""
        digest, name = values["digest"], values["workflow"]
        spec = self._specs.get(digest)
        if spec is None:
            files = self.store.definition(digest)
            if files is not None:
                spec = load_files(name, {k: v.encode() for k, v in files.items()},
                                  f"pinned {digest}")
            else:  # saved before definitions were pinned, or an in-memory store that is gone
                try:
                    spec = self.workflow(name)
                except WorkflowNotFound as exc:
                    raise WorkflowNotFound(
                        f"run {thread_id!r} has no saved definition and workflow {name!r} is "
                        f"no longer in {self.settings.workflows}", workflow=name,
                        thread_id=thread_id) from exc
            self._specs[digest] = spec
        return spec

    def _save_definition(self, spec: WorkflowSpec, files: dict[str, bytes | None]) -> None:
        """Pin ``spec``'s files (valid, so every one was read and is UTF-8) by its digest."""
        self.store.save_definition(spec.digest, spec.name,
                                   {k: v.decode() for k, v in files.items() if v is not None})

    def _on_disk(self, name: str) -> tuple[Path | None, dict[str, bytes | None]]:
        try:
            folder = workflow_dir(self.settings.workflows, name)
        except WorkflowNotFound:
            return None, {}
        return folder, workflow_files(folder)

    def _invoke(self, spec: WorkflowSpec, thread_id: str, before: dict[str, Any], *,
                start: Any = None, resume: Any = None, rewrite: Any = None,
                confirm: list[str] | None = None) -> Envelope:
        """Run the graph until it pauses or ends; return the envelope with this call's tools.

        Exactly one of: ``start`` (the initial state), ``resume`` (the value for the pending
        interrupt), ``rewrite`` (a ``(Command, step id)`` applied as if that step had
        returned it, for a step whose process died mid-call), or nothing (re-run the
        pending step).
        """
        from langgraph.types import Command

        from canal.graphs.compile import compile_graph
        from canal.nodes.automated import RunContext

        if confirm is None:
            confirm = (start or before).get("confirm_steps") or []
        cache_key = f"{spec.digest}|{','.join(sorted(confirm))}"
        graph = self._graphs.get(cache_key)
        if graph is None:
            graph = self._graphs[cache_key] = compile_graph(spec, self.store.saver(),
                                                            frozenset(confirm))
        config = self._config(thread_id)
        graph_input = start
        if resume is not None:
            graph_input = Command(resume=resume)
        try:
            if rewrite is not None:
                graph.update_state(config, rewrite[0], as_node=rewrite[1])
            tools: Any = self.tools
            if spec.servers is not None:
                from canal.tools.routed import FencedTools

                tools = FencedTools(self.tools, spec.servers, spec.name)
            context = RunContext(tools=tools, journal=self.store, thread_id=thread_id)
            with _untraced_if_sensitive(spec):
                graph.invoke(graph_input, config, context=context, durability="sync")
        finally:
            self.tools.close()
        after = self._values(thread_id)
        new = after.get("log", [])[len(before.get("log", [])):]
        executed = [{**{k: v for k, v in e.items() if k not in ("kind", "at")},
                     **({"compensation": True} if e["kind"] == "compensate" else {})}
                    for e in new if e["kind"] in ("tool", "compensate")]
        return envelope_of(thread_id, spec, after, executed)

    # -- operations --------------------------------------------------------------------

    def start(self, name: str, thread_id: str | None = None) -> Envelope:
        """Create a run of workflow ``name`` and run it to its first pause."""
        from canal.graphs.state import initial_state
        from canal.nodes.base import now

        folder = workflow_dir(self.settings.workflows, name)
        files = workflow_files(folder)
        spec = load_files(name, files, str(folder))
        thread_id = check_name(thread_id, "thread") if thread_id else _new_thread_id(name)
        if not self.store.register(thread_id, spec.name, now()):
            raise RunStateError(f"thread id {thread_id!r} is already taken", thread_id=thread_id)
        self._save_definition(spec, files)
        state = initial_state(spec.name, spec.digest, spec.steps[0].id, thread_id,
                              self._confirm_steps(spec))
        with self.store.lock(thread_id):
            return self._invoke(spec, thread_id, {}, start=state)

    def advance(self, thread_id: str, data: Any = None, step: str | None = None) -> Envelope:
        """Submit ``data`` for the current step.

        The data is checked against the step's gate first; a rejection returns status
        ``rejected`` and changes nothing. Accepted data is stored and every following
        automated step runs until the next pause or the end. With ``step``, the data is
        meant for that step only: if the run has moved on (another session or worker
        advanced it), the answer is status ``stale`` and nothing changes.
        """
        from canal.nodes.base import submit

        data = json_plain_data({} if data is None else data)
        check_limits(data, "the submitted data", self.settings.limits)
        with self._writer(thread_id):
            spec, values = self._run(thread_id)
            self._ensure_open(thread_id, values)
            if step is not None and step != values["cursor"]:
                env = envelope_of(thread_id, spec, values)
                env.status = "stale"
                env.errors = [{"field": "", "message": f"the data is for step {step!r} but the "
                               f"run is at step {values['cursor']!r}; nothing was applied"}]
                return env
            check = check_gate(gate_of(spec, values), data)
            if not check.accepted:
                env = envelope_of(thread_id, spec, values)
                env.status, env.errors = "rejected", check.errors
                env.missing, env.dropped = check.missing, check.dropped
                return env
            if stopped_mid_step(spec, values):
                env = self._invoke(spec, thread_id, values, rewrite=self._in_flight(
                    spec, thread_id, values, check.data["action"]))
            else:
                env = self._invoke(spec, thread_id, values, resume=submit(check.data))
            env.dropped = check.dropped
            return env

    def current(self, thread_id: str) -> Envelope:
        """Where the run stands: its step, what is done, what is still to be collected."""
        spec, values = self._run(thread_id)
        env = envelope_of(thread_id, spec, values, stopped=self._stopped(thread_id, spec, values))
        env.completed = completed_steps(spec, values)
        if env.status == "awaiting_input":
            env.missing = missing_fields(gate_of(spec, values))
        _, files = self._on_disk(spec.name)
        on_disk = digest_of(files) if files else None
        env.definition = {"digest": spec.digest, "on_disk": on_disk,
                          "changed": on_disk != spec.digest}
        return env

    def recover(self, thread_id: str) -> Envelope:
        """Continue a run whose process died during an automated step, as far as is safe.

        A call whose outcome was journaled is replayed, one never sent is sent, one in
        flight is sent again only when the tool is safe to repeat; otherwise the step parks
        as ``failed`` ("may or may not have happened") for a person to decide. A run that did
        not stop mid-step is returned as it is.
        """
        with self._writer(thread_id):
            spec, values = self._run(thread_id)
            if values.get("compensating"):  # aborted, but its compensations were cut short
                return self._invoke(spec, thread_id, values)
            self._ensure_open(thread_id, values)
            if not stopped_mid_step(spec, values):
                return envelope_of(thread_id, spec, values)
            return self._invoke(spec, thread_id, values)

    def _confirm_steps(self, spec: WorkflowSpec) -> list[str]:
        """Automated steps that ask for confirmation: ``confirm: true``, or a tool whose MCP
        annotations explicitly say ``destructiveHint: true`` (unless ``confirm: false``)."""
        destructive = getattr(self.tools, "destructive", lambda _tool: False)
        return [s.id for s in spec.steps if s.automation is not None and (
            s.confirm is True or (s.confirm is None and destructive(s.automation.tool)))]

    def _stopped(self, thread_id: str, spec: WorkflowSpec, values: dict[str, Any]) -> str:
        """Why a run that stopped mid-step stands where it does, from the call journal."""
        from canal.nodes.keys import call_key

        if not stopped_mid_step(spec, values):
            return ""
        step = spec.step(values["cursor"])
        key = call_key(thread_id, step.id, (values.get("attempts") or {}).get(step.id, 0))
        known = self.store.call_record(thread_id, key)
        if known is None:
            return ("the run stopped before this step's call was sent; recover, or answer "
                    "retry, to send it")
        if known["outcome"] is not None:
            return ("the run stopped after this step's call finished, before its result was "
                    "saved; recover, or answer retry, to save it without calling again")
        assert step.automation is not None
        if step.automation.idempotent or self.tools.safe_to_repeat(step.automation.tool):
            return ("the run stopped during this step's call, which is safe to repeat; "
                    "recover, or answer retry, to send it again")
        return ("the call may or may not have happened (the process stopped during it); "
                "answer retry to send it again, skip or abort")

    def migrate(self, thread_id: str) -> Envelope:
        """Move a run onto the definition now on disk, when that is safe for where it stands.

        Safe means: the steps already done are unchanged (id, type, gate, automation) and
        the step the run waits at is still the next one; bodies may change freely. Anything
        else raises ``MigrationRefused`` with every reason, and changes nothing.
        """
        from langgraph.types import Command

        from canal.nodes.base import entry, recovery_node
        from canal.runtime.migrate import MigrationRefused, migration_problems

        with self._writer(thread_id):
            old, values = self._run(thread_id)
            self._ensure_open(thread_id, values)
            folder, files = self._on_disk(old.name)
            if folder is None:
                raise WorkflowNotFound(f"no workflow {old.name!r} in {self.settings.workflows}",
                                       workflow=old.name)
            new = load_files(old.name, files, str(folder))
            if new.digest == old.digest:
                return self.current(thread_id)
            reasons = migration_problems(old, new, values)
            if reasons:
                raise MigrationRefused(thread_id, reasons)
            self._save_definition(new, files)
            cursor = values["cursor"]
            waiting = recovery_node(cursor) if values.get("status") == "failed" else cursor
            confirm = self._confirm_steps(new)
            move = Command(goto=waiting, update={"digest": new.digest, "confirm_steps": confirm,
                                                 "log": [entry("migrate", cursor, **{
                                                     "from": old.digest, "to": new.digest})]})
            self._invoke(new, thread_id, values, rewrite=(move, waiting), confirm=confirm)
        return self.current(thread_id)

    def abort(self, thread_id: str) -> Envelope:
        """Stop the run wherever it is; it cannot be advanced afterwards."""
        from canal.nodes.base import abort_request

        with self._writer(thread_id):
            spec, values = self._run(thread_id)
            self._ensure_open(thread_id, values)
            if stopped_mid_step(spec, values):
                return self._invoke(spec, thread_id, values,
                                    rewrite=self._in_flight(spec, thread_id, values, "abort"))
            return self._invoke(spec, thread_id, values, resume=abort_request())

    def runs(self) -> list[dict[str, Any]]:
        """Every run: thread id, workflow, status, current step, creation and update times."""
        specs: dict[str, WorkflowSpec | None] = {}
        out = []
        for record in self.store.records():
            found = self.store.saver().get_tuple(self._config(record.thread_id))
            values = found.checkpoint["channel_values"] if found else {}
            status = values.get("status", "unknown")
            if status == "running":
                if record.workflow not in specs:
                    specs[record.workflow] = self._spec_or_none(record.workflow)
                spec = specs[record.workflow]
                status = (envelope_of(record.thread_id, spec, values).status if spec
                          else "awaiting_input")
            out.append({"thread_id": record.thread_id, "workflow": record.workflow,
                        "status": status, "step": values.get("cursor"),
                        "created_at": record.created_at,
                        "updated_at": found.checkpoint["ts"] if found else None})
        return out

    def _spec_or_none(self, name: str) -> WorkflowSpec | None:
        try:
            return self.workflow(name)
        except CanalError:
            return None

    # -- helpers -----------------------------------------------------------------------

    def _writer(self, thread_id: str) -> Any:
        """The run's writer lock, taken only for a run that exists (so an unknown thread id
        leaves nothing behind); state is read after the lock is held, so an advance applies
        to the step that is current when it begins."""
        check_name(thread_id, "thread")
        if self.store.lookup(thread_id) is None:
            raise RunNotFound(f"no run with thread id {thread_id!r}", thread_id=thread_id)
        return self.store.lock(thread_id)

    @staticmethod
    def _ensure_open(thread_id: str, values: dict[str, Any]) -> None:
        if values.get("status") in FINISHED:
            raise RunStateError(f"run {thread_id!r} is {values['status']}; it cannot change "
                                "any more", thread_id=thread_id, status=values["status"])

    @staticmethod
    def _in_flight(spec: WorkflowSpec, thread_id: str, values: dict[str, Any],
                   action: str) -> Any:
        """The rewrite that applies ``action`` to a step whose process died mid-call.

        ``retry`` approves sending the call again under its key (a call whose outcome the
        journal already holds is replayed, not sent)."""
        from langgraph.types import Command

        from canal.nodes.keys import call_key
        from canal.nodes.base import aborted, entry, go_to

        step_id = values["cursor"]
        log = [entry("action", step_id, action=action)]
        if action == "retry":
            key = call_key(thread_id, step_id, (values.get("attempts") or {}).get(step_id, 0))
            return Command(goto=step_id, update={"approved": {step_id: key}, "log": log}), step_id
        if action == "skip":
            return go_to(spec.next_id(step_id), {"log": log}), step_id
        return aborted(step_id), step_id


def _untraced_if_sensitive(spec: WorkflowSpec) -> Any:
    """No LangSmith tracing for a workflow with sensitive fields: a trace carries the whole
    state, secrets included. Other workflows trace as the environment says."""
    import contextlib

    if not any(f.sensitive for step in spec.steps for f in step.gate.values()):
        return contextlib.nullcontext()
    from langsmith.run_helpers import tracing_context

    return tracing_context(enabled=False)


def json_plain_data(data: Any) -> Any:
    """Submitted data as JSON-plain values (what every checkpointer stores), or UsageError."""
    try:
        return json.loads(json.dumps(data, allow_nan=False))
    except (TypeError, ValueError) as exc:
        raise UsageError(f"the submitted data is not JSON data: {exc}") from exc


def _new_thread_id(workflow: str) -> str:
    return f"{workflow[:40]}-{secrets.token_hex(6)}"
