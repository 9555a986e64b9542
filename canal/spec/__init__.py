"""Workflow definitions: models, the folder loader, the template grammar, the validator."""

from canal.spec.loader import check_name, list_workflows, workflow_dir
from canal.spec.models import AutomationSpec, FieldSpec, StepSpec, WorkflowSpec
from canal.spec.validate import check_workflow, load_workflow, validate_spec

__all__ = [
    "AutomationSpec",
    "FieldSpec",
    "StepSpec",
    "WorkflowSpec",
    "check_name",
    "check_workflow",
    "list_workflows",
    "load_workflow",
    "validate_spec",
    "workflow_dir",
]
