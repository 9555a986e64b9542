"""One handler per command: read arguments, call one ``Canal`` method, return a document."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from canal.errors import UsageError
from canal.limits import parse_json, read_limited


def _canal(args: argparse.Namespace) -> Any:
    from canal.runtime.canal import Canal

    return Canal(workflows=args.workflows, home=args.home, checkpointer=args.checkpointer,
                 mcp_config=args.mcp_config)


def _gate_data(args: argparse.Namespace, limits: Any) -> Any:
    """The submission from --gate-data or --gate-file (``-`` is stdin); none means ``{}``."""
    if args.gate_data is not None and args.gate_file is not None:
        raise UsageError("give --gate-data or --gate-file, not both")
    if args.gate_file is not None:
        source, text = "--gate-file", read_limited(args.gate_file, "--gate-file", limits)
    elif args.gate_data is not None:
        source, text = "--gate-data", args.gate_data
    else:
        return {}
    return parse_json(text, source, limits)


def validate(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        reports = canal.validate(args.names, budget=args.budget)
    for report in reports:
        report["problems"] = [p.to_json() for p in report["problems"]]
        report["warnings"] = [p.to_json() for p in report["warnings"]]
    count = sum(len(r["problems"]) for r in reports)
    return {"status": "invalid" if count else "ok", "problem_count": count, "workflows": reports}


def start(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.start(args.workflow, thread_id=args.thread_id).to_json()


def advance(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        data = _gate_data(args, canal.settings.limits)
        return canal.advance(args.thread_id, data, step=args.step).to_json()


def plan(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        data = _gate_data(args, canal.settings.limits)
        return canal.plan(args.thread_id, data)


def current(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.current(args.thread_id).to_json()


def history(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.history(args.thread_id)


def prune(args: argparse.Namespace) -> dict[str, Any]:
    from canal.runtime.retention import parse_age

    age = parse_age(args.older_than)
    with _canal(args) as canal:
        return canal.prune(age, include_waiting=args.include_unfinished)


def recover(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.recover(args.thread_id).to_json()


def rewind(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.rewind(args.thread_id, args.step).to_json()


def migrate(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.migrate(args.thread_id).to_json()


def runs(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        found = canal.runs()
    if args.status:
        found = [r for r in found if r["status"] == args.status]
    return {"status": "ok", "count": len(found), "runs": found}


def abort(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.abort(args.thread_id).to_json()


def show(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.show(args.workflow)


def graph(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return {"status": "ok", "workflow": args.workflow, "mermaid": canal.graph(args.workflow)}


def discover(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.discover()


def index(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.index(full=args.full)


def search(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.search(args.query, limit=args.limit)


def meta(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.meta(args.tool, required_only=args.required_only)


def call(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.call(args.tool, parse_json(args.args, "--args", canal.settings.limits),
                          confirm=args.confirm)


def run(args: argparse.Namespace) -> dict[str, Any]:
    from canal.cli.run import drive

    with _canal(args) as canal:
        return drive(canal, args)


def langgraph_json(args: argparse.Namespace) -> dict[str, Any]:
    from pathlib import Path

    from canal.integrations.langgraph_json import write_langgraph_json

    with _canal(args) as canal:
        return write_langgraph_json(Path(args.output), canal.workflows())


def serve(args: argparse.Namespace) -> dict[str, Any] | None:
    import anyio

    from canal.integrations import mcp_server

    with _canal(args) as canal:
        if args.print_config:
            return mcp_server.client_config(canal)
        if args.http is None:
            anyio.run(mcp_server.serve_stdio, canal)
        else:
            anyio.run(mcp_server.serve_http, canal, args.http)
    return None  # stdout belonged to the protocol: nothing more to print


def skill(args: argparse.Namespace) -> dict[str, Any]:
    from pathlib import Path

    from canal.integrations.skill import write_skill

    with _canal(args) as canal:
        return write_skill(Path(args.dir), canal.settings.workflows)


def new(args: argparse.Namespace) -> dict[str, Any]:
    if args.from_tool is None and args.description is None:
        raise UsageError("canal new needs --description TEXT (or --from-tool TOOL)")
    with _canal(args) as canal:
        return canal.new_workflow(args.name, args.description, from_tool=args.from_tool)


def add_step(args: argparse.Namespace) -> dict[str, Any]:
    with _canal(args) as canal:
        return canal.add_step(args.workflow, args.id, args.type, title=args.title,
                              fields=args.field, tool=args.tool, mapping=args.map,
                              after=args.after)


def _new_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("name", metavar="NAME", help="the new workflow's name (its folder)")
    parser.add_argument("--description", metavar="TEXT",
                        help="one line: what the workflow does (required without --from-tool)")
    parser.add_argument("--from-tool", metavar="TOOL",
                        help="write a whole workflow that asks for this tool's fields, calls "
                             "it and shows its result (after canal discover)")


def _add_step_arguments(parser: argparse.ArgumentParser) -> None:
    _workflow(parser)
    parser.add_argument("--id", required=True, help="the step id (letters, digits, _ and -)")
    parser.add_argument("--type", required=True, metavar="TYPE",
                        help="interactive, automated or notification")
    parser.add_argument("--title", metavar="TEXT", help="a short title shown with the step")
    parser.add_argument("--field", action="append", default=[], metavar="NAME:TYPE[:required]",
                        help="a gate field of an interactive step (repeatable); TYPE is "
                             "string, integer, number, boolean, array or object")
    parser.add_argument("--tool", metavar="TOOL", help="the tool an automated step calls")
    parser.add_argument("--map", action="append", default=[], metavar="ARG=VALUE",
                        help="an argument of the tool (repeatable); a value that parses as "
                             "JSON stays JSON: priority=1, title={{gate.ask.title}}")
    parser.add_argument("--after", metavar="ID",
                        help="insert after this step; later step files are renumbered")


def _langgraph_json_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--output", default="langgraph.json", metavar="PATH",
                        help="the file to write (default ./langgraph.json)")


def _serve_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--http", type=_port, metavar="PORT",
                        help="serve streamable HTTP on http://127.0.0.1:PORT/mcp instead of "
                             "stdio")
    parser.add_argument("--print-config", action="store_true",
                        help="print the mcpServers entry for an MCP client (absolute paths) "
                             "instead of serving")


def _port(text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise argparse.ArgumentTypeError(f"--http takes a port number, 1 to 65535: {text!r}")
    return int(text)


def _skill_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--dir", default=".claude/skills/canal", metavar="PATH",
                        help="the skill's folder (default .claude/skills/canal)")


def _no_arguments(parser: argparse.ArgumentParser) -> None:
    """The command takes only the common options."""


def _index_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--full", action="store_true",
                        help="objects with server and hints instead of one line each")


def _search_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", metavar="QUERY",
                        help="a few words about the task (quote them as one argument)")
    parser.add_argument("--limit", type=int, default=5, metavar="N",
                        help="at most N workflows and N tools (default 5)")


def _meta_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tool", help="tool name (as in the index)")
    parser.add_argument("--required-only", action="store_true",
                        help="only the fields a call must give")


def _call_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("tool", help="tool name (as in the index)")
    parser.add_argument("--args", default="{}", metavar="JSON", help="the arguments as JSON")
    parser.add_argument("--confirm", action="store_true",
                        help="go ahead with a tool whose server marks it destructive")


def _workflow(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("workflow", help="workflow name (a folder in the workflows folder)")


def _thread(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("thread_id", metavar="THREAD", help="the run's thread id")


def _start_arguments(parser: argparse.ArgumentParser) -> None:
    _workflow(parser)
    parser.add_argument("--thread-id", help="use this thread id instead of a generated one")


def _plan_arguments(parser: argparse.ArgumentParser) -> None:
    _thread(parser)
    parser.add_argument("--gate-data", metavar="JSON", help="the step's data as inline JSON")
    parser.add_argument("--gate-file", metavar="PATH",
                        help="read the data from a file ('-': stdin)")


def _advance_arguments(parser: argparse.ArgumentParser) -> None:
    _plan_arguments(parser)
    parser.add_argument("--step", metavar="ID",
                        help="apply only if the run is still at this step (else: stale)")


def _run_arguments(parser: argparse.ArgumentParser) -> None:
    _start_arguments(parser)
    parser.add_argument("--answers", metavar="FILE",
                        help="JSON or YAML answers {step id: {field: value}} instead of prompts")


def _prune_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--older-than", required=True, metavar="AGE",
                        help="last changed longer ago than this: 90s, 15m, 12h, 30d, 2w")
    parser.add_argument("--include-unfinished", action="store_true",
                        help="also remove runs still waiting or failed (never by default)")


def _validate_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("names", nargs="*", metavar="WORKFLOW",
                        help="workflows to check (default: all)")
    parser.add_argument("--budget", type=_tokens, metavar="N",
                        help="estimate what an agent reads at each step (characters / 4) "
                             "and warn about steps over N tokens")


def _tokens(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"--budget takes a whole number of tokens, "
                                         f"at least 1: {text!r}")
    return int(text)


def _runs_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--status", help="only runs with this status (e.g. awaiting_input)")


def _rewind_arguments(parser: argparse.ArgumentParser) -> None:
    _thread(parser)
    parser.add_argument("step", metavar="STEP", help="the interactive step to answer again")


Handler = Callable[[argparse.Namespace], dict[str, Any] | None]
COMMANDS: list[tuple[str, Handler, str, Callable[[argparse.ArgumentParser], None]]] = [
    ("validate", validate, "check workflow definitions and report every problem",
     _validate_arguments),
    ("new", new, "create a workflow: its folder and WorkFlow.md, or with --from-tool a "
     "whole workflow around one tool", _new_arguments),
    ("add-step", add_step, "write one step file into a workflow, at the end or after a step",
     _add_step_arguments),
    ("show", show, "a workflow at a glance before starting it: its steps, the fields they "
     "ask, the tools they call with their fixed arguments and where the others come from",
     _workflow),
    ("start", start, "start a run of a workflow", _start_arguments),
    ("advance", advance, "submit the current step's data", _advance_arguments),
    ("plan", plan, "dry run: the calls advance would make with this data, and where it "
     "would stop (calls nothing, changes nothing)", _plan_arguments),
    ("current", current, "show where a run stands", _thread),
    ("runs", runs, "list runs", _runs_arguments),
    ("abort", abort, "abort a run", _thread),
    ("history", history, "every transition of a run", _thread),
    ("prune", prune, "remove old completed and aborted runs", _prune_arguments),
    ("recover", recover, "continue a run whose process died mid-step, as far as is safe",
     _thread),
    ("rewind", rewind, "take a run back to an earlier interactive step to answer it again, "
     "while nothing after it changed anything", _rewind_arguments),
    ("migrate", migrate, "move a run onto the workflow definition now on disk, if safe",
     _thread),
    ("graph", graph, "the compiled graph of a workflow as Mermaid text", _workflow),
    ("discover", discover, "sync tools from the configured MCP servers", _no_arguments),
    ("index", index, "workflows, then tools: one line each", _index_arguments),
    ("search", search, "the workflows and tools that best match a task, ranked, one line "
     "each as in the index", _search_arguments),
    ("meta", meta, "one tool's fields after its rules", _meta_arguments),
    ("call", call, "call one tool, checked against its metadata", _call_arguments),
    ("run", run, "drive a workflow in the terminal (prompts per gate field)", _run_arguments),
    ("serve", serve, "canal as an MCP server: stdio, or streamable HTTP with --http PORT; "
     "--print-config prints the client's mcpServers entry", _serve_arguments),
    ("skill", skill, "write or update the Agent Skill folder (SKILL.md) that teaches an "
     "agent canal and lists the workflows", _skill_arguments),
    ("langgraph-json", langgraph_json,
     "write every workflow into langgraph.json for LangGraph Server",
     _langgraph_json_arguments),
]
