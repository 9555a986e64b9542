"""The history and retention half of the ``Canal`` facade: ``history`` and ``prune``."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone
from typing import Any

from canal.errors import RunConflict, UsageError

_AGE = re.compile(r"(\d+)([smhdw])")
_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days", "w": "weeks"}


def parse_age(text: str) -> timedelta:
    """``90s``, ``15m``, ``12h``, ``30d`` or ``2w`` as a timedelta."""
    match = _AGE.fullmatch(text.strip())
    if not match:
        raise UsageError(f"age {text!r} is not a number with a unit (s, m, h, d, w), "
                         "e.g. 30d")
    return timedelta(**{_UNITS[match[2]]: int(match[1])})


class Retention:
    """Mixed into ``Canal``; uses its store, run listing and locks."""

    def history(self, thread_id: str) -> dict[str, Any]:
        """Every transition of a run, oldest first: time, step, kind and what it carried
        (submitted data, tool arguments, results, errors, attempts and tries)."""
        from canal.runtime.redact import redact, secrets_of

        spec, values = self._run(thread_id)  # type: ignore[attr-defined]
        return redact({"status": "ok", "thread_id": thread_id, "workflow": values.get("workflow"),
                       "run_status": values.get("status"),
                       "entries": list(values.get("log") or [])}, secrets_of(spec, values))

    def prune(self, older_than: timedelta, include_waiting: bool = False,
              now: datetime | None = None) -> dict[str, Any]:
        """Remove completed and aborted runs last changed before ``older_than`` ago (and,
        only when asked, unfinished ones too), then the definitions no run uses any more."""
        cutoff = (now or datetime.now(timezone.utc)) - older_than
        removed, skipped, checkpoints = [], [], 0
        for run in self.runs():  # type: ignore[attr-defined]
            finished = run["status"] in ("completed", "aborted")
            updated = run["updated_at"] or run["created_at"]
            if datetime.fromisoformat(updated) >= cutoff:
                continue
            if not finished and not include_waiting:
                skipped.append(run["thread_id"])
                continue
            try:
                with self.store.lock(run["thread_id"]):  # type: ignore[attr-defined]
                    checkpoints += self.store.forget(run["thread_id"])  # type: ignore[attr-defined]
            except RunConflict:
                skipped.append(run["thread_id"])
                continue
            removed.append({k: run[k] for k in ("thread_id", "workflow", "status",
                                                "updated_at")})
        keep = {self._values(r["thread_id"]).get("digest")  # type: ignore[attr-defined]
                for r in self.runs()}  # type: ignore[attr-defined]
        definitions = self.store.drop_definitions(keep)  # type: ignore[attr-defined]
        return {"status": "ok", "count": len(removed), "removed": removed,
                "checkpoints_removed": checkpoints, "definitions_removed": definitions,
                "kept_unfinished": skipped}
