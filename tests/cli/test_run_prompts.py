"""``canal run`` at a terminal: after a rejection, only the fields it names are asked again,
Enter keeps the earlier answer, and a secret is asked again hidden, never offered."""

from __future__ import annotations

import json
from typing import Any

from canal.cli.run import ask_again
from tests.conftest import tool_calls, write_workflow

HOST_ERROR = r"Service domain: must match ^[a-z0-9.-]+\.[a-z]{2,}$"


def lines(*typed: str) -> str:
    return "".join(f"{line}\n" for line in typed)


def test_a_rejected_answer_re_asks_only_the_rejected_field(cli, project):
    typed = lines("billing", "Not A Domain", "", "",  # host is rejected
                  "billing.example.com",                # the only question asked again
                  "")                                   # the summary
    result = cli("run", "create-project", stdin=typed)
    assert result.code == 0 and result.json["status"] == "completed", result.stderr
    assert result.stderr.count("project_name (Project name): ") == 1
    assert result.stderr.count("admins [Enter to skip]: ") == 1
    assert result.stderr.count("host (Service domain)") == 2
    assert "host (Service domain) [Enter keeps Not A Domain]: " in result.stderr
    assert "kept: project_name; asking again: host" in result.stderr
    assert tool_calls(project)[0] == ["create_project", {
        "name": "billing", "host": "billing.example.com", "admins": ["root"], "quota": 10}]


def test_a_person_reads_the_message_an_agent_gets(cli, project):
    thread = cli("start", "create-project").json["thread_id"]
    agent = cli("advance", thread, "--gate-data", json.dumps(
        {"project_name": "billing", "host": "Not A Domain"}))
    assert agent.json["errors"] == [{"code": "invalid", "message": HOST_ERROR, "field": "host"}]
    person = cli("run", "create-project", stdin=lines("billing", "Not A Domain", "", "",
                                                      "billing.example.com", ""))
    assert f"  ! host: {HOST_ERROR}\n" in person.stderr


def test_enter_keeps_the_earlier_answer(cli, project):
    typed = lines("billing", "Not A Domain", '["ops"]', "500",  # host and quota rejected
                  "billing.example.com", "",  # host fixed; Enter keeps quota 500: rejected
                  "7",                        # only quota is asked the third time
                  "")
    result = cli("run", "create-project", stdin=typed)
    assert result.code == 0 and result.json["status"] == "completed", result.stderr
    assert result.stderr.count("quota [Enter keeps 500]: ") == 2
    assert result.stderr.count("  ! quota: must be at most 100") == 2
    assert result.stderr.count("host (Service domain)") == 2
    assert result.stderr.count("admins [") == 1  # asked once, kept through both rejections
    assert "kept: project_name, admins; asking again: host, quota" in result.stderr
    assert tool_calls(project)[0][1] == {
        "name": "billing", "host": "billing.example.com", "admins": ["ops"], "quota": 7}


def login(project: Any) -> None:
    write_workflow(project / "workflows", "login", {"01-ask.md": {
        "type": "interactive", "gate": {"schema": {
            "token": {"type": "string", "required": True, "sensitive": True,
                      "desc": "API token", "pattern": "^tok-"},
            "user": {"type": "string", "required": True, "pattern": "^[a-z]+$"}}}}})


def test_a_rejected_secret_is_asked_again_without_a_default(cli, project):
    login(project)
    result = cli("run", "login", stdin=lines("xyzzy-secret", "zoe", "", "tok-good"))
    assert result.code == 0 and result.json["status"] == "completed", result.stderr
    assert "xyzzy" not in result.stdout + result.stderr
    assert "[Enter keeps" not in result.stderr
    assert "kept: user; asking again: token" in result.stderr
    # Enter did not keep the old secret: the required field is asked until it is given
    assert "token (API token):   this field is required\ntoken (API token): " in result.stderr
    assert result.stderr.count("user: ") == 1


def test_a_secret_that_passed_is_kept_without_asking(cli, project):
    login(project)
    result = cli("run", "login", stdin=lines("tok-xyzzy", "Zoe", "zoe"))
    assert result.code == 0 and result.json["status"] == "completed", result.stderr
    assert result.stderr.count("token (API token): ") == 1
    assert "user [Enter keeps Zoe]: " in result.stderr
    assert "xyzzy" not in result.stdout + result.stderr


def test_a_secret_is_asked_again_hidden():
    gate = {"token": {"type": "string", "required": True, "sensitive": True},
            "user": {"type": "string", "required": True}}
    env = {"step": {"gate": gate}, "missing": [],
           "errors": [{"field": "token", "message": "must match ^tok-"}]}
    asked: list[tuple[str, bool]] = []

    def ask(prompt: str, secret: bool) -> str:
        asked.append((prompt, secret))
        return "tok-2"

    assert ask_again(env, {"token": "xyzzy", "user": "zoe"}, ask) == {
        "user": "zoe", "token": "tok-2"}
    assert asked == [("token: ", True)]


def test_enter_answers_a_required_field_that_allows_empty_text(cli, project):
    write_workflow(project / "workflows", "note", {
        "01-ask.md": {"type": "interactive", "gate": {"schema": {
            "text": {"type": "string", "required": True, "allow_empty": True},
            "tag": {"type": "string", "required": True}}}}})
    result = cli("run", "note", stdin=lines("", "", "x"))  # tag: Enter is not an answer
    assert result.code == 0 and result.json["status"] == "completed", result.stderr
    assert result.stderr.count("this field is required") == 1
    history = cli("history", result.json["thread_id"]).json["entries"]
    assert [e["data"] for e in history if e["kind"] == "submit"] == [{"text": "", "tag": "x"}]
