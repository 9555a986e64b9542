"""Read one file's text into its front matter (JSON values only) and its Markdown body.

Front matter is untrusted input, and everything in it may end up in an envelope, a
checkpoint or a PostgreSQL row. So the YAML it is written in is read as JSON data:

- only strings, 64-bit integers, finite floats, booleans, null, lists and maps with string
  keys; YAML's other types (``!!binary``, ``!!set``, ``!!omap``, ``!!pairs``,
  ``!!timestamp``, ``.nan``, ``.inf``, a map with a number as key) are a problem naming the
  file and the key, and a value that does not fit its explicit tag (``!!bool maybe``) is a
  YAML error on its line;
- a bare date such as ``2024-01-01`` is the text it looks like (as in YAML 1.2), not a date;
- no text holding a NUL character or a lone surrogate (no store can keep them);
- at most ``MAX_DEPTH`` levels of lists and maps, counting the front matter itself: deeper
  nesting is a problem, never a ``RecursionError``;
- no key given twice in one map, no aliases (``*name``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import yaml

from canal.errors import Problem
from canal.jsontypes import INT64_MAX, INT64_MIN
from canal.limits import MAX_FRONT_MATTER_BYTES

MAX_DEPTH = 32
_TAG = "tag:yaml.org,2002:"
_NOT_JSON_TAGS = {"binary": "bytes (!!binary)", "set": "a set (!!set)",
                  "omap": "an ordered map (!!omap)", "pairs": "a list of pairs (!!pairs)",
                  "timestamp": "a date (!!timestamp)"}


def split_front_matter(text: str) -> tuple[str | None, str]:
    """Split ``---``-fenced YAML from the Markdown body; raise ValueError if never closed."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise ValueError("front matter is not closed (expected a second '---' line)")


def read_front(rel: str, text: str | None,
               problems: list[Problem]) -> tuple[dict[str, Any] | None, str]:
    """The front matter of one file as a mapping (None after recording a problem), and the
    body."""
    if text is None:
        return None, ""
    try:
        raw, body = split_front_matter(text)
    except ValueError as exc:
        problems.append(Problem(rel, str(exc), line=1))
        return None, ""
    if raw is None:
        problems.append(Problem(rel, "no YAML front matter (the file must start with '---')"))
        return None, body
    if len(raw.encode()) > MAX_FRONT_MATTER_BYTES:
        problems.append(Problem(rel, f"the front matter is larger than {MAX_FRONT_MATTER_BYTES} "
                                     "bytes"))
        return None, body
    try:
        data = yaml.load(raw, Loader=_JsonLoader) if raw.strip() else {}
    except yaml.YAMLError as exc:
        problems.append(_yaml_problem(rel, exc))
        return None, body
    if data is None:
        data = {}
    if not isinstance(data, dict):
        problems.append(Problem(rel, "front matter must be a mapping of keys to values"))
        return None, body
    found = [Problem(rel, f"not a JSON value: {why}", key=key or None)
             for key, why in _not_json(data)]
    if found:
        problems.extend(found)
        return None, body
    return data, body


def json_document(text: str) -> Any:
    """``text`` (YAML or JSON written by a person: an answers file) read under the same
    rules as front matter. yaml.YAMLError when it is not YAML within them, ValueError
    naming the first value that is not JSON data."""
    data = yaml.load(text, Loader=_JsonLoader)
    for key, why in _not_json(data):
        raise ValueError(f"{key or 'the document'} is not a JSON value: {why}")
    return data


def _not_json(value: Any, key: str = "") -> list[tuple[str, str]]:
    """``(key path, why)`` for every part of ``value`` that is not JSON data canal can keep
    (depth is bounded by the loader, so recursion here is too)."""
    if isinstance(value, dict):
        out = []
        for name, item in value.items():
            path = f"{key}.{name}" if key else str(name)
            if not isinstance(name, str):
                out.append((key, f"a map with a key that is not a string ({name!r})"))
            else:
                out += _not_json(name, path) + _not_json(item, path)
        return out
    if isinstance(value, list):
        return [found for index, item in enumerate(value)
                for found in _not_json(item, f"{key}.{index}" if key else str(index))]
    if isinstance(value, str):
        why = _text_problem(value)
    elif isinstance(value, float):
        why = None if math.isfinite(value) else "a number that is not finite"
    elif isinstance(value, int) and not isinstance(value, bool):
        why = None if INT64_MIN <= value <= INT64_MAX else "an integer outside the 64-bit range"
    elif value is None or isinstance(value, bool):
        why = None
    else:
        why = value.what if isinstance(value, _NotJson) else type(value).__name__
    return [(key, why)] if why else []


def _text_problem(text: str) -> str | None:
    """Why ``text`` cannot be stored as text everywhere (PostgreSQL refuses NUL, UTF-8 refuses
    lone surrogates), or None."""
    if "\x00" in text:
        return "text with a NUL character (\\0), which no store can keep as text"
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return "text that is not valid Unicode (a lone surrogate)"
    return None


@dataclass(frozen=True, repr=False)
class _NotJson:
    """Stands for a YAML value JSON has no type for, so that the problem can name its key."""

    what: str

    def __repr__(self) -> str:
        return self.what


class _JsonLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` for JSON data: no key given twice in one mapping, no aliases, at
    most ``MAX_DEPTH`` levels, bare dates as text, YAML-only types never built.

    The pure-Python loader, not libyaml's: its messages are the same on every install.
    """

    def __init__(self, stream: str) -> None:
        super().__init__(stream)
        self._depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        # Anchors and aliases can make a few bytes expand into gigabytes: not allowed.
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed",
                                              event.start_mark)
        if not self.check_event(yaml.SequenceStartEvent, yaml.MappingStartEvent):
            return super().compose_node(parent, index)
        # Composing recurses once per level: bound it before Python's stack is.
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise yaml.composer.ComposerError(
                    None, None, f"nested more than {MAX_DEPTH} levels deep",
                    self.peek_event().start_mark)
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1

    def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
        # PyYAML's constructors trust a value to fit its explicit tag: '!!bool maybe' is a
        # KeyError, an integer of 5000 digits a ValueError. Make them YAML errors on the line.
        try:
            return super().construct_object(node, deep=deep)
        except (ValueError, TypeError, LookupError, AttributeError, ArithmeticError) as exc:
            tag = str(node.tag).replace(_TAG, "!!")
            raise yaml.constructor.ConstructorError(
                None, None, f"not a valid {tag} value ({exc})", node.start_mark) from exc

    def construct_mapping(self, node: yaml.Node, deep: bool = False) -> dict[Any, Any]:
        if not isinstance(node, yaml.MappingNode):  # '!!map [1]'
            found = "a list" if isinstance(node, yaml.SequenceNode) else "a single value"
            raise yaml.constructor.ConstructorError(
                None, None, f"expected a mapping, but found {found}", node.start_mark)
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)):
                if key in seen:
                    raise yaml.constructor.ConstructorError(
                        None, None, f"key {key!r} is given twice", key_node.start_mark)
                seen.add(key)
        return super().construct_mapping(node, deep=deep)


# A bare date stays text: YAML 1.1 would make it a date, which JSON has no type for.
_JsonLoader.yaml_implicit_resolvers = {
    first: [(tag, rx) for tag, rx in resolvers if tag != _TAG + "timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def _not_json_constructor(what: str) -> Any:
    def construct(loader: yaml.SafeLoader, node: yaml.Node) -> _NotJson:
        return _NotJson(what)
    return construct


for _name, _what in _NOT_JSON_TAGS.items():
    _JsonLoader.add_constructor(_TAG + _name, _not_json_constructor(_what))


def _yaml_problem(rel: str, exc: yaml.YAMLError) -> Problem:
    """A YAML error with the line in the file (+1 for 1-based lines, +1 for the '---')."""
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    mark = getattr(exc, "problem_mark", None)
    if context and "end of stream" in problem and getattr(exc, "context_mark", None):
        # An unclosed quote or bracket: where it opened says more than the end of the text.
        mark, problem = getattr(exc, "context_mark", None), f"{context}: {problem}"
    return Problem(rel, f"YAML error: {problem}", line=mark.line + 2 if mark else None)
