"""canal as an Agent Skill (``canal skill``): a ``SKILL.md`` that tells an agent when to use
canal, how to drive a run, and which workflows there are.

The file is the front matter (``name: canal`` and a ``description``), then the generated
part between ``<!-- canal:begin -->`` and ``<!-- canal:end -->``. Rerunning ``canal skill``
rewrites the front matter and the generated part only: whatever a person wrote outside the
markers (above or below them) stays as it was. A file without the markers keeps its text,
and the generated part is appended after it.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

BEGIN, END = "<!-- canal:begin -->", "<!-- canal:end -->"

DESCRIPTION = (
    "Run the canal workflows of this project, step-by-step checked procedures that "
    "collect data from the user and call tools (start a run, answer each step, take a run "
    "up again). Use it when the user asks for a task one of the workflows listed here does, "
    "or to continue or inspect a canal run.")

_FRONT = re.compile(r"\A---\n.*?\n---\n", re.DOTALL)


def front_matter() -> str:
    import yaml

    fields = yaml.safe_dump({"name": "canal", "description": DESCRIPTION}, sort_keys=False,
                            width=1000, allow_unicode=True)
    return f"---\n{fields}---\n"


def generated(workflows: list[tuple[str, str]]) -> str:
    """The part of ``SKILL.md`` that ``canal skill`` owns, markers included."""
    listed = "\n".join(f"- `{name}`: {description}" for name, description in workflows)
    return f"""{BEGIN}
<!-- Written by `canal skill`; rerun it after the workflows change. Edit outside these
     markers: what you write there is kept. -->
# canal

canal runs the workflows below one checked step at a time. Prefer a workflow to calling
tools by hand: it asks for the right fields, checks them, and makes the calls in order.

## How to drive a run
1. `canal index`: the workflows, then the tools, one line each (one line per server when
   there are many tools: then `canal search 'what the task does'` ranks them for the task).
2. `canal start WORKFLOW`: answers a JSON envelope with `thread_id`, `status` and `step`
   (its `instructions` and its `gate`, the fields to collect).
3. Do what `step.instructions` says, then follow `next`: usually
   `canal advance THREAD --gate-data '{{"field": "value"}}'`.
4. `status` says what happened: `rejected` (nothing changed: fix `errors`/`missing` and
   advance again), `failed` (ask the user; advance with `{{"action": "retry"}}`, `skip` or
   `abort`), `completed` or `aborted` (tell the user).

Every command prints one JSON document; `status: error` means it was refused, and
`error.message` and `next` say why and what to do.

## Commands
- `canal current THREAD`: where a run stands (take it up in a new session).
- `canal plan THREAD --gate-data JSON`: what the next advance would call, without calling.
- `canal runs [--status S]`, `canal abort THREAD`.
- `canal meta TOOL`, `canal call TOOL --args JSON`: one tool outside a workflow.
- `canal show WORKFLOW`: what a workflow would do, before starting it.

## Workflows
{listed or "(none yet: `canal new NAME --description TEXT` creates one)"}
{END}
"""


def write_skill(folder: Path, workflows_folder: Path) -> dict[str, Any]:
    """Write or update ``folder/SKILL.md`` for the workflows in ``workflows_folder``."""
    from canal.spec.loader import describe_workflows

    path = folder / "SKILL.md"
    part = generated(describe_workflows(workflows_folder))
    old = path.read_text(encoding="utf-8") if path.exists() else ""
    body = _FRONT.sub("", old, count=1)
    start, end = body.find(BEGIN), body.find(END)
    if start != -1 and end > start:
        body = body[:start] + part.rstrip("\n") + body[end + len(END):]
    else:
        body = (body.rstrip("\n") + "\n\n" if body.strip() else "") + part
    text = front_matter() + body
    folder.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return {"status": "ok", "path": str(path.resolve()), "chars": len(text),
            "next": {"command": None, "hint": "rerun canal skill after the workflows "
                                              "change; text outside the canal markers "
                                              "is kept"}}
