"""The workflow creator: scaffold workflow folders and step files.

Pure file operations over a workflows folder (no graph, no tool client): ``new_workflow``
writes ``<name>/WorkFlow.md``, ``add_step`` writes one ``references/NN-<id>.md`` (and
renumbers later step files for an insertion), ``tool_workflow`` writes a whole workflow
from one tool's fields. Every argument is checked before the first file is written, so a
refused command changes nothing. ``builtin_tools`` offers the same operations as in-process
tools (``canal_new``, ``canal_add_step``, ``canal_validate``) to the shipped
``create-workflow`` workflow.
"""

from __future__ import annotations

from canal.authoring.create import add_step, new_workflow
from canal.authoring.from_tool import tool_workflow

__all__ = ["add_step", "new_workflow", "tool_workflow"]
