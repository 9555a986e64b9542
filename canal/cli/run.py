"""``canal run``: a person drives a workflow in the terminal.

Each gate field is asked for in turn (choices for enums, hidden input for sensitive fields,
Enter to skip an optional field); after a rejection only the fields it names are asked
again, Enter keeping the earlier answer (a sensitive field is asked again, never shown);
notifications are shown and acknowledged; a failed step asks whether to retry, skip or
abort. ``--answers FILE`` (JSON or YAML, ``{step id: {field: value}}``, ``{failed step id:
{action: ...}}``) scripts the run instead. A scripted action is given to a failed step once:
if the step fails again, the run stops there (exit 7), so a scripted ``retry`` can never
loop. Prompts and progress (a live line while a tool runs, on a terminal) go to stderr;
stdout gets the final envelope as JSON, like every other command.
"""

from __future__ import annotations

import argparse
import getpass
import json
import sys
from collections.abc import Callable
from typing import Any

from canal.errors import UsageError
from canal.limits import Limits, read_limited, too_many_digits

Ask = Callable[[str, bool], str]


def say(text: str = "") -> None:
    print(text, file=sys.stderr, flush=True)


def ask_line(prompt: str, secret: bool) -> str:
    """One line from the person at the terminal; EOF is a usage error (nothing is submitted)."""
    if secret and sys.stdin.isatty():
        return getpass.getpass(prompt, stream=sys.stderr)
    sys.stderr.write(prompt)
    sys.stderr.flush()
    line = sys.stdin.readline()
    if not line:
        raise UsageError("no more input on stdin; answer interactively or use --answers FILE")
    return line.rstrip("\n")


def load_answers(path: str, limits: Limits) -> dict[str, Any]:
    """The answers file, read as JSON data by the rules of front matter (no aliases, a
    bounded depth, JSON types only: ``canal.spec.frontmatter``)."""
    import yaml

    from canal.spec.frontmatter import json_document

    text = read_limited(path, "--answers", limits)
    try:
        data = json_document(text)
    except (yaml.YAMLError, ValueError) as exc:
        if "integer string conversion" in str(exc):  # a number longer than Python reads
            raise too_many_digits("--answers") from exc
        raise UsageError(f"--answers: cannot read {path}: {_unquoted(exc)}") from exc
    if not isinstance(data, dict) or not all(isinstance(v, dict) for v in data.values()):
        raise UsageError(f"--answers: {path} must map step ids to objects of field values")
    return data


def _unquoted(exc: Exception) -> str:
    """A YAML error without the lines of the file it quotes (they may hold secrets)."""
    import yaml

    if not isinstance(exc, yaml.MarkedYAMLError):
        return str(exc)
    mark = exc.problem_mark
    where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
    return f"{exc.problem or exc.context or 'not YAML'}{where}"


def convert(kind: str, text: str) -> Any:
    """A typed value from what a person typed (ValueError when it does not parse)."""
    if kind == "integer":
        return int(text)
    if kind == "number":
        return float(text)
    if kind == "boolean":
        if text.lower() in ("y", "yes", "true", "1"):
            return True
        if text.lower() in ("n", "no", "false", "0"):
            return False
        raise ValueError("answer y or n")
    if kind in ("array", "object"):  # a string is taken as typed, even "{..." or "[..."
        if kind == "array" and not text.startswith("["):
            return [part.strip() for part in text.split(",") if part.strip()]
        return json.loads(text)
    return text


NOTHING: Any = object()  # no earlier answer


def ask_field(name: str, field: dict[str, Any], ask: Ask,
              earlier: Any = NOTHING) -> tuple[bool, Any]:
    """Ask for one field until the answer parses: ``(given, value)``. An ``earlier``
    answer is kept when the person just presses Enter, unless the field is sensitive: a
    secret is never shown, so it is asked again from scratch."""
    label = f"{name}" + (f" ({field['desc']})" if field.get("desc") else "")
    keep = earlier is not NOTHING and not field.get("sensitive")
    choices: list[Any] = field.get("enum") or []
    numbered = bool(choices) and all(isinstance(c, str) for c in choices)
    if choices:
        say(f"{label}, one of:")
        say("  " + ("  ".join(f"{i}) {c}" for i, c in enumerate(choices, 1)) if numbered
                    else ", ".join(map(str, choices))))
    if keep:
        hint = f" [Enter keeps {_shown(earlier)}]"
    else:
        hint = "" if field["required"] else " [Enter to skip]"
    while True:
        prompt = f"{'choice' if choices else label}{hint}: "
        text = ask(prompt, bool(field.get("sensitive"))).strip()
        if not text:
            if keep:
                return True, earlier
            if not field["required"]:
                return False, None
            if field.get("allow_empty"):  # the gate takes empty text as an answer
                return True, ""
            say("  this field is required")
            continue
        if numbered and text.isdigit() and 1 <= int(text) <= len(choices):
            return True, choices[int(text) - 1]
        try:
            value = convert(field["type"], text)
        except ValueError as exc:  # a parse error may quote the answer: not a secret one
            say(f"  not a {field['type']}" + ("" if field.get("sensitive") else f": {exc}"))
            continue
        if choices and value not in choices:
            say("  not one of the choices")
            continue
        return True, value


def _shown(value: Any) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, allow_nan=False)


def ask_step(step: dict[str, Any], ask: Ask) -> dict[str, Any]:
    data: dict[str, Any] = {}
    for name, field in step["gate"].items():
        if name == "step" and "action" in data and data["action"] != "edit":
            continue  # an action gate's step names where edit goes back to, nothing else
        given, value = ask_field(name, field, ask)
        if given:
            data[name] = value
    return data


def ask_again(env: dict[str, Any], earlier: dict[str, Any], ask: Ask) -> dict[str, Any]:
    """After a rejection: ask only the fields it names (missing or in error), each with the
    earlier answer as its default; every other earlier answer is submitted again as it was."""
    gate = env["step"]["gate"]
    named = set(env["missing"]) | {e.get("field") for e in env["errors"]}
    again = [name for name in gate if name in named]
    if not again:  # nothing to narrow down to (e.g. the object itself): ask everything
        return ask_step(env["step"], ask)
    kept = [name for name in earlier if name not in named]
    if kept:
        say(f"  kept: {', '.join(kept)}; asking again: {', '.join(again)}")
    data = {name: value for name, value in earlier.items() if name not in named}
    for name in again:
        given, value = ask_field(name, gate[name], ask, earlier.get(name, NOTHING))
        if given:
            data[name] = value
    return data


def show(env: dict[str, Any]) -> None:
    step = env["step"]
    say("")
    say(f"== {step.get('title') or step['id']} ({step['type']})")
    if step["instructions"]:
        say(step["instructions"])
    if step.get("call"):
        say(f"  call: {step['call']['tool']} "
            f"{json.dumps(step['call']['arguments'], ensure_ascii=False, allow_nan=False)}")
    for error in env["errors"]:
        say(f"  ! {error.get('field') or error.get('step', '')}: "
            f"{error.get('message') or error.get('error')}")


def drive(canal: Any, args: argparse.Namespace, ask: Ask = ask_line) -> dict[str, Any]:
    """Run or resume a workflow to its end (or to a scripted run's missing answer), showing
    each tool call's progress on stderr while it runs (``canal.cli.progress``)."""
    from canal.cli.progress import progress_for

    progress = progress_for(sys.stderr)
    canal.on_event = progress
    try:
        return _drive(canal, args, ask)
    finally:
        progress.close()
        canal.on_event = None


def _drive(canal: Any, args: argparse.Namespace, ask: Ask) -> dict[str, Any]:
    answers = load_answers(args.answers, canal.settings.limits) if args.answers else None
    if args.thread_id and canal.has_run(args.thread_id):
        env = canal.current(args.thread_id).to_json()
    else:
        env = canal.start(args.workflow, thread_id=args.thread_id).to_json()
    thread = env["thread_id"]
    executed = list(env["executed"])  # every tool call this command made, in order
    answered_failures: set[str] = set()  # failed steps a scripted action was given to
    typed: dict[str, Any] = {}  # what the person last submitted to the step it is at
    say(f"run {thread} (resume with: canal run {args.workflow} --thread-id {thread})")
    while env["status"] in ("awaiting_input", "failed", "rejected"):
        show(env)
        step = env["step"]
        if answers is not None:
            if step["type"] != "notification" and step["id"] not in answers:
                say(f"no answer for step {step['id']!r} in {args.answers}; the run waits there")
                return {**env, "executed": executed}
            if env["status"] == "rejected":
                return {**env, "executed": executed}
            if env["status"] == "failed":
                if step["id"] in answered_failures:
                    say(f"step {step['id']!r} failed again after its scripted action; the run "
                        "waits there for a person to decide")
                    return {**env, "executed": executed}
                answered_failures.add(step["id"])
            data = answers.get(step["id"], {})
        elif step["type"] == "notification" or not step["gate"]:
            ask("[Enter to continue] ", False)
            data = {}
        elif env["status"] == "rejected" and typed.get("step") == step["id"]:
            data = ask_again(env, typed["data"], ask)
        else:
            data = ask_step(step, ask)
        typed = {"step": step["id"], "data": data}
        env = canal.advance(thread, data).to_json()
        executed += env["executed"]
        env["executed"] = executed
    say(f"\nrun {thread}: {env['status']}")
    return env
