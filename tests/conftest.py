"""Shared fixtures: a workflow-folder factory, checkpointers, tools that record their calls,
and two command-line runners: ``Cli`` runs each command in this process (the default),
``ProcessCli`` starts a new process per call (for tests about processes)."""

from __future__ import annotations

import contextlib
import importlib
import io
import json
import os
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from canal import Canal, PythonTools
from canal.tools.cache import ToolCache, ToolMeta, index_markdown

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


@pytest.fixture(params=["sqlite", "postgres"])
def store_args(request: pytest.FixtureRequest, postgres_schema_url: Callable[[], str]
               ) -> list[str]:
    """The command-line options that put every process of a test on one store: the
    project's SQLite database (none needed), or a fresh PostgreSQL schema."""
    if request.param == "sqlite":
        return []
    return ["--checkpointer", postgres_schema_url()]


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


CLEARED_ENV = ("CANAL_WORKFLOWS", "CANAL_HOME", "CANAL_CHECKPOINTER", "CANAL_MCP_CONFIG")


class _Runner:
    """What both command-line runners share: a project folder and the environment a command
    sees there (this process's, minus canal's settings; a test may change ``env``)."""

    def __init__(self, cwd: Path, env: dict[str, str] | None = None) -> None:
        self.cwd = cwd
        if env is None:
            env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(cwd), str(ROOT)]),
                   "PYTHONDONTWRITEBYTECODE": "1"}  # no stale .pyc when a test rewrites tools
            for name in CLEARED_ENV:
                env.pop(name, None)
        self.env = env

    def __call__(self, *args: str, stdin: str | None = None) -> Result:
        raise NotImplementedError


def fresh_imports(runner: _Runner, commands: list[list[str]],
                  prefixes: tuple[str, ...]) -> list[str]:
    """The modules whose names start with one of ``prefixes`` that a new interpreter has
    imported once it ran ``commands`` (each must exit 0) in the runner's project."""
    probe = (
        "import contextlib, io, json, sys\n"
        "from canal.cli.main import run\n"
        f"for argv in {commands!r}:\n"
        "    with contextlib.redirect_stdout(io.StringIO()):\n"
        "        assert run(argv) == 0, argv\n"
        f"print(json.dumps(sorted(m for m in sys.modules if m.startswith({prefixes!r}))))\n")
    out = subprocess.run([sys.executable, "-c", probe], cwd=runner.cwd, env=runner.env,
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    loaded: list[str] = json.loads(out.stdout)
    return loaded


class Cli(_Runner):
    """Runs canal's command line (``canal.cli.main.run``) in this process, as if it were a
    new ``canal`` process started in the project folder. The default runner."""

    def __call__(self, *args: str, stdin: str | None = None) -> Result:
        from canal.cli.main import run

        with in_project(self.cwd, self.env, stdin) as (out, err):
            code = run(list(args))
        return Result(code, out.getvalue(), err.getvalue())


class ProcessCli(_Runner):
    """Runs ``python -m canal`` as a new process in a project folder. Only for tests about
    processes: kills, two processes at once, what a fresh process imports."""

    def __call__(self, *args: str, stdin: str | None = None) -> Result:
        proc = subprocess.run([sys.executable, "-m", "canal", *args], cwd=self.cwd,
                              env=self.env, input=stdin, capture_output=True, text=True,
                              timeout=120)
        return Result(proc.returncode, proc.stdout, proc.stderr)


class ExitInProcess(BaseException):
    """Code run by the in-process ``Cli`` tried to end the process (it would end pytest)."""


def _refuse_exit(code: int) -> None:
    raise ExitInProcess(f"os._exit({code}) in an in-process command: this test is about a "
                        "process dying, so run that command with ProcessCli")


def _set_environ(target: dict[str, str]) -> None:
    for name in [name for name in os.environ if name not in target]:
        del os.environ[name]
    for name, value in target.items():
        if os.environ.get(name) != value:
            os.environ[name] = value


def _loaded_from(module: Any, folder: Path) -> bool:
    # __path__ too: a tools package, or a namespace package (it has no __file__)
    places = [getattr(module, "__file__", None), *(getattr(module, "__path__", None) or ())]
    return any(isinstance(p, str) and Path(p).resolve().is_relative_to(folder) for p in places)


@contextlib.contextmanager
def in_project(cwd: Path, env: dict[str, str], stdin: str | None = None
               ) -> Iterator[tuple[io.StringIO, io.StringIO]]:
    """Make this process look like a new ``canal`` process started in ``cwd`` with ``env``:
    that working directory and environment, ``cwd`` first on ``sys.path`` (``python -m`` puts
    it there, so ``module:function`` tools import from it), ``stdin`` as standard input and
    standard output and error captured. Afterwards everything is put back, even when the
    block raises, and the modules imported from ``cwd`` are forgotten, so the next command
    (or test) imports its own folder's ``project_tools`` afresh."""
    if "CANAL_FAILPOINTS" in env:
        raise RuntimeError("CANAL_FAILPOINTS makes the process SIGKILL itself: use ProcessCli")
    # The MCP SDK takes sys.stderr as its servers' stderr when first imported: import it now,
    # so that it keeps pytest's stream rather than this block's StringIO.
    import mcp.client.stdio  # noqa: F401

    folder = Path(cwd).resolve()
    saved_env, saved_cwd, saved_path = dict(os.environ), os.getcwd(), list(sys.path)
    saved_streams = sys.stdin, sys.stdout, sys.stderr
    saved_bytecode, saved_exit = sys.dont_write_bytecode, os._exit
    saved_modules = set(sys.modules)
    out, err = io.StringIO(), io.StringIO()
    try:
        _set_environ(env)
        os.chdir(folder)
        sys.path.insert(0, str(folder))
        sys.dont_write_bytecode = True
        importlib.invalidate_caches()
        os._exit = _refuse_exit  # type: ignore[assignment]
        sys.stdin, sys.stdout, sys.stderr = io.StringIO(stdin or ""), out, err
        yield out, err
    finally:
        sys.stdin, sys.stdout, sys.stderr = saved_streams
        os._exit = saved_exit
        sys.dont_write_bytecode = saved_bytecode
        sys.path[:] = saved_path
        sys.path_importer_cache.pop(str(folder), None)
        for name in set(sys.modules) - saved_modules:  # canal's lazy imports stay
            if _loaded_from(sys.modules.get(name), folder):
                sys.modules.pop(name, None)
        os.chdir(saved_cwd)
        _set_environ(saved_env)


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


@pytest.fixture
def process_cli(project: Path) -> ProcessCli:
    return ProcessCli(project)


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


NOUNS = {  # noun -> (its fields with descriptions, what the noun is)
    "project": ({"name": "Project name", "host": "Service domain the project answers on",
                 "admins": "Comma-separated administrator logins"}, "a hosted project"),
    "role": ({"project_id": "Project the role belongs to", "role_name": "Name of the role",
              "permissions": "Permission codes granted"}, "an access role in a project"),
    "user": ({"email": "Login e-mail address", "display_name": "Name shown to others"},
             "a person who can sign in"),
    "ticket": ({"title": "One-line summary", "priority": "Urgency, 1 (low) to 4 (urgent)",
                "assignee": "Who works on it"}, "a support ticket"),
    "invoice": ({"customer_id": "Customer billed", "amount": "Total in cents",
                 "currency": "ISO currency code"}, "a customer invoice"),
    "dns_record": ({"zone": "DNS zone", "record_type": "A, AAAA, CNAME or TXT",
                    "value": "What the record points to"}, "a DNS record in a zone"),
}
VERBS = {"create": "Create {what}.", "get": "Get one {noun} by id.",
         "list": "List every {noun}, newest first.", "update": "Change fields of {what}.",
         "delete": "Delete {what} for good."}


def filler_tool(i: int) -> dict[str, Any]:
    """One of many near-identical CRUD tools with system fields (``resource_<i>_update``):
    the crowd a search must find the right tool in."""
    return {"name": f"resource_{i:03d}_update",
            "description": f"Update resource family {i}: change its name, owner, state and "
                           "labels. Returns the updated record.",
            "annotations": {"idempotentHint": True},
            "inputSchema": schema(
                "resource_id", "name",
                resource_id={"type": "integer", "description": "Id of the resource"},
                name={"type": "string", "description": "New display name"},
                owner={"type": "string", "description": "Owner user name"},
                state={"type": "integer", "description": "State: 0-draft,1-active,2-retired"},
                labels={"type": "array", "items": {"type": "string"},
                        "description": "Free-form labels"},
                id={"type": "integer", "description": "Record id (system-managed)"},
                update_time={"type": "string", "description": "Last update time"},
                update_admin={"type": "string", "description": "Last editor"})}


def crud_tools() -> list[dict[str, Any]]:
    """A realistic platform: five CRUD tools for each of six nouns, described as servers
    describe them, plus two tools told apart only by a field's description."""
    tools = []
    for noun, (fields, what) in NOUNS.items():
        for verb, text in VERBS.items():
            props = {"id": {"type": "integer", "description": f"Id of the {noun}"}}
            if verb in ("create", "update"):
                props |= {f: {"type": "string", "description": d} for f, d in fields.items()}
            tools.append({"name": f"{verb}_{noun}" + ("s" if verb == "list" else ""),
                          "description": text.format(what=what, noun=noun.replace("_", " ")),
                          "inputSchema": schema(*(["id"] if verb in ("get", "delete") else []),
                                                **props)})
    tools.append({"name": "send_notice", "description": "Send a notice.",
                  "inputSchema": schema("to", to={"type": "string", "description": "Who"},
                                        via={"type": "string",
                                             "description": "Delivered over postmark"})})
    tools.append({"name": "send_alert", "description": "Send an alert.",
                  "inputSchema": schema("to", to={"type": "string", "description": "Who"},
                                        channel={"type": "string",
                                                 "description": "Delivered over pagerduty"})})
    return tools


def cache_tools(home: Path, servers: dict[str, list[dict[str, Any]]],
                rules: dict[str, str] | None = None) -> None:
    """Write the tool cache as discover does, with ``rules`` for some tools."""
    metas = [ToolMeta.from_listing(t["name"], server, t)
             for server, tools in servers.items() for t in tools]
    texts = {m.name: "" for m in metas} | (rules or {})
    ToolCache(home / "tools").save(metas, texts, [], index_markdown([], metas))


@pytest.fixture
def toolbox(tmp_path: Path) -> Toolbox:
    return Toolbox(tmp_path)


# Project tools that log every call durably; create_role exits the process (as a crash
# would) once while the file die-in-create_role exists beside them.
DYING_TOOLS = '''
import json, os, pathlib
HERE = pathlib.Path(__file__).parent

def _log(name, kwargs):
    with (HERE / "calls.jsonl").open("a") as f:
        f.write(json.dumps([name, kwargs]) + "\\n")
        f.flush()
        os.fsync(f.fileno())

def create_project(**kwargs):
    _log("create_project", kwargs)
    return {"project": {"id": 42, "name": kwargs["name"], "admins": kwargs["admins"]}}

def create_role(**kwargs):
    _log("create_role", kwargs)
    marker = HERE / "die-in-create_role"
    if marker.exists():
        marker.unlink()
        os._exit(9)
    return {"role_id": "role-%s" % kwargs["project_id"]}
'''
