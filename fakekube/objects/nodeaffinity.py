"""A pod's node affinity as one value: what a node must have (required), what it scores
(preferred), and upstream's parse errors for configuration that must refuse bad terms.

Upstream: ``k8s.io/component-helpers/scheduling/corev1/nodeaffinity``
(``GetRequiredNodeAffinity``, ``PreferredSchedulingTerms``, ``NewNodeSelector``'s errors).
Matching itself is :class:`fakekube.objects.nodeselectors.NodeSelector`; this module adds:

- the ``nodeSelector`` map: every pair must equal the node's label, ANDed with the
  required node selector (``RequiredNodeAffinity.Match``);
- preferred terms: the sum of the weights of the terms a node matches; a term with
  weight 0 or no requirements is left out, as is one that does not parse;
- :func:`node_selector_errors` / :func:`preferred_terms_errors`: the messages
  ``NewNodeSelector`` / ``NewPreferredSchedulingTerms`` aggregate, field paths included
  (pod specs are validated by the API; these are for scheduler args such as
  NodeAffinity's ``addedAffinity``).
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Sequence

from fakekube.objects.nodeselectors import NodeSelector, _parse_int64
from fakekube.objects.syntax import go_quote, go_string_slice, label_value_errors, qualified_name_errors

Obj = Mapping[str, Any]

_LABEL_OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt")
_FIELD_OPERATORS = ("In", "NotIn")


class RequiredNodeAffinity(NamedTuple):
    """A pod's ``nodeSelector`` pairs AND its required node selector (None: not set)."""

    node_selector: tuple[tuple[str, str], ...] = ()
    affinity: NodeSelector | None = None

    def matches(self, labels: Mapping[str, str], name: str) -> bool:
        for key, value in self.node_selector:
            if labels.get(key) != value:
                return False
        return self.affinity is None or self.affinity.matches(labels, name)

    def matches_node(self, node: Obj) -> bool:
        meta = node.get("metadata") or {}
        return self.matches(meta.get("labels") or {}, meta.get("name") or "")


class PreferredTerms(NamedTuple):
    """Compiled ``[]PreferredSchedulingTerm``: (weight, one-term selector) pairs."""

    terms: tuple[tuple[int, NodeSelector], ...] = ()

    def score(self, labels: Mapping[str, str], name: str) -> int:
        """The sum of the weights of the terms the node matches."""
        total = 0
        for weight, term in self.terms:
            if term.matches(labels, name):
                total += weight
        return total


def node_affinity_of(pod: Obj) -> Mapping[str, Any]:
    return ((pod.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}


def required_node_affinity(pod: Obj) -> RequiredNodeAffinity:
    """``GetRequiredNodeAffinity``: what a node must satisfy for ``pod`` to run there."""
    pairs = tuple(sorted(((pod.get("spec") or {}).get("nodeSelector") or {}).items()))
    required = node_affinity_of(pod).get("requiredDuringSchedulingIgnoredDuringExecution")
    affinity = NodeSelector(required.get("nodeSelectorTerms")) if required is not None else None
    return RequiredNodeAffinity(pairs, affinity)


def preferred_terms(preferred: Sequence[Obj] | None) -> PreferredTerms:
    """``NewPreferredSchedulingTerms`` without the errors (a bad term scores nothing)."""
    terms = []
    for entry in preferred or ():
        weight = int(entry.get("weight") or 0)
        preference = entry.get("preference") or {}
        if weight and (preference.get("matchExpressions") or preference.get("matchFields")):
            terms.append((weight, NodeSelector([preference])))
    return PreferredTerms(tuple(terms))


def node_selector_errors(selector: Obj, path: str = "") -> list[str]:
    """The parse errors ``NewNodeSelector`` reports for a ``v1.NodeSelector``, in order,
    each prefixed with its field path (``path`` ends with "." when given)."""
    errors: list[str] = []
    for index, term in enumerate(selector.get("nodeSelectorTerms") or []):
        errors += term_errors(term or {}, f"{path}nodeSelectorTerms[{index}]")
    return errors


def preferred_terms_errors(preferred: Sequence[Obj], path: str = "") -> list[str]:
    """``NewPreferredSchedulingTerms``' errors (terms with weight 0 are not parsed)."""
    errors: list[str] = []
    for index, entry in enumerate(preferred):
        if int(entry.get("weight") or 0):
            errors += term_errors(entry.get("preference") or {}, f"{path}[{index}]")
    return errors


def term_errors(term: Obj, path: str) -> list[str]:
    """Every parse error of one ``NodeSelectorTerm`` (an empty term has none)."""
    errors: list[str] = []
    for index, expr in enumerate(term.get("matchExpressions") or []):
        errors += _expression_errors(expr, f"{path}.matchExpressions[{index}]")
    for index, expr in enumerate(term.get("matchFields") or []):
        errors += _field_errors(expr, f"{path}.matchFields[{index}]")
    return errors


def _expression_errors(expr: Obj, path: str) -> list[str]:
    """``labels.NewRequirement`` with a field path: key, operator rules, then values."""
    key = expr.get("key") or ""
    operator = expr.get("operator") or ""
    values = [str(v) for v in expr.get("values") or []]
    if operator not in _LABEL_OPERATORS:
        return [f"{path}.operator: Unsupported value: {go_quote(operator)}: supported values: "
                + ", ".join(go_quote(op) for op in _LABEL_OPERATORS)]
    errors = []
    key_errors = qualified_name_errors(key)
    if key_errors:
        errors.append(f"{path}.key: Invalid value: {go_quote(key)}: {'; '.join(key_errors)}")
    rendered = go_string_slice(values)
    if operator in ("In", "NotIn") and not values:
        errors.append(f"{path}.values: Invalid value: {rendered}: "
                      "for 'in', 'notin' operators, values set can't be empty")
    if operator in ("Exists", "DoesNotExist") and values:
        errors.append(f"{path}.values: Invalid value: {rendered}: "
                      "values set must be empty for exists and does not exist")
    if operator in ("Gt", "Lt"):
        if len(values) != 1:
            errors.append(f"{path}.values: Invalid value: {rendered}: "
                          "for 'Gt', 'Lt' operators, exactly one value is required")
        errors += [f"{path}.values[{i}]: Invalid value: {go_quote(v)}: "
                   "for 'Gt', 'Lt' operators, the value must be an integer"
                   for i, v in enumerate(values) if _parse_int64(v) is None]
    for index, value in enumerate(values):
        value_errors = label_value_errors(value)
        if value_errors:
            errors.append(f"{path}.values[{index}]: Invalid value: {go_quote(value)}: {'; '.join(value_errors)}")
    return errors


def _field_errors(expr: Obj, path: str) -> list[str]:
    """``nodeSelectorRequirementsAsFieldSelector`` for one entry."""
    operator = expr.get("operator") or ""
    values = [str(v) for v in expr.get("values") or []]
    if operator not in _FIELD_OPERATORS:
        return [f"{path}.operator: Unsupported value: {go_quote(operator)}: supported values: "
                + ", ".join(go_quote(op) for op in _FIELD_OPERATORS)]
    if len(values) != 1:
        return [f"{path}.values: Invalid value: {go_string_slice(values)}: must have one element"]
    return []
