"""Read a workflow folder into a ``WorkflowSpec``, collecting every problem on the way.

A folder holds ``WorkFlow.md`` (or ``SKILL.md``) and ``references/NN-<slug>.md`` step files;
the numeric prefix orders the steps and the slug is the step id unless the front matter
gives an ``id``. Markdown files in ``references/`` without a numeric prefix are supporting
documents and are not steps.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from canal.errors import InvalidName, Problem, WorkflowNotFound
from canal.limits import MAX_FILE_BYTES
from canal.spec.frontmatter import read_front
from canal.spec.models import (
    STEP_TYPES,
    StepFrontMatter,
    StepSpec,
    WorkflowFrontMatter,
    WorkflowSpec,
)

ENTRY_FILES = ("WorkFlow.md", "SKILL.md")
STEP_FILE = re.compile(r"^(?P<order>[0-9]+)-(?P<slug>.+)\.md$")  # ASCII digits only
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")


def check_name(name: str, kind: str = "workflow") -> str:
    """Accept only plain names (letters, digits, ``.``, ``_``, ``-``), never a path."""
    if not isinstance(name, str) or not NAME.fullmatch(name) or ".." in name:
        raise InvalidName(
            f"{kind} name {name!r} is not a plain name (letters, digits, '.', '_', '-'; "
            "no '/', no '..')",
            name=name,
        )
    return name


def workflow_dir(root: Path, name: str) -> Path:
    """The folder of workflow ``name`` inside ``root``; never a path outside it (a folder
    that is a link to somewhere outside is not found, and the message says why)."""
    check_name(name)
    folder = root.resolve() / name
    if not folder.is_dir() or entry_file(folder) is None:
        raise WorkflowNotFound(f"no workflow {name!r} in {root}", workflow=name)
    reason = outside(root, folder, "folder")
    if reason is not None:
        raise WorkflowNotFound(f"no workflow {name!r} in {root}: {name}: {reason}",
                               workflow=name)
    return folder


def outside(base: Path, path: Path, kind: str = "file") -> str | None:
    """The containment rule, decided in this one place: why canal will not read ``path`` as
    part of ``base`` (through links it leads outside ``base``), or None when it stays inside.
    Links that stay inside are fine. Listing, loading, validating and pinning a workflow all
    ask this: a workflow folder must stay inside the workflows folder, and a workflow's
    files inside the workflow folder."""
    try:
        home, target = base.resolve(), path.resolve()
    except (OSError, RuntimeError) as exc:  # a link loop
        return f"the {kind} cannot be resolved ({exc})"
    if target == home or home in target.parents:
        return None
    return f"the {kind} is a link to {target}, outside {home} (canal reads only what is inside it)"


def entry_file(folder: Path) -> Path | None:
    for candidate in ENTRY_FILES:
        if (folder / candidate).is_file():
            return folder / candidate
    return None


def _candidates(root: Path) -> list[Path]:
    """Folders in ``root`` that look like workflows, wherever they lead."""
    if not root.is_dir():
        return []
    return sorted((p for p in root.iterdir()
                   if p.is_dir() and NAME.fullmatch(p.name) and entry_file(p) is not None),
                  key=lambda p: p.name)


def list_workflows(root: Path) -> list[str]:
    """Names of the workflow folders under ``root``, sorted; not those that lead outside it
    (``refused_workflows`` says why)."""
    return [p.name for p in _candidates(root) if outside(root, p, "folder") is None]


def refused_workflows(root: Path) -> list[Problem]:
    """One problem for each workflow-like folder under ``root`` that leads outside it."""
    return [Problem(p.name, reason) for p in _candidates(root)
            if (reason := outside(root, p, "folder")) is not None]


def describe_workflows(root: Path) -> list[tuple[str, str]]:
    """``(name, description)`` of every workflow under ``root``, read from its entry file only
    (an unreadable entry gets an empty description; ``canal validate`` reports why)."""
    out = []
    for name in list_workflows(root):
        folder = root / name
        entry = entry_file(folder)
        assert entry is not None
        front, _ = read_front(entry.name, _decode(entry.name, read_file(folder, entry), []), [])
        description = (front or {}).get("description", "")
        out.append((name, " ".join(str(description).split())))
    return out


@dataclass(frozen=True)
class Refused:
    """In place of a file's content: why canal did not read it."""

    reason: str


Content = bytes | Refused | None  # None: the file could not be read
Files = Mapping[str, Content]  # path inside the workflow folder -> content


def read_file(folder: Path, path: Path) -> Content:
    """The bytes of ``path`` in workflow ``folder`` (bounded: an oversize file is reported,
    not read), Refused when it leads outside the folder, None when it cannot be read."""
    reason = outside(folder, path)
    if reason is not None:
        return Refused(reason)
    try:
        with path.open("rb") as handle:
            return handle.read(MAX_FILE_BYTES + 1)
    except OSError:
        return None


def _decode(rel: str, content: Content, problems: list[Problem]) -> str | None:
    if isinstance(content, Refused):
        problems.append(Problem(rel, content.reason))
        return None
    if content is None:
        problems.append(Problem(rel, "cannot read the file"))
        return None
    if len(content) > MAX_FILE_BYTES:
        problems.append(Problem(rel, f"the file is larger than {MAX_FILE_BYTES} bytes"))
        return None
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem(rel, f"cannot read the file: {exc}"))
        return None
    if "\x00" in text:  # PostgreSQL keeps no NUL in text, and no Markdown needs one
        line = text.count("\n", 0, text.index("\x00")) + 1
        problems.append(Problem(rel, "the file holds a NUL character (byte 0), which no store "
                                     "can keep as text", line=line))
        return None
    return text


def _model(rel: str, model: type[BaseModel], data: dict[str, Any],
           problems: list[Problem]) -> Any:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        for error in exc.errors():
            problems.append(_translate(rel, error))
        return None


def _translate(rel: str, error: Any) -> Problem:
    loc = [str(part) for part in error["loc"]]
    key = ".".join(loc) or None
    kind = error["type"]
    value = error.get("input")
    if kind == "extra_forbidden":
        return Problem(rel, "unknown key", key=key)
    if kind == "missing":
        return Problem(rel, "required key is missing", key=key)
    if loc and loc[-1] == "type" and kind == "literal_error":
        allowed = ", ".join(STEP_TYPES) if len(loc) == 1 else error["ctx"]["expected"]
        return Problem(rel, f"not a known type (known: {allowed})", key=key, text=repr(value))
    return Problem(rel, error["msg"], key=key)


def workflow_files(folder: Path) -> dict[str, Content]:
    """The content of every file that defines a workflow: its entry file and its numbered
    step files. This is what a run pins and what the digest covers."""
    paths = [p for p in (folder / name for name in ENTRY_FILES) if p.is_file()][:1]
    refs = folder / "references"
    if refs.is_dir():
        paths += sorted(p for p in refs.iterdir() if p.is_file() and STEP_FILE.match(p.name))
    return {path.relative_to(folder).as_posix(): read_file(folder, path) for path in paths}


def pinnable(files: Files) -> dict[str, str]:
    """The text of every file that was read: what a run pins."""
    return {rel: content.decode() for rel, content in files.items()
            if isinstance(content, bytes)}


def digest_of(files: Files) -> str:
    sha = hashlib.sha256()
    for rel in sorted(files):
        content = files[rel]
        sha.update(rel.encode() + b"\0" + (content if isinstance(content, bytes) else b"")
                   + b"\0")
    return "sha256:" + sha.hexdigest()


def parse_files(name: str, files: Files,
                path: str = "") -> tuple[WorkflowSpec | None, list[Problem], set[str]]:
    """Parse a workflow without judging references.

    Returns the spec built from every step that parsed (None when there is no entry file),
    every problem met while reading, and the ids of step files that could not be parsed
    (so the validator does not also call references to them unknown).
    """
    problems: list[Problem] = []
    entry = next((n for n in ENTRY_FILES if n in files), None)
    if entry is None:
        return None, [Problem(name, f"no {' or '.join(ENTRY_FILES)} in the folder")], set()
    head, body = read_front(entry, _decode(entry, files[entry], problems), problems)
    meta = _model(entry, WorkflowFrontMatter, head, problems) if head is not None else None
    if meta is not None and meta.name != name:
        problems.append(Problem(entry, f"does not match the folder name {name!r}",
                                key="name", text=meta.name))

    step_files = _step_files(files, problems)
    if not step_files:
        problems.append(Problem("references", "no step files (expected references/NN-<id>.md)"))
    steps: list[StepSpec] = []
    unreadable: set[str] = set()
    for rel in step_files:
        step = _read_step(rel, files[rel], problems, unreadable)
        if step is not None:
            steps.append(step)
    spec = WorkflowSpec(
        name=name, description=meta.description if meta else "",
        version=meta.version if meta else None,
        tools=meta.tools if meta else None, servers=meta.servers if meta else None,
        path=path, entry=entry, body=body.strip(),
        digest=digest_of(files), steps=tuple(steps),
    )
    return spec, problems, unreadable


def _step_files(files: Files, problems: list[Problem]) -> list[str]:
    found = sorted(
        ((int(m["order"]), rel) for rel in files
         if rel.startswith("references/") and (m := STEP_FILE.match(rel[len("references/"):]))),
    )
    seen: dict[int, str] = {}
    for order, rel in found:
        if order in seen:
            problems.append(Problem(rel, f"order prefix {order} is also used by {seen[order]}"))
        seen.setdefault(order, rel)
    return [rel for _, rel in found]


def _read_step(rel: str, content: Content, problems: list[Problem],
               unreadable: set[str]) -> StepSpec | None:
    """The step in ``rel``, or None after recording its problems and its id in ``unreadable``."""
    match = STEP_FILE.match(rel.removeprefix("references/"))
    assert match is not None  # _step_files only returns matching names
    data, body = read_front(rel, _decode(rel, content, problems), problems)
    front = _model(rel, StepFrontMatter, data, problems) if data is not None else None
    if front is None:
        given = (data or {}).get("id")
        unreadable.add(given if isinstance(given, str) and given else match["slug"])
        return None
    return StepSpec(
        id=front.id or match["slug"], type=front.type, order=int(match["order"]), path=rel,
        body=body.strip(), title=front.title,
        gate=dict(front.gate.schema_) if front.gate else {},
        automation=front.automation, retry=front.retry, timeout=front.timeout,
        compensate=front.compensate, confirm=front.confirm, when=front.when,
        verify=front.verify,
    )
