"""Everything canal makes in its home is the owner's only: folders 0700, files 0600
(databases with their -wal and -shm files, the key, lock files, the tool cache)."""

from __future__ import annotations

import json
import os
import stat

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from canal import Canal, PythonTools
from tests.conftest import project_steps, write_workflow


@pytest.fixture(autouse=True)
def usual_umask():
    old = os.umask(0o022)  # the common default, which leaves files readable by all
    yield
    os.umask(old)


def modes(root):
    found = {}
    for folder, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = stat.S_IMODE(os.lstat(path).st_mode)
    return found


def test_the_home_and_everything_in_it_is_owner_only(cli, project, toolbox):
    toolbox.add("alpha", [{"name": "echo"}])
    thread = cli("start", "create-project").json["thread_id"]
    assert cli("advance", thread, "--gate-data", json.dumps(
        {"project_name": "p", "host": "p.example.com"})).code == 0
    assert cli("discover").code == 0
    home = project / ".canal"
    with Canal(workflows=project / "workflows", home=home, tools=PythonTools({})) as canal:
        canal.start("create-project")  # its open connection keeps the -wal and -shm files
        found = modes(home)
    assert {"key", "state.db", "state.db-wal", "state.db-shm", "tools", "tools/echo.meta",
            "tools/echo.rules", "tools/index.json", "state.db.locks",
            f"state.db.locks/{thread}"} <= set(found)
    assert stat.S_IMODE(home.stat().st_mode) == 0o700
    assert {name: mode for name, mode in found.items()
            if mode != (0o700 if (home / name).is_dir() else 0o600)} == {}


def test_a_home_with_missing_parents_and_a_saver_objects_side_file(workflows, tmp_path):
    write_workflow(workflows, "create-project", project_steps())
    home = tmp_path / "a" / "b" / ".canal"
    with Canal(workflows=workflows, home=home, checkpointer=InMemorySaver(),
               tools=None) as canal:
        canal.start("create-project", thread_id="t")
    assert {p: oct(m) for p, m in modes(tmp_path / "a").items() if m not in (0o700, 0o600)} \
        == {}
    assert stat.S_IMODE((tmp_path / "a").stat().st_mode) == 0o700
    assert {"b/.canal/canal.db", "b/.canal/canal.db.locks/t"} <= set(modes(tmp_path / "a"))
