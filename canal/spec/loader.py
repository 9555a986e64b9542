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
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ValidationError

from canal.errors import InvalidName, Problem, WorkflowNotFound
from canal.limits import MAX_FILE_BYTES, MAX_FRONT_MATTER_BYTES
from canal.spec.models import (
    STEP_TYPES,
    StepFrontMatter,
    StepSpec,
    WorkflowFrontMatter,
    WorkflowSpec,
)

ENTRY_FILES = ("WorkFlow.md", "SKILL.md")
STEP_FILE = re.compile(r"^(?P<order>\d+)-(?P<slug>.+)\.md$")
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
    """The folder of workflow ``name`` inside ``root``; never a path outside it."""
    check_name(name)
    base = root.resolve()
    folder = (base / name).resolve()
    if folder.parent != base or not folder.is_dir() or entry_file(folder) is None:
        raise WorkflowNotFound(f"no workflow {name!r} in {root}", workflow=name)
    return folder


def entry_file(folder: Path) -> Path | None:
    for candidate in ENTRY_FILES:
        if (folder / candidate).is_file():
            return folder / candidate
    return None


def list_workflows(root: Path) -> list[str]:
    """Names of the workflow folders under ``root``, sorted."""
    if not root.is_dir():
        return []
    return sorted(
        p.name for p in root.iterdir()
        if p.is_dir() and NAME.fullmatch(p.name) and entry_file(p) is not None
    )


def describe_workflows(root: Path) -> list[tuple[str, str]]:
    """``(name, description)`` of every workflow under ``root``, read from its entry file only
    (an unreadable entry gets an empty description; ``canal validate`` reports why)."""
    out = []
    for name in list_workflows(root):
        entry = entry_file(root / name)
        assert entry is not None
        with entry.open("rb") as handle:
            content = handle.read(MAX_FILE_BYTES + 1)
        front, _ = _front(entry.name, _decode(entry.name, content, []), [])
        description = (front or {}).get("description", "")
        out.append((name, " ".join(str(description).split())))
    return out


def split_front_matter(text: str) -> tuple[str | None, str]:
    """Split ``---``-fenced YAML from the Markdown body; raise ValueError if never closed."""
    lines = text.splitlines(keepends=True)
    if not lines or lines[0].strip() != "---":
        return None, text
    for index in range(1, len(lines)):
        if lines[index].strip() in ("---", "..."):
            return "".join(lines[1:index]), "".join(lines[index + 1 :])
    raise ValueError("front matter is not closed (expected a second '---' line)")


def _decode(rel: str, content: bytes | None, problems: list[Problem]) -> str | None:
    if content is None:
        problems.append(Problem(rel, "cannot read the file"))
        return None
    if len(content) > MAX_FILE_BYTES:
        problems.append(Problem(rel, f"the file is larger than {MAX_FILE_BYTES} bytes"))
        return None
    try:
        return content.decode("utf-8")
    except UnicodeDecodeError as exc:
        problems.append(Problem(rel, f"cannot read the file: {exc}"))
        return None


def _front(rel: str, text: str | None,
           problems: list[Problem]) -> tuple[dict[str, Any] | None, str]:
    """The front matter of one file as a mapping (None after recording a problem), and the body."""
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
        data = yaml.load(raw, Loader=_StrictLoader) if raw.strip() else {}
    except yaml.YAMLError as exc:
        problems.append(_yaml_problem(rel, exc))
        return None, body
    if data is None:
        data = {}
    if not isinstance(data, dict):
        problems.append(Problem(rel, "front matter must be a mapping of keys to values"))
        return None, body
    return data, body


class _StrictLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that refuses a key given twice in one mapping.

    The pure-Python loader, not libyaml's: its messages are the same on every install.
    """

    def compose_node(self, parent: Any, index: Any) -> Any:
        # Anchors and aliases can make a few bytes expand into gigabytes: not allowed.
        if self.check_event(yaml.AliasEvent):
            event = self.peek_event()
            raise yaml.composer.ComposerError(None, None, "aliases (*name) are not allowed",
                                              event.start_mark)
        return super().compose_node(parent, index)

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[Any] = set()
        for key_node, _ in node.value:
            key = self.construct_object(key_node, deep=deep)
            if isinstance(key, (str, int, float, bool)) and key in seen:
                raise yaml.constructor.ConstructorError(
                    None, None, f"key {key!r} is given twice", key_node.start_mark)
            seen.add(key)
        return super().construct_mapping(node, deep=deep)


def _yaml_problem(rel: str, exc: yaml.YAMLError) -> Problem:
    """A YAML error with the line in the file (+1 for 1-based lines, +1 for the '---')."""
    problem = getattr(exc, "problem", None) or str(exc)
    context = getattr(exc, "context", None)
    mark = getattr(exc, "problem_mark", None)
    if context and "end of stream" in problem and getattr(exc, "context_mark", None):
        # An unclosed quote or bracket: where it opened says more than the end of the text.
        mark, problem = getattr(exc, "context_mark", None), f"{context}: {problem}"
    return Problem(rel, f"YAML error: {problem}", line=mark.line + 2 if mark else None)


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


Files = Mapping[str, "bytes | None"]  # path inside the folder -> content (None: unreadable)


def workflow_files(folder: Path) -> dict[str, bytes | None]:
    """The content of every file that defines a workflow: its entry file and its numbered
    step files. This is what a run pins and what the digest covers."""
    out: dict[str, bytes | None] = {}
    paths = [p for p in (folder / name for name in ENTRY_FILES) if p.is_file()][:1]
    refs = folder / "references"
    if refs.is_dir():
        paths += sorted(p for p in refs.iterdir() if p.is_file() and STEP_FILE.match(p.name))
    for path in paths:
        try:
            with path.open("rb") as handle:  # bounded: an oversize file is reported, not read
                out[path.relative_to(folder).as_posix()] = handle.read(MAX_FILE_BYTES + 1)
        except OSError:
            out[path.relative_to(folder).as_posix()] = None
    return out


def digest_of(files: Files) -> str:
    sha = hashlib.sha256()
    for rel in sorted(files):
        sha.update(rel.encode() + b"\0" + (files[rel] or b"") + b"\0")
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
    head, body = _front(entry, _decode(entry, files[entry], problems), problems)
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


def _read_step(rel: str, content: bytes | None, problems: list[Problem],
               unreadable: set[str]) -> StepSpec | None:
    """The step in ``rel``, or None after recording its problems and its id in ``unreadable``."""
    match = STEP_FILE.match(rel.removeprefix("references/"))
    assert match is not None  # _step_files only returns matching names
    data, body = _front(rel, _decode(rel, content, problems), problems)
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
        compensate=front.compensate, confirm=front.confirm,
    )
