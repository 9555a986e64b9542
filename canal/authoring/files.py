"""The step files of a workflow folder as the creator sees them, and safe writes.

Step files are numbered in steps of ten (``10-ask.md``, ``20-call.md``, ...), two digits at
least. A folder numbered otherwise (``01-``, ``02-``) is read as it is: a new step takes the
next multiple of ten after the last number.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from canal.errors import Problem, UsageError
from canal.spec.frontmatter import read_front
from canal.spec.loader import STEP_FILE

STEP = 10  # the gap between two step numbers


@dataclass(frozen=True)
class StepFile:
    order: int
    slug: str
    id: str  # the front matter's ``id``, else the slug
    path: Path


def step_files(folder: Path) -> list[StepFile]:
    """The workflow's step files in their order (a file whose front matter cannot be read
    counts with its slug as its id)."""
    found = []
    references = folder / "references"
    for path in sorted(references.iterdir()) if references.is_dir() else []:
        match = STEP_FILE.match(path.name)
        if match is None or not path.is_file():
            continue
        problems: list[Problem] = []
        try:
            text: str | None = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            text = None
        data, _ = read_front(path.name, text, problems)
        given = (data or {}).get("id")
        step_id = given if isinstance(given, str) and given else match["slug"]
        found.append(StepFile(int(match["order"]), match["slug"], step_id, path))
    return sorted(found, key=lambda f: (f.order, f.path.name))


def next_number(order: int) -> int:
    """The first multiple of ``STEP`` above ``order``."""
    return (order // STEP + 1) * STEP


def file_name(order: int, slug: str) -> str:
    return f"{order:02d}-{slug}.md"


def plan_insert(files: list[StepFile], after: int | None
                ) -> tuple[int, list[tuple[Path, Path]]]:
    """The number of a step inserted after ``files[after]`` (None: at the end), and the
    renames that keep every later file after it, in the order to apply them (last file
    first, so no rename lands on a name still in use). Later files are renumbered only as
    far as needed: a file already numbered above its predecessor keeps its name."""
    if after is None:
        return (next_number(files[-1].order) if files else STEP), []
    number = next_number(files[after].order)
    previous, renames = number, []
    for item in files[after + 1:]:
        if item.order > previous:
            break
        previous = next_number(previous)
        renames.append((item.path, item.path.with_name(file_name(previous, item.slug))))
    return number, list(reversed(renames))


def apply_renames(renames: list[tuple[Path, Path]]) -> None:
    targets = {target for _, target in renames}
    sources = {source for source, _ in renames}
    taken = [t.name for t in targets if t.exists() and t not in sources]
    if taken:
        raise UsageError(f"cannot renumber the steps: {', '.join(sorted(taken))} exists")
    for source, target in renames:
        os.replace(source, target)


def write_text(path: Path, text: str) -> None:
    """Write ``path`` whole or not at all (a temporary file beside it, then a rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=".", suffix=".tmp")
    try:
        with os.fdopen(handle, "w", encoding="utf-8", newline="\n") as out:
            out.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def document(front: dict[str, object], body: str) -> str:
    """A Markdown file with YAML front matter."""
    import yaml

    dumped = yaml.safe_dump(front, sort_keys=False, allow_unicode=True, width=88)
    return f"---\n{dumped}---\n{body.rstrip()}\n"
