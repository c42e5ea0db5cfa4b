"""CEL expressions as Kubernetes evaluates them: CRD ``x-kubernetes-validations`` rules,
ValidatingAdmissionPolicy validations and match conditions.

The engine is the ``common-expression-language`` package (the Rust ``cel`` crate behind
Python bindings): it parses and runs CEL's core language and macros (``has``, ``all``,
``exists``, ``exists_one``, ``map``, ``filter``) natively, about 5 µs per evaluation.
cel-go's string, math, sets and lists extensions come from the package's standard
library, and this package adds Kubernetes' own libraries (lists, regex, url, quantity,
ip/cidr in :mod:`fakekube.api.wire.cel.library`; format in :mod:`.formats`) on top. docs/api.md lists what is missing.

Interface (what CRD validation and admission policies call):

- ``compile(source, variables)`` → :class:`Program`. ``variables`` are the names the
  expression may reference (``{"self", "oldSelf"}`` for a CRD rule; ``object``,
  ``oldObject``, ``request``, ``params``, ``variables``, ... for a policy). Raises
  :class:`CompileError` with cel-go's wording (``ERROR: <input>:1:9: Syntax error: ...``,
  ``undeclared reference to 'foo' (in container '')``) when it does not parse or uses a
  name or function nobody declared. Programs are immutable and thread-safe: compile once.
- ``Program.evaluate(activation)`` → the value (a Python ``bool``, ``int``, ``float``,
  ``str``, ``list``, ``dict``, ``None``...). ``activation`` maps variable names to plain
  JSON-like values. Raises :class:`EvaluationError` with cel-go's wording where we know it
  (``no such key: foo``, ``division by zero``, ``index out of bounds: 3``,
  ``no such overload``).
- ``Activation(variables, programs)``: variables bound once, for several programs that
  read the same values (``program.evaluate(activation)`` then costs well under 1 µs; the
  binding itself costs ~5 µs per string or map in the values).
- ``optional_of(value)`` / ``optional_none()``: CEL optional values to bind as variables.
- ``Program.references(name)``: does the expression use variable ``name`` (a transition
  rule is one that references ``oldSelf``)?

Cost, as Kubernetes bounds it (:mod:`.cost`, :mod:`.prices`, :mod:`.sizes`, :mod:`.meter`;
docs/reliability.md):

- ``Program.estimated_cost(sizes)``: cel-go's estimate with sizes from a :class:`Sizes`
  (a CRD schema's bounds as :class:`Decl` s in :class:`DeclSizes`). CRD validation
  refuses rules over ``StaticEstimatedCostLimit`` with upstream's messages.
- Every ``evaluate`` first estimates its cost from the actual values and is cancelled
  past ``PER_CALL_LIMIT`` (1,000,000) with :class:`CostLimitExceeded` (``operation
  cancelled: actual cost limit exceeded``); ``evaluate(activation, budget)`` also draws
  on a :class:`CostBudget` (``RUNTIME_COST_BUDGET``, 10,000,000, per custom resource or
  policy binding), raising :class:`BudgetExhausted` when a run would overdraw it.
  ``program.with_budget(budget)`` gives a program that always draws on ``budget``.
- Library functions written in Python meter their own work against the per-call limit.

The engine counts no cost itself, so these are estimates from the expression's structure
(``syntax``: a parse of the expression with cel-go's macro expansion): an upper bound of
what cel-go would count, in the same units. Not supported: static type checking against
the schema (a rule comparing a string field to an int fails at run time with ``no such
overload`` rather than at CRD creation), and the optional field syntax (``self.?foo``;
``optional.of``/``hasValue``/``orValue`` work).
"""

from __future__ import annotations

from fakekube.api.wire.cel.sizes import Decl, DeclSizes, Sizes
from fakekube.api.wire.cel.errors import BudgetExhausted, CelError, CompileError, CostLimitExceeded, EvaluationError
from fakekube.api.wire.cel.program import (MATCH_CONDITIONS_COST_BUDGET, PER_CALL_LIMIT, RUNTIME_COST_BUDGET, Activation,
                                          CostBudget, Program, compile, compiled, optional_none, optional_of)

__all__ = ["Activation", "BudgetExhausted", "CelError", "CompileError", "CostBudget",
           "CostLimitExceeded", "Decl", "DeclSizes", "EvaluationError", "MATCH_CONDITIONS_COST_BUDGET",
           "PER_CALL_LIMIT", "Program", "RUNTIME_COST_BUDGET", "Sizes", "compile", "compiled", "optional_none",
           "optional_of"]
