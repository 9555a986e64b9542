"""One containment rule: canal reads a workflow only from inside the workflows folder, and a
workflow's files only from inside its own folder. Symlinks that stay inside are fine."""

from __future__ import annotations

from pathlib import Path

import pytest

from canal.errors import WorkflowNotFound
from canal.spec import check_workflow, list_workflows, load_workflow, workflow_dir
from canal.spec.loader import describe_workflows, refused_workflows, workflow_files
from tests.conftest import write_workflow

NOTE = {"type": "notification"}


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    """A valid workflow folder next to (not inside) the workflows folder."""
    return write_workflow(tmp_path / "elsewhere", "escape", {"01-a.md": ({**NOTE}, "secret")})


def test_a_linked_folder_outside_is_not_listed(workflows: Path, outside: Path) -> None:
    write_workflow(workflows, "good", {"01-a.md": NOTE})
    (workflows / "escape").symlink_to(outside, target_is_directory=True)

    assert list_workflows(workflows) == ["good"]
    assert [name for name, _ in describe_workflows(workflows)] == ["good"]
    [problem] = refused_workflows(workflows)
    assert str(problem) == (f"escape: the folder is a link to {outside}, outside "
                            f"{workflows.resolve()} (canal reads only what is inside it)")
    with pytest.raises(WorkflowNotFound) as caught:
        workflow_dir(workflows, "escape")
    assert str(problem) in caught.value.message


def test_a_linked_folder_inside_is_a_workflow(workflows: Path) -> None:
    write_workflow(workflows, "real", {"01-a.md": NOTE}, entry={"name": "alias"})
    (workflows / "alias").symlink_to(workflows / "real", target_is_directory=True)

    assert list_workflows(workflows) == ["alias", "real"]
    assert refused_workflows(workflows) == []
    assert workflow_dir(workflows, "alias") == workflows.resolve() / "alias"
    assert load_workflow(workflow_dir(workflows, "alias")).name == "alias"


@pytest.mark.parametrize("target", ["other-workflow", "outside"])
def test_a_step_file_linked_outside_its_folder_is_a_problem(workflows: Path, outside: Path,
                                                            target: str) -> None:
    other = write_workflow(workflows, "other", {"01-b.md": NOTE})
    folder = write_workflow(workflows, "w", {"01-a.md": NOTE})
    source = (other if target == "other-workflow" else outside) / "references"
    linked = source / ("01-b.md" if target == "other-workflow" else "01-a.md")
    (folder / "references" / "02-stolen.md").symlink_to(linked)

    files = workflow_files(folder)
    assert "references/02-stolen.md" in files
    assert not isinstance(files["references/02-stolen.md"], bytes)  # never read
    found = [str(p) for p in check_workflow(folder)[1]]
    assert found == [f"references/02-stolen.md: the file is a link to {linked}, outside "
                     f"{folder.resolve()} (canal reads only what is inside it)"]


def test_a_references_folder_linked_outside_is_refused(workflows: Path, outside: Path) -> None:
    folder = write_workflow(workflows, "w", {})
    (folder / "references").rmdir()
    (folder / "references").symlink_to(outside / "references", target_is_directory=True)
    found = [str(p) for p in check_workflow(folder)[1]]
    assert len(found) == 1 and found[0].startswith("references/01-a.md: the file is a link to ")


def test_an_entry_file_linked_outside_is_refused(workflows: Path, outside: Path) -> None:
    folder = write_workflow(workflows, "escape", {"01-a.md": NOTE})
    (folder / "WorkFlow.md").unlink()
    (folder / "WorkFlow.md").symlink_to(outside / "WorkFlow.md")
    found = [str(p) for p in check_workflow(folder)[1]]
    assert len(found) == 1 and found[0].startswith("WorkFlow.md: the file is a link to ")


def test_links_inside_the_folder_are_fine(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": NOTE})
    (folder / "shared").mkdir()
    (folder / "shared" / "b.md").write_text("---\ntype: notification\n---\nB\n", "utf-8")
    (folder / "references" / "02-b.md").symlink_to(folder / "shared" / "b.md")
    assert [s.body for s in load_workflow(folder).steps] == ["", "B"]


def test_a_link_loop_is_a_problem(workflows: Path) -> None:
    folder = write_workflow(workflows, "w", {"01-a.md": NOTE})
    loop = folder / "references" / "02-loop.md"
    loop.symlink_to(loop)
    # a loop is not a file: it is not a step, and reading the others still works
    assert [s.id for s in load_workflow(folder).steps] == ["a"]
