"""What ``canal --help`` tells a reader beyond the options: exit codes, statuses, examples.

Each table is written once, here. ``canal --help`` prints the exit codes and the statuses,
each command's help ends with its example, and ``canal.cli.main``'s docstring quotes
``exit_code_table()`` word for word (a test keeps the two equal).
"""

from __future__ import annotations

import textwrap

EXIT_CODES: tuple[tuple[int, str], ...] = (
    (0, "success"),
    (1, "unexpected internal error"),
    (2, "usage: bad arguments, malformed JSON, a name that is not a plain name, or a "
        "scripted run whose answers ran out"),
    (3, "the submission was rejected by the step's gate (nothing changed)"),
    (4, "unknown workflow, thread or tool"),
    (5, "invalid workflow definition"),
    (6, "the run cannot take this action: finished run, taken thread id, another process "
        "is changing it, data for a step it has left (stale), unsafe migration, a rewind "
        "past a call that changed something"),
    (7, "a tool failed; the run is parked as failed"),
    (8, "configuration error"),
    (9, "discover: a server could not be listed (the others were synced)"),
    (130, "interrupted (Ctrl-C)"),
    (143, "terminated (SIGTERM; 129 for SIGHUP); the MCP servers it ran were stopped"),
)

# The "status" of a JSON document: an envelope's first, then those of other commands.
STATUSES: tuple[tuple[str, str], ...] = (
    ("awaiting_input", "the run waits at 'step': do it, then advance with its gate's fields"),
    ("rejected", "the data did not pass the gate (see missing, errors); nothing changed"),
    ("failed", "a tool call or its read-back failed; the run waits at that step for an "
               "action (retry, skip, abort, edit; recheck after a read-back)"),
    ("stale", "the data was for a step the run has already left; nothing changed"),
    ("completed", "the run reached its end"),
    ("aborted", "the run was aborted"),
    ("unknown", "runs: the run's definition can no longer be read"),
    ("ok", "a command about no run's step (index, search, meta, call, plan, ...) "
           "succeeded"),
    ("invalid", "validate: a workflow definition has problems"),
    ("partial", "discover: some servers could not be listed"),
    ("error", "the command was refused: error.code and error.message say why"),
)

# One example per command in canal.cli.commands.COMMANDS.
EXAMPLES: dict[str, str] = {
    "validate": "canal validate create-permission-set",
    "start": "canal start create-permission-set",
    "advance": "canal advance create-permission-set-3f2a --gate-data "
               "'{\"project_name\": \"billing\"}'",
    "plan": "canal plan create-permission-set-3f2a --gate-data "
            "'{\"project_name\": \"billing\", \"host\": \"billing.example.com\"}'",
    "current": "canal current create-permission-set-3f2a",
    "runs": "canal runs --status awaiting_input",
    "abort": "canal abort create-permission-set-3f2a",
    "history": "canal history create-permission-set-3f2a --pretty",
    "prune": "canal prune --older-than 30d",
    "recover": "canal recover create-permission-set-3f2a",
    "show": "canal show create-permission-set",
    "new": "canal new open-ticket --description 'Open a support ticket for a customer'",
    "add-step": "canal add-step open-ticket --id ask --type interactive "
                "--field title:string:required --field priority:integer",
    "rewind": "canal rewind create-permission-set-3f2a collect-project-info",
    "migrate": "canal migrate create-permission-set-3f2a",
    "graph": "canal graph create-permission-set",
    "discover": "canal discover --mcp-config .mcp.json",
    "index": "canal index --full",
    "search": "canal search 'create a project' --limit 3",
    "meta": "canal meta create_project --required-only",
    "call": "canal call get_project --args '{\"project_id\": 42}'",
    "run": "canal run create-permission-set --answers answers.yaml",
    "langgraph-json": "canal langgraph-json --output langgraph.json",
    "serve": "canal serve --print-config",
    "skill": "canal skill --dir .claude/skills/canal",
}

WIDTH = 88


def table(rows: tuple[tuple[object, str], ...], indent: int = 2) -> str:
    """``rows`` as aligned ``key  meaning`` lines, the meaning wrapped under itself."""
    keys = [str(key) for key, _ in rows]
    width = max(map(len, keys))
    lines = []
    for key, (raw, meaning) in zip(keys, rows, strict=True):
        key = key.rjust(width) if isinstance(raw, int) else key.ljust(width)
        lines += textwrap.wrap(meaning, WIDTH, initial_indent=" " * indent + key + "  ",
                               subsequent_indent=" " * (indent + width + 2))
    return "\n".join(lines)


def exit_code_table() -> str:
    return table(EXIT_CODES)


def top_epilog() -> str:
    """The end of ``canal --help``: exit codes, then the statuses a document can have."""
    return (f"exit codes:\n{exit_code_table()}\n\n"
            f"statuses (the \"status\" of the JSON document on stdout):\n{table(STATUSES)}")


def example_epilog(command: str) -> str | None:
    example = EXAMPLES.get(command)
    return f"example: {example}" if example else None
