"""The ``Canal`` facade and the envelope it returns."""

from canal.runtime.canal import Canal
from canal.runtime.envelope import Envelope, StepView

__all__ = ["Canal", "Envelope", "StepView"]
