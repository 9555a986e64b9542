"""The reading service of the ``Canal`` facade: a run's latest state, its pinned definition,
the list of runs, and why a run stopped mid-step.

It reads canal's tables and the latest checkpoints only, so the read-only commands
(``current``, ``runs``) never import LangGraph's graph engine or the MCP client.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from canal.checkpoints import Store
from canal.config import Settings
from canal.errors import CanalError, RunConflict, RunNotFound, WorkflowInvalid, WorkflowNotFound
from canal.nodes.failure import STOPPED
from canal.nodes.keys import call_key, safe_to_repeat
from canal.nodes.view import stopped_mid_step
from canal.runtime.envelope import envelope_of
from canal.spec.loader import Content, check_name, digest_of, workflow_dir, workflow_files
from canal.spec.models import WorkflowSpec
from canal.spec.validate import load_files
from canal.tools.client import ToolClient


class Host(Protocol):
    """What the reader needs of ``Canal``."""

    settings: Settings
    tools: ToolClient

    @property
    def store(self) -> Store: ...


def config_of(thread_id: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread_id}}


class Reader:
    """Runs as their checkpoints and canal's tables hold them."""

    def __init__(self, host: Host) -> None:
        self.host = host
        self._specs: dict[str, WorkflowSpec] = {}  # content digest -> pinned definition

    def clear(self) -> None:
        """Forget the definitions read so far (the store was closed)."""
        self._specs.clear()

    def has_run(self, thread_id: str) -> bool:
        """Whether a run with this thread id exists (a start that never finished made none)."""
        return (self.host.store.lookup(check_name(thread_id, "thread")) is not None
                and self.latest(thread_id) is not None)

    def values(self, thread_id: str) -> dict[str, Any]:
        """The latest state of run ``thread_id`` (RunNotFound when there is none)."""
        return dict(self.head(thread_id).checkpoint["channel_values"])

    def head(self, thread_id: str) -> Any:
        """The run's latest ``CheckpointTuple``, its pending writes included (RunNotFound
        when there is none).

        A thread id registered by a start that never saved the run's first state (it
        failed, or its process died, in between) names no run: every command answers
        RunNotFound, ``runs`` leaves it out, ``start`` may take the id again and ``prune``
        removes it."""
        check_name(thread_id, "thread")
        if self.host.store.lookup(thread_id) is None:
            raise RunNotFound(f"no run with thread id {thread_id!r}", thread_id=thread_id)
        found = self._head(thread_id)
        if found is None:
            raise RunNotFound(f"no run with thread id {thread_id!r}: its start did not finish "
                              "(start it again, or prune removes it)", thread_id=thread_id)
        return found

    def latest(self, thread_id: str) -> dict[str, Any] | None:
        """The thread's latest checkpoint, or None when no start got as far as saving the
        run's first state."""
        found = self._head(thread_id)
        return dict(found.checkpoint) if found is not None else None

    def _head(self, thread_id: str) -> Any:
        found = self.host.store.head(thread_id)
        if found is None or not found.checkpoint["channel_values"].get("workflow"):
            return None
        return found

    def run(self, thread_id: str) -> tuple[WorkflowSpec, dict[str, Any]]:
        """The run's pinned definition and its latest state."""
        spec, values, _ = self.at_head(thread_id)
        return spec, values

    def at_head(self, thread_id: str) -> tuple[WorkflowSpec, dict[str, Any], Any]:
        """The run's pinned definition, its latest state and the checkpoint tuple that holds
        it (with the writes a dead process may have left: ``canal.runtime.log.unsaved``),
        from one read."""
        found = self.head(thread_id)
        values = dict(found.checkpoint["channel_values"])
        return self.pinned(thread_id, values), values, found

    def pinned(self, thread_id: str, values: dict[str, Any]) -> WorkflowSpec:
        """The definition the run started with (or migrated to), never another one.

        A run saved before definitions were pinned (or whose pinned copy is gone) uses the
        files on disk only while they are exactly that definition (same content digest).
        """
        digest, name = values["digest"], values["workflow"]
        spec = self._specs.get(digest)
        if spec is None:
            files = self.host.store.definition(digest)
            if files is not None:
                spec = load_files(name, {k: v.encode() for k, v in files.items()},
                                  f"pinned {digest}")
            else:
                folder, on_disk = self.on_disk(name)
                if folder is None or digest_of(on_disk) != digest:
                    raise WorkflowNotFound(
                        f"run {thread_id!r} needs the definition of workflow {name!r} it "
                        f"started with ({digest}), which is no longer saved, and the one in "
                        f"{self.host.settings.workflows} differs or is gone; put back the "
                        "files the run started with", workflow=name, thread_id=thread_id)
                spec = load_files(name, on_disk, str(folder))
            self._specs[digest] = spec
        return spec

    def on_disk(self, name: str) -> tuple[Path | None, dict[str, Content]]:
        """Workflow ``name``'s folder and files as they are on disk now (None, {} if gone)."""
        try:
            folder = workflow_dir(self.host.settings.workflows, name)
        except WorkflowNotFound:
            return None, {}
        return folder, workflow_files(folder)

    def runs(self) -> list[dict[str, Any]]:
        """Every run: thread id, workflow, status, current step, creation and update times.

        Each status is read against the run's pinned definition (``unknown`` when that is
        gone); a start that never finished is not a run and is not listed."""
        out = []
        for record in self.host.store.records():
            checkpoint = self.latest(record.thread_id)
            if checkpoint is None:
                continue
            values = checkpoint["channel_values"]
            status = values.get("status", "unknown")
            if status == "running":
                try:
                    spec = self.pinned(record.thread_id, values)
                except (WorkflowNotFound, WorkflowInvalid):
                    status = "unknown"
                else:
                    status = envelope_of(record.thread_id, spec, values, None).status
            out.append({"thread_id": record.thread_id, "workflow": record.workflow,
                        "status": status, "step": values.get("cursor"),
                        "created_at": record.created_at,
                        "updated_at": checkpoint["ts"]})
        return out

    def stopped(self, thread_id: str, spec: WorkflowSpec, values: dict[str, Any]) -> str:
        """Why a run that stopped mid-step stands where it does, from the call journal; or,
        when another process holds the run's lock, that it has not stopped but is running
        there (another server or CLI process on the same store)."""
        if not stopped_mid_step(spec, values):
            return STOPPED["unknown"]
        if self._held_elsewhere(thread_id):
            return STOPPED["running"]
        step = spec.step(values["cursor"])
        if values.get("verifying") == step.id:
            return STOPPED["verifying"]
        key = call_key(thread_id, step.id, (values.get("attempts") or {}).get(step.id, 0))
        known = self.host.store.call_record(thread_id, key)
        if known is None:
            return STOPPED["not_sent"]
        if known["outcome"] is not None:
            return STOPPED["finished"]
        assert step.automation is not None
        if safe_to_repeat(step.automation.tool, step.automation.idempotent, self.host.tools):
            return STOPPED["safe"]
        return STOPPED["in_flight"]

    def _held_elsewhere(self, thread_id: str) -> bool:
        """Whether a writer holds the run's lock right now. Only asked of a run that stands
        mid-step, which no writer of this process leaves behind while ``current`` runs."""
        try:
            with self.host.store.lock(thread_id):
                return False
        except RunConflict:
            return True
        except (CanalError, OSError):  # cannot probe it (read-only state): the journal decides
            return False
