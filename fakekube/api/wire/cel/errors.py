"""The failures of CEL expressions, worded as cel-go and Kubernetes word them."""

from __future__ import annotations


class CelError(Exception):
    """A CEL expression that does not compile or fails to evaluate; ``str()`` is the text
    upstream puts in its messages."""


class CompileError(CelError):
    """The expression does not parse, or references an undeclared name or function."""


class EvaluationError(CelError):
    """Evaluation failed (missing key, division by zero, no such overload, ...)."""


class CostLimitExceeded(EvaluationError):
    """The run passed the per-call cost limit and was cancelled (cel-go's text)."""

    def __init__(self) -> None:
        super().__init__("operation cancelled: actual cost limit exceeded")


class BudgetExhausted(EvaluationError):
    """The run would overdraw the validation's cost budget: no further rules may run."""

    def __init__(self) -> None:
        super().__init__("validation failed due to running out of cost budget, no further validation rules will be run")
