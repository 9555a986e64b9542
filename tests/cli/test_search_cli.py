"""``canal search`` and the summed-up ``canal index`` from the command line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import Cli, cache_tools, crud_tools, filler_tool, fresh_imports


@pytest.fixture
def many(project: Path, cli: Cli) -> Cli:
    """The project with 32 + 60 tools in its tool cache."""
    cache_tools(project / ".canal", {"platform": crud_tools(),
                                     "bench": [filler_tool(i) for i in range(60)]})
    return cli


def test_search_prints_index_lines_and_where_to_go_next(many: Cli) -> None:
    result = many("search", "delete a role", "--limit", "2")
    assert result.code == 0, result.stderr
    assert result.json["tools"][0] == "delete_role: Delete an access role in a project for good."
    assert len(result.json["tools"]) == 2
    assert result.json["workflows"] == []
    assert result.json["next"] == {"command": "meta", "tool": "delete_role", "hint": (
        "no workflow matched: canal meta TOOL shows a tool's fields before you call it")}
    project = many("search", "create a project on a domain").json
    assert project["workflows"] == ["create-project: the create-project workflow"]
    assert project["tools"][0].startswith("create_project: ")
    assert project["next"]["command"] == "start"
    assert "canal start WORKFLOW" in project["next"]["hint"]
    assert len(many("search", "update").json["tools"]) == 5  # the default limit


@pytest.mark.parametrize("argv, message", [
    (["search", ""], "search needs a query"),
    (["search", "  "], "search needs a query"),
    (["search", "project", "--limit", "0"], "at least 1: 0"),
    (["search", "project", "--limit", "many"], "invalid int value: 'many'"),
    (["search"], "the following arguments are required: QUERY"),
])
def test_a_bad_query_or_limit_exits_2_without_a_traceback(many: Cli, argv: list[str],
                                                          message: str) -> None:
    result = many(*argv)
    assert result.code == 2
    assert result.json["status"] == "error" and message in result.json["error"]["message"]
    assert "Traceback" not in result.stdout + result.stderr


def test_the_index_sums_up_above_50_tools_and_full_lists_them(many: Cli) -> None:
    index = many("index").json
    assert index["tool_count"] == 92 and "tools" not in index
    assert [line.split(":")[0] for line in index["servers"]] == ["bench", "platform"]
    assert "canal search QUERY" in index["next"]["hint"]
    full = many("index", "--full").json
    assert len(full["tools"]) == 92


def test_search_imports_no_graph_engine_no_mcp_and_index_no_numpy(many: Cli) -> None:
    assert fresh_imports(many, [["index"]], ("numpy", "bm25s")) == []
    assert fresh_imports(many, [["search", "create a project"]], (
        "langchain_core", "langgraph", "mcp", "langchain_mcp_adapters")) == []
