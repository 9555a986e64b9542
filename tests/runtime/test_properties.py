"""Property tests: no submission or front matter makes canal raise anything but its own
errors, and a rejected submission never changes a run."""

from __future__ import annotations

import contextlib
import io
import json

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from canal import Canal, CanalError, PythonTools
from canal.spec import check_workflow
from tests.conftest import project_steps, write_workflow

JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-2**63, 2**63) | st.floats(allow_nan=False,
                                                                       allow_infinity=False)
    | st.text(max_size=30),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=12), inner,
                                                                max_size=5),
    max_leaves=20,
)
FIELDS = ["project_name", "host", "admins", "quota", "action", "extra"]
SUBMISSIONS = JSON | st.dictionaries(st.sampled_from(FIELDS), JSON, max_size=6)
SLOW = settings(max_examples=80, deadline=None,
                suppress_health_check=[HealthCheck.function_scoped_fixture])


def tools() -> PythonTools:
    return PythonTools({
        "create_project": lambda **kw: {"project": {"id": 1, "name": kw.get("name"),
                                                    "admins": kw.get("admins") or ["x"]}},
        "create_role": lambda **kw: {"role_id": "r"},
    })


@SLOW
@given(data=SUBMISSIONS)
def test_any_submission_is_an_envelope_or_a_canal_error(tmp_path_factory, data):
    root = tmp_path_factory.mktemp("p")
    write_workflow(root / "workflows", "create-project", project_steps())
    canal = Canal(workflows=root / "workflows", checkpointer="memory:", tools=tools())
    thread = canal.start("create-project").thread_id
    config = {"configurable": {"thread_id": thread}}
    before = list(canal.store.saver().list(config))
    try:
        env = canal.advance(thread, data)
    except CanalError:
        env = None
    after = list(canal.store.saver().list(config))
    if env is None or env.status == "rejected":
        assert len(after) == len(before)
        assert canal.current(thread).step.id == "collect-project-info"
    else:
        assert env.status in ("awaiting_input", "failed")
        json.dumps(env.to_json())


@SLOW
@given(text=st.text(max_size=40))
def test_any_gate_data_text_on_the_command_line(tmp_path_factory, text):
    from canal.cli.main import run

    root = tmp_path_factory.mktemp("c")
    write_workflow(root / "workflows", "create-project", project_steps())
    args = ["--workflows", str(root / "workflows"), "--home", str(root / ".canal")]
    with contextlib.redirect_stdout(io.StringIO()) as out:
        assert run([*args, "start", "create-project", "--thread-id", "t"]) == 0
    with contextlib.redirect_stdout(io.StringIO()) as out, \
            contextlib.redirect_stderr(io.StringIO()):
        code = run([*args, "advance", "t", "--gate-data", text])
    document = json.loads(out.getvalue())
    assert code in (0, 2, 3, 7), document
    if code in (2, 3):
        with contextlib.redirect_stdout(io.StringIO()) as again:
            run([*args, "current", "t"])
        assert json.loads(again.getvalue())["step"]["id"] == "collect-project-info"


STEP_KEYS = ["id", "type", "title", "gate", "automation", "retry", "timeout", "compensate",
             "schema", "tool", "input_mapping", "required", "desc", "enum", "x"]
FRONT = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20)
    | st.sampled_from(["interactive", "automated", "notification", "{{gate.a.b}}",
                       "{{result.a}}", "{{", "string", "integer"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(STEP_KEYS) | st.text(max_size=8), inner, max_size=5),
    max_leaves=15,
)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(front=FRONT, raw=st.text(max_size=80), body=st.text(max_size=40))
def test_any_front_matter_is_a_list_of_problems(tmp_path_factory, front, raw, body):
    root = tmp_path_factory.mktemp("f")
    dumped = "---\n" + yaml.safe_dump(front) + "---\n" + body
    write_workflow(root, "w", {"01-a.md": dumped, "02-b.md": "---\n" + raw + "\n---\n"})
    spec, problems = check_workflow(root / "w")
    assert all(str(p) for p in problems)
    assert spec is not None or problems
