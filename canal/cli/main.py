"""``canal``: the agent-facing command line. Parsing and printing only.

Every command prints one JSON document on stdout and exits with the code of its outcome.
An error is that document too (``{"status": "error", "error": {"code", "message"},
"next"}``), printed once: stderr stays quiet, except for ``canal run``, which talks to a
person. A traceback never reaches the user (set ``CANAL_DEBUG=1`` to see one for an
unexpected error, on stderr).

Exit codes:
    0  success
    1  unexpected internal error
    2  usage: bad arguments, malformed JSON, a name that is not a plain name, or a
       scripted run whose answers ran out
    3  the submission was rejected by the step's gate (nothing changed)
    4  unknown workflow, thread or tool
    5  invalid workflow definition
    6  the run cannot take this action: finished run, taken thread id, another process
       is changing it, data for a step it has left (stale), unsafe migration, a rewind
       past a call that changed something
    7  a tool failed; the run is parked as failed
    8  configuration error
    9  discover: a server could not be listed (the others were synced)
  130  interrupted (Ctrl-C)
  143  terminated (SIGTERM; 129 for SIGHUP); the MCP servers it ran were stopped

The table lives in ``canal.cli.helptext``, which ``canal --help`` prints too.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import textwrap
import traceback
from collections.abc import Sequence
from typing import Any

from canal.errors import CanalError, Terminated, UsageError

READ_ONLY = ("current", "runs", "index", "meta", "graph", "history", "show")
EXIT_BY_STATUS = {"rejected": 3, "invalid": 5, "stale": 6, "failed": 7, "partial": 9,
                  "error": 9}


class _Parser(argparse.ArgumentParser):
    """argparse that raises UsageError instead of printing usage and exiting."""

    def error(self, message: str) -> None:  # type: ignore[override]
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _common(parser: argparse.ArgumentParser, suppress: bool) -> None:
    default = argparse.SUPPRESS if suppress else None
    parser.add_argument("--workflows", default=default, metavar="DIR",
                        help="folder of workflow folders (default ./workflows)")
    parser.add_argument("--home", default=default, metavar="DIR",
                        help="state folder (default ./.canal)")
    parser.add_argument("--checkpointer", default=default, metavar="URL",
                        help="sqlite:///path.db, memory: or postgresql://...")
    parser.add_argument("--mcp-config", default=default, metavar="PATH",
                        help="the .mcp.json listing MCP servers (default ./.mcp.json)")
    parser.add_argument("--pretty", action="store_true",
                        default=argparse.SUPPRESS if suppress else False,
                        help="indent the JSON output")


def build_parser() -> argparse.ArgumentParser:
    from canal.cli import commands, helptext

    # Raw epilogs: the tables and examples keep their lines (argparse would re-flow them).
    parser = _Parser(prog="canal", description="Run Markdown workflows around an LLM agent.",
                     epilog=helptext.top_epilog(),
                     formatter_class=argparse.RawDescriptionHelpFormatter)
    _common(parser, suppress=False)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, handler, help_text, add_arguments in commands.COMMANDS:
        command = sub.add_parser(name, help=help_text,
                                 description=textwrap.fill(help_text, helptext.WIDTH),
                                 epilog=helptext.example_epilog(name),
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
        _common(command, suppress=True)
        add_arguments(command)
        command.set_defaults(handler=handler)
    return parser


def render(document: Any, pretty: bool) -> str:
    """``document`` as JSON text; ValueError for a value JSON has no text for (NaN,
    Infinity): canal never prints what a JSON parser would refuse."""
    return json.dumps(document, ensure_ascii=False, indent=2 if pretty else None,
                      allow_nan=False)


def emit(document: Any, pretty: bool) -> None:
    write(render(document, pretty), document, pretty)


def write(text: str, document: Any, pretty: bool) -> None:
    """Print ``text``, the rendering of ``document``; as ASCII-escaped JSON when stdout
    cannot take it (a lone surrogate)."""
    try:
        sys.stdout.write(text + "\n")
    except UnicodeEncodeError:
        sys.stdout.write(json.dumps(document, indent=2 if pretty else None, allow_nan=False)
                         + "\n")
    sys.stdout.flush()


def run(argv: Sequence[str] | None = None) -> int:
    """Run one command; return its exit code."""
    pretty = "--pretty" in (argv if argv is not None else sys.argv[1:])
    try:
        args = build_parser().parse_args(argv)
        document = args.handler(args)
        if document is None:  # serve: stdout belonged to the MCP protocol
            return 0
        text = render(document, pretty)
    except CanalError as exc:
        emit(exc.to_json(), pretty)
        return exc.exit_code
    except Terminated as stop:  # SIGTERM/SIGHUP while MCP servers ran: they were stopped
        emit({"status": "error", "error": {"code": "terminated", "message": "terminated by "
              f"signal {stop.signal}"}, "next": {"command": "current", "hint": "read where "
              "the run stands (current, or runs) before doing anything else"}}, pretty)
        return 128 + stop.signal
    except KeyboardInterrupt:
        emit({"status": "error", "error": {"code": "interrupted", "message": "interrupted"},
              "next": {"command": "current", "hint": "read where the run stands (current, "
                                                     "or runs) before doing anything else"}},
             pretty)
        return 130
    except Exception as exc:  # noqa: BLE001 - the last boundary: no traceback for the user
        if os.environ.get("CANAL_DEBUG"):
            traceback.print_exc()
        message = (f"internal error: {type(exc).__name__}: {exc} (set CANAL_DEBUG=1 for a "
                   "traceback)")
        emit({"status": "error", "error": {"code": "internal", "message": message},
              "next": {"command": None, "hint": "canal failed unexpectedly: report it with "
                                                "the command that caused it"}}, pretty)
        return 1
    write(text, document, pretty)
    if args.command in READ_ONLY:  # reading a failed run is a successful read
        return 0
    if args.command == "run" and document.get("status") == "awaiting_input":
        return 2  # a scripted run stopped for want of an answer
    return EXIT_BY_STATUS.get(document.get("status"), 0)


def main() -> None:
    sys.exit(run())
