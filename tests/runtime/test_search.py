"""``Canal.search`` ranks the workflows and the tools for a task, and ``Canal.index`` sums up
a large tool set per server, over a tool cache written as discover writes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from canal import Canal
from canal.errors import UsageError
from canal.tools.search import words
from tests.conftest import cache_tools, crud_tools, filler_tool, project_steps, write_workflow


@pytest.fixture
def canal(tmp_path: Path) -> Canal:
    write_workflow(tmp_path / "workflows", "create-project", project_steps())
    cache_tools(tmp_path / ".canal", {"platform": crud_tools(),
                                      "bench": [filler_tool(i) for i in range(40)]})
    return Canal(workflows=tmp_path / "workflows", home=tmp_path / ".canal",
                 checkpointer="memory:")


def first_tool(canal: Canal, query: str) -> str:
    return canal.search(query)["tools"][0].split(" ")[0].rstrip(":")


@pytest.mark.parametrize("query, tool", [
    ("create a project", "create_project"),
    ("delete invoices", "delete_invoice"),
    ("list all the users", "list_users"),
    ("change the priority of a ticket", "update_ticket"),
    ("createRole", "create_role"),
    ("get-dns-record", "get_dns_record"),
    ("fetch one invoice by its id", "get_invoice"),
])
def test_the_obviously_right_tool_comes_first(canal: Canal, query: str, tool: str) -> None:
    assert first_tool(canal, query) == tool


def test_the_answer_is_in_the_index_line_format(canal: Canal) -> None:
    found = canal.search("resource family 7 owner", limit=1)
    line = [m.line() for m in canal.tool_commands.tool_cache.all()
            if m.name == "resource_007_update"]
    assert found["tools"] == line
    assert found["query"] == "resource family 7 owner" and found["status"] == "ok"


def test_field_descriptions_count(canal: Canal) -> None:
    assert first_tool(canal, "postmark") == "send_notice"
    assert first_tool(canal, "pagerduty") == "send_alert"


def test_ignored_fields_are_not_searched_and_notes_and_enums_are(tmp_path: Path) -> None:
    home = tmp_path / ".canal"
    canal = Canal(workflows=tmp_path / "workflows", home=home, checkpointer="memory:")
    cache_tools(home, {"platform": crud_tools()}, {"send_notice": "IGNORE:via\n"})
    assert canal.search("postmark")["tools"] == []
    cache_tools(home, {"platform": crud_tools()}, {
        "send_notice": "NOTE:ask the compliance team first\nENUM:to:ops,finance\n"})
    assert first_tool(canal, "postmark") == "send_notice"  # the cache noticed the change
    assert first_tool(canal, "compliance") == "send_notice"
    assert first_tool(canal, "finance") == "send_notice"


def test_workflows_are_ranked_too(canal: Canal, tmp_path: Path) -> None:
    write_workflow(tmp_path / "workflows", "open-ticket", {"01-ask.md": ({
        "type": "interactive", "gate": {"schema": {
            "title": {"type": "string", "required": True, "desc": "What is broken"},
            "severity": {"type": "string", "enum": ["minor", "blocker"]}}}}, "Ask.")},
        entry={"name": "open-ticket", "description": "Open a support ticket"})
    found = canal.search("report a blocker")  # only a gate field's allowed value says it
    assert found["workflows"] == ["open-ticket: Open a support ticket"]
    assert found["next"]["command"] == "start" and found["next"]["workflow"] == "open-ticket"
    both = canal.search("ticket for a project")
    assert both["workflows"] == ["open-ticket: Open a support ticket",
                                 "create-project: the create-project workflow"]
    domain = canal.search("service domain")  # the create-project gate's host field
    assert domain["workflows"][0].startswith("create-project:")


def test_the_limit_applies_to_workflows_and_to_tools(canal: Canal) -> None:
    assert len(canal.search("update")["tools"]) == 5
    assert len(canal.search("update", limit=3)["tools"]) == 3
    assert len(canal.search("update", limit=100)["tools"]) == 6 + 40
    assert len(canal.search("project", limit=1)["workflows"]) == 1


def test_nothing_found_is_an_empty_answer_with_a_next_step(canal: Canal) -> None:
    found = canal.search("zebra crossing")
    assert found["workflows"] == found["tools"] == []
    assert found["status"] == "ok" and "search again" in found["next"]["hint"]
    only_tools = canal.search("invoice")
    assert only_tools["workflows"] == []
    assert only_tools["next"]["command"] == "meta"
    assert only_tools["next"]["tool"] == first_tool(canal, "invoice")


@pytest.mark.parametrize("query, limit, message", [
    ("", 5, "search needs a query"),
    ("   \n", 5, "search needs a query"),
    ("project", 0, "at least 1: 0"),
    ("project", -2, "at least 1: -2"),
    ("project", True, "at least 1: True"),
])
def test_a_blank_query_or_a_bad_limit_is_a_usage_error(canal: Canal, query: str,
                                                       limit: Any, message: str) -> None:
    with pytest.raises(UsageError, match=message):
        canal.search(query, limit)


def test_an_empty_project_finds_nothing(tmp_path: Path) -> None:
    canal = Canal(workflows=tmp_path / "none", home=tmp_path / ".canal",
                  checkpointer="memory:")
    assert canal.search("anything")["tools"] == []


def test_tools_without_a_searchable_word_find_nothing(tmp_path: Path) -> None:
    cache_tools(tmp_path / ".canal", {"odd": [{"name": "the", "inputSchema": {}}]})
    canal = Canal(workflows=tmp_path / "none", home=tmp_path / ".canal",
                  checkpointer="memory:")
    assert canal.search("the tool")["tools"] == []


def test_words_split_names_as_they_are_written() -> None:
    assert words("create_project") == words("createProject") == words("create-project") \
        == words("Create projects") == ["create", "project"]
    assert words("the HTTPServer IDs") == ["http", "server", "id"]


# -- the index above 50 tools ----------------------------------------------------------------


def test_at_most_50_tools_the_index_is_unchanged(tmp_path: Path) -> None:
    home = tmp_path / ".canal"
    cache_tools(home, {"bench": [filler_tool(i) for i in range(50)]})
    index = Canal(workflows=tmp_path, home=home, checkpointer="memory:").index()
    assert set(index) == {"status", "workflows", "tools"} and len(index["tools"]) == 50


def test_above_50_tools_the_index_sums_up_each_server(canal: Canal) -> None:
    index = canal.index()
    assert index["workflows"] == ["create-project: the create-project workflow"]
    assert "tools" not in index and index["tool_count"] == 32 + 40
    assert index["servers"] == [
        "bench: 40 tools, about resource, update; e.g. resource_000_update, "
        "resource_001_update, resource_002_update",
        "platform: 32 tools, about create, delete, get, list, update; e.g. create_dns_record, "
        "create_invoice, create_project"]
    assert index["next"]["command"] == "search"
    assert "canal search QUERY" in index["next"]["hint"]
    full = canal.index(full=True)
    assert len(full["tools"]) == 72 and full["tools"][0]["name"] == "create_dns_record"
