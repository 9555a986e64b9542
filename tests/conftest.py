"""Shared fixtures: a workflow-folder factory, checkpointers, tools that record their calls,
and a CLI runner that starts a new process per call."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any, Callable

import pytest
import yaml

from canal import Canal, PythonTools

ROOT = Path(__file__).resolve().parent.parent
POSTGRES_URL = os.environ.get("CANAL_TEST_POSTGRES", "postgresql://postgres@127.0.0.1:5432/test")


def write_workflow(root: Path, name: str, steps: dict[str, Any],
                   entry: dict[str, Any] | str | None = None,
                   entry_file: str = "WorkFlow.md") -> Path:
    """Write ``root/name`` with one file per ``steps`` item.

    A step value is either raw file text, or a ``(front matter dict, body)`` pair, or a
    front matter dict alone.
    """
    folder = root / name
    (folder / "references").mkdir(parents=True, exist_ok=True)
    if entry is None:
        entry = {"name": name, "description": f"the {name} workflow"}
    (folder / entry_file).write_text(_file(entry, "Overview."), encoding="utf-8")
    for filename, value in steps.items():
        if isinstance(value, tuple):
            text = _file(*value)
        else:
            text = _file(value, "")
        (folder / "references" / filename).write_text(text, encoding="utf-8")
    return folder


def _file(front: dict[str, Any] | str, body: str) -> str:
    if isinstance(front, str):
        return front
    return "---\n" + yaml.safe_dump(front, sort_keys=False) + "---\n" + body + "\n"


def project_steps() -> dict[str, Any]:
    """The seeds' example: collect -> create project -> create role (chained) -> summary."""
    return {
        "01-collect-project-info.md": ({
            "type": "interactive",
            "gate": {"schema": {
                "project_name": {"type": "string", "required": True, "desc": "Project name"},
                "host": {"type": "string", "required": True, "desc": "Service domain",
                         "pattern": r"^[a-z0-9.-]+\.[a-z]{2,}$"},
                "admins": {"type": "array", "required": False, "default": ["root"]},
                "quota": {"type": "integer", "min": 1, "max": 100, "default": 10},
            }},
        }, "Ask the user for the project name and its domain."),
        "02-create-project.md": ({
            "type": "automated",
            "automation": {"tool": "create_project", "input_mapping": {
                "name": "{{gate.collect-project-info.project_name}}",
                "host": "{{gate.collect-project-info.host}}",
                "admins": "{{gate.collect-project-info.admins}}",
                "quota": "{{gate.collect-project-info.quota}}",
            }},
        }, ""),
        "03-create-role.md": ({
            "type": "automated",
            "automation": {"tool": "create_role", "input_mapping": {
                "project_id": "{{result.create-project.project.id}}",
                "first_admin": "{{result.create-project.project.admins[0]}}",
                "label": "role of {{result.create-project.project.name}} ({{gate.collect-project-info.quota}})",
            }},
        }, ""),
        "04-summary.md": ({"type": "notification"},
                          "Project {{result.create-project.project.id}} has role "
                          "{{result.create-role.role_id}}."),
    }


class Recorder:
    """Python tools for the project workflow that record every call they receive."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.fail: set[str] = set()

    def create_project(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("create_project", kwargs))
        if "create_project" in self.fail:
            raise RuntimeError("backend says no")
        return {"project": {"id": 42, "name": kwargs["name"], "admins": kwargs["admins"]}}

    def create_role(self, **kwargs: Any) -> dict[str, Any]:
        self.calls.append(("create_role", kwargs))
        if "create_role" in self.fail:
            raise RuntimeError("role backend down")
        return {"role_id": f"role-{kwargs['project_id']}"}

    def client(self) -> PythonTools:
        return PythonTools({"create_project": self.create_project,
                            "create_role": self.create_role})


@pytest.fixture
def workflows(tmp_path: Path) -> Path:
    root = tmp_path / "workflows"
    root.mkdir()
    return root


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


def _postgres_url() -> str | None:
    try:
        import psycopg
    except ImportError:
        return None
    try:
        with psycopg.connect(POSTGRES_URL, connect_timeout=3):
            return POSTGRES_URL
    except psycopg.Error:
        return None


@pytest.fixture(scope="session")
def postgres_schema_url() -> Callable[[], str]:
    """Make a fresh PostgreSQL schema and return a URL that uses it (skip without a server)."""
    url = _postgres_url()
    made: list[str] = []

    def make() -> str:
        if url is None:
            reason = f"no PostgreSQL server reachable at {POSTGRES_URL}"
            if os.environ.get("CANAL_REQUIRE_POSTGRES"):
                pytest.fail(reason + " (CANAL_REQUIRE_POSTGRES is set)")
            pytest.skip(reason)
        import psycopg

        schema = f"canal_test_{uuid.uuid4().hex[:10]}"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        made.append(schema)
        return f"{url}?options=-csearch_path%3D{schema}"

    yield make
    if url is not None and made:
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            for schema in made:
                conn.execute(f"DROP SCHEMA IF EXISTS {schema} CASCADE")


@pytest.fixture(params=["memory", "sqlite", "postgres"])
def checkpointer(request: pytest.FixtureRequest, tmp_path: Path,
                 postgres_schema_url: Callable[[], str]) -> Any:
    """A checkpointer every Canal object in one test shares: a saver object for memory,
    a URL for SQLite and PostgreSQL (so each Canal opens its own connection)."""
    if request.param == "memory":
        from langgraph.checkpoint.memory import InMemorySaver

        return InMemorySaver()
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path / 'state' / 'state.db'}"
    return postgres_schema_url()


@pytest.fixture
def make_canal(workflows: Path, tmp_path: Path, checkpointer: Any,
               recorder: Recorder) -> Callable[..., Canal]:
    """A factory of new ``Canal`` objects over the same workflows, state and tools."""
    made: list[Canal] = []

    def make(**overrides: Any) -> Canal:
        options = {"workflows": workflows, "home": tmp_path / ".canal",
                   "checkpointer": checkpointer, "tools": recorder.client()}
        options.update(overrides)
        canal = Canal(**options)
        made.append(canal)
        return canal

    yield make
    for canal in made:
        canal.close()


class Cli:
    """Runs ``python -m canal`` as a new process in a project folder."""

    def __init__(self, cwd: Path) -> None:
        self.cwd = cwd
        self.env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(cwd), str(ROOT)])}
        for name in ("CANAL_WORKFLOWS", "CANAL_HOME", "CANAL_CHECKPOINTER", "CANAL_MCP_CONFIG"):
            self.env.pop(name, None)

    def __call__(self, *args: str, stdin: str | None = None) -> "Result":
        proc = subprocess.run([sys.executable, "-m", "canal", *args], cwd=self.cwd,
                              env=self.env, input=stdin, capture_output=True, text=True,
                              timeout=120)
        return Result(proc.returncode, proc.stdout, proc.stderr)


class Result:
    def __init__(self, code: int, stdout: str, stderr: str) -> None:
        self.code, self.stdout, self.stderr = code, stdout, stderr
        assert "Traceback" not in stdout + stderr, stdout + stderr
        self.json = json.loads(stdout)  # exactly one JSON document, success or not


TOOLS_MODULE = '''
import json, pathlib
LOG = pathlib.Path(__file__).with_name("calls.jsonl")

def _log(name, kwargs):
    with LOG.open("a") as f:
        f.write(json.dumps([name, kwargs]) + "\\n")

def create_project(**kwargs):
    _log("create_project", kwargs)
    return {"project": {"id": 42, "name": kwargs["name"], "admins": kwargs["admins"]}}

def create_role(**kwargs):
    _log("create_role", kwargs)
    if pathlib.Path(__file__).with_name("fail_role").exists():
        raise RuntimeError("role backend down")
    return {"role_id": "role-%s" % kwargs["project_id"]}
'''


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder with the project workflow, Python tools and a canal.yaml."""
    write_workflow(tmp_path / "workflows", "create-project", project_steps())
    (tmp_path / "project_tools.py").write_text(TOOLS_MODULE, encoding="utf-8")
    (tmp_path / "canal.yaml").write_text(
        "python_tools:\n"
        "  create_project: project_tools:create_project\n"
        "  create_role: project_tools:create_role\n", encoding="utf-8")
    return tmp_path


@pytest.fixture
def cli(project: Path) -> Cli:
    return Cli(project)


def tool_calls(project: Path) -> list[list[Any]]:
    log = project / "calls.jsonl"
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines()]


TOOLBOX = ROOT / "tests" / "servers" / "toolbox.py"


def schema(*required: str, **props: Any) -> dict[str, Any]:
    """A JSON Schema object with ``props`` (name -> type or property dict)."""
    return {"type": "object", "required": list(required),
            "properties": {k: v if isinstance(v, dict) else {"type": v}
                           for k, v in props.items()}}


class Toolbox:
    """Test MCP servers (tests/servers/toolbox.py) configured in ``<root>/.mcp.json``.

    Each server has a folder with its spec, ``starts.log`` and ``calls.log``; a test changes
    a server's tools with ``set_tools`` and reads what happened with ``starts``/``calls``.
    """

    def __init__(self, root: Path) -> None:
        self.root = root
        self.servers: dict[str, dict[str, Any]] = {}

    def add(self, name: str, tools: list[dict[str, Any]], page_size: int = 100,
            timeout: float = 20) -> None:
        folder = self.root / "servers" / name
        folder.mkdir(parents=True, exist_ok=True)
        self.servers[name] = {"command": sys.executable,
                              "args": [str(TOOLBOX), str(folder / "spec.json"), name],
                              "timeout": timeout}
        self.set_tools(name, tools, page_size)
        self.write_config()

    def add_raw(self, name: str, entry: dict[str, Any]) -> None:
        self.servers[name] = entry
        self.write_config()

    def write_config(self) -> None:
        (self.root / ".mcp.json").write_text(json.dumps({"mcpServers": self.servers}, indent=1))

    def set_tools(self, name: str, tools: list[dict[str, Any]], page_size: int = 100) -> None:
        spec = {"page_size": page_size, "tools": tools}
        (self.root / "servers" / name / "spec.json").write_text(json.dumps(spec))

    def starts(self, name: str) -> int:
        log = self.root / "servers" / name / "starts.log"
        return len(log.read_text().splitlines()) if log.exists() else 0

    def calls(self, name: str) -> list[dict[str, Any]]:
        log = self.root / "servers" / name / "calls.log"
        return [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []


@pytest.fixture
def toolbox(tmp_path: Path) -> Toolbox:
    return Toolbox(tmp_path)
