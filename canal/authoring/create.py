"""``canal new`` and ``canal add-step``: check every argument, then write.

Each returns the answer the CLI prints: ``{"status": "ok", "workflow", "files",
"renamed", "next"}``, ``files`` holding the paths written (relative to the workflows
folder) and ``renamed`` the step files an insertion renumbered.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from canal.authoring.files import (
    apply_renames,
    document,
    file_name,
    plan_insert,
    step_files,
    write_text,
)
from canal.authoring.steps import BODIES, check_step_id, step_front
from canal.errors import UsageError, WorkflowNotFound
from canal.spec.loader import ENTRY_FILES, check_name

OVERVIEW = (
    "Replace this text with an overview for people: what the workflow is for, who runs "
    "it, what it changes and what someone who knows the domain should review. The agent "
    "reads each step's own file, one step at a time.")


def _folder(root: Path, name: str) -> Path:
    check_name(name)
    return root.resolve() / name


def _existing(root: Path, name: str) -> Path:
    folder = _folder(root, name)
    if not any((folder / entry).is_file() for entry in ENTRY_FILES):
        raise WorkflowNotFound(f"no workflow {name!r} in {root} (create it with canal new)",
                               workflow=name)
    return folder


def relative(root: Path, path: Path) -> str:
    return path.relative_to(root.resolve()).as_posix()


def check_new(root: Path, name: str, description: str) -> Path:
    """The folder of the new workflow ``name``; UsageError when it exists already."""
    folder = _folder(root, name)
    if folder.exists():
        raise UsageError(f"workflow {name!r} exists already ({folder}): choose another name, "
                         "or add steps to it with canal add-step", workflow=name)
    if not isinstance(description, str) or not description.strip():
        raise UsageError("a workflow needs a --description: one line saying what it does")
    if "\n" in description:
        raise UsageError("--description is one line")
    return folder


def write_entry(folder: Path, name: str, description: str) -> Path:
    path = folder / "WorkFlow.md"
    write_text(path, document({"name": name, "description": description},
                              f"# {name}\n\n{description}\n\n{OVERVIEW}"))
    (folder / "references").mkdir(exist_ok=True)
    return path


def new_workflow(root: Path, name: str, description: str) -> dict[str, Any]:
    """Create workflow ``name``: its folder, ``WorkFlow.md`` and an empty ``references/``."""
    folder = check_new(root, name, description)
    path = write_entry(folder, name, description)
    return {"status": "ok", "workflow": name, "files": [relative(root, path)],
            "renamed": [],
            "next": {"command": "add-step",
                     "hint": f"add the steps in order: canal add-step {name} --id ID --type "
                             "interactive|automated|notification; then canal validate "
                             f"{name}"}}


def add_step(root: Path, workflow: str, step_id: str, kind: str, *, title: str | None = None,
             fields: Iterable[str] = (), tool: str | None = None,
             mapping: Iterable[str] | Mapping[str, Any] = (),
             after: str | None = None) -> dict[str, Any]:
    """Write step ``step_id`` of workflow ``workflow``: at the end, or right after step
    ``after`` (later step files are renamed to keep the order; their slugs, hence their
    ids, stay)."""
    folder = _existing(root, workflow)
    check_step_id(step_id)
    front = step_front(kind, title, fields, tool, mapping)
    files = step_files(folder)
    ids = [f.id for f in files]
    if step_id in ids:
        raise UsageError(f"workflow {workflow!r} has a step {step_id!r} already "
                         f"(steps: {', '.join(ids)})", workflow=workflow, step=step_id)
    position = None
    if after is not None:
        if after not in ids:
            raise UsageError(f"--after {after!r}: workflow {workflow!r} has no such step "
                             f"(steps: {', '.join(ids) or 'none'})", workflow=workflow)
        position = ids.index(after)
    number, renames = plan_insert(files, position)
    path = folder / "references" / file_name(number, step_id)
    if path.exists():
        raise UsageError(f"{relative(root, path)} exists already", workflow=workflow)
    apply_renames(renames)
    write_text(path, document(front, BODIES[kind]))
    return {"status": "ok", "workflow": workflow, "step": step_id,
            "files": [relative(root, path)],
            "renamed": [{"from": relative(root, a), "to": relative(root, b)}
                        for a, b in reversed(renames)],
            "next": {"command": "validate",
                     "hint": f"edit {relative(root, path)} (its body is the agent's "
                             "instruction), add the next step with canal add-step, then "
                             f"check the whole workflow with canal validate {workflow}"}}
