"""A scripted agent that finishes a workflow from canal's output alone.

It knows nothing of the workflow: after ``start`` it reads only ``next`` from each answer
(the command, the thread, the step and a few words per field) and makes up data that fits
those words: the first enum value, the example, the default, the lower bound, a word of
its own for any other string. On purpose it makes one mistake (its first answer leaves a
required field out) and, when a step fails, it goes back with ``edit`` and answers that
step again with new words: the two ways a real agent loses calls.

``tests/test_scripted_agent.py`` asserts its counts; ``bench/agent.py`` prints them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

Call = Callable[..., Any]  # canal's CLI: call("advance", thread, ...) -> a result with .stdout


@dataclass
class Tally:
    """What the agent did: its calls, the characters it read, and the answers that did not
    move the run on (a rejection, a failed step's action, a step answered again)."""

    calls: list[str] = field(default_factory=list)
    chars: int = 0
    rejected: int = 0
    failed: int = 0
    answered_again: int = 0
    status: str = ""


def value_for(name: str, words: str, round_: int) -> Any:
    """Data that fits one field's description in ``next.data``."""
    found = re.search(r"one of (\[.*?\])", words)
    if found:
        return json.loads(found.group(1))[0]
    for marker in ("e.g. ", "default "):
        found = re.search(re.escape(marker) + r"(\"[^\"]*\"|\[[^\]]*\]|[^,]+)", words)
        if found:
            return json.loads(found.group(1))
    kind = words.split(",")[0].split(" ")[0]
    low = re.search(r" (-?[0-9.]+)\.\.", words)
    if kind in ("integer", "number"):
        return int(float(low.group(1))) if low else 1
    if kind == "boolean":
        return True
    if kind == "array":
        return []
    if kind == "object":
        return {}
    return f"{name.replace('_', '-')}-{round_}"


def data_for(fields: dict[str, str], round_: int) -> dict[str, Any]:
    """Every required field of ``next.data``; an action gate gets its first choice."""
    return {name: value_for(name, words, round_) for name, words in fields.items()
            if "required" in words.split(", ")}


def drive(call: Call, workflow: str, mistake: bool = True) -> Tally:
    """Run ``workflow`` to its end through ``call``, reading only ``next``."""
    tally = Tally()

    def read(*args: str) -> dict[str, Any]:
        result = call(*args)
        tally.calls.append(args[0])
        tally.chars += len(result.stdout)
        return json.loads(result.stdout)

    answer = read("start", workflow)
    rounds: dict[str, int] = {}  # step -> how often it was answered (a rejection: again)
    while (step_next := answer.get("next")) is not None:
        assert step_next["command"] == "advance", step_next
        fields, step = step_next["data"], step_next["step"]
        if "action" in fields:  # a failed step: go back to the data that caused it
            tally.failed += 1
            data: dict[str, Any] = {"action": "edit"}
        elif "confirm" in fields:
            data = {"confirm": True}
        else:
            if answer["status"] != "rejected":
                rounds[step] = rounds.get(step, 0) + 1
                tally.answered_again += rounds[step] > 1
            data = data_for(fields, rounds[step])
            if mistake and data:
                mistake = False
                data.pop(next(iter(data)))  # leave a required field out, once
        answer = read("advance", step_next["thread_id"], "--step", step, "--gate-data",
                      json.dumps(data))
        tally.rejected += answer["status"] == "rejected"
    tally.status = answer["status"]
    return tally
