"""Hostile input: every limit is a clear error that stores nothing."""

from __future__ import annotations

import json
import os
import re
import resource
import subprocess
import sys

import pytest

from canal import Canal, ConfigError, PythonTools
from canal.errors import LimitExceeded
from canal.spec import check_workflow
from tests.conftest import ROOT, project_steps, write_workflow


@pytest.fixture
def canal(workflows, tmp_path):
    write_workflow(workflows, "create-project", project_steps())
    canal = Canal(workflows=workflows, home=tmp_path / ".canal", tools=PythonTools({}))
    canal.start("create-project", thread_id="t")
    return canal


def checkpoints(canal):
    return len(list(canal.store.saver().list({"configurable": {"thread_id": "t"}})))


def nested(depth):
    value: object = "x"
    for _ in range(depth - 1):
        value = [value]
    return value


@pytest.mark.parametrize("data, message", [
    ({"project_name": "x" * 300_000}, "holds a string of 300000 characters; the limit is 65536"),
    ({"project_name": ["a" * 60_000] * 5}, "is larger than 262144 bytes"),
    ({"project_name": nested(40)}, "is nested more than 32 levels deep"),
])
def test_oversized_submissions_are_refused(canal, data, message):
    before = checkpoints(canal)
    with pytest.raises(LimitExceeded) as caught:
        canal.advance("t", data)
    assert message in caught.value.message and caught.value.code == "limit"
    assert checkpoints(canal) == before


def test_limits_come_from_canal_yaml(tmp_path, workflows):
    write_workflow(workflows, "create-project", project_steps())
    (tmp_path / "canal.yaml").write_text("limits: {data_bytes: 50, depth: 3}\n")
    canal = Canal(settings=__import__("canal.config").config.load_settings(
        workflows=workflows, home=tmp_path / ".canal", cwd=tmp_path))
    canal.start("create-project", thread_id="t")
    with pytest.raises(LimitExceeded, match="larger than 50 bytes"):
        canal.advance("t", {"project_name": "x" * 60, "host": "a.example.com"})
    with pytest.raises(LimitExceeded, match="nested more than 3 levels"):
        canal.advance("t", {"project_name": [[["deep"]]]})


@pytest.mark.parametrize("text, message", [
    ("limits: {data_bytes: 0}\n", "limits.data_bytes must be a whole number from 1 to 2147483647"),
    ("limits: {size: 3}\n", "limits: unknown key(s) size"),
])
def test_bad_limits(tmp_path, text, message):
    from canal.config import load_settings

    (tmp_path / "canal.yaml").write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_settings(cwd=tmp_path, environ={})


@pytest.mark.parametrize("args, stdin, message", [
    (["--gate-file", "-"], json.dumps({"project_name": "x" * 300_000}),
     "--gate-file is larger than 262144 bytes"),
    (["--gate-data", "[" * 50_000 + "]" * 50_000], None, "--gate-data is nested too deeply"),
])
def test_oversized_input_on_the_command_line(cli, project, args, stdin, message):
    thread = cli("start", "create-project").json["thread_id"]
    result = cli("advance", thread, *args, stdin=stdin)
    assert result.code == 2 and result.json["error"]["code"] == "limit"
    assert message in result.json["error"]["message"]
    assert cli("current", thread).json["step"]["id"] == "collect-project-info"


def test_yaml_aliases_are_refused(workflows):
    bomb = ('---\ntype: interactive\ntitle: &a "lol"\ngate:\n  schema:\n'
            '    f: {type: string, desc: *a}\n---\n')
    folder = write_workflow(workflows, "w", {"01-a.md": bomb})
    _, problems = check_workflow(folder)
    assert [str(p) for p in problems] == [
        "references/01-a.md:6: YAML error: aliases (*name) are not allowed"]


def test_oversized_files_and_front_matter(workflows):
    huge_front = "---\ntype: notification\ntitle: " + "x" * 70_000 + "\n---\n"
    folder = write_workflow(workflows, "w", {"01-a.md": huge_front,
                                             "02-b.md": "---\ntype: notification\n---\n"})
    (folder / "references" / "02-b.md").write_bytes(b"---\ntype: notification\n---\n"
                                                    + b"y" * (1024 * 1024 + 10))
    _, problems = check_workflow(folder)
    assert [str(p) for p in problems] == [
        "references/01-a.md: the front matter is larger than 65536 bytes",
        "references/02-b.md: the file is larger than 1048576 bytes"]


def test_a_workflow_folder_that_links_outside_is_not_found(workflows, tmp_path):
    outside = write_workflow(tmp_path / "elsewhere", "evil", project_steps())
    (workflows / "evil").symlink_to(outside)
    canal = Canal(workflows=workflows, home=tmp_path / ".canal")
    with pytest.raises(Exception, match="no workflow 'evil'"):
        canal.start("evil")
    assert not (tmp_path / ".canal").exists()


def _in_one_gib(*args: str, cwd, stdin=None) -> subprocess.CompletedProcess:
    """``canal ARGS`` in a new process that may use at most 1 GiB of address space, so a
    command that reads an endless input runs out of memory quickly instead of taking the
    machine's."""

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run([sys.executable, "-m", "canal", *args], cwd=cwd, env=env,
                          stdin=stdin, capture_output=True, text=True, timeout=120,
                          preexec_fn=limit)


@pytest.mark.parametrize("args, message", [
    (["--gate-file", "/dev/zero"], "--gate-file is larger than 262144 bytes"),
    (["--gate-file", "-"], "--gate-file is larger than 262144 bytes"),
])
def test_an_endless_gate_file_or_stdin_is_read_only_up_to_the_limit(cli, project, args,
                                                                   message):
    thread = cli("start", "create-project").json["thread_id"]
    with open("/dev/zero", "rb") as zeros:
        proc = _in_one_gib("advance", thread, *args, cwd=project, stdin=zeros)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["error"] == {
        "code": "limit", "message": message + " (limits.data_bytes in canal.yaml)"}
    assert cli("current", thread).json["step"]["id"] == "collect-project-info"


def test_an_endless_answers_file_is_read_only_up_to_the_limit(cli, project):
    proc = _in_one_gib("run", "create-project", "--answers", "/dev/zero", cwd=project)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert json.loads(proc.stdout)["error"]["message"] == (
        "--answers is larger than 262144 bytes (limits.data_bytes in canal.yaml)")


DIGITS = "7" * 5000


@pytest.mark.parametrize("args, message", [
    (["advance", "THREAD", "--gate-data", f'{{"quota": {DIGITS}}}'],
     "--gate-data holds a number of more than 4300 digits"),
    (["advance", "THREAD", "--gate-file", "-"],
     "--gate-file holds a number of more than 4300 digits"),
    (["call", "anything", "--args", f"[{DIGITS}]"],
     "--args holds a number of more than 4300 digits"),
    (["run", "create-project", "--answers", "answers.yaml"],
     "--answers holds a number of more than 4300 digits"),
])
def test_a_number_too_long_for_python_is_a_limit_error(cli, project, args, message):
    thread = cli("start", "create-project").json["thread_id"]
    (project / "answers.yaml").write_text(f"collect-project-info: {{quota: {DIGITS}}}\n")
    args = [thread if a == "THREAD" else a for a in args]
    result = cli(*args, stdin=f'{{"quota": {DIGITS}}}')
    assert result.code == 2 and result.json["error"]["code"] == "limit"
    assert result.json["error"]["message"] == message
    assert cli("current", thread).json["step"]["id"] == "collect-project-info"
