"""The tool cache in ``<home>/tools/``: one ``<tool>.meta`` (JSON) and ``<tool>.rules`` per
tool, ``index.json`` for the index command, and ``tools-index.md`` for people and agents.

A tool's canal name is its server-side name, unless two servers offer the same name: then
each is named ``<server>.<tool>``. The qualified form works for every tool.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from canal.errors import ToolNotFound
from canal.files import FILE_MODE, private_dir
from canal.files import write_private as _write

TOOL_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")


@dataclass(frozen=True)
class ToolMeta:
    """What discover learnt about one tool."""

    name: str
    server: str
    tool: str
    description: str = ""
    input_schema: dict[str, Any] = field(default_factory=dict)
    annotations: dict[str, Any] = field(default_factory=dict)
    digest: str = ""
    output_schema: dict[str, Any] | None = None  # MCP outputSchema, when the tool has one

    @classmethod
    def from_listing(cls, name: str, server: str, listed: dict[str, Any]) -> ToolMeta:
        schema = listed.get("inputSchema") or {"type": "object"}
        annotations = {k: v for k, v in (listed.get("annotations") or {}).items()
                       if v is not None}
        output = listed.get("outputSchema")
        output = output if isinstance(output, dict) else None
        # The output schema joins the digest only when there is one, so the digests of
        # tools without one stay what earlier caches hold (no spurious "changed").
        hashed = [schema, annotations] + ([output] if output is not None else [])
        digest = hashlib.sha256(json.dumps(hashed, sort_keys=True, allow_nan=False)
                                .encode()).hexdigest()
        return cls(name=name, server=server, tool=listed["name"],
                   description=(listed.get("description") or "").strip(),
                   input_schema=schema, annotations=annotations, digest=f"sha256:{digest}",
                   output_schema=output)

    def summary(self) -> str:
        """The description's first line, short enough for an index."""
        line = self.description.strip().splitlines()[0] if self.description.strip() else ""
        return line if len(line) <= 120 else line[:117].rstrip() + "..."

    def line(self) -> str:
        """``name (hints): summary``, the tool's line in the index."""
        hints = f" ({', '.join(self.hints())})" if self.hints() else ""
        return f"{self.name}{hints}: {self.summary()}"

    def hints(self) -> list[str]:
        labels = {"readOnlyHint": "read-only", "destructiveHint": "destructive",
                  "idempotentHint": "idempotent"}
        return [label for key, label in labels.items() if self.annotations.get(key) is True]


class ToolCache:
    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def _meta_path(self, name: str) -> Path:
        return self.folder / f"{name}.meta"

    def rules_path(self, name: str) -> Path:
        return self.folder / f"{name}.rules"

    def get(self, name: str) -> ToolMeta:
        """The cached metadata of ``name`` (a canal name or ``server.tool``)."""
        if TOOL_NAME.fullmatch(name):
            path = self._meta_path(name)
            if path.is_file():
                return ToolMeta(**json.loads(path.read_text(encoding="utf-8")))
            qualified = self._by_qualified_name(name)
            if qualified is not None:
                return qualified
        raise ToolNotFound(f"no tool {name!r} in the tool cache (run 'canal discover' to "
                           "sync the MCP servers' tools)", tool=name)

    def _by_qualified_name(self, name: str) -> ToolMeta | None:
        server, _, tool = name.partition(".")
        for meta in self.all():
            if meta.server == server and meta.tool == tool:
                return meta
        return None

    def all(self) -> list[ToolMeta]:
        index = self.folder / "index.json"
        if not index.is_file():
            return []
        return [ToolMeta(**item) for item in json.loads(index.read_text(encoding="utf-8"))]

    def fingerprint(self) -> tuple[tuple[str, int, int], ...]:
        """Name, size and modification time of ``index.json`` and every rules file: it
        changes whenever discover or a person changes what the tools say."""
        if not self.folder.is_dir():
            return ()
        with os.scandir(self.folder) as found:
            files = [(e.name, e.stat()) for e in found
                     if e.name == "index.json" or e.name.endswith(".rules")]
        return tuple(sorted((name, st.st_size, st.st_mtime_ns) for name, st in files))

    def rules_text(self, name: str) -> str | None:
        path = self.rules_path(name)
        return path.read_text(encoding="utf-8") if path.is_file() else None

    def save(self, tools: list[ToolMeta], rules: dict[str, str], stale: list[str],
             index_markdown: str) -> None:
        """Write every tool's files, remove those of ``stale`` tools, then the indexes."""
        private_dir(self.folder)
        plain = {meta.name: _plain(meta) for meta in tools}
        for meta in tools:
            _update(self._meta_path(meta.name),
                    json.dumps(plain[meta.name], indent=2, allow_nan=False) + "\n")
            _update(self.rules_path(meta.name), rules[meta.name])
        for name in stale:
            self._meta_path(name).unlink(missing_ok=True)
            text = self.rules_text(name)
            if text is not None and not _has_manual_lines(text):
                self.rules_path(name).unlink()
        ordered = sorted(tools, key=lambda m: m.name)
        _update(self.folder / "index.json",
                json.dumps([plain[m.name] for m in ordered], allow_nan=False) + "\n")
        _update(self.folder / "tools-index.md", index_markdown)


def _plain(meta: ToolMeta) -> dict[str, Any]:
    """The fields of ``meta`` as its JSON files hold them (``asdict`` would deep-copy every
    schema, twice per tool per discover)."""
    return {f.name: getattr(meta, f.name) for f in fields(meta)}


def _update(path: Path, text: str) -> None:
    """Write ``text`` unless the file holds it already: a discover that changes nothing
    rewrites nothing (and leaves the files' times alone). A file that is not the owner's
    only is written anew, which makes it so."""
    try:
        if (path.stat().st_mode & 0o777 == FILE_MODE
                and path.read_text(encoding="utf-8") == text):
            return
    except (OSError, UnicodeDecodeError):
        pass
    _write(path, text)


def _has_manual_lines(text: str) -> bool:
    return any(line.strip() and not line.lstrip().startswith("#")
               and not line.rstrip().endswith("#auto") for line in text.splitlines())


def index_markdown(workflows: list[tuple[str, str]], tools: list[ToolMeta]) -> str:
    """``tools-index.md``: workflows first (prefer them), then tools, one line each."""
    lines = ["# Index", "", "Prefer a workflow that covers the whole request; use a single "
             "tool only when none does.", "", "## Workflows", ""]
    lines += [f"- {name}: {desc}" for name, desc in workflows] or ["(none)"]
    lines += ["", "## Tools", ""]
    lines += [f"- {meta.line()}" for meta in sorted(tools, key=lambda m: m.name)]
    if not tools:
        lines.append("(none)")
    return "\n".join(lines) + "\n"
