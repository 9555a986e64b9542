"""The history and retention service of the ``Canal`` facade: ``history`` and ``prune``."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any, Protocol

from canal.checkpoints import Store
from canal.errors import RunConflict, UsageError
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
    return timedelta(**{_UNITS[match[2]]: int(match[1])})


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
        (submitted data, tool arguments, results, errors, attempts and tries)."""
        from canal.nodes.sensitive import redact, secrets_of

        spec, values = self.reader.run(thread_id)
        return redact({"status": "ok", "thread_id": thread_id, "workflow": values.get("workflow"),
                       "run_status": values.get("status"),
                       "entries": list(values.get("log") or [])},
                      secrets_of(spec, values, self.reader.sealer))

    def prune(self, older_than: timedelta, include_waiting: bool = False,
              now: datetime | None = None) -> dict[str, Any]:
        """Remove completed and aborted runs last changed before ``older_than`` ago (and,
        only when asked, unfinished ones too), then the definitions no run uses any more."""
        cutoff = (now or datetime.now(UTC)) - older_than
        removed, skipped, checkpoints = [], [], 0
        store = self.reader.store
        for run in self.reader.runs():
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
        keep = {str(self.reader.values(r["thread_id"]).get("digest"))
                for r in self.reader.runs()}
        definitions = store.drop_definitions(keep)
        return {"status": "ok", "count": len(removed), "removed": removed,
                "checkpoints_removed": checkpoints, "definitions_removed": definitions,
                "kept_unfinished": skipped}
