"""Immutable specs of a workflow, parsed from untrusted front matter.

The YAML keys are the seeds' (``gate: {schema: {f: {type, required, desc}}}``,
``automation: {tool, input_mapping}``); every model forbids unknown keys so a typo is an
error, not a silently ignored setting. Scalars are strict: a boolean is ``true`` or
``false`` (never ``'yes'`` or ``1``) and a number is never read from text; only a list may
stand for a tuple.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

FieldType = Literal["string", "integer", "number", "boolean", "array", "object"]
StepType = Literal["interactive", "automated", "notification"]
STEP_TYPES: tuple[str, ...] = ("interactive", "automated", "notification")


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, populate_by_name=True, strict=True)


def _items(**kwargs: Any) -> Any:
    """A tuple field that YAML writes as a list (strict mode alone would want a tuple)."""
    return Field(strict=False, **kwargs)


class FieldSpec(_Frozen):
    """One gate field.

    ``min``/``max`` bound a number's value, a string's length or an array's item count.
    ``pattern`` is a regular expression searched in a string (JSON Schema semantics: anchor
    it with ``^...$`` to match the whole value). ``example`` is a value that passes the
    field, shown to agents and quoted when a value does not match the pattern. A required
    string that is empty or only whitespace counts as missing unless ``allow_empty``
    (strings only) says it is an answer.
    """

    type: FieldType = "string"
    required: bool = False
    desc: str = Field(default="", alias="description")
    enum: tuple[Any, ...] | None = _items(default=None)
    pattern: str | None = None
    default: Any = None
    example: Any = None
    min: int | float | None = None
    max: int | float | None = None
    sensitive: bool = False
    allow_empty: bool = False

    @model_validator(mode="before")
    @classmethod
    def _desc_alias(cls, data: Any) -> Any:
        # The seeds write `desc`; JSON Schema writes `description`. Accept either, not both.
        if isinstance(data, dict) and "desc" in data:
            if "description" in data:
                raise ValueError("give either 'desc' or 'description', not both")
            data = {**data, "description": data["desc"]}
            del data["desc"]
        return data

    def to_json(self) -> dict[str, Any]:
        """The field as shown to an agent: only what is set (never a sensitive default)."""
        data: dict[str, Any] = {"type": self.type, "required": self.required}
        if self.desc:
            data["desc"] = self.desc
        for key in ("enum", "pattern", "default", "example", "min", "max"):
            value = getattr(self, key)
            if key == "default" and self.sensitive:  # a secret's default is a secret too
                continue
            if value is not None:
                data[key] = list(value) if key == "enum" else value
        if self.sensitive:
            data["sensitive"] = True
        if self.allow_empty:
            data["allow_empty"] = True
        return data


class GateSpec(_Frozen):
    schema_: dict[str, FieldSpec] = Field(default_factory=dict, alias="schema")


class AutomationSpec(_Frozen):
    """``tool`` and its ``input_mapping``; ``idempotent: true`` declares the call safe to
    repeat (as MCP's ``idempotentHint`` would); ``idempotency_key`` names the argument that
    receives canal's key for the call, for backends that deduplicate by key."""

    tool: str = Field(min_length=1)
    input_mapping: dict[str, Any] = Field(default_factory=dict)
    idempotent: bool = False
    idempotency_key: str | None = Field(default=None, min_length=1)


class CompensationSpec(_Frozen):
    """The call that undoes a completed automated step when its run is aborted; its
    ``input_mapping`` may reference the step's own result."""

    tool: str = Field(min_length=1)
    input_mapping: dict[str, Any] = Field(default_factory=dict)


class VerifySpec(_Frozen):
    """The read-back after a successful call (DESIGN.md §7): ``tool`` (never a destructive
    one) is called with ``input_mapping``, which may reference the step's own result, and
    each ``expect`` path of its result is compared with its expected value (a plain value,
    a reference, or an operator mapping as in ``when``)."""

    tool: str = Field(min_length=1)
    input_mapping: dict[str, Any] = Field(default_factory=dict)
    expect: dict[str, Any] = Field(default_factory=dict)


class ReferenceDoc(_Frozen):
    """A supporting Markdown file in ``references/`` shown with one step (its ``references``)."""

    name: str
    text: str


class RetrySpec(_Frozen):
    """How often a transient failure (connection, timeout) is retried, and the first pause."""

    attempts: int = Field(default=1, ge=1, le=20)
    backoff: float = Field(default=0.5, ge=0, le=60)

    @model_validator(mode="before")
    @classmethod
    def _count(cls, data: Any) -> Any:
        return {"attempts": data} if isinstance(data, int) and not isinstance(data, bool) else data


class StepFrontMatter(_Frozen):
    """The front matter of one ``references/NN-*.md`` file."""

    id: str | None = None
    type: StepType
    title: str | None = None
    gate: GateSpec | None = None
    automation: AutomationSpec | None = None
    retry: RetrySpec | None = None
    timeout: float | None = Field(default=None, gt=0, le=86400)
    compensate: CompensationSpec | None = None
    confirm: bool | None = None
    when: dict[str, Any] | None = None        # parsed by canal.spec.conditions
    verify: VerifySpec | None = None
    references: tuple[str, ...] | None = _items(default=None)


class WorkflowFrontMatter(_Frozen):
    """The front matter of ``WorkFlow.md`` (or ``SKILL.md``). ``tools`` and ``servers``, when
    given, are allow-lists: least privilege for what the workflow's steps may call."""

    name: str
    description: str = ""
    version: str | int | float | None = None
    tools: tuple[str, ...] | None = _items(default=None)
    servers: tuple[str, ...] | None = _items(default=None)


class StepSpec(_Frozen):
    """A step as the runtime sees it: front matter, body, and where it came from."""

    id: str
    type: StepType
    order: int
    path: str
    body: str = ""
    title: str | None = None
    gate: dict[str, FieldSpec] = Field(default_factory=dict)
    automation: AutomationSpec | None = None
    retry: RetrySpec | None = None
    timeout: float | None = None
    compensate: CompensationSpec | None = None
    confirm: bool | None = None    # None: ask only when the tool is marked destructive
    when: dict[str, Any] | None = None   # the step runs only when this holds
    verify: VerifySpec | None = None
    references: tuple[ReferenceDoc, ...] = ()


class WorkflowSpec(_Frozen):
    """A loaded workflow: steps in execution order plus a digest of every file's content."""

    name: str
    description: str
    path: str
    entry: str
    digest: str
    steps: tuple[StepSpec, ...]
    body: str = ""
    version: str | int | float | None = None
    tools: tuple[str, ...] | None = None     # the only tools its steps may call
    servers: tuple[str, ...] | None = None   # the only MCP servers its tools may live on

    def step(self, step_id: str) -> StepSpec:
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)

    def next_id(self, step_id: str) -> str | None:
        """The id of the step after ``step_id``, or None when it is the last."""
        ids = [s.id for s in self.steps]
        index = ids.index(step_id)
        return ids[index + 1] if index + 1 < len(ids) else None
