"""Hostile workflow definitions from the command line: what passes ``validate`` also starts,
what does not is one clear problem for that workflow, and every output is valid JSON."""

from __future__ import annotations

import ast
import json
import math
from pathlib import Path
from typing import Any

import pytest

from canal.cli.main import render
from tests.conftest import Cli, tool_calls, write_workflow

CANAL = Path(__file__).resolve().parents[2] / "canal"


def strict_json(text: str) -> Any:
    """``text`` parsed as JSON proper: NaN and Infinity are not JSON."""
    def refuse(constant: str) -> None:
        raise AssertionError(f"{constant} in the output: {text[:200]}")
    return json.loads(text, parse_constant=refuse)


def call_step(mapping: str) -> str:
    return ("---\ntype: automated\nautomation:\n  tool: create_project\n"
            f"  input_mapping: {mapping}\n---\n")


@pytest.mark.parametrize(("value", "problem"), [
    ("!!binary aGVsbG8=", "not a JSON value: bytes (!!binary)"),
    ("!!set {a, b}", "not a JSON value: a set (!!set)"),
    (".nan", "not a JSON value: a number that is not finite"),
])
def test_what_json_cannot_hold_is_invalid_before_start(cli: Cli, project: Path, value: str,
                                                       problem: str) -> None:
    write_workflow(project / "workflows", "odd", {"01-call.md": call_step(f"{{name: {value}}}")})
    report = cli("validate", "odd")
    assert report.code == 5
    assert [p["problem"] for p in report.json["workflows"][0]["problems"]] == [
        f"references/01-call.md: automation.input_mapping.name: {problem}"]
    started = cli("start", "odd")
    assert started.code == 5 and started.json["error"]["code"] == "invalid_workflow"
    assert cli("runs").json["count"] == 0 and tool_calls(project) == []


def test_a_bare_date_reaches_the_tool_as_text(cli: Cli, project: Path) -> None:
    write_workflow(project / "workflows", "dated", {
        "01-call.md": call_step("{name: 2024-01-01, admins: [2024-01-02]}")})
    assert cli("validate", "dated").code == 0
    started = cli("start", "dated")
    assert started.code == 0, started.stdout
    assert tool_calls(project) == [["create_project", {"name": "2024-01-01",
                                                       "admins": ["2024-01-02"]}]]


def test_a_non_finite_default_is_never_printed(cli: Cli, project: Path) -> None:
    write_workflow(project / "workflows", "nan", {
        "01-ask.md": "---\ntype: interactive\ngate:\n  schema:\n"
                     "    n: {type: number, default: .nan, min: -.inf, max: .inf}\n---\n"})
    for args in (["validate"], ["start", "nan"], ["index"]):
        strict_json(cli(*args).stdout)
    assert cli("start", "nan").code == 5


def test_output_that_is_not_json_is_an_internal_error_not_nan() -> None:
    with pytest.raises(ValueError):
        render({"n": math.nan}, pretty=False)
    assert strict_json(render({"n": 1.5, "s": "é"}, pretty=False)) == {"n": 1.5, "s": "é"}


def test_every_json_serialisation_in_canal_refuses_nan() -> None:
    # One rule for everything canal prints or stores: json.dumps(..., allow_nan=False).
    lax = []
    for path in sorted(CANAL.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                    and node.func.attr in ("dumps", "dump")
                    and isinstance(node.func.value, ast.Name) and node.func.value.id == "json"):
                strict = any(k.arg == "allow_nan" and isinstance(k.value, ast.Constant)
                             and k.value.value is False for k in node.keywords)
                if not strict:
                    lax.append(f"{path.relative_to(CANAL.parent)}:{node.lineno}")
    assert lax == []


def test_nul_in_a_step_is_a_problem_on_postgres(project: Path,
                                                postgres_schema_url: Any) -> None:
    url = postgres_schema_url()
    folder = write_workflow(project / "workflows", "nul", {"01-n.md": {"type": "notification"}})
    (folder / "references" / "01-n.md").write_bytes(b"---\ntype: notification\n---\na\x00b\n")
    cli = Cli(project)
    started = cli("start", "nul", "--checkpointer", url)
    assert started.code == 5, started.stdout
    message = "the file holds a NUL character (byte 0), which no store can keep as text"
    assert started.json["error"]["problems"] == [{
        "path": "references/01-n.md", "line": 4, "message": message,
        "problem": f"references/01-n.md:4: {message}"}]
    assert cli("start", "create-project", "--checkpointer", url).code == 0
    assert cli("runs", "--checkpointer", url).json["count"] == 1


DEEP = "---\ntype: notification\ntitle: " + "[" * 500 + "]" * 500 + "\n---\n"


def test_deep_nesting_is_one_workflow_problem(cli: Cli, project: Path) -> None:
    write_workflow(project / "workflows", "deep", {"01-n.md": DEEP},
                   entry="---\nname: deep\ndescription: " + "[" * 500 + "]" * 500 + "\n---\n")
    index = cli("index")
    assert index.code == 0
    assert index.json["workflows"][0].startswith("create-project: ")
    report = cli("validate")
    assert report.code == 5
    reports = {r["workflow"]: r for r in report.json["workflows"]}
    assert reports["create-project"]["valid"] is True
    assert [p["path"] for p in reports["deep"]["problems"]] == ["WorkFlow.md",
                                                                "references/01-n.md"]
    assert all("nested more than" in p["problem"] for p in reports["deep"]["problems"])
    assert cli("start", "deep").code == 5


def test_deep_nesting_does_not_stop_discover(cli: Cli, project: Path, toolbox: Any) -> None:
    toolbox.add("s", [{"name": "ping", "description": "Ping.",
                       "inputSchema": {"type": "object", "properties": {}}}])
    write_workflow(project / "workflows", "deep", {"01-n.md": DEEP},
                   entry="---\nname: deep\ndescription: " + "[" * 500 + "]" * 500 + "\n---\n")
    found = cli("discover", "--mcp-config", str(toolbox.root / ".mcp.json"))
    assert found.code == 0, found.stdout
    assert found.json["workflow_count"] >= 1


def test_a_catastrophic_pattern_rejects_without_hanging(cli: Cli, project: Path) -> None:
    write_workflow(project / "workflows", "regex", {
        "01-ask.md": "---\ntype: interactive\ngate:\n  schema:\n"
                     "    a: {type: string, required: true, pattern: '^(a|a)*$'}\n---\n"})
    started = cli("start", "regex")
    thread = started.json["thread_id"]
    before = cli("current", thread).json
    answer = cli("advance", thread, "--gate-data", json.dumps({"a": "a" * 80 + "b"}))
    assert answer.code == 3 and answer.json["status"] == "rejected"
    assert "took more than" in answer.json["errors"][0]["message"]
    assert cli("current", thread).json == before
    assert cli("advance", thread, "--gate-data", json.dumps({"a": "aaaa"})).json["status"] \
        == "completed"


def test_a_workflow_linked_from_outside_is_refused(cli: Cli, project: Path,
                                                   tmp_path_factory: Any) -> None:
    outside = write_workflow(tmp_path_factory.mktemp("elsewhere"), "escape",
                             {"01-n.md": {"type": "notification"}})
    (project / "workflows" / "escape").symlink_to(outside, target_is_directory=True)
    assert [line.split(":")[0] for line in cli("index").json["workflows"]] == ["create-project"]
    report = cli("validate")
    assert report.code == 5
    reports = {r["workflow"]: r for r in report.json["workflows"]}
    assert reports["escape"]["valid"] is False
    assert "outside" in reports["escape"]["problems"][0]["problem"]
    started = cli("start", "escape")
    assert started.code == 4 and "outside" in started.json["error"]["message"]
    assert cli("runs").json["count"] == 0
