"""``canal skill``: the Agent Skill folder, generated and then kept up to date."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.conftest import Cli, project_steps, write_workflow


def front_matter(text: str) -> dict[str, str]:
    assert text.startswith("---\n")
    front, _ = text[4:].split("\n---\n", 1)
    parsed = yaml.safe_load(front)
    assert isinstance(parsed, dict)
    return parsed


def test_skill_writes_a_skill_md_with_the_workflows(cli: Cli, project: Path) -> None:
    result = cli("skill")
    assert result.code == 0 and result.json["status"] == "ok"
    path = project / ".claude" / "skills" / "canal" / "SKILL.md"
    assert Path(result.json["path"]) == path.resolve()
    text = path.read_text()
    assert result.json["chars"] == len(text)
    front = front_matter(text)
    assert front["name"] == "canal" and "workflow" in front["description"]
    assert set(front) == {"name", "description"}
    assert "- `create-project`: the create-project workflow" in text
    assert "canal start WORKFLOW" in text and "next" in text


def test_a_rerun_updates_the_list_and_keeps_what_a_person_wrote(cli: Cli,
                                                                project: Path) -> None:
    folder = project / "skill"
    cli("skill", "--dir", str(folder))
    path = folder / "SKILL.md"
    mine = "\n## Our rules\nAlways ask before deleting anything.\n"
    path.write_text(path.read_text() + mine)
    write_workflow(project / "workflows", "second", project_steps(),
                   entry={"name": "second", "description": "another one"})

    result = cli("skill", "--dir", str(folder))
    assert result.code == 0
    text = path.read_text()
    assert "- `second`: another one" in text
    assert "- `create-project`: the create-project workflow" in text
    assert text.endswith(mine) and text.count("<!-- canal:begin -->") == 1
    assert front_matter(text)["name"] == "canal"
    assert cli("skill", "--dir", str(folder)).code == 0
    assert path.read_text() == text  # a rerun with nothing changed changes nothing


def test_a_skill_md_without_markers_keeps_its_text(cli: Cli, project: Path) -> None:
    folder = project / "skill"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: old\n---\nHand-written notes.\n")
    assert cli("skill", "--dir", str(folder)).code == 0
    text = (folder / "SKILL.md").read_text()
    assert front_matter(text)["name"] == "canal"
    assert text.index("Hand-written notes.") < text.index("<!-- canal:begin -->")


def test_serve_refuses_a_bad_port(cli: Cli) -> None:
    result = cli("serve", "--http", "99999")
    assert result.code == 2 and result.json["error"]["code"] == "usage"
