"""Finding the tools and workflows for a task among many (``canal search``, DESIGN.md §4).

Each tool and workflow is one document of words: its name (counted twice: a name says most
about what a tool does), its description, and its fields' names and descriptions as
``canal meta`` shows them (an IGNOREd field is left out; ENUM values and NOTE lines are
in). A query is ranked against them with BM25, scored by the ``bm25s`` library: small,
maintained, numpy only, and with the ranking built once per set of documents it answers a
query over a thousand tools in about a millisecond. numpy and bm25s are imported by the
first search, never by ``canal index`` or ``meta``. Words are split the way tool names are
written (``create_project``, ``createProject`` and ``create-project`` all give ``create
project``), lowercased, common English words dropped and a plural folded onto its singular,
so "create projects" finds ``create_project``.

Above ``SUMMARY_ABOVE`` tools, ``canal index`` shows one line per MCP server instead of one
per tool (``server_lines``) and points to search.
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from canal.tools.cache import ToolMeta
from canal.tools.rules import RuleSet

if TYPE_CHECKING:
    from canal.spec.models import WorkflowSpec

SUMMARY_ABOVE = 50  # canal index lists more tools than this as one line per server

# Words a query or a description is full of that tell one tool from another not at all.
STOPWORDS = frozenset({
    "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from",
    "has", "have", "how", "i", "in", "into", "is", "it", "its", "me", "my", "of", "on", "or",
    "please", "that", "the", "their", "them", "then", "this", "to", "use", "used", "uses",
    "using", "was", "we", "what", "when", "which", "will", "with", "you", "your"})

# A word as names write it: ``HTTP`` in ``HTTPServer``, ``IDs``, ``Project`` in
# ``createProject``, ``project`` in ``create_project`` or ``create-project``, a number.
_WORD = re.compile(r"[A-Z]{2,}s(?![a-z])|[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")
_ANY_WORD = re.compile(r"[^\W_]+")  # text beyond ASCII: a word with other letters stays whole


def words(text: str) -> list[str]:
    """The words search compares: ``"createProject (the project-IDs)"`` -> ``["create",
    "project", "project", "id"]``. A word is lowercased, a plural folded onto its singular
    (crudely, but the same way in a query and in what it is compared with)."""
    found = []
    raws = _WORD.findall(text) if text.isascii() else [
        part for word in _ANY_WORD.findall(text)
        for part in (_WORD.findall(word) if word.isascii() else [word])]
    for raw in raws:
        word = _NORMAL.get(raw)
        if word is None:
            if len(_NORMAL) > 100_000:  # a long-lived server's queries: keep it bounded
                _NORMAL.clear()
            word = _NORMAL[raw] = _normal(raw.lower())
        if word:
            found.append(word)
    return found


_NORMAL: dict[str, str] = {}  # a word as written -> as compared ("" for a stopword)


def _normal(word: str) -> str:
    if word in STOPWORDS:
        return ""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 2 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


@dataclass(frozen=True)
class Entry:
    """One thing search can find: ``kind`` ``"workflow"`` or ``"tool"``, its ``name``, the
    ``line`` the index shows for it, and the texts it is found by (``texts[0]`` its name)."""

    kind: str
    name: str
    line: str
    texts: tuple[str, ...]


def tool_texts(meta: ToolMeta, rules: RuleSet) -> tuple[str, ...]:
    """What a tool is found by: its name, description and notes, and its fields as ``canal
    meta`` shows them (``canal.tools.meta.tool_fields``: no IGNOREd field) with their
    descriptions and allowed values."""
    from canal.tools.meta import tool_fields

    texts = [meta.name, meta.description, *rules.notes]
    for field in tool_fields(meta, rules):
        texts += [field["name"], field["description"], *_values(field.get("enum"))]
        texts += [str(label) for label in (field.get("enum_labels") or {}).values()]
    return tuple(texts)


def workflow_texts(spec: WorkflowSpec, description: str) -> tuple[str, ...]:
    """What a workflow is found by: its name and description, and the fields its steps ask
    (names, descriptions, allowed values)."""
    texts = [spec.name, description]
    for step in spec.steps:
        for name, field in step.gate.items():
            texts += [name, field.desc, *_values(field.enum)]
    return tuple(texts)


def _values(values: Iterable[Any] | None) -> list[str]:
    return [str(value) for value in values or ()]


class Ranking:
    """A BM25 ranking of ``entries``, built once and asked many queries."""

    def __init__(self, entries: Sequence[Entry]) -> None:
        import logging

        import bm25s

        logging.getLogger("bm25s").setLevel(logging.WARNING)  # its progress is not canal's

        self.entries = list(entries)
        documents = [words(e.texts[0] + "\n" + "\n".join(e.texts)) for e in self.entries]
        self._bm25 = bm25s.BM25()
        self._empty = not any(documents)  # bm25s cannot index no words at all
        if not self._empty:
            self._bm25.index(documents, show_progress=False)

    def top(self, query: str) -> list[Entry]:
        """Every entry that shares a word with ``query``, best first (ties by kind, then
        name, so the order is stable)."""
        ids = [] if self._empty else self._bm25.get_tokens_ids(words(query))
        if not ids:
            return []
        scores = self._bm25.get_scores_from_ids(ids)
        hits = [(float(scores[i]), e) for i, e in enumerate(self.entries) if scores[i] > 0]
        hits.sort(key=lambda hit: (-hit[0], hit[1].kind != "workflow", hit[1].name))
        return [entry for _, entry in hits]


_RANKINGS: dict[Hashable, Ranking] = {}  # per process, the latest few
_KEPT = 4
_LOCK = threading.Lock()  # Canal objects in several threads may search at once


def ranking(key: Hashable, entries: Callable[[], Sequence[Entry]]) -> Ranking:
    """The ranking of ``entries()``, built once per process for one ``key`` (a fingerprint
    of everything the entries are made from): a server answering many searches over one
    tool cache reads the tools and builds the ranking once."""
    with _LOCK:
        found = _RANKINGS.get(key)
        if found is None:
            if len(_RANKINGS) >= _KEPT:
                _RANKINGS.pop(next(iter(_RANKINGS)))
            found = _RANKINGS[key] = Ranking(entries())
        return found


def server_lines(tools: Iterable[ToolMeta], examples: int = 3, common: int = 5) -> list[str]:
    """One line per MCP server, for an index with too many tools to list: ``"github: 84
    tools, about issue, pull, request, repository, create; e.g. create_issue, get_issue,
    list_issues"``, the words most tool names share and the first names."""
    by_server: dict[str, list[str]] = {}
    for meta in tools:
        by_server.setdefault(meta.server, []).append(meta.name)
    lines = []
    for server, names in sorted(by_server.items()):
        counts = Counter(w for name in names for w in set(words(name)) if not w.isdigit())
        top = [w for w, _ in sorted(counts.items(), key=lambda c: (-c[1], c[0]))[:common]]
        shown = ", ".join(sorted(names)[:examples])
        about = f", about {', '.join(top)}" if top else ""
        lines.append(f"{server}: {len(names)} tool{'s' if len(names) != 1 else ''}{about}; "
                     f"e.g. {shown}")
    return lines
