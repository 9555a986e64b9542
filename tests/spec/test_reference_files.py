"""Step reference files (DESIGN.md §7): supporting Markdown in ``references/`` that a step
names under ``references:``. They are shown at that step only, pinned with the definition,
and judged by ``validate`` only when a step names them."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langgraph.types import Command

from canal import Canal, PythonTools, WorkflowInvalid
from canal.limits import MAX_FILE_BYTES, MAX_STEP_REFERENCE_BYTES
from canal.spec import check_workflow
from tests.conftest import Cli, write_workflow

POLICY = "# Shipping\n\nOrders ship within 3 days.\n"
RETURNS = "# Returns\n\nReturns are accepted for 30 days.\n"


def make(workflows: Path, ask_refs: list[str] | None = None, **docs: str | bytes) -> Path:
    """Workflow ``shop``: ask (shows ``ask_refs``) -> reserve (automated) -> check (shows
    nothing) -> done (shows returns.md), with supporting ``docs`` beside the steps (keyword
    ``shipping_policy`` is the file ``shipping-policy.md``)."""
    ask: dict[str, Any] = {"type": "interactive",
                           "gate": {"schema": {"sku": {"type": "string", "required": True}}}}
    if ask_refs is not None:
        ask["references"] = ask_refs
    folder = write_workflow(workflows, "shop", {
        "01-ask.md": (ask, "Which item?"),
        "02-reserve.md": {"type": "automated", "automation": {
            "tool": "reserve", "input_mapping": {"sku": "{{gate.ask.sku}}"}}},
        "03-check.md": ({"type": "notification"}, "Reserved."),
        "04-done.md": ({"type": "notification", "references": ["returns.md"]}, "Done."),
        "returns.md": RETURNS,
    })
    for key, text in docs.items():
        path = folder / "references" / (key.replace("_", "-") + ".md")
        if isinstance(text, bytes):
            path.write_bytes(text)
        else:
            path.write_text(text, encoding="utf-8")
    return folder


def reserve(sku: str) -> dict[str, Any]:
    return {"reservation": f"r-{sku}"}


@pytest.fixture
def canal_at(workflows: Path, tmp_path: Path) -> Iterator[Any]:
    """A factory of new ``Canal`` objects on one home and one SQLite store, so a run's
    pinned definition is really read back from the store."""
    made: list[Canal] = []

    def new() -> Canal:
        canal = Canal(workflows=workflows, home=tmp_path / ".canal",
                      checkpointer=f"sqlite:///{tmp_path / 'state.db'}",
                      tools=PythonTools({"reserve": reserve}))
        made.append(canal)
        return canal

    yield new
    for canal in made:
        canal.close()


def shown(env: Any) -> list[dict[str, str]] | None:
    return env.to_json()["step"].get("references")


# --- shown at their step only ------------------------------------------------------------


def test_references_are_shown_at_their_step_only(workflows: Path, canal_at: Any) -> None:
    make(workflows, ["shipping-policy.md"], shipping_policy=POLICY, unrelated="# Not shown\n")
    env = canal_at().start("shop", thread_id="t")
    assert env.step.id == "ask"
    assert shown(env) == [{"name": "shipping-policy.md", "text": POLICY}]
    assert shown(canal_at().current("t")) == [{"name": "shipping-policy.md", "text": POLICY}]

    env = canal_at().advance("t", {"sku": "A1"})
    assert env.step.id == "check" and shown(env) is None
    assert shown(canal_at().current("t")) is None

    env = canal_at().advance("t")
    assert env.step.id == "done"
    assert shown(env) == [{"name": "returns.md", "text": RETURNS}]
    assert canal_at().advance("t").status == "completed"


def test_the_compiled_graph_shows_references_in_its_interrupts(workflows: Path,
                                                               canal_at: Any) -> None:
    make(workflows, ["shipping-policy.md"], shipping_policy=POLICY)
    graph = canal_at().compile("shop")
    config = {"configurable": {"thread_id": "t"}}

    (ask,) = graph.invoke({}, config)["__interrupt__"]
    assert ask.value["step"]["id"] == "ask"
    assert ask.value["step"]["references"] == [{"name": "shipping-policy.md", "text": POLICY}]
    (check,) = graph.invoke(Command(resume={"sku": "A1"}), config)["__interrupt__"]
    assert check.value["step"]["id"] == "check" and "references" not in check.value["step"]
    (done,) = graph.invoke(Command(resume=True), config)["__interrupt__"]
    assert done.value["step"]["references"] == [{"name": "returns.md", "text": RETURNS}]


# --- pinned with the definition ----------------------------------------------------------


def test_editing_a_reference_file_never_changes_a_live_run(workflows: Path,
                                                           canal_at: Any) -> None:
    folder = make(workflows, ["shipping-policy.md"], shipping_policy=POLICY)
    canal_at().start("shop", thread_id="t")
    (folder / "references" / "shipping-policy.md").write_text("Orders ship never.\n")
    (folder / "references" / "returns.md").write_text("No returns.\n")

    now = canal_at().current("t")
    assert shown(now) == [{"name": "shipping-policy.md", "text": POLICY}]
    assert now.definition["changed"] is True
    canal_at().advance("t", {"sku": "A1"})
    env = canal_at().advance("t")
    assert shown(env) == [{"name": "returns.md", "text": RETURNS}]
    fresh = canal_at().start("shop", thread_id="u")
    assert shown(fresh) == [{"name": "shipping-policy.md", "text": "Orders ship never.\n"}]
    moved = canal_at().migrate("t")
    assert shown(moved) == [{"name": "returns.md", "text": "No returns.\n"}]
    assert moved.definition["changed"] is False


@pytest.mark.parametrize("kind", ["outside link", "broken link", "not UTF-8", "NUL"])
def test_an_unreferenced_supporting_file_never_makes_a_workflow_invalid(
        workflows: Path, tmp_path: Path, canal_at: Any, kind: str) -> None:
    folder = make(workflows, ["shipping-policy.md"], shipping_policy=POLICY)
    stray = folder / "references" / "stray.md"
    if kind == "outside link":
        (tmp_path / "secret.md").write_text("secret")
        stray.symlink_to(tmp_path / "secret.md")
    elif kind == "broken link":
        stray.symlink_to(tmp_path / "gone.md")
    else:
        stray.write_bytes(b"\xff\xfe" if kind == "not UTF-8" else b"a\x00b")

    assert check_workflow(folder)[1] == []
    assert canal_at().start("shop", thread_id="t").step.id == "ask"
    # the pinned copy, read back by a new object, has the digest of the files on disk
    assert canal_at().current("t").definition["changed"] is False


# --- validate ----------------------------------------------------------------------------


BAD_NAME = "not a plain Markdown file name"


@pytest.mark.parametrize(("name", "message"), [
    ("../x.md", BAD_NAME),
    ("sub/x.md", BAD_NAME),
    ("sub\\x.md", BAD_NAME),
    ("", BAD_NAME),
    ("notes.txt", BAD_NAME),
    ("01-ask.md", "a name with a numeric prefix (NN-) is a step file"),
    ("nope.md", "no such file in references/ (supporting files there: returns.md, "
                "shipping-policy.md)"),
])
def test_a_bad_name_is_a_problem_of_the_step(workflows: Path, canal_at: Any, name: str,
                                             message: str) -> None:
    folder = make(workflows, ["shipping-policy.md", name], shipping_policy=POLICY)
    (problem,) = check_workflow(folder)[1]
    assert (problem.path, problem.key, problem.text) == ("references/01-ask.md",
                                                         "references[1]", name)
    assert problem.message.startswith(message), problem.message
    with pytest.raises(WorkflowInvalid):
        canal_at().start("shop")


def test_a_link_outside_the_folder_is_refused(workflows: Path, tmp_path: Path,
                                              canal_at: Any) -> None:
    folder = make(workflows, ["secret.md"])
    (tmp_path / "secret.md").write_text("secret")
    (folder / "references" / "secret.md").symlink_to(tmp_path / "secret.md")
    (report,) = canal_at().validate(["shop"])
    (problem,) = report["problems"]
    assert report["valid"] is False
    assert (problem.path, problem.key, problem.text) == ("references/01-ask.md",
                                                         "references[0]", "secret.md")
    assert problem.message == (
        f"the file is a link to {tmp_path / 'secret.md'}, outside {folder.resolve()} (canal "
        "reads only what is inside it); put the file itself in references/")
    with pytest.raises(WorkflowInvalid):
        canal_at().start("shop")


@pytest.mark.parametrize(("content", "message"), [
    (b"x" * (MAX_FILE_BYTES + 1), f"the file is larger than {MAX_FILE_BYTES} bytes; "),
    (b"caf\xe9\n", "cannot read the file: 'utf-8' codec can't decode byte 0xe9"),
    (b"one\ntwo\x00\n", "the file holds a NUL character (byte 0), which no store can keep "
                        "as text (line 2); "),
])
def test_an_unreadable_reference_file_is_a_problem(workflows: Path, canal_at: Any,
                                                   content: bytes, message: str) -> None:
    folder = make(workflows, ["bad.md"], bad=content)
    (problem,) = check_workflow(folder)[1]
    assert (problem.path, problem.key, problem.text) == ("references/01-ask.md",
                                                         "references[0]", "bad.md")
    assert problem.message.startswith(message), problem.message
    assert problem.message.endswith(f"a reference file must be UTF-8 text of at most "
                                    f"{MAX_FILE_BYTES} bytes with no NUL character")
    with pytest.raises(WorkflowInvalid):
        canal_at().start("shop")


def test_a_file_listed_twice_is_a_problem(workflows: Path) -> None:
    folder = make(workflows, ["shipping-policy.md", "returns.md", "shipping-policy.md"],
                  shipping_policy=POLICY)
    assert [str(p) for p in check_workflow(folder)[1]] == [
        "references/01-ask.md: references[2]: shipping-policy.md: also listed as "
        "references[0]; list each file once"]


def test_the_reference_text_of_one_step_is_limited(workflows: Path, canal_at: Any) -> None:
    half = "y" * (MAX_STEP_REFERENCE_BYTES // 2)
    folder = make(workflows, ["a.md", "b.md"], a=half, b=half)
    assert check_workflow(folder)[1] == []

    (folder / "references" / "b.md").write_text(half + "z")
    (problem,) = check_workflow(folder)[1]
    assert (problem.path, problem.key, problem.text) == ("references/01-ask.md",
                                                         "references", None)
    assert problem.message == (
        f"the reference files of this step hold {MAX_STEP_REFERENCE_BYTES + 1} bytes "
        f"together; the limit is {MAX_STEP_REFERENCE_BYTES} (shorten them, or show some at "
        "another step)")
    with pytest.raises(WorkflowInvalid):
        canal_at().start("shop")


def test_validate_on_the_command_line_reports_a_missing_file(cli: Cli, project: Path) -> None:
    make(project / "workflows", ["nope.md"])
    result = cli("validate", "shop")
    assert result.code == 5
    (report,) = result.json["workflows"]
    assert report["problems"] == [{
        "path": "references/01-ask.md", "key": "references[0]", "text": "nope.md",
        "message": "no such file in references/ (supporting files there: returns.md); add it "
                   "or correct the name",
        "problem": "references/01-ask.md: references[0]: nope.md: no such file in "
                   "references/ (supporting files there: returns.md); add it or correct "
                   "the name"}]
