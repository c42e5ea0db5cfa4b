"""The one matcher for ``metav1.LabelSelector`` objects (Deployments, ReplicaSets, PDBs, …).

Upstream turns such a selector into a ``labels.Selector`` with
``metav1.LabelSelectorAsSelector`` and every controller relies on its two edge cases:

- a *nil* selector (``None`` here) matches **nothing** (``labels.Nothing()``);
- an *empty* one (``{}``, or both fields empty) matches **everything**.

``matchLabels`` pairs are exact matches; ``matchExpressions`` use In, NotIn, Exists and
DoesNotExist, where NotIn and DoesNotExist also match objects that lack the key. An
invalid selector raises :class:`ValueError` carrying upstream's message word for word
(``labels.NewRequirement``'s field errors, aggregated as ``utilerrors`` does).

Compile once with :func:`compile_selector` when matching many objects; the string
grammar of ``?labelSelector=`` is the API layer's business, not this module's.
"""

from __future__ import annotations

from typing import Any, Mapping, NamedTuple, Sequence

from fakekube.objects.syntax import go_quote, go_string_slice, label_value_errors, qualified_name_errors

# The operators of a metav1.LabelSelectorRequirement, as written in objects.
OP_IN = "In"
OP_NOT_IN = "NotIn"
OP_EXISTS = "Exists"
OP_DOES_NOT_EXIST = "DoesNotExist"

# The same operators as labels.Requirement spells them (selection.Operator), plus "="
# for a matchLabels pair; compiled requirements carry these.
EQUALS = "="
IN = "in"
NOT_IN = "notin"
EXISTS = "exists"
DOES_NOT_EXIST = "!"

_FROM_OBJECT = {OP_IN: IN, OP_NOT_IN: NOT_IN, OP_EXISTS: EXISTS, OP_DOES_NOT_EXIST: DOES_NOT_EXIST}


class Requirement(NamedTuple):
    """One ``key operator values`` term; ``values`` in the order the selector wrote them."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (EQUALS, IN):
            return self.key in labels and labels[self.key] in self.values
        if op == NOT_IN:
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        return False


class LabelMatcher(NamedTuple):
    """A compiled selector: all requirements must match (sorted by key, as upstream's ``ByKey``).

    ``nothing`` marks the nil selector, which matches no labels at all.
    """

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        present = labels or {}
        return all(r.matches(present) for r in self.requirements)

    @property
    def everything(self) -> bool:
        """True for the empty selector, which matches every object."""
        return not self.nothing and not self.requirements


MATCH_NOTHING = LabelMatcher(nothing=True)
MATCH_EVERYTHING = LabelMatcher()


def compile_selector(selector: Mapping[str, Any] | None) -> LabelMatcher:
    """``metav1.LabelSelectorAsSelector``: nil → nothing, empty → everything, else the terms.

    Raises :class:`ValueError` with upstream's message for an unknown operator, In/NotIn
    without values, Exists/DoesNotExist with values, or an invalid key or value. Like
    upstream, the first bad term (matchLabels first, then expressions in order) wins.
    """
    if selector is None:
        return MATCH_NOTHING
    match_labels: Mapping[str, str] = selector.get("matchLabels") or {}
    expressions: Sequence[Mapping[str, Any]] = selector.get("matchExpressions") or []
    if not match_labels and not expressions:
        return MATCH_EVERYTHING
    requirements = [_requirement(key, EQUALS, (value,)) for key, value in sorted(match_labels.items())]
    for expr in expressions:
        operator = expr.get("operator") or ""
        if operator not in _FROM_OBJECT:
            raise ValueError(f"{go_quote(operator)} is not a valid label selector operator")
        values = tuple(expr.get("values") or ())
        requirements.append(_requirement(expr.get("key") or "", _FROM_OBJECT[operator], values))
    return LabelMatcher(tuple(sorted(requirements, key=lambda r: r.key)))


def selector_matches(selector: Mapping[str, Any] | None, labels: Mapping[str, str] | None) -> bool:
    """Does ``selector`` (a metav1.LabelSelector dict, or None) select ``labels``?

    One-off form of ``compile_selector(selector).matches(labels)``; raises
    :class:`ValueError` for an invalid selector.
    """
    return compile_selector(selector).matches(labels)


def _requirement(key: str, operator: str, values: tuple[str, ...]) -> Requirement:
    """``labels.NewRequirement`` without a field path: every problem, then aggregated."""
    errors: list[str] = []
    key_errors = qualified_name_errors(key)
    if key_errors:
        errors.append(f"key: Invalid value: {go_quote(key)}: {'; '.join(key_errors)}")
    rendered = go_string_slice(values)
    if operator in (IN, NOT_IN) and not values:
        errors.append(f"values: Invalid value: {rendered}: for 'in', 'notin' operators, values set can't be empty")
    if operator == EQUALS and len(values) != 1:
        errors.append(f"values: Invalid value: {rendered}: exact-match compatibility requires one single value")
    if operator in (EXISTS, DOES_NOT_EXIST) and values:
        errors.append(f"values: Invalid value: {rendered}: values set must be empty for exists and does not exist")
    for i, value in enumerate(values):
        value_errors = label_value_errors(value)
        if value_errors:
            errors.append(f"values[{i}][{key}]: Invalid value: {go_quote(value)}: {'; '.join(value_errors)}")
    if errors:
        raise ValueError(_aggregate(errors))
    return Requirement(key, operator, values)


def _aggregate(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message bare, several de-duplicated in brackets."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"
