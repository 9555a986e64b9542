"""Loading a workflow folder: syntax, step order and ids, every reading problem, names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from canal.errors import InvalidName, WorkflowInvalid, WorkflowNotFound
from canal.spec import check_name, check_workflow, load_workflow, workflow_dir
from canal.spec.models import AutomationSpec, FieldSpec
from tests.conftest import project_steps, write_workflow

NOTE = {"type": "notification"}


def problems(folder: Path) -> list[str]:
    return [str(p) for p in check_workflow(folder)[1]]


def only_problem(folder: Path) -> str:
    found = problems(folder)
    assert len(found) == 1, found
    return found[0]


# --- what loads --------------------------------------------------------------------------


def test_seed_syntax_loads_as_written(workflows: Path) -> None:
    spec = load_workflow(write_workflow(workflows, "create-project", project_steps()))

    assert spec.name == "create-project"
    assert spec.description == "the create-project workflow"
    assert spec.entry == "WorkFlow.md"
    assert spec.body == "Overview."
    assert [s.id for s in spec.steps] == [
        "collect-project-info", "create-project", "create-role", "summary"]
    assert [s.type for s in spec.steps] == [
        "interactive", "automated", "automated", "notification"]
    collect = spec.step("collect-project-info")
    assert collect.path == "references/01-collect-project-info.md"
    assert collect.body == "Ask the user for the project name and its domain."
    assert collect.gate["project_name"] == FieldSpec(type="string", required=True,
                                                     desc="Project name")
    assert collect.gate["host"].desc == "Service domain"
    assert collect.gate["host"].pattern == r"^[a-z0-9.-]+\.[a-z]{2,}$"
    assert collect.gate["admins"].required is False
    assert collect.gate["admins"].default == ["root"]
    create = spec.step("create-project")
    assert create.automation == AutomationSpec(tool="create_project", input_mapping={
        "name": "{{gate.collect-project-info.project_name}}",
        "host": "{{gate.collect-project-info.host}}",
        "admins": "{{gate.collect-project-info.admins}}",
        "quota": "{{gate.collect-project-info.quota}}",
    })
    assert create.gate == {}
    assert spec.step("summary").body.startswith("Project {{result.create-project.project.id}}")
    assert spec.next_id("create-role") == "summary"
    assert spec.next_id("summary") is None


def test_every_field_option_loads(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-ask.md": {"type": "interactive", "gate": {
        "schema": {
            "env": {"type": "string", "enum": ["dev", "prod"], "default": "dev",
                    "description": "target environment"},
            "code": {"type": "string", "required": True, "pattern": "^[A-Z]{3}$",
                     "desc": "three letters"},
            "count": {"type": "integer", "min": 1, "max": 5, "default": 2},
            "ratio": {"type": "number", "min": 0.5},
            "password": {"type": "string", "sensitive": True},
            "flags": {"type": "array", "max": 3},
            "extra": {"type": "object"},
            "ok": {"type": "boolean", "default": False},
            "plain": {},
        }}}})
    gate = load_workflow(folder).steps[0].gate

    assert gate["env"].enum == ("dev", "prod")
    assert gate["env"].default == "dev"
    assert gate["env"].desc == "target environment"  # `description` is an alias of `desc`
    assert gate["code"].desc == "three letters"
    assert gate["code"].pattern == "^[A-Z]{3}$" and gate["code"].required is True
    assert (gate["count"].min, gate["count"].max, gate["count"].default) == (1, 5, 2)
    assert gate["ratio"].min == 0.5 and gate["ratio"].max is None
    assert gate["password"].sensitive is True and gate["env"].sensitive is False
    assert gate["flags"].type == "array" and gate["flags"].max == 3
    assert gate["extra"].type == "object"
    assert gate["ok"].default is False
    assert gate["plain"] == FieldSpec()  # type string, optional, no default
    assert gate["plain"].type == "string" and gate["plain"].required is False
    assert gate["env"].to_json() == {"type": "string", "required": False,
                                     "desc": "target environment", "enum": ["dev", "prod"],
                                     "default": "dev"}
    assert gate["password"].to_json()["sensitive"] is True


def test_desc_and_description_together_is_an_error(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-ask.md": {"type": "interactive", "gate": {
        "schema": {"f": {"desc": "a", "description": "b"}}}}})
    problem = only_problem(folder)
    assert problem.startswith("references/01-ask.md: gate.schema.f: ")
    assert "give either 'desc' or 'description', not both" in problem


def test_step_order_is_numeric_not_alphabetic(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {
        "10-last.md": NOTE, "2-second.md": NOTE, "1-first.md": NOTE, "003-third.md": NOTE})
    spec = load_workflow(folder)
    assert [s.id for s in spec.steps] == ["first", "second", "third", "last"]
    assert [s.order for s in spec.steps] == [1, 2, 3, 10]
    assert [s.path for s in spec.steps] == [
        "references/1-first.md", "references/2-second.md", "references/003-third.md",
        "references/10-last.md"]


def test_step_id_is_the_slug_after_the_prefix(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"07-send-the_mail.md": NOTE})
    assert load_workflow(folder).steps[0].id == "send-the_mail"


def test_id_in_front_matter_overrides_the_slug(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {
        "01-ask.md": {"type": "interactive", "id": "collect",
                      "gate": {"schema": {"x": {"type": "string"}}}},
        "02-tell.md": ({"type": "notification"}, "got {{gate.collect.x}}"),
    })
    spec = load_workflow(folder)
    assert [s.id for s in spec.steps] == ["collect", "tell"]
    with pytest.raises(KeyError):
        spec.step("ask")


def test_skill_md_is_accepted_instead_of_workflow_md(workflows: Path) -> None:
    folder = write_workflow(workflows, "skill", {"01-hi.md": NOTE}, entry_file="SKILL.md")
    assert not (folder / "WorkFlow.md").exists()
    spec = load_workflow(folder)
    assert spec.entry == "SKILL.md"
    assert spec.description == "the skill workflow"
    assert workflow_dir(workflows, "skill") == folder.resolve()


def test_a_folder_without_an_entry_file_is_reported(workflows: Path) -> None:
    folder = workflows / "bare"
    (folder / "references").mkdir(parents=True)
    spec, found = check_workflow(folder)
    assert spec is None
    assert [str(p) for p in found] == ["bare: no WorkFlow.md or SKILL.md in the folder"]


@pytest.mark.parametrize("name", ["notes.md", "README.md", "x-01.md", "01_under.md",
                                  "-01-dash.md"])
def test_unnumbered_markdown_in_references_is_not_a_step(workflows: Path, name: str) -> None:
    folder = write_workflow(workflows, "w", {"01-real.md": NOTE, name: "no front matter here"})
    spec = load_workflow(folder)
    assert [s.id for s in spec.steps] == ["real"]


def test_numbered_files_that_are_not_markdown_are_not_steps(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-real.md": NOTE, "02-data.txt": "junk",
                                             "03-image.md.bak": "junk"})
    assert [s.id for s in load_workflow(folder).steps] == ["real"]


# --- reading problems --------------------------------------------------------------------


@pytest.mark.parametrize("front, key", [
    ({"type": "notification", "titel": "Hello"}, "titel"),
    ({"type": "interactive", "gate": {"schema": {"host": {"type": "string", "requird": True}}}},
     "gate.schema.host.requird"),
    ({"type": "interactive", "gate": {"schema": {"host": {"type": "string"}}, "fields": {}}},
     "gate.fields"),
    ({"type": "automated", "automation": {"tool": "t", "input_maping": {}}},
     "automation.input_maping"),
    ({"type": "automated", "automation": {"tool": "t", "retries": 3}}, "automation.retries"),
])
def test_unknown_keys_are_errors(workflows: Path, front: dict, key: str) -> None:
    folder = write_workflow(workflows, "w", {"01-step.md": front})
    assert only_problem(folder) == f"references/01-step.md: {key}: unknown key"


def test_unknown_key_in_workflow_md_is_an_error(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": NOTE},
                            entry={"name": "w", "descripton": "typo"})
    assert only_problem(folder) == "WorkFlow.md: descripton: unknown key"


def test_load_workflow_raises_with_the_problems(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": {"type": "notification", "tilte": "x"}})
    with pytest.raises(WorkflowInvalid) as info:
        load_workflow(folder)
    assert info.value.workflow == "w"
    assert info.value.message == "workflow 'w' has 1 problem"
    assert [str(p) for p in info.value.problems] == ["references/01-a.md: tilte: unknown key"]
    assert info.value.to_json()["error"]["problems"][0] == {
        "path": "references/01-a.md", "key": "tilte", "message": "unknown key",
        "problem": "references/01-a.md: tilte: unknown key"}


def _yaml_error_file(bad_line: int) -> str:
    """Front matter whose only syntax error is on line ``bad_line`` of the file."""
    lines = ["---", "type: interactive"]
    while len(lines) < bad_line - 1:
        lines.append(f"# filler comment {len(lines) + 1}")
    lines.append("title: first: second")  # 'mapping values are not allowed here'
    lines += ["gate:", "  schema: {}", "---", "Body."]
    assert lines[bad_line - 1] == "title: first: second"
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("bad_line", [3, 4, 7])
def test_yaml_error_names_the_file_and_its_line(workflows: Path, bad_line: int) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": NOTE,
                                             "02-broken.md": _yaml_error_file(bad_line)})
    found = check_workflow(folder)[1]
    assert len(found) == 1, [str(p) for p in found]
    assert found[0].path == "references/02-broken.md"
    assert found[0].line == bad_line
    assert str(found[0]) == (f"references/02-broken.md:{bad_line}: "
                             "YAML error: mapping values are not allowed here")


def test_yaml_error_line_in_a_flow_sequence(workflows: Path) -> None:
    text = "---\ntype: interactive\ntitle: [a, b\nc: d\n---\n"
    folder = write_workflow(workflows, "w", {"01-broken.md": text})
    assert only_problem(folder).startswith("references/01-broken.md:4: YAML error: ")


def test_yaml_error_in_workflow_md_names_its_line(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": NOTE},
                            entry="---\nname: w\ndescription: a: b\n---\nOverview.\n")
    assert only_problem(folder) == (
        "WorkFlow.md:3: YAML error: mapping values are not allowed here")


def test_yaml_error_for_an_unclosed_quote_points_at_the_quote(workflows: Path) -> None:
    text = '---\ntype: interactive\ntitle: "unclosed\ngate: {}\n---\n'
    folder = write_workflow(workflows, "w", {"01-broken.md": text})
    found = check_workflow(folder)[1]
    assert len(found) == 1
    assert found[0].line == 3 or "line 3" in found[0].message, str(found[0])


@pytest.mark.parametrize("text", ["type: notification\n", "# Just a title\n\nText.\n", ""])
def test_missing_front_matter(workflows: Path, text: str) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": text})
    assert only_problem(folder) == (
        "references/01-a.md: no YAML front matter (the file must start with '---')")


def test_unclosed_front_matter(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": "---\ntype: notification\nHello.\n"})
    assert only_problem(folder) == (
        "references/01-a.md:1: front matter is not closed (expected a second '---' line)")


@pytest.mark.parametrize("front", ["- a\n- b\n", "just text\n"])
def test_front_matter_must_be_a_mapping(workflows: Path, front: str) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": f"---\n{front}---\n"})
    assert only_problem(folder) == (
        "references/01-a.md: front matter must be a mapping of keys to values")


def test_step_without_type_is_reported(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": "---\n---\nBody.\n"})
    assert only_problem(folder) == "references/01-a.md: type: required key is missing"


def test_name_must_match_the_folder(workflows: Path) -> None:
    folder = write_workflow(workflows, "deploy", {"01-a.md": NOTE},
                            entry={"name": "deploy-v2", "description": "x"})
    assert only_problem(folder) == (
        "WorkFlow.md: name: deploy-v2: does not match the folder name 'deploy'")


def test_workflow_md_needs_a_name(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": NOTE}, entry={"description": "x"})
    assert only_problem(folder) == "WorkFlow.md: name: required key is missing"


@pytest.mark.parametrize("steps", [{}, {"notes.md": "not a step"}])
def test_no_step_files(workflows: Path, steps: dict) -> None:
    folder = write_workflow(workflows, "w", steps)
    assert only_problem(folder) == "references: no step files (expected references/NN-<id>.md)"


def test_no_references_folder(workflows: Path) -> None:
    folder = workflows / "w"
    folder.mkdir()
    (folder / "WorkFlow.md").write_text("---\nname: w\n---\n", encoding="utf-8")
    assert only_problem(folder) == "references: no step files (expected references/NN-<id>.md)"


def test_duplicate_order_prefixes(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": NOTE, "1-b.md": NOTE, "02-c.md": NOTE})
    assert only_problem(folder) == (
        "references/1-b.md: order prefix 1 is also used by references/01-a.md")


def test_unknown_step_type_lists_the_known_types(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": {"type": "manual"}})
    assert only_problem(folder) == ("references/01-a.md: type: 'manual': not a known type "
                                    "(known: interactive, automated, notification)")


def test_unknown_field_type_lists_the_known_types(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": {"type": "interactive", "gate": {
        "schema": {"n": {"type": "int"}}}}})
    problem = only_problem(folder)
    assert problem.startswith("references/01-a.md: gate.schema.n.type: 'int': not a known type")
    for known in ("string", "integer", "number", "boolean", "array", "object"):
        assert f"'{known}'" in problem


def test_every_reading_problem_is_collected(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {
        "01-a.md": {"type": "notification", "colour": "red"},
        "02-b.md": "no front matter",
        "03-c.md": {"type": "robot"},
    }, entry={"name": "elsewhere"})
    assert sorted(problems(folder)) == sorted([
        "WorkFlow.md: name: elsewhere: does not match the folder name 'w'",
        "references/01-a.md: colour: unknown key",
        "references/02-b.md: no YAML front matter (the file must start with '---')",
        "references/03-c.md: type: 'robot': not a known type "
        "(known: interactive, automated, notification)",
    ])


# --- digest ------------------------------------------------------------------------------


def test_digest_is_stable_when_nothing_changes(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", project_steps())
    first = load_workflow(folder).digest
    assert first.startswith("sha256:") and len(first) == len("sha256:") + 64
    assert load_workflow(folder).digest == first
    os.utime(folder / "references" / "02-create-project.md", (1, 1))  # mtime is not content
    assert load_workflow(folder).digest == first


@pytest.mark.parametrize("changed", [
    "WorkFlow.md", "references/01-collect-project-info.md", "references/02-create-project.md",
    "references/03-create-role.md", "references/04-summary.md"])
def test_digest_changes_when_any_file_changes(workflows: Path, changed: str) -> None:
    folder = write_workflow(workflows, "w", project_steps())
    before = load_workflow(folder).digest
    path = folder / changed
    path.write_text(path.read_text(encoding="utf-8") + "One more line.\n", encoding="utf-8")
    after = load_workflow(folder).digest
    assert after != before
    path.write_text(path.read_text(encoding="utf-8").replace("One more line.\n", ""),
                    encoding="utf-8")
    assert load_workflow(folder).digest == before


def test_digest_changes_when_a_step_is_renamed(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": NOTE, "02-b.md": NOTE})
    before = load_workflow(folder).digest
    (folder / "references" / "02-b.md").rename(folder / "references" / "02-c.md")
    assert load_workflow(folder).digest != before


# --- names -------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["../x", "..", "a/b", "/etc", "", ".hidden", ".", "a..b",
                                  "a b", "-dash", "a\\b", "x" * 129])
def test_check_name_rejects_non_plain_names(name: str) -> None:
    with pytest.raises(InvalidName) as info:
        check_name(name)
    assert info.value.message.startswith(f"workflow name {name!r} is not a plain name")


@pytest.mark.parametrize("name", ["create-project", "a", "v1.2_b-c", "X" * 128])
def test_check_name_accepts_plain_names(name: str) -> None:
    assert check_name(name) == name


def test_check_name_names_the_kind() -> None:
    with pytest.raises(InvalidName, match="^thread name '../t' is not a plain name"):
        check_name("../t", "thread")


def test_check_name_rejects_a_trailing_newline() -> None:
    with pytest.raises(InvalidName):
        check_name("abc\n", "thread")


@pytest.mark.parametrize("name", ["../x", "a/b", "", ".hidden", "../../etc"])
def test_workflow_dir_rejects_paths(workflows: Path, name: str) -> None:
    write_workflow(workflows.parent, "x", {"01-a.md": NOTE})  # a real workflow next door
    with pytest.raises(InvalidName):
        workflow_dir(workflows, name)


def test_workflow_dir_finds_a_workflow(workflows: Path) -> None:
    folder = write_workflow(workflows, "deploy", {"01-a.md": NOTE})
    assert workflow_dir(workflows, "deploy") == folder.resolve()


def test_workflow_dir_unknown_name(workflows: Path) -> None:
    write_workflow(workflows, "deploy", {"01-a.md": NOTE})
    with pytest.raises(WorkflowNotFound) as info:
        workflow_dir(workflows, "deplo")
    assert info.value.message == f"no workflow 'deplo' in {workflows}"
    assert info.value.details == {"workflow": "deplo"}


def test_workflow_dir_needs_an_entry_file(workflows: Path) -> None:
    (workflows / "empty" / "references").mkdir(parents=True)
    (workflows / "afile").write_text("---\nname: afile\n---\n", encoding="utf-8")
    for name in ("empty", "afile"):
        with pytest.raises(WorkflowNotFound):
            workflow_dir(workflows, name)


def test_workflow_dir_never_follows_a_link_outside_the_root(workflows: Path) -> None:
    outside = write_workflow(workflows.parent, "outside", {"01-a.md": NOTE})
    (workflows / "escape").symlink_to(outside, target_is_directory=True)
    assert load_workflow(outside).name == "outside"  # the target itself is a fine workflow
    with pytest.raises(WorkflowNotFound):
        workflow_dir(workflows, "escape")


def test_a_key_given_twice_is_a_yaml_error_on_its_line(workflows: Path) -> None:
    text = "---\ntype: interactive\ngate:\n  schema:\n    a: {type: string}\n    a: {type: integer}\n---\n"
    folder = write_workflow(workflows, "w", {"01-a.md": text})
    assert only_problem(folder) == "references/01-a.md:6: YAML error: key 'a' is given twice"
