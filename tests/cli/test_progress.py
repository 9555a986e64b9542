"""``canal run`` shows each tool call's progress on stderr while it runs: plain lines when
stderr is not a terminal, a live line drawn by rich when it is; stdout stays one JSON
document."""

from __future__ import annotations

import io
import json

from canal.cli.progress import LiveProgress, PlainProgress, progress_for
from tests.conftest import tool_calls

ANSWERS = {"collect-project-info": {"project_name": "p", "host": "p.example.com"}}


def test_run_prints_one_plain_line_per_tool_event_on_a_pipe(cli, project, tmp_path):
    answers = tmp_path / "answers.json"
    answers.write_text(json.dumps(ANSWERS))
    result = cli("run", "create-project", "--answers", str(answers))
    assert result.code == 0 and result.json["status"] == "completed"
    lines = [line for line in result.stderr.splitlines() if line.startswith("tool ")]
    assert lines[0] == "tool create_project (step create-project) started"
    assert lines[1].startswith("tool create_project (step create-project) ok in ")
    assert lines[2] == "tool create_role (step create-role) started"
    assert lines[3].startswith("tool create_role (step create-role) ok in ")
    assert len(lines) == 4 and len(tool_calls(project)) == 2
    assert "tool " not in result.stdout


class Terminal(io.StringIO):
    encoding = "utf-8"

    def isatty(self) -> bool:
        return True


STARTED = {"event": "tool", "phase": "started", "step": "make", "tool": "make_[x]",
           "started": "2026-01-01T00:00:00.000+00:00"}
FINISHED = {**STARTED, "phase": "finished", "finished": "2026-01-01T00:00:01.500+00:00",
            "duration": 1.5, "ok": False}


def test_on_a_terminal_a_live_line_stands_while_the_tool_runs():
    screen = Terminal()
    progress = progress_for(screen)
    assert isinstance(progress, LiveProgress)
    progress(STARTED)
    assert progress.live.live.is_started  # the live line is up during the call
    progress(FINISHED)
    assert not progress.live.live.is_started
    assert "✗\x1b[0m tool make_[x] (step make) failed in 1.50 s\n" in screen.getvalue()
    assert "\x1b[" in screen.getvalue()  # drawn for a terminal


def test_an_interrupted_call_leaves_no_live_line():
    progress = progress_for(Terminal())
    progress(STARTED)
    progress.close()
    assert not progress.live.live.is_started and not progress.live.task_ids


def test_elsewhere_each_event_is_one_plain_line():
    out = io.StringIO()
    progress = progress_for(out)
    assert isinstance(progress, PlainProgress)
    progress(STARTED)
    progress({**FINISHED, "compensation": True})
    progress({"something": "else"})
    assert out.getvalue().splitlines() == [
        "tool make_[x] (step make) started",
        "compensation make_[x] (step make) failed in 1.50 s"]
