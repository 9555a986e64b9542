"""Context: what an agent reads to use one tool, against injecting every tool's schema.

One project serves 500 generated tools (``realistic_tools``: CRUD-style tools over 50
resources with system fields, enums described by their codes, nested objects) on one stdio
test server, plus the example permission platform's own tools. What canal hands an agent for
one task is the output of ``canal search QUERY``, the chosen tool's ``canal meta`` and the
step envelope (``canal start create-permission-set``); what an MCP host injects is every
tool's name, description and ``inputSchema`` as ``tools/list`` gives them. Tokens are
estimated as characters / 4 (no tokenizer is installed offline).

Usage: ``python -m bench.tools [--quick]`` from the repository root; prints JSON lines.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import tempfile
from pathlib import Path
from typing import Any

from bench.project import ROOT, Project, example_server
from bench.rows import row, run_alone

NAMES = ("context_ratio", "context_with_index", "context_full_index")
QUERY = "create a role in a project"
TOOL = "create_role"

RESOURCES = (
    "workspace", "access_role", "user", "user_group", "permission_set", "api_key", "quota",
    "alert_rule", "dashboard", "webhook", "service", "host", "cluster", "namespace",
    "deployment", "secret", "certificate", "domain", "dns_record", "bucket", "database",
    "backup", "schedule", "job", "pipeline", "repository", "branch_policy", "release",
    "incident", "ticket", "invoice", "subscription", "plan", "coupon", "customer", "contact",
    "tag", "label_set", "audit_export", "notification_channel", "sla", "runbook", "team",
    "department", "cost_center", "region", "zone", "vpc", "firewall_rule", "load_balancer")
DOMAINS = ("iam", "infra", "billing", "crm", "ops", "data", "sec", "dev")


def _enum(text: str, codes: str) -> dict[str, Any]:
    return {"type": "integer", "description": f"{text}: {codes}"}


def _object(text: str, **props: dict[str, Any]) -> dict[str, Any]:
    return {"type": "object", "description": text, "properties": props}


_STR = {"type": "string"}
FIELDS: dict[str, dict[str, Any]] = {
    "description": {"type": "string", "description": "Free text shown in the console, "
                    "at most 512 characters"},
    "owner": {"type": "string", "description": "Owner's user name (LDAP account, not the "
              "display name)"},
    "status": _enum("Status", "0-draft,1-active,2-disabled,3-archived"),
    "level": _enum("Severity", "1-info,2-warning,3-critical"),
    "region": {"type": "string", "description": "Region code, e.g. cn-north-1 or eu-west-3"},
    "tags": {"type": "array", "items": _STR, "description": "Labels in key=value form"},
    "config": _object("Connection settings", timeout_ms={"type": "integer",
                      "description": "Timeout in milliseconds, 100-60000"},
                      retries={"type": "integer", "description": "Retries, 0-10"},
                      endpoint={"type": "string", "description": "https URL of the backend"}),
    "contact": _object("Who to call", email=_STR, phone=_STR,
                       im={"type": "string", "description": "Chat handle"}),
    "quota": _object("Resource limits", cpu={"type": "number", "description": "Cores"},
                     memory_mb={"type": "integer"}, storage_gb={"type": "integer"}),
    "visibility": _enum("Who can see it", "0-private,1-internal,2-public"),
    "expire_time": {"type": "string", "description": "Expiry time, ISO 8601 in UTC; empty "
                    "for never"},
    "workspace_id": {"type": "integer", "description": "Id of the owning workspace"},
    "parent_id": {"type": "integer", "description": "Id of the parent record, 0 for a root"},
    "priority": _enum("Priority", "0-low,1-normal,2-high,3-urgent"),
    "auth_mode": _enum("Authentication mode", "0-pre-auth,1-SDK,2-openapi,3-not-integrated"),
    "callback_url": {"type": "string", "description": "Callback URL (https only)"},
    "members": {"type": "array", "description": "Members and their roles", "items": _object(
        "A member", user=_STR, role=_enum("Role", "0-viewer,1-editor,2-admin"))},
    "schedule": _object("When it runs", cron={"type": "string", "description": "Cron "
                        "expression, 5 fields"}, timezone={"type": "string",
                        "description": "IANA time zone, default Asia/Shanghai"}),
    "notify": _object("Notifications", channels={"type": "array", "items": _STR,
                      "description": "Any of email,sms,im"}, on_failure={"type": "boolean"}),
}
SYSTEM = {
    "id": {"type": "integer", "description": "Record id (system-managed)"},
    "insert_time": {"type": "string", "description": "Creation time (system-managed)"},
    "update_time": {"type": "string", "description": "Last update time (system-managed)"},
    "update_admin": {"type": "string", "description": "Last editor (system-managed, set to "
                     "the caller)"},
    "version": {"type": "integer", "description": "Optimistic lock version; send the one "
                "you read"},
}
_ID = {"type": "integer", "description": "Id of the record"}


def _fields(resource: int) -> dict[str, dict[str, Any]]:
    names = list(FIELDS)
    picked = {names[(resource * 7 + k * 3) % len(names)] for k in range(4 + resource % 4)}
    return {"name": {"type": "string", "description": "Display name, 2-64 characters, "
                     "unique in its workspace"}, **{n: FIELDS[n] for n in sorted(picked)}}


def _shape(verb: str, thing: str, fields: dict[str, Any]) -> tuple[str, list[str], dict]:
    """A verb's description, required fields and properties."""
    shapes: dict[str, tuple[str, list[str], dict]] = {
        "create": (f"Create a {thing}. Fails when the name is taken. Returns the new record "
                   "with its id.", ["name"], {**fields, "update_admin": SYSTEM["update_admin"]}),
        "update": (f"Update a {thing}: only the fields given change. Returns the updated "
                   "record.", ["id", "version"], {**SYSTEM, **fields}),
        "get": (f"Read one {thing} by id, with its system fields.", ["id"],
                {"id": _ID, "with_deleted": {"type": "boolean", "description": "Also find "
                                             "a deleted record"}}),
        "list": (f"List {thing}s, newest first, a page at a time.", [],
                 {"page": {"type": "integer", "description": "Page number from 1"},
                  "page_size": {"type": "integer", "description": "Rows per page, 1-500"},
                  "keyword": {"type": "string", "description": "Matches name or owner"},
                  "status": FIELDS["status"],
                  "order_by": _enum("Sort key", "0-id,1-name,2-update_time")}),
        "delete": (f"Delete a {thing}. Refused while other records use it, unless force.",
                   ["id"], {"id": _ID, "force": {"type": "boolean", "description": "Delete "
                            "even when referenced"}, "update_admin": SYSTEM["update_admin"]}),
        "enable": (f"Enable a disabled {thing}.", ["id"],
                   {"id": _ID, "reason": _STR, "update_admin": SYSTEM["update_admin"]}),
        "disable": (f"Disable a {thing}; it keeps its settings.", ["id", "reason"],
                    {"id": _ID, "reason": {"type": "string", "description": "Why, for the "
                                           "audit log"}, "update_admin": SYSTEM["update_admin"]}),
        "assign": (f"Give a {thing} a new owner and tell them.", ["id", "owner"],
                   {"id": _ID, "owner": FIELDS["owner"], "notify": FIELDS["notify"]}),
        "export": (f"Export {thing}s as a file; returns a download URL valid for an hour.",
                   ["format"], {"format": _enum("File format", "0-csv,1-json,2-xlsx"),
                                "filter": _object("Which rows", status=FIELDS["status"],
                                                  created_after=_STR, created_before=_STR),
                                "columns": {"type": "array", "items": _STR}}),
        "archive": (f"Archive a {thing}: read-only, hidden from lists, kept for retain_days.",
                    ["id"], {"id": _ID, "retain_days": {"type": "integer", "description":
                             "Days to keep it, 30-3650"}, "update_admin": SYSTEM["update_admin"]}),
    }
    return shapes[verb]


VERBS = ("create", "update", "get", "list", "delete", "enable", "disable", "assign", "export",
         "archive")
HINTS = {"get": {"readOnlyHint": True}, "list": {"readOnlyHint": True},
         "export": {"readOnlyHint": True}, "delete": {"destructiveHint": True},
         "update": {"idempotentHint": True}}


def realistic_tool(i: int) -> dict[str, Any]:
    """Tool ``i`` of a made-up platform: one of ten verbs over one of 50 resources; past 500
    the resources repeat under a domain prefix (``iam_``, ``infra_``, ...)."""
    verb, resource = VERBS[i % len(VERBS)], (i // len(VERBS)) % len(RESOURCES)
    noun = RESOURCES[resource]
    if i >= len(VERBS) * len(RESOURCES):
        noun = f"{DOMAINS[(i // 500 - 1) % len(DOMAINS)]}_{noun}"
    thing = noun.replace("_", " ")
    article = "an" if thing[0] in "aeiou" else "a"
    description, required, props = _shape(verb, thing, _fields(resource))
    description = description.replace(f"a {thing}", f"{article} {thing}")
    name = {"list": f"list_{noun}s", "export": f"export_{noun}s",
            "assign": f"assign_{noun}_owner"}.get(verb, f"{verb}_{noun}")
    tool = {"name": name, "description": description,
            "inputSchema": {"type": "object", "required": required, "properties": props}}
    if verb in HINTS:
        tool["annotations"] = HINTS[verb]
    return tool


def realistic_tools(count: int) -> list[dict[str, Any]]:
    return [realistic_tool(i) for i in range(count)]


def example_tools() -> list[dict[str, Any]]:
    """The example platform's tools as its ``tools/list`` gives them."""
    from examples.permission_platform.server import build_server

    with tempfile.TemporaryDirectory() as tmp:
        found = asyncio.run(build_server(Path(tmp) / "p.db").list_tools())
    return [t.model_dump(exclude_none=True) for t in found]


def schemas(tools: list[dict[str, Any]]) -> str:
    """Every tool's name, description and inputSchema, as an MCP host injects them."""
    return json.dumps([{"name": t["name"], "description": t.get("description", ""),
                        "inputSchema": t["inputSchema"]} for t in tools], ensure_ascii=False)


def tokens(text: str) -> int:
    return len(text) // 4


def tool_project(folder: Path, tools: list[dict[str, Any]]) -> Project:
    """A project with the shipped workflows, ``tools`` on a test server and the example
    platform, all discovered."""
    from tests.conftest import Toolbox

    shutil.copytree(ROOT / "workflows", folder / "workflows")
    box = Toolbox(folder)
    box.add("bench", tools, page_size=100)
    box.add_raw("permission-platform", example_server(folder))
    project = Project(folder)
    project.canal("discover")
    return project


def measure(quick: bool) -> list[dict[str, Any]]:
    generated, example = realistic_tools(500), example_tools()
    everything = tokens(schemas(generated + example))
    with tempfile.TemporaryDirectory() as tmp:
        project = tool_project(Path(tmp), generated)
        summary = project.output("index")
        full = project.output("index", "--full")
        found = project.output("search", QUERY, "--limit", "5")
        meta = project.output("meta", TOOL)
        step = project.output("start", "create-permission-set")
    every = (f"every tool's name, description and inputSchema ({len(generated)} generated, "
             f"{len(example)} of the example platform)")
    used = f"`canal meta {TOOL}` + the step envelope, against {every}"
    return [
        row("context_ratio", tokens(found + meta + step), everything, "tokens", "ratio <= 0.05",
            f"`canal search \"{QUERY}\"` (~{tokens(found)} tokens) + {used}; tokens = "
            "characters / 4"),
        row("context_with_index", tokens(summary + found + meta + step), everything, "tokens",
            None, f"`canal index` summed up per server (~{tokens(summary)} tokens) + the same "
            f"search + {used}"),
        row("context_full_index", tokens(full + meta + step), everything, "tokens", None,
            f"`canal index --full` (~{tokens(full)} tokens) + {used}"),
    ]


if __name__ == "__main__":
    run_alone(measure)
