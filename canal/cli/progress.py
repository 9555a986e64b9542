"""The progress ``canal run`` shows while a tool runs, from the run's tool events
(``canal.nodes.events``), always on stderr: stdout carries only the final JSON document.

On a terminal a live line (spinner, tool, step, elapsed time, drawn by ``rich``) stands
while the call runs and is replaced by a one-line outcome when it ends. Elsewhere (a pipe,
a log file, an agent reading stderr) each event is one plain line::

    tool create_project (step create-project) started
    tool create_project (step create-project) ok in 0.41 s
"""

from __future__ import annotations

from typing import Any, TextIO


def _outcome(event: dict[str, Any]) -> str:
    return f"{'ok' if event['ok'] else 'failed'} in {event['duration']:.2f} s"


def _what(event: dict[str, Any]) -> str:
    kind = "compensation" if event.get("compensation") else "tool"
    return f"{kind} {event['tool']} (step {event['step']})"


class PlainProgress:
    """One line per tool event."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def __call__(self, event: dict[str, Any]) -> None:
        if event.get("event") != "tool":
            return
        state = "started" if event["phase"] == "started" else _outcome(event)
        print(f"{_what(event)} {state}", file=self.stream, flush=True)

    def close(self) -> None:
        """Nothing stays on screen."""


class LiveProgress:
    """A live line while a tool runs, then its outcome (rich, on a terminal)."""

    def __init__(self, stream: TextIO) -> None:
        from rich.console import Console
        from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.console = Console(file=stream)
        self.live = Progress(SpinnerColumn(), TextColumn("{task.description}"),
                             TimeElapsedColumn(), console=self.console, transient=True)

    def __call__(self, event: dict[str, Any]) -> None:
        from rich.markup import escape

        if event.get("event") != "tool":
            return
        if event["phase"] == "started":
            self.live.start()
            self.live.add_task(escape(f"{_what(event)} running"), total=None)
            return
        self.close()
        mark = "[green]✓[/]" if event["ok"] else "[red]✗[/]"
        self.console.print(f"{mark} {escape(_what(event))} {_outcome(event)}",
                           highlight=False)

    def close(self) -> None:
        """Take the live line down (a run interrupted mid-call leaves none behind)."""
        self.live.stop()
        for task in list(self.live.task_ids):
            self.live.remove_task(task)


def progress_for(stream: TextIO) -> PlainProgress | LiveProgress:
    """A live line on a terminal, plain lines elsewhere."""
    isatty = getattr(stream, "isatty", None)
    return LiveProgress(stream) if isatty is not None and isatty() else PlainProgress(stream)
