"""The history and retention service of the ``Canal`` facade: ``history`` and ``prune``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from canal.checkpoints import Store
from canal.errors import RunConflict, RunNotFound, UsageError
from canal.nodes.sensitive import TextSealer
from canal.spec.models import WorkflowSpec

_AGE = re.compile(r"([0-9]+)([smhdw])")  # ASCII digits: int() takes others, or fails
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_age(text: str) -> timedelta:
    """``90s``, ``15m``, ``12h``, ``30d`` or ``2w`` as a timedelta."""
    match = _AGE.fullmatch(text.strip())
    if not match:
        raise UsageError(f"age {text!r} is not a number with a unit (s, m, h, d, w), "
                         "e.g. 30d")
    try:
        return timedelta(**{_UNITS[match[2]]: int(match[1])})
    except (OverflowError, ValueError) as exc:  # past timedelta's range, or Python's digits
        raise UsageError(f"age {text[:40]!r} is more than {timedelta.max.days} days") from exc


class RunReader(Protocol):
    """What retention needs of the facade."""

    @property
    def store(self) -> Store: ...

    @property
    def sealer(self) -> TextSealer: ...

    def run(self, thread_id: str) -> tuple[WorkflowSpec, dict[str, Any]]: ...

    def values(self, thread_id: str) -> dict[str, Any]: ...

    def runs(self) -> list[dict[str, Any]]: ...


class Retention:
    """History and pruning over the runs ``reader`` sees."""

    def __init__(self, reader: RunReader) -> None:
        self.reader = reader

    def history(self, thread_id: str) -> dict[str, Any]:
        """Every transition of a run, oldest first: time, step, kind and what it carried
        (submitted data, tool arguments, results, errors, attempts and tries); one span per
        step (``canal.nodes.spans``), the step the run is at last, still open; and
        ``run_status`` in the words of its envelope (``awaiting_input``, ``failed``,
        ``completed``, ``aborted``)."""
        from canal.nodes.sensitive import masker_of
        from canal.nodes.spans import open_span
        from canal.nodes.view import view_of
        from canal.runtime.log import run_log, transitions

        spec, values = self.reader.run(thread_id)
        masker = masker_of(spec, values, self.reader.sealer).naming(thread_id)
        status = view_of(spec, values, None).status  # the envelope's word for it
        entries, spans = transitions(run_log(self.reader.store.since(thread_id, None)))
        current = open_span(spec, values)
        return masker.document({"status": "ok", "thread_id": thread_id,
                                "workflow": values.get("workflow"),
                                "run_status": status,
                                "entries": entries,
                                "spans": [*spans, *([current] if current else [])]})

    def prune(self, older_than: timedelta, include_waiting: bool = False,
              now: datetime | None = None) -> dict[str, Any]:
        """Remove completed and aborted runs last changed before ``older_than`` ago (and,
        only when asked, unfinished ones too), the thread ids of starts that never finished
        registered before then, and the definitions no run uses any more."""
        cutoff = (now or datetime.now(UTC)) - older_than
        removed, skipped, checkpoints = [], [], 0
        store = self.reader.store
        runs = self.reader.runs()
        for run in runs:
            finished = run["status"] in ("completed", "aborted")
            updated = run["updated_at"] or run["created_at"]
            if datetime.fromisoformat(updated) >= cutoff:
                continue
            if not finished and not include_waiting:
                skipped.append(run["thread_id"])
                continue
            try:
                with store.lock(run["thread_id"]):
                    checkpoints += store.forget(run["thread_id"])
            except RunConflict:
                skipped.append(run["thread_id"])
                continue
            removed.append({k: run[k] for k in ("thread_id", "workflow", "status",
                                                "updated_at")})
        unfinished = self._drop_unfinished_starts({r["thread_id"] for r in runs}, cutoff)
        definitions = store.drop_definitions(self._digests_in_use())
        return {"status": "ok", "count": len(removed), "removed": removed,
                "checkpoints_removed": checkpoints, "definitions_removed": definitions,
                "kept_unfinished": skipped, "unfinished_starts_removed": unfinished}

    def _drop_unfinished_starts(self, runs: set[str], cutoff: datetime) -> list[str]:
        """Forget thread ids registered before ``cutoff`` by starts that never saved a run
        (they failed or died in between; see ``Canal.values``), unless one is under way."""
        store, dropped = self.reader.store, []
        for record in store.records():
            if record.thread_id in runs or datetime.fromisoformat(record.created_at) >= cutoff:
                continue
            try:
                with store.lock(record.thread_id):
                    if self._is_run(record.thread_id):  # it got its state meanwhile
                        continue
                    store.forget(record.thread_id)
            except RunConflict:
                continue
            dropped.append(record.thread_id)
        return dropped

    def _is_run(self, thread_id: str) -> bool:
        try:
            self.reader.values(thread_id)
        except RunNotFound:
            return False
        return True

    def _digests_in_use(self) -> set[str]:
        keep = set()
        for run in self.reader.runs():
            try:
                keep.add(str(self.reader.values(run["thread_id"]).get("digest")))
            except RunNotFound:  # removed meanwhile
                continue
        return keep
