"""Hostile input: every limit is a clear error that stores nothing."""

from __future__ import annotations

import json
import re

import pytest

from canal import Canal, ConfigError, PythonTools
from canal.errors import LimitExceeded
from canal.spec import check_workflow
from tests.conftest import project_steps, write_workflow


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
    ("limits: {data_bytes: 0}\n", "limits.data_bytes must be a whole number above 0"),
    ("limits: {size: 3}\n", "limits: unknown key(s) size"),
])
def test_bad_limits(tmp_path, text, message):
    from canal.config import load_settings

    (tmp_path / "canal.yaml").write_text(text)
    with pytest.raises(ConfigError, match=re.escape(message)):
        load_settings(cwd=tmp_path, environ={})


@pytest.mark.parametrize("args, stdin, message", [
    (["--gate-file", "-"], json.dumps({"project_name": "x" * 300_000}),
     "--gate-file is 300020 bytes; the limit is 262144"),
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
