"""The ``{{gate.<step>.<field>}}`` / ``{{result.<step>.<path>}}`` template language.

Parsing lives here, beside the spec, because the static validator checks every reference
before a workflow runs; resolution lives here too because it is the same grammar read the
other way. Both are pure functions of strings and JSON-plain data.

Rules (documented in the README's format reference):

* A string that is exactly one reference (surrounding blanks allowed) resolves to the
  referenced value with its JSON type: ``"{{gate.s.count}}"`` gives ``3``, not ``"3"``.
* A reference inside a longer string is interpolated as text; strings go in as they are,
  other values as compact JSON.
* Resolution is one pass: text that comes out of a value is never scanned again, so data
  that looks like a template (``"{{result.x.y}}"`` typed by a user) travels verbatim.
* Paths go into objects by key and into lists by index: ``result.s.items[0].id`` or
  ``result.s.items.0.id``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from canal.errors import TemplateError

NAMESPACES = ("gate", "result")
_REFERENCE = re.compile(
    r"^(?P<ns>[A-Za-z_]\w*)\.(?P<step>[A-Za-z0-9_][\w-]*)(?P<path>(?:\.[\w-]+|\[[0-9]+\])*)$"
)
_SEGMENT = re.compile(r"\.([\w-]+)|\[([0-9]+)\]")  # indexes: ASCII digits only
_PATH = re.compile(r"^(?:[\w-]+|\[[0-9]+\])(?:\.[\w-]+|\[[0-9]+\])*$")


@dataclass(frozen=True)
class Reference:
    """One parsed ``{{...}}``: namespace, step id and the path below the step."""

    text: str
    namespace: str
    step: str
    path: tuple[str | int, ...]
    start: int
    end: int


@dataclass(frozen=True)
class Malformed:
    """A piece of text that looks like a template but does not parse."""

    text: str
    message: str


class _Missing:
    """The value of an optional gate field that was not submitted."""

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


@dataclass(frozen=True)
class Pending:
    """What a dry run's lookup gives for a value not produced yet (``canal plan``): inside
    text it reads as its reference, and ``pending_as_text`` turns a resolved value's
    Pending parts back into their template text."""

    text: str


def pending_as_text(value: Any) -> Any:
    """``value`` with every Pending replaced by its reference's text."""
    if isinstance(value, Pending):
        return value.text
    if isinstance(value, Mapping):
        return {k: pending_as_text(v) for k, v in value.items()}
    if isinstance(value, list):
        return [pending_as_text(v) for v in value]
    return value


def scan(text: str) -> Iterator[Reference | Malformed]:
    """Every reference in ``text`` in order, and a Malformed for each broken one.

    A workflow's templates are few and rendered at every step, so each text is parsed once
    per process (the parts are frozen)."""
    return iter(_scanned(text))


@lru_cache(maxsize=4096)
def _scanned(text: str) -> tuple[Reference | Malformed, ...]:
    return tuple(_scan(text))


def _scan(text: str) -> Iterator[Reference | Malformed]:
    pos = 0
    while True:
        start = text.find("{{", pos)
        if start < 0:
            return
        end = text.find("}}", start + 2)
        if end < 0:
            yield Malformed(text[start:], "unclosed '{{' (a reference ends with '}}')")
            return
        raw = text[start : end + 2]
        inner = text[start + 2 : end].strip()
        pos = end + 2
        match = _REFERENCE.match(inner)
        if not inner:
            yield Malformed(raw, "empty reference")
        elif "{{" in inner:
            yield Malformed(raw, "nested '{{' inside a reference")
            pos = start + 2
        elif not match:
            yield Malformed(raw, "not a reference (expected {{gate.<step>.<field>}} or "
                                 "{{result.<step>.<path>}})")
        elif match["ns"] not in NAMESPACES:
            yield Malformed(raw, f"unknown namespace {match['ns']!r} (use gate or result)")
        else:
            path = tuple(
                int(index) if index else key
                for key, index in _SEGMENT.findall(match["path"])
            )
            if match["ns"] == "gate" and not path:
                yield Malformed(raw, "a gate reference names a field: {{gate.<step>.<field>}}")
            else:
                yield Reference(raw, match["ns"], match["step"], path, start, end + 2)


def parse_path(text: str) -> tuple[str | int, ...] | None:
    """A path into a JSON value (``items[0].id``, ``items.0.id``), or None when malformed."""
    if not _PATH.match(text):
        return None
    return tuple(int(index) if index else key
                 for key, index in _SEGMENT.findall(text if text.startswith("[") else "." + text))


def follow(value: Any, path: tuple[str | int, ...]) -> Any:
    """The value at ``path`` inside ``value``, or MISSING."""
    for segment in path:
        value = _step_into(value, segment)
        if value is MISSING:
            return MISSING
    return value


def walk_strings(value: Any, key: str = "") -> Iterator[tuple[str, str]]:
    """Yield ``(dotted key, string)`` for every string inside a JSON-plain value."""
    if isinstance(value, str):
        yield key, value
    elif isinstance(value, Mapping):
        for name, item in value.items():
            yield from walk_strings(item, f"{key}.{name}" if key else str(name))
    elif isinstance(value, (list, tuple)):
        for index, item in enumerate(value):
            yield from walk_strings(item, f"{key}[{index}]")


Lookup = Callable[[Reference], Any]


def state_lookup(gate: Mapping[str, Any], result: Mapping[str, Any],
                 absent: Collection[str] = ()) -> Lookup:
    """A lookup over a run's gate data and tool results.

    An optional gate field that was not submitted is MISSING, and so is anything of a step
    in ``absent`` (the steps a ``when`` condition skipped); a result path that does not
    exist is an error, because it means the tool answered in a shape the workflow did not
    expect.
    """

    def lookup(ref: Reference) -> Any:
        if ref.step in absent:
            return MISSING
        if ref.namespace == "gate":
            if ref.step not in gate:
                raise TemplateError(f"{ref.text}: step {ref.step!r} has no gate data")
            value: Any = gate[ref.step]
            missing_ok = True
        else:
            if ref.step not in result:
                raise TemplateError(f"{ref.text}: step {ref.step!r} has no result")
            value = result[ref.step]
            missing_ok = False
        for depth, segment in enumerate(ref.path):
            value = _step_into(value, segment)
            if value is MISSING:
                if missing_ok and depth == 0:
                    return MISSING
                where = ".".join(str(s) for s in ref.path[: depth + 1])
                raise TemplateError(f"{ref.text}: {ref.namespace} of {ref.step!r} has no "
                                    f"{where!r}")
        return value

    return lookup


def _step_into(value: Any, segment: str | int) -> Any:
    """One path step: a key into an object, an index into a list; anything else is MISSING."""
    if isinstance(value, Mapping):
        return value.get(str(segment), MISSING)
    if isinstance(value, list) and (isinstance(segment, int)
                                    or (segment.isascii() and segment.isdigit())):
        index = int(segment)
        return value[index] if index < len(value) else MISSING
    return MISSING


def _as_text(value: Any) -> str:
    if value is MISSING or value is None:
        return ""
    if isinstance(value, Pending):
        return value.text
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def render(text: str, lookup: Lookup) -> Any:
    """Resolve the references in one string (typed when it is exactly one reference)."""
    parts: list[Reference] = []
    for part in scan(text):
        if isinstance(part, Malformed):
            raise TemplateError(f"{part.text}: {part.message}")
        parts.append(part)
    if len(parts) == 1 and text.strip() == parts[0].text:
        return lookup(parts[0])
    out, pos = [], 0
    for ref in parts:
        out.append(text[pos : ref.start])
        out.append(_as_text(lookup(ref)))
        pos = ref.end
    out.append(text[pos:])
    return "".join(out)


def resolve(value: Any, lookup: Lookup) -> Any:
    """Resolve every string inside a mapping value; keys whose value is MISSING are left out."""
    if isinstance(value, str):
        return render(value, lookup)
    if isinstance(value, Mapping):
        resolved = {k: resolve(v, lookup) for k, v in value.items()}
        return {k: v for k, v in resolved.items() if v is not MISSING}
    if isinstance(value, (list, tuple)):
        return [None if v is MISSING else v for v in (resolve(v, lookup) for v in value)]
    return value


def render_lenient(text: str, lookup: Lookup) -> str:
    """Render instructions for people: anything that does not resolve becomes empty text."""

    def safe(ref: Reference) -> Any:
        try:
            return lookup(ref)
        except TemplateError:
            return MISSING

    out, pos = [], 0
    for part in scan(text):
        if isinstance(part, Reference):
            out.append(text[pos : part.start])
            out.append(_as_text(safe(part)))
            pos = part.end
    out.append(text[pos:])
    return "".join(out)
