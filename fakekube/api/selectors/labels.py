"""Label selectors and their terms, matched and validated exactly as apimachinery does.

``Requirement`` and ``LabelSelector`` mirror ``k8s.io/apimachinery/pkg/labels/selector.go``
(requirements sorted by key, set values sorted and de-duplicated, upstream's validation
messages word for word); ``label_selector_from_object`` is ``metav1.LabelSelectorAsSelector``
for the selectors objects carry (Deployments, Services' scale subresource, …). The string
grammar of ``?labelSelector=`` lives in :mod:`.label_parser`.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping, NamedTuple

from fakekube.api.machinery.validation import go_quote, is_qualified_name, is_valid_label_value
from fakekube.api.selectors.selection import (
    ALL_OPERATORS,
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    SelectorError,
    parse_int64,
)
from fakekube.objects import compile_selector


class Requirement(NamedTuple):
    """One ``key op values`` term of a label selector."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            return self.key in labels and labels[self.key] in self.values
        if op in (NOT_IN, NOT_EQUALS):
            return self.key not in labels or labels[self.key] not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        if op in (GREATER_THAN, LESS_THAN):
            return self._matches_int(labels)
        return False

    def _matches_int(self, labels: Mapping[str, str]) -> bool:
        """Gt/Lt: both the label and the requirement must parse as int64, else no match."""
        if self.key not in labels or len(self.values) != 1:
            return False
        have = parse_int64(labels[self.key])
        want = parse_int64(self.values[0])
        if have is None or want is None:
            return False
        return have > want if self.operator == GREATER_THAN else have < want

    def __str__(self) -> str:
        """Rendered as ``Requirement.String()``: multi-values sorted, ``in``-sets parenthesised."""
        prefix = "!" if self.operator == DOES_NOT_EXIST else ""
        if self.operator in (EXISTS, DOES_NOT_EXIST):
            return prefix + self.key
        symbol = {EQUALS: "=", DOUBLE_EQUALS: "==", NOT_EQUALS: "!=", IN: " in ", NOT_IN: " notin ",
                  GREATER_THAN: ">", LESS_THAN: "<"}.get(self.operator, "")
        values = self.values[0] if len(self.values) == 1 else ",".join(sorted(self.values))
        if self.operator in (IN, NOT_IN):
            values = f"({values})"
        return self.key + symbol + values


class LabelSelector(NamedTuple):
    """A conjunction of requirements, kept sorted by key (upstream's ``ByKey``).

    ``nothing=True`` is ``labels.Nothing()``: what a *nil* metav1.LabelSelector means,
    matching no object at all (an empty one matches every object).
    """

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = False

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        present = labels or {}
        return all(r.matches(present) for r in self.requirements)

    def empty(self) -> bool:
        return not self.nothing and not self.requirements

    def requires_exact_match(self, key: str) -> str | None:
        """The single value ``key`` must have, if the selector pins it (indexing aid)."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = LabelSelector()
NOTHING = LabelSelector(nothing=True)


def sorted_by_key(requirements: Iterable[Requirement]) -> tuple[Requirement, ...]:
    """Upstream's ``ByKey`` order; stable, so same-key terms keep their written order."""
    return tuple(sorted(requirements, key=lambda r: r.key))


def _go_strings(values: list[str] | None) -> str:
    """A ``[]string`` as Go's ``%#v`` prints it inside field error messages."""
    if values is None:
        return "[]string(nil)"
    return "[]string{" + ", ".join(go_quote(v) for v in values) + "}"


def _field_message(path: str, rendered_value: str, detail: str, phrase: str = "Invalid value") -> str:
    return f"{path}: {phrase}: {rendered_value}: {detail}"


def _join_path(base: str | None, child: str) -> str:
    return f"{base}.{child}" if base else child


def label_key_error(key: str, path: str) -> str | None:
    """Upstream's message for a label key that is not a qualified name, else None."""
    errors = is_qualified_name(key)
    return _field_message(path, go_quote(key), "; ".join(errors)) if errors else None


def _aggregate(messages: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message bare, several bracketed, deduped."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _operator_errors(op: str, values: list[str] | None, path: str | None) -> list[str]:
    values_path = _join_path(path, "values")
    vals = values or []
    rendered = _go_strings(values)
    if op in (IN, NOT_IN) and not vals:
        return [_field_message(values_path, rendered, "for 'in', 'notin' operators, values set can't be empty")]
    if op in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS) and len(vals) != 1:
        return [_field_message(values_path, rendered, "exact-match compatibility requires one single value")]
    if op in (EXISTS, DOES_NOT_EXIST) and vals:
        return [_field_message(values_path, rendered, "values set must be empty for exists and does not exist")]
    if op in (GREATER_THAN, LESS_THAN):
        errors = []
        if len(vals) != 1:
            errors.append(_field_message(values_path, rendered,
                                         "for 'Gt', 'Lt' operators, exactly one value is required"))
        for i, v in enumerate(vals):
            if parse_int64(v) is None:
                errors.append(_field_message(f"{values_path}[{i}]", go_quote(v),
                                             "for 'Gt', 'Lt' operators, the value must be an integer"))
        return errors
    if op not in ALL_OPERATORS:
        supported = ", ".join(go_quote(o) for o in ALL_OPERATORS)
        return [_field_message(_join_path(path, "operator"), go_quote(op),
                               f"supported values: {supported}", "Unsupported value")]
    return []


def new_requirement(key: str, operator: str, values: list[str] | None, path: str | None = None) -> Requirement:
    """Build and validate a requirement as ``labels.NewRequirement``; raise :class:`SelectorError`.

    ``values=None`` stands for a Go nil slice (how an empty ``matchExpressions[].values``
    arrives), which upstream prints differently from an empty one in messages.
    """
    errors: list[str] = []
    key_error = label_key_error(key, _join_path(path, "key"))
    if key_error:
        errors.append(key_error)
    errors += _operator_errors(operator, values, path)
    values_path = _join_path(path, "values")
    for i, v in enumerate(values or []):
        problems = is_valid_label_value(v)
        if problems:
            errors.append(_field_message(f"{values_path}[{i}][{key}]", go_quote(v), "; ".join(problems)))
    if errors:
        raise SelectorError(_aggregate(errors))
    return Requirement(key, operator, tuple(values or ()))


def selector_from_set(labels: Mapping[str, str] | None) -> LabelSelector:
    """``labels.SelectorFromSet``: every pair must match exactly (no validation)."""
    return LabelSelector(sorted_by_key(Requirement(k, EQUALS, (v,)) for k, v in (labels or {}).items()))


# ---------------------------------------------------------------------------
# metav1.LabelSelector objects


def label_selector_from_object(sel: Mapping[str, Any] | None) -> LabelSelector:
    """``metav1.LabelSelectorAsSelector``: nil matches nothing, empty matches everything.

    The meaning of a selector object is :func:`fakekube.objects.compile_selector`'s (the
    one matcher the cluster's parts share); this only re-wraps its terms so the API can
    print them. Raises :class:`SelectorError` with upstream's message for an invalid selector.
    """
    try:
        matcher = compile_selector(sel)
    except ValueError as e:
        raise SelectorError(str(e)) from None
    if matcher.nothing:
        return NOTHING
    return LabelSelector(tuple(Requirement(r.key, r.operator, r.values) for r in matcher.requirements))


def selector_to_string(sel: Mapping[str, Any] | None) -> str:
    """``metav1.FormatLabelSelector``: the string form, ``<none>`` if empty, ``<error>`` if invalid.

    Scale ``status.selector`` uses ``str(label_selector_from_object(sel))`` instead, which
    is ``""`` for an empty selector.
    """
    try:
        text = str(label_selector_from_object(sel))
    except SelectorError:
        return "<error>"
    return text or "<none>"
