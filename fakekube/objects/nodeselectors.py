"""Node selector terms (``v1.NodeSelector``) and topology selector terms, matched as upstream.

Upstream: ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity`` (``NodeSelector``,
the "lazy error" matcher) and ``v1helper.MatchTopologySelectorTerms``. The same rules
serve a pod's required node affinity, a PersistentVolume's ``spec.nodeAffinity`` and a
StorageClass's ``allowedTopologies``:

- terms are ORed; within a term every requirement must hold;
- a term with neither ``matchExpressions`` nor ``matchFields`` matches no node;
- a term that does not parse (an unknown operator, ``Gt`` with a non-integer, a
  ``matchFields`` key other than ``metadata.name``…) matches no node, but the other terms
  still count;
- ``NotIn`` and ``DoesNotExist`` match nodes without the key; ``Gt``/``Lt`` compare the
  label as a 64-bit integer and fail for a label that is missing or not an integer.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, NamedTuple, Sequence

from fakekube.objects.syntax import label_value_errors, qualified_name_errors

Obj = dict[str, Any]

#: The only field a matchFields requirement may name (``metav1.ObjectNameField``).
NODE_NAME_FIELD = "metadata.name"

_INT64 = re.compile(r"[+-]?[0-9]+")
_INT64_MIN, _INT64_MAX = -(2 ** 63), 2 ** 63 - 1


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``: None when it would fail."""
    if not _INT64.fullmatch(text):
        return None
    value = int(text)
    return value if _INT64_MIN <= value <= _INT64_MAX else None


class _Expression(NamedTuple):
    key: str
    operator: str
    values: tuple[str, ...]
    number: int | None  # the single value of Gt/Lt

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op == "In":
            return self.key in labels and labels[self.key] in self.values
        if op == "NotIn":
            return self.key not in labels or labels[self.key] not in self.values
        if op == "Exists":
            return self.key in labels
        if op == "DoesNotExist":
            return self.key not in labels
        if self.key not in labels or self.number is None:
            return False
        value = _parse_int64(labels[self.key])
        if value is None:
            return False
        return value > self.number if op == "Gt" else value < self.number


def _expression(requirement: Mapping[str, Any]) -> _Expression | None:
    """``labels.NewRequirement`` for one node selector requirement; None if it is invalid."""
    key = requirement.get("key") or ""
    operator = requirement.get("operator") or ""
    values = tuple(requirement.get("values") or ())
    if qualified_name_errors(key) or any(label_value_errors(v) for v in values):
        return None
    if operator in ("In", "NotIn"):
        return _Expression(key, operator, values, None) if values else None
    if operator in ("Exists", "DoesNotExist"):
        return None if values else _Expression(key, operator, (), None)
    if operator in ("Gt", "Lt") and len(values) == 1:
        number = _parse_int64(values[0])
        return None if number is None else _Expression(key, operator, values, number)
    return None


def _field(requirement: Mapping[str, Any]) -> tuple[str, str] | None:
    """A matchFields requirement as (operator, node name); None if it is invalid."""
    values = requirement.get("values") or []
    operator = requirement.get("operator") or ""
    if requirement.get("key") != NODE_NAME_FIELD or operator not in ("In", "NotIn") or len(values) != 1:
        return None
    return operator, values[0]


class _Term(NamedTuple):
    expressions: tuple[_Expression, ...]
    fields: tuple[tuple[str, str], ...]

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        for operator, value in self.fields:
            if (name == value) != (operator == "In"):
                return False
        return all(e.matches(labels) for e in self.expressions)


def _term(term: Mapping[str, Any]) -> _Term | None:
    """One term, or None when it selects nothing (empty or invalid)."""
    raw_expressions = term.get("matchExpressions") or []
    raw_fields = term.get("matchFields") or []
    if not raw_expressions and not raw_fields:
        return None
    expressions = [_expression(r) for r in raw_expressions]
    fields = [_field(r) for r in raw_fields]
    if any(e is None for e in expressions) or any(f is None for f in fields):
        return None
    return _Term(tuple(e for e in expressions if e is not None), tuple(f for f in fields if f is not None))


class NodeSelector:
    """A compiled ``v1.NodeSelector`` (its ``nodeSelectorTerms``); compile once, match many nodes."""

    __slots__ = ("_terms",)

    def __init__(self, terms: Sequence[Mapping[str, Any]] | None) -> None:
        compiled = (_term(t or {}) for t in terms or ())
        self._terms = tuple(t for t in compiled if t is not None)

    def matches(self, labels: Mapping[str, str] | None, name: str = "") -> bool:
        """Does a node with ``labels`` and ``name`` satisfy any term?"""
        present = labels or {}
        return any(term.matches(present, name) for term in self._terms)


def node_selector_matches(node_selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None,
                          name: str = "") -> bool:
    """One-off ``corev1.MatchNodeSelectorTerms`` for a ``v1.NodeSelector`` dict. A missing
    selector is the caller's business (upstream callers treat nil as "no constraint")."""
    return NodeSelector((node_selector or {}).get("nodeSelectorTerms")).matches(labels, name)


def topology_terms_match(terms: Sequence[Mapping[str, Any]] | None, labels: Mapping[str, str] | None) -> bool:
    """``v1helper.MatchTopologySelectorTerms`` (a StorageClass's ``allowedTopologies``): no
    terms match everything; a term with no ``matchLabelExpressions`` matches nothing; in a
    term, every expression's key must carry one of its values."""
    if not terms:
        return True
    present = labels or {}
    for term in terms:
        expressions = (term or {}).get("matchLabelExpressions") or []
        if not expressions:
            continue
        if all(_topology_requirement_holds(e, present) for e in expressions):
            return True
    return False


def _topology_requirement_holds(expression: Mapping[str, Any], labels: Mapping[str, str]) -> bool:
    key = expression.get("key") or ""
    values = expression.get("values") or []
    # TopologySelectorRequirementsAsSelector builds "key in (values)"; an invalid one fails the term.
    if not values or qualified_name_errors(key) or any(label_value_errors(v) for v in values):
        return False
    return key in labels and labels[key] in values
