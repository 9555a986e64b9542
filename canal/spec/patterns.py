"""Gate ``pattern`` regular expressions, bounded in time.

A pattern is written by a workflow's author and searched in a value an agent sends, while
the run's lock is held. A backtracking engine can take exponential time on some patterns
(``^(a|a)*$`` against ``aaa...ab``), so patterns run on the ``regex`` package, which can
stop a search after ``PATTERN_SECONDS``. Its syntax is Python's ``re`` syntax (``regex``'s
version 0); ``validate`` compiles each pattern with the same engine that runs it.
"""

from __future__ import annotations

import regex

PATTERN_SECONDS = 1.0


class PatternTimeout(Exception):
    """The search took longer than ``PATTERN_SECONDS``."""


def pattern_error(pattern: str) -> str | None:
    """Why ``pattern`` is not a regular expression canal can run, or None."""
    try:
        regex.compile(pattern)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        return str(exc)
    return None


def pattern_found(pattern: str, value: str) -> bool:
    """Whether ``pattern`` is found in ``value`` (JSON Schema semantics: a search, not a full
    match); PatternTimeout when that takes longer than ``PATTERN_SECONDS``."""
    try:
        return regex.search(pattern, value, timeout=PATTERN_SECONDS) is not None
    except TimeoutError as exc:
        raise PatternTimeout(pattern) from exc
