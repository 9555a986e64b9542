"""Masking: what canal shows instead of a sensitive value (``MASK``).

The one place that decides what is masked. A run's sensitive values are sealed in its
state leaf by leaf (``canal.nodes.sensitive``), so wherever a sensitive field's own value,
or a part of it, stands in what canal shows, there is a sealed token, and every token is
masked. Tool results, tool errors and text rendered from them are another matter: a tool
may echo a secret back. So in those *data* parts (``DATA_KEYS``: submitted data, tool
arguments, results, errors, messages) canal also looks for the secrets themselves:

* a string equal to a secret string (of any length), a list or object equal to a
  sensitive list or object, a long number (below) equal to a secret number;
* inside a text: every secret string of four or more characters, in its plain, JSON
  escaped (with and without ``ensure_ascii``) and Python ``repr`` forms; every long number;
  and the JSON and ``repr`` texts of every sensitive list or object (and every list or
  object inside one) that holds a string or a number.

Booleans and short or common numbers (fewer than six digits, fewer than three before the
trailing zeros, or one digit repeated) are never searched for: masking ``true`` or ``7``
wherever it appears would blank unrelated values. They are masked only where they stand as
the sensitive field's value. Shorter strings are masked only where they stand alone.

The document's own fields (thread id, workflow, status, step ids, flags, keys, counts...)
are never rewritten, and neither are the run's names (thread id, workflow, step ids, tool
names) inside a data text: a secret ``prod`` leaves ``deploy-prod-7`` alone wherever it
stands.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any

MASK = "********"
PREFIX = "canal:sealed:"
_TOKEN = re.compile(re.escape(PREFIX) + r"[A-Za-z0-9+/=:_-]+")
_MIN_TEXT = 4
_MIN_DIGITS = 6

# The keys of a document (an envelope, an interrupt, the history) whose values are data:
# what was submitted, sent to a tool or came back from one, and messages that may quote it.
DATA_KEYS = frozenset({"data", "arguments", "result", "error", "message", "expected",
                       "actual"})


def is_sealed(value: Any) -> bool:
    return isinstance(value, str) and value.startswith(PREFIX)


@dataclass(frozen=True)
class Masker:
    """Masks a run's secrets; build one with ``Masker.of``."""

    texts: tuple[str, ...] = ()          # searched for inside texts, longest first
    strings: frozenset[str] = frozenset()
    numbers: frozenset[float] = frozenset()
    wholes: frozenset[str] = frozenset()  # canonical JSON of sensitive lists and objects
    names: tuple[str, ...] = ()           # the run's names, never rewritten inside a text

    @classmethod
    def of(cls, secrets: Iterable[Any], names: Iterable[str] = ()) -> Masker:
        """A masker for the (opened) values of a run's sensitive fields."""
        texts: set[str] = set()
        strings: set[str] = set()
        numbers: set[float] = set()
        wholes: set[str] = set()
        for secret in secrets:
            for leaf in leaves(secret):
                if isinstance(leaf, str):
                    strings.add(leaf)
                    if len(leaf) >= _MIN_TEXT:
                        texts.update(_string_forms(leaf))
                elif _searchable(leaf):
                    numbers.add(leaf)
                    texts.add(json.dumps(leaf, allow_nan=False))
            for part in _containers(secret):
                if any(isinstance(x, str) or _number(x) for x in leaves(part)):
                    wholes.add(_canonical(part))
                    texts.update(f for f in _container_forms(part) if len(f) >= _MIN_TEXT)
        strings.discard("")
        return cls(tuple(sorted(texts, key=len, reverse=True)), frozenset(strings),
                   frozenset(numbers), frozenset(wholes), tuple(n for n in names if n))

    def naming(self, *names: str) -> Masker:
        """This masker, with more names it never rewrites inside a text."""
        return replace(self, names=self.names + tuple(n for n in names if n))

    def document(self, document: Any) -> Any:
        """``document`` (an envelope, an interrupt, the history) with its data parts masked
        and every sealed token masked; its own fields stay as they are. A new object."""

        def walk(value: Any, data: bool) -> Any:
            if data:
                return self.value(value)
            if is_sealed(value):
                return MASK
            if isinstance(value, Mapping):
                return {k: walk(v, k in DATA_KEYS) for k, v in value.items()}
            if isinstance(value, (list, tuple)):
                return [walk(v, False) for v in value]
            return value

        return walk(document, False)

    def value(self, value: Any) -> Any:
        """A data value with every secret in it masked (a new object; keys stay)."""
        if isinstance(value, str):
            return self.text(value)
        if _number(value):
            return MASK if value in self.numbers else value
        if isinstance(value, (Mapping, list, tuple)):
            if self.wholes and _canonical(value) in self.wholes:
                return MASK
            if isinstance(value, Mapping):
                return {k: self.value(v) for k, v in value.items()}
            return [self.value(v) for v in value]
        return value

    def text(self, text: str) -> str:
        """A data text with every secret and sealed token in it masked."""
        if text in self.strings:
            return MASK
        if PREFIX in text:
            text = _TOKEN.sub(MASK, text)
        spans = [span for secret in self.texts for span in _find(text, secret)]
        if not spans:
            return text
        kept = [span for name in self.names for span in _find(text, name)]
        spans = sorted(s for s in spans if not any(k[0] <= s[0] and s[1] <= k[1] for k in kept))
        out, pos = [], 0
        for start, end in spans:
            if start < pos:  # overlaps the mask before it: widen that one
                pos = max(pos, end)
                continue
            out += [text[pos:start], MASK]
            pos = end
        out.append(text[pos:])
        return "".join(out)


def _find(text: str, needle: str) -> Iterator[tuple[int, int]]:
    start = text.find(needle)
    while start >= 0:
        yield start, start + len(needle)
        start = text.find(needle, start + 1)


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _searchable(value: Any) -> bool:
    """A long, uncommon number: one that is looked for inside texts."""
    if not _number(value):
        return False
    digits = "".join(c for c in json.dumps(value, allow_nan=False) if c.isdigit())
    return (len(digits) >= _MIN_DIGITS and len(digits.strip("0")) >= 3
            and len(set(digits)) > 1)


def leaves(value: Any) -> Iterator[Any]:
    """Every value inside ``value`` that is not a list or an object."""
    if isinstance(value, Mapping):
        for item in value.values():
            yield from leaves(item)
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from leaves(item)
    else:
        yield value


def _containers(value: Any) -> Iterator[Any]:
    if isinstance(value, (Mapping, list, tuple)):
        yield value
        for item in value.values() if isinstance(value, Mapping) else value:
            yield from _containers(item)


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str,
                      allow_nan=False)


def _string_forms(text: str) -> set[str]:
    """A secret text as it appears in JSON (escaped, ASCII or not) and in a Python repr."""
    return {text, json.dumps(text, allow_nan=False)[1:-1],
            json.dumps(text, ensure_ascii=False, allow_nan=False)[1:-1], repr(text)[1:-1]}


def _container_forms(value: Any) -> set[str]:
    """A list or object as text: canal's rendering (compact JSON, not ASCII-escaped), the
    other JSON spellings, and the Python repr."""
    return {json.dumps(value, ensure_ascii=ascii, separators=separators, default=str,
                       allow_nan=False)
            for ascii in (False, True) for separators in ((",", ":"), (", ", ": "))} | {
        repr(value)}
