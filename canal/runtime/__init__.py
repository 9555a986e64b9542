"""The ``Canal`` facade and the envelope it returns."""

from canal.nodes.view import StepView
from canal.runtime.canal import Canal
from canal.runtime.envelope import Envelope

__all__ = ["Canal", "Envelope", "StepView"]
