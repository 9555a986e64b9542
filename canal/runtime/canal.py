"""``Canal``: the one object every interface (CLI, LangChain tools, servers) calls.

The compiled graph holds every rule (DESIGN.md §8); this facade is a thin door onto it.
Each run operation takes the run's lock, sends the graph one LangGraph input (``{}`` to
start, ``Command(resume=...)`` to answer, ``None`` to recover) and returns an ``Envelope``
built from the state the graph saved. It checks a submission with the same gate function
the graph runs, only to answer a rejection without touching the graph. Reading operations
(``current``, ``runs``, ``history``) read the latest checkpoint and never import
LangGraph's graph engine. Tool commands are the ``ToolCommands`` service, history and
pruning the ``Retention`` service, reading runs the ``Reader`` service.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any

from canal.authoring.builtins import builtin_tools
from canal.checkpoints import Store, open_store
from canal.config import Settings, load_settings
from canal.errors import RunNotFound, RunStateError, ThreadTaken, WorkflowNotFound
from canal.jsontypes import Checked
from canal.limits import check as check_limits
from canal.limits import json_plain_data
from canal.nodes.gate import check_gate
from canal.nodes.sensitive import TextSealer
from canal.nodes.view import gate_of, stopped_mid_step
from canal.runtime.envelope import Envelope, completed_steps, envelope_of, missing_fields
from canal.runtime.log import unsaved
from canal.runtime.reader import Reader, config_of
from canal.runtime.retention import Retention
from canal.runtime.tools import ToolCommands
from canal.spec.loader import (
    Files,
    check_name,
    digest_of,
    list_workflows,
    pinnable,
    workflow_dir,
    workflow_files,
)
from canal.spec.models import FieldSpec, WorkflowSpec
from canal.spec.validate import load_files, load_workflow
from canal.tools.cache import ToolCache
from canal.tools.client import (
    HeldOpen,
    PythonTools,
    StorableResults,
    ToolClient,
    argument_check,
)
from canal.tools.routed import RoutedTools

if TYPE_CHECKING:
    from collections.abc import Iterable

    from langchain_core.tools import BaseTool

FINISHED = ("completed", "aborted")
UNSAVED_PENDING = (
    "a process stopped after the step took this answer and before it saved the run, so it is "
    "not applied: the answer you give next with advance (or abort) is the one applied, and "
    "this one is dropped")
UNSAVED_DROPPED = (
    "a process stopped after the step took this answer and before it saved the run; it was "
    "dropped, and the answer given now was applied instead")
_OWN = object()  # compile(): use the store's checkpointer


class Canal:
    """Start, advance, inspect and abort workflow runs; compile workflows into graphs.

    Every argument is optional and defaults as the CLI does (see ``canal.config``):
    ``workflows`` is the folder of workflow folders, ``home`` the state folder,
    ``checkpointer`` a URL (``sqlite:///...``, ``memory:``, ``postgresql://...``) or a
    LangGraph saver object (canal then keeps its registry, pinned definitions and call
    journal durably in ``<home>/canal.db`` beside it), ``mcp_config`` the ``.mcp.json``
    file, ``tools`` the ``ToolClient`` automated steps call (default: Python tools from
    ``canal.yaml``, then the MCP tools in the tool cache).
    """

    on_event: Callable[[dict[str, Any]], None] | None = None
    """Called with each tool event (``canal.nodes.events``) while ``start``, ``advance``,
    ``recover`` or ``abort`` runs, from the thread that called them (``canal run`` shows
    a progress line with it)."""

    def __init__(self, workflows: str | Path | None = None, home: str | Path | None = None,
                 checkpointer: Any = None, tools: ToolClient | None = None,
                 mcp_config: str | Path | None = None,
                 settings: Settings | None = None) -> None:
        self.settings = settings or load_settings(workflows=workflows, home=home,
                                                  checkpointer=checkpointer,
                                                  mcp_config=mcp_config)
        self.tool_cache = ToolCache(self.settings.home / "tools")
        # canal's own clients make every result storable (``json_plain``) where it enters;
        # a client passed in is held to the same at its door.
        # canal's own authoring tools (``canal.authoring.builtins``) need no configuration;
        # a Python tool of the same name in canal.yaml wins.
        python: dict[str, Any] = {**builtin_tools(self.settings.workflows, self.validate),
                  **self.settings.python_tools}
        self.tools: ToolClient = StorableResults(tools) if tools is not None else RoutedTools(
            PythonTools(python), self.tool_cache, self.settings.mcp_config, self.settings.logs)
        self.tool_commands = ToolCommands(self.settings, self.tool_cache,
                                          routes_tools=tools is None)
        self.retention = Retention(self)
        self._store: Store | None = None
        self._sealer: TextSealer | None = None
        self._graphs: dict[str, Any] = {}  # content digest -> graph on the store's saver
        self._loaded: dict[str, tuple[str, WorkflowSpec]] = {}  # folder -> (digest, spec)
        self.reader = Reader(self)

    # -- plumbing ----------------------------------------------------------------------

    @property
    def sealer(self) -> TextSealer:
        """canal's key: the home's (``CANAL_ENCRYPTION_KEY`` or ``<home>/key``), or for
        ``memory:`` state, which never leaves the process, a key that lives as long as
        this object."""
        if self._sealer is None:
            from canal.crypto import Sealer

            memory = self.settings.checkpointer in ("memory", "memory:", "memory://")
            self._sealer = Sealer.ephemeral() if memory else Sealer(self.settings.home)
        return self._sealer

    @property
    def store(self) -> Store:
        if self._store is None:
            self._store = open_store(self.settings.checkpointer, self.sealer,
                                     home=self.settings.home)
        return self._store

    def keep_tool_sessions(self) -> None:
        """Keep the tool servers' sessions open from one operation to the next, until
        ``close``: in a long-lived process (``canal serve``) each MCP tool server starts
        once, not once per operation. Without this, every operation ends its sessions."""
        self.tool_commands.keep_sessions()  # canal call's own
        if not isinstance(self.tools, HeldOpen):
            self.tools = HeldOpen(self.tools)
            self._graphs.clear()  # they were compiled with the client they call through

    def close(self) -> None:
        """Close the database connection and end the tool servers' sessions (the object can
        still be used; both reopen)."""
        if isinstance(self.tools, HeldOpen):
            self.tools.release()
        self.tool_commands.release()
        if self._store is not None:
            self._store.close()
            self._store = None
            self._graphs.clear()
            self.reader.clear()

    def __enter__(self) -> Canal:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def workflow(self, name: str) -> WorkflowSpec:
        """The validated spec of workflow ``name`` (WorkflowInvalid lists every problem)."""
        return load_workflow(workflow_dir(self.settings.workflows, name))

    def workflows(self) -> list[str]:
        return list_workflows(self.settings.workflows)

    def compile(self, workflow: str | WorkflowSpec, checkpointer: Any = _OWN) -> Any:
        """Workflow ``workflow`` as a LangGraph ``CompiledStateGraph`` that enforces every
        rule on its own (DESIGN.md §8): ``graph.invoke({}, config)`` starts a run,
        ``Command(resume=data)`` answers the step it pauses at, ``canal.ABORT`` aborts.

        The graph calls tools through this object's tool client and keeps its call journal
        in this object's store. ``checkpointer`` defaults to the store's saver; give
        ``None`` to nest the graph in a parent graph or serve it from LangGraph Server,
        which bring their own.
        """
        spec = self._load_and_pin(workflow) if isinstance(workflow, str) else workflow
        if checkpointer is _OWN:
            return self._graph(spec)
        from canal.graphs.compile import compile_graph

        return compile_graph(spec, self._deps(spec), checkpointer)

    def seal_answer(self, workflow: str, step: str, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` for ``step`` of ``workflow`` with its sensitive fields sealed, to send as
        ``Command(resume=...)`` through a checkpointer that does not encrypt: LangGraph keeps
        a resume value in the checkpointer's pending writes as it was sent."""
        from canal.nodes.sensitive import seal_fields

        return seal_fields(self.workflow(workflow).step(step).gate, data, self.sealer)

    def show(self, name: str) -> dict[str, Any]:
        """An overview of workflow ``name`` for choosing it before starting it
        (``canal.spec.overview``): its steps in order with their type and title, the gate
        fields each asks, the tool each automated step calls with its constant arguments
        and the arguments fed by earlier steps. Reads the workflow's files only: no tool
        cache, no server, no graph, no run. An invalid workflow raises ``WorkflowInvalid``
        listing every problem."""
        from canal.spec.overview import overview

        return overview(self.workflow(name))

    def graph(self, workflow: str) -> str:
        """The compiled graph of ``workflow`` as Mermaid text: exactly what runs."""
        from canal.graphs.compile import compile_graph

        spec = self.workflow(workflow)
        return compile_graph(spec, self._deps(spec)).get_graph().draw_mermaid()

    def validate(self, names: list[str] | None = None,
                 budget: int | None = None) -> list[dict[str, Any]]:
        """A report per workflow (default: every one, and every folder that leads outside the
        workflows folder, which is refused): ``{"workflow", "valid", "problems",
        "warnings"}``, checked against the tool cache too, with ``budget`` (tokens) the
        size of each step the agent reads (``canal.runtime.validation.reports``)."""
        from canal.runtime.validation import reports

        return reports(self.settings.workflows, names or self.workflows(),
                       self.tools.destructive, self.tool_commands, budget, every=not names)

    def new_workflow(self, name: str, description: str | None = None,
                     from_tool: str | None = None) -> dict[str, Any]:
        """Create workflow ``name`` in the workflows folder (``canal.authoring``): its
        ``WorkFlow.md`` only, or with ``from_tool`` a whole workflow that asks for the
        tool's fields (as ``meta`` shows them), calls it and reports its result."""
        from canal.authoring import new_workflow, tool_workflow

        if from_tool is None:
            return new_workflow(self.settings.workflows, name, description or "")
        check_name(name)
        meta = self.tool_commands.meta(from_tool)
        return tool_workflow(self.settings.workflows, name, description, meta["name"],
                             meta["description"] or "", meta["fields"])

    def add_step(self, workflow: str, step_id: str, kind: str, *, title: str | None = None,
                 fields: Iterable[str] = (), tool: str | None = None,
                 mapping: Iterable[str] = (), after: str | None = None) -> dict[str, Any]:
        """Write one step file into ``workflow`` (``canal.authoring.add_step``)."""
        from canal.authoring import add_step

        return add_step(self.settings.workflows, workflow, step_id, kind, title=title,
                        fields=fields, tool=tool, mapping=mapping, after=after)

    def _deps(self, spec: WorkflowSpec) -> Any:
        from canal.nodes.deps import Deps

        tools = self.tools
        if spec.servers is not None:
            from canal.tools.routed import FencedTools

            tools = FencedTools(tools, spec.servers, spec.name)
        return Deps(tools=tools, journal=self.store, registry=self.store, sealer=self.sealer)

    def _graph(self, spec: WorkflowSpec) -> Any:
        graph = self._graphs.get(spec.digest)
        if graph is None:
            from canal.graphs.compile import compile_graph

            graph = self._graphs[spec.digest] = compile_graph(spec, self._deps(spec),
                                                              self.store.saver())
        return graph

    def _load_and_pin(self, name: str) -> WorkflowSpec:
        """Load workflow ``name`` from disk and pin its files under their digest.

        The files are read every time, but parsed again only when their digest changed: a
        long-lived process (``canal serve``) starts runs without re-parsing YAML each time.
        """
        folder = workflow_dir(self.settings.workflows, name)
        files = workflow_files(folder)
        digest = digest_of(files)
        known = self._loaded.get(str(folder))
        if known is not None and known[0] == digest:
            spec = known[1]
        else:
            spec = load_files(name, files, str(folder))
            self._loaded[str(folder)] = (spec.digest, spec)
        self._pin(spec, files)
        return spec

    def _pin(self, spec: WorkflowSpec, files: Files) -> None:
        """Keep ``files``, the definition ``spec`` was loaded from, under its digest."""
        self.store.save_definition(spec.digest, spec.name, pinnable(files))

    def has_run(self, thread_id: str) -> bool:
        """Whether a run with this thread id exists (a start that never finished made none)."""
        return self.reader.has_run(thread_id)

    def values(self, thread_id: str) -> dict[str, Any]:
        """The latest state of run ``thread_id`` (RunNotFound when there is none)."""
        return self.reader.values(thread_id)

    def run(self, thread_id: str) -> tuple[WorkflowSpec, dict[str, Any]]:
        """The run's pinned definition and its latest state."""
        return self.reader.run(thread_id)

    def _invoke(self, spec: WorkflowSpec, thread_id: str, graph_input: Any) -> Envelope:
        """Send the graph one input; the envelope of where the run stops, with the tool
        calls this made."""
        from canal.runtime.log import head_id, run_log

        graph = self._graph(spec)
        since = head_id(self.store, thread_id)
        try:
            with _untraced_if_sensitive(spec):
                self._run_graph(graph, graph_input, config_of(thread_id))
        finally:
            self.tools.close()
        made = self.store.since(thread_id, since)  # newest first: the first is the head
        after = dict(made[0].checkpoint["channel_values"]) if made else self.values(thread_id)
        new = run_log(made, since)
        executed = [{**{k: v for k, v in e.items() if k not in ("kind", "at")},
                     **({"compensation": True} if e["kind"] == "compensate" else {})}
                    for e in new if e["kind"] in ("tool", "compensate")]
        return envelope_of(thread_id, spec, after, self.sealer, executed)

    def _run_graph(self, graph: Any, graph_input: Any, config: dict[str, Any]) -> None:
        """Run ``graph`` until it pauses or ends, handing each tool event
        (``canal.nodes.events``) to ``on_event`` as it happens when one is set. A listener
        that fails is logged and dropped: showing progress must never stop a run midway."""
        listener = self.on_event
        if listener is None:
            graph.invoke(graph_input, config, durability="sync")
            return
        for event in graph.stream(graph_input, config, stream_mode="custom", durability="sync"):
            if listener is None:
                continue
            try:
                listener(event)
            except Exception:  # the boundary: the listener is the caller's code
                logging.getLogger("canal.runtime").warning(
                    "on_event listener failed; no more tool events this operation",
                    exc_info=True)
                listener = None

    def _park(self, spec: WorkflowSpec, thread_id: str, values: dict[str, Any]) -> None:
        """Park a run whose process died mid-step at that step's recovery node, so the
        answer a person gives now goes the ordinary way."""
        from canal.nodes.automated import parked

        step = spec.step(values["cursor"])
        attempt = (values.get("attempts") or {}).get(step.id, 0)
        command, as_node = parked(step, thread_id, attempt,
                                  verifying=values.get("verifying") == step.id)
        self._graph(spec).update_state(config_of(thread_id), command, as_node=as_node)

    def _drop_unsaved(self, spec: WorkflowSpec, thread_id: str,
                      head: Any) -> dict[str, Any] | None:
        """Drop what a process that died between a node's writes and the next checkpoint
        left on ``head`` (``canal.runtime.log.unsaved``), so the answer given now is the one
        applied; what was dropped, described, or None. The latest checkpoint is copied
        without its pending writes (LangGraph's ``as_node="__copy__"``); the call journal
        keeps every tool outcome, so a call that node made is replayed, never lost or sent
        twice."""
        left = unsaved(head)
        if left is None:
            return None
        self._graph(spec).update_state(config_of(thread_id), None, as_node="__copy__")
        return {**left, "dropped": True, "note": UNSAVED_DROPPED}

    # -- operations --------------------------------------------------------------------

    def start(self, name: str, thread_id: str | None = None) -> Envelope:
        """Create a run of workflow ``name`` and run it to its first pause.

        All or nothing, as a user sees it: a start that fails before the run's first state
        is saved (a database error, a pool timeout, a bad key) takes its registration back,
        and one whose process dies there leaves a thread id that names no run (``values``)
        and that this method takes again.
        """
        thread_id = check_name(thread_id, "thread") if thread_id else _new_thread_id(name)
        spec = self._load_and_pin(name)
        self._reclaim(thread_id)
        with self.store.lock(thread_id):
            if self.store.lookup(thread_id) is not None:
                raise ThreadTaken(f"thread id {thread_id!r} is already taken",
                                  thread_id=thread_id)
            try:
                return self._invoke(spec, thread_id, {})
            except BaseException:
                with contextlib.suppress(Exception):  # the first error is the one to report
                    if self.reader.latest(thread_id) is None:
                        self.store.forget(thread_id)
                raise

    def _reclaim(self, thread_id: str) -> None:
        """Free a thread id that a start which never finished left registered."""
        if self.store.lookup(thread_id) is None or self.reader.latest(thread_id) is not None:
            return
        with self.store.lock(thread_id):  # a start under way holds it: RunConflict
            if self.store.lookup(thread_id) is not None and self.reader.latest(thread_id) is None:
                self.store.forget(thread_id)

    def advance(self, thread_id: str, data: Any = None, step: str | None = None) -> Envelope:
        """Submit ``data`` for the current step.

        The data is checked against the step's gate first; a rejection returns status
        ``rejected`` and changes nothing. Accepted data is stored and every following
        automated step runs until the next pause or the end. With ``step``, the data is
        meant for that step only: if the run has moved on (another session or worker
        advanced it), the answer is status ``stale`` and nothing changes.
        """
        from langgraph.types import Command

        from canal.nodes.base import resume_value
        from canal.nodes.sensitive import seal_fields

        data = self._submission(data)
        with self._writer(thread_id):
            spec, values, head = self.reader.at_head(thread_id)
            self._ensure_open(thread_id, values)
            if step is not None and step != values["cursor"]:
                env = envelope_of(thread_id, spec, values, self.sealer)
                env.status = "stale"
                env.errors = [{"code": "stale", "message": f"the data is for step {step!r} but "
                               f"the run is at step {values['cursor']!r}; nothing was applied",
                               "field": ""}]
                if env.next is not None:
                    env.next["hint"] = ("the run has moved on: read step, and answer it "
                                        "if your data still fits")
                return env
            gate, check, rejected = self._check(thread_id, spec, values, data)
            if rejected is not None:
                return rejected
            dropped = self._drop_unsaved(spec, thread_id, head)
            if stopped_mid_step(spec, values):
                self._park(spec, thread_id, values)
            answer = resume_value(seal_fields(gate, check.data, self.sealer))
            env = self._invoke(spec, thread_id, Command(resume=answer))
            env.dropped, env.unsaved = check.dropped, dropped
            return env

    def plan(self, thread_id: str, data: Any = None) -> dict[str, Any]:
        """A dry run of ``advance(thread_id, data)`` (``canal.runtime.plan``): the data is
        checked as ``advance`` checks it (a rejection is the same ``rejected`` envelope, as
        JSON), and the answer lists the calls that ``advance`` would make, in order, and
        the step it would stop at. Reads only: it calls no tool, starts no server, takes
        no lock and changes nothing."""
        from canal.runtime.plan import plan_of

        data = self._submission(data)
        spec, values = self.reader.run(thread_id)
        self._ensure_open(thread_id, values)
        gate, check, rejected = self._check(thread_id, spec, values, data)
        if rejected is not None:
            return rejected.to_json()
        document = plan_of(thread_id, spec, values, gate, check.data, self.sealer,
                           self.tool_commands.hints, argument_check(self.tools))
        document["dropped"] = check.dropped
        document["next"] = {"command": "advance", "thread_id": thread_id,
                            "step": values["cursor"],
                            "hint": "advance with the same data makes these calls; plan "
                                    "changed nothing"}
        return document

    def rewind(self, thread_id: str, step: str) -> Envelope:
        """Take the run back to the earlier interactive ``step``, to answer it again
        (``canal.nodes.rewind``): at any pause, when no step since then completed a call
        that is not read-only; otherwise ``RewindRefused`` says why (and which
        compensations an abort would run) and nothing changes. The abandoned attempt stays
        in the history. Runs no node and calls no tool: the run waits at ``step``."""
        from langgraph.types import Command

        from canal.errors import RewindRefused
        from canal.nodes.begin import where
        from canal.nodes.rewind import read_only_of, rewind_problem, rewound

        with self._writer(thread_id):
            spec, values, head = self.reader.at_head(thread_id)
            self._ensure_open(thread_id, values)
            problem = rewind_problem(spec, values, step, read_only_of(self.tools))
            if problem is not None:
                raise RewindRefused(problem, thread_id=thread_id, step=step)
            self._drop_unsaved(spec, thread_id, head)
            back = Command(goto=step, update=rewound(spec, values, step, "rewind"))
            # As migrate does: the update is made as by the node the run waits at, so the
            # next answer goes to ``step``; nothing runs now.
            self._graph(spec).update_state(config_of(thread_id), back, as_node=where(values))
        return self.current(thread_id)

    def _edit_problem(self, spec: WorkflowSpec, values: dict[str, Any],
                      step: str | None) -> str | None:
        """Why an ``edit`` answer to the failed step the run is at cannot go back."""
        from canal.nodes.rewind import read_only_of, rewind_problem, source_step

        target = step or source_step(spec, values["cursor"])
        return rewind_problem(spec, values, target, read_only_of(self.tools))

    def current(self, thread_id: str) -> Envelope:
        """Where the run stands: its step, what is done, what is still to be collected."""
        spec, values, head = self.reader.at_head(thread_id)
        env = envelope_of(thread_id, spec, values, self.sealer,
                          stopped=self.reader.stopped(thread_id, spec, values))
        env.completed = completed_steps(spec, values)
        left = unsaved(head)
        if left is not None:
            env.unsaved = {**left, "dropped": False, "note": UNSAVED_PENDING}
        if env.status == "awaiting_input":
            env.missing = missing_fields(gate_of(spec, values))
        _, files = self.reader.on_disk(spec.name)
        on_disk = digest_of(files) if files else None
        env.definition = {"digest": spec.digest, "on_disk": on_disk,
                          "changed": on_disk != spec.digest}
        return env

    def recover(self, thread_id: str) -> Envelope:
        """Continue a run whose process died during an automated step, as far as is safe.

        The graph goes on from its latest checkpoint (LangGraph's ``invoke(None)``): a call
        whose outcome was journaled is replayed, one never sent is sent, one in flight is
        sent again only when the tool is safe to repeat; otherwise the step parks as
        ``failed`` ("may or may not have happened") for a person to decide. A run that did
        not stop mid-step is returned as it is.
        """
        with self._writer(thread_id):
            spec, values = self.run(thread_id)
            if values.get("compensating"):  # aborted, but its compensations were cut short
                return self._invoke(spec, thread_id, None)
            self._ensure_open(thread_id, values)
            if not stopped_mid_step(spec, values):
                return envelope_of(thread_id, spec, values, self.sealer)
            return self._invoke(spec, thread_id, None)

    def migrate(self, thread_id: str) -> Envelope:
        """Move a run onto the definition now on disk, when that is safe for where it stands.

        Safe means: the steps already done are unchanged (id, type, gate, automation) and
        the step the run waits at is still the next one; bodies may change freely. Anything
        else raises ``MigrationRefused`` with every reason, and changes nothing.

        Migrating only moves the run: it runs no node and calls no tool (the next
        ``advance`` or ``recover`` does). A confirmation the run is waiting for stays asked
        even if the new definition no longer asks for it, so a call is never made without
        the answer the run is waiting for.
        """
        from langgraph.types import Command

        from canal.errors import MigrationRefused
        from canal.nodes.base import entry, recovery_node
        from canal.nodes.begin import confirm_steps
        from canal.nodes.view import awaiting_confirmation
        from canal.runtime.migrate import migration_problems

        with self._writer(thread_id):
            old, values = self.run(thread_id)
            self._ensure_open(thread_id, values)
            folder, files = self.reader.on_disk(old.name)
            if folder is None:
                raise WorkflowNotFound(f"no workflow {old.name!r} in {self.settings.workflows}",
                                       workflow=old.name)
            new = load_files(old.name, files, str(folder))
            if new.digest == old.digest:
                return self.current(thread_id)
            reasons = migration_problems(old, new, values)
            if reasons:
                raise MigrationRefused(thread_id, reasons)
            self._pin(new, files)
            cursor = values["cursor"]
            waiting = recovery_node(cursor) if values.get("status") == "failed" else cursor
            confirm = confirm_steps(new, self._deps(new))
            if awaiting_confirmation(values) and cursor not in confirm:
                confirm.append(cursor)
            move = Command(goto=waiting, update={
                "digest": new.digest, "confirm_steps": confirm,
                "log": [entry("migrate", cursor, **{"from": old.digest, "to": new.digest})]})
            # The waiting node runs on the next answer (LangGraph hands a resume value to
            # the first interrupt the node raises): nothing runs now.
            self._graph(new).update_state(config_of(thread_id), move, as_node=waiting)
        return self.current(thread_id)

    def abort(self, thread_id: str) -> Envelope:
        """Stop the run wherever it is; it cannot be advanced afterwards."""
        from langgraph.types import Command

        from canal.nodes.base import ABORT

        with self._writer(thread_id):
            spec, values, head = self.reader.at_head(thread_id)
            self._ensure_open(thread_id, values)
            dropped = self._drop_unsaved(spec, thread_id, head)
            if stopped_mid_step(spec, values):
                self._park(spec, thread_id, values)
            env = self._invoke(spec, thread_id, Command(resume=ABORT))
            env.unsaved = dropped
            return env

    # -- async forms: the same operations, run in a worker thread ------------------------

    async def astart(self, name: str, thread_id: str | None = None) -> Envelope:
        """``start`` without blocking the event loop (it runs in a worker thread)."""
        return await asyncio.to_thread(self.start, name, thread_id)

    async def aadvance(self, thread_id: str, data: Any = None,
                       step: str | None = None) -> Envelope:
        """``advance`` without blocking the event loop (it runs in a worker thread)."""
        return await asyncio.to_thread(self.advance, thread_id, data, step)

    def runs(self) -> list[dict[str, Any]]:
        """Every run: thread id, workflow, status, current step, creation and update times
        (``Reader.runs``)."""
        return self.reader.runs()

    # -- the services, as facade methods ------------------------------------------------

    def history(self, thread_id: str) -> dict[str, Any]:
        return self.retention.history(thread_id)

    def prune(self, older_than: timedelta, include_waiting: bool = False,
              now: datetime | None = None) -> dict[str, Any]:
        return self.retention.prune(older_than, include_waiting, now)

    def discover(self) -> dict[str, Any]:
        return self.tool_commands.discover()

    def index(self, full: bool = False) -> dict[str, Any]:
        return self.tool_commands.index(full)

    def search(self, query: str, limit: int = 5) -> dict[str, Any]:
        """The workflows and tools that best match ``query`` (``ToolCommands.search``)."""
        return self.tool_commands.search(query, limit)

    def meta(self, tool: str, required_only: bool = False) -> dict[str, Any]:
        return self.tool_commands.meta(tool, required_only)

    def call(self, tool: str, arguments: Any, confirm: bool = False) -> dict[str, Any]:
        return self.tool_commands.call(tool, arguments, confirm)

    def as_tools(self, include: Iterable[str] | None = None) -> list[BaseTool]:
        """canal's commands as LangChain tools for an agent (``canal.runtime.agent_tools``):
        ``workflows``, ``show``, ``index``, ``search``, ``meta``, ``start``, ``advance``,
        ``plan``, ``current``, ``runs``, ``rewind`` and ``abort``, or the ones ``include``
        names (``call`` too)."""
        from canal.runtime.agent_tools import agent_tools

        return agent_tools(self, include)

    # -- helpers -----------------------------------------------------------------------

    def _writer(self, thread_id: str) -> Any:
        """The run's writer lock, taken only for a run that exists (so an unknown thread id
        leaves nothing behind); state is read after the lock is held, so an advance applies
        to the step that is current when it begins."""
        check_name(thread_id, "thread")
        if self.store.lookup(thread_id) is None:
            raise RunNotFound(f"no run with thread id {thread_id!r}", thread_id=thread_id)
        return self.store.lock(thread_id)

    def _submission(self, data: Any) -> Any:
        """Submitted data as JSON-plain data within the limits (``{}`` for none)."""
        data = json_plain_data({} if data is None else data)
        check_limits(data, "the submitted data", self.settings.limits)
        return data

    def _check(self, thread_id: str, spec: WorkflowSpec, values: dict[str, Any],
               data: Any) -> tuple[dict[str, FieldSpec], Checked, Envelope | None]:
        """The gate the run takes now, ``data`` checked against it, and the ``rejected``
        envelope when the data does not pass (None when it does): ``advance`` and ``plan``
        check and reject alike."""
        gate = gate_of(spec, values)
        check = check_gate(gate, data)
        if check.accepted and check.data.get("action") == "edit" and "action" in gate:
            problem = self._edit_problem(spec, values, check.data.get("step"))
            if problem is not None:
                check.errors.append({"code": "rewind_refused", "field": "action",
                                     "message": problem})
        if check.accepted:
            return gate, check, None
        env = envelope_of(thread_id, spec, values, self.sealer)
        env.status, env.errors = "rejected", check.errors
        env.missing, env.dropped = check.missing, check.dropped
        if env.next is not None:
            env.next["hint"] = ("nothing was applied: fix the fields in errors and missing, "
                                "and submit the whole data again")
        return gate, check, env

    @staticmethod
    def _ensure_open(thread_id: str, values: dict[str, Any]) -> None:
        if values.get("status") in FINISHED:
            raise RunStateError(f"run {thread_id!r} is {values['status']}; it cannot change "
                                "any more", thread_id=thread_id, status=values["status"])


def _untraced_if_sensitive(spec: WorkflowSpec) -> Any:
    """No LangSmith tracing for a workflow with sensitive fields run through the facade: a
    trace carries every input and output. Other workflows trace as the environment says."""
    import contextlib

    if not any(f.sensitive for step in spec.steps for f in step.gate.values()):
        return contextlib.nullcontext()
    from langsmith.run_helpers import tracing_context

    return tracing_context(enabled=False)


def _new_thread_id(workflow: str) -> str:
    return f"{workflow[:40]}-{secrets.token_hex(6)}"
