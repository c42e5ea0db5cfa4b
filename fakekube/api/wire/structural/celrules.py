"""``x-kubernetes-validations``: CEL rules evaluated over a custom resource
(apiextensions-apiserver's schema/cel Validator).

Each node's rules see ``self`` (the value there) and, for transition rules, ``oldSelf``
(the correlated old value: same property or map key, same key of a ``map`` list; never
an item of another kind of list). A transition rule runs only on update and only where
an old value exists (unless ``optionalOldSelf``). At a resource root and in embedded
resources ``self.metadata`` holds only ``name`` and ``generateName``, as upstream's.
Ratcheting: on update, a failing rule that does not use ``oldSelf`` is forgiven where
the value (or its nearest correlated parent) did not change — upstream sends a warning.

Cost: one validation's rules share a budget (``RUNTIME_COST_BUDGET``, 10,000,000 units)
and each run has the per-call limit (1,000,000); a rule that would pass either stops the
validation with upstream's error on its node, and no further rule runs.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery.errors import (FIELD_DUPLICATE, FIELD_FORBIDDEN, FIELD_REQUIRED, OMIT_VALUE, FieldError,
                                           duplicate, emulated, forbidden, invalid, required)
from fakekube.api.wire import cel
from fakekube.api.wire.cel.prices import UNBOUNDED
from fakekube.api.wire.structural.celcost import Declarations
from fakekube.api.wire.structural.node import Node, Rule
from fakekube.objects.syntax import go_quote

#: CEL's limit on an evaluated messageExpression (celconfig.MaxEvaluatedMessageExpressionSizeBytes).
MAX_MESSAGE_BYTES = 5 * 1024

_ABSENT: Any = object()


def _child(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


#: Upstream's errors when a validation runs out of cost.
OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"
MESSAGE_OUT_OF_BUDGET = ("messageExpression evaluation failed due to running out of cost budget, "
                         "no further validation rules will be run")


class _Stop(Exception):
    """The validation ran out of cost: no further rule runs."""


class RuleValidator:
    """One validation pass; ``update`` turns on transition rules and ratcheting. Its rules
    draw on one cost budget; once it is spent (or a run passes the per-call limit) the
    pass stops, with upstream's error."""

    __slots__ = ("update", "errors", "budget", "stopped")

    def __init__(self, update: bool, budget: int = cel.RUNTIME_COST_BUDGET) -> None:
        self.update = update
        self.errors: list[FieldError] = []
        self.budget = cel.CostBudget(budget)
        self.stopped = False

    def validate(self, value: Any, old: Any, node: Node, path: str, resource_root: bool,
                 parent_unchanged: bool) -> None:
        if value is None or not node.has_rules or self.stopped:
            return
        unchanged = parent_unchanged if old is _ABSENT else value == old
        try:
            if node.rules:
                self._rules(value, old, node, path, resource_root, unchanged)
            for sub in node.all_of:
                if sub.rules:
                    self._rules(value, old, sub, path, resource_root, unchanged)
        except _Stop:
            self.stopped = True
            return
        if isinstance(value, dict):
            old_map = old if isinstance(old, dict) and node.map_type != "atomic" else {}
            if node.additional is not None and node.additional.has_rules:
                for key, sub_value in value.items():
                    self.validate(sub_value, old_map.get(key, _ABSENT), node.additional, f"{path}[{key}]",
                                  node.additional.embedded, unchanged)
            for key, sub_value in value.items():
                prop = node.properties.get(key)
                if prop is not None and prop.has_rules:
                    self.validate(sub_value, old_map.get(key, _ABSENT), prop, _child(path, key), prop.embedded, unchanged)
        elif isinstance(value, list) and node.items is not None and node.items.has_rules:
            olds = _old_items(value, old, node)
            for index, element in enumerate(value):
                self.validate(element, olds[index], node.items, f"{path}[{index}]", node.items.embedded, unchanged)

    def _rules(self, value: Any, old: Any, node: Node, path: str, resource_root: bool, unchanged: bool) -> None:
        here = path or "<nil>"
        if self.budget.remaining <= 0 and any(rule.program is not None for rule in node.rules):
            self.errors.append(invalid(here, node.type, OUT_OF_BUDGET))
            raise _Stop()
        has_old = self.update and old is not _ABSENT and old is not None
        activations: dict[bool, cel.Activation] = {}  # by whether oldSelf is an optional
        for rule in node.rules:
            if rule.program is None:
                self.errors.append(invalid(here, node.type, f"rule compile error: {rule.error}"))
                continue
            if rule.uses_old_self and not has_old and rule.optional_old_self is not True:
                continue
            optional = rule.optional_old_self is True
            activation = activations.get(optional)
            if activation is None:
                activation = activations[optional] = _activation(value, old if has_old else None, has_old, node,
                                                                 resource_root, optional)
            fixed_rule, fixed_message = _fixed_costs(rule, node)
            try:
                result = rule.program.evaluate(activation, self.budget, fixed_rule)
            except cel.BudgetExhausted:
                self.errors.append(invalid(here, node.type, OUT_OF_BUDGET))
                raise _Stop() from None
            except cel.CostLimitExceeded as exc:
                self.errors.append(invalid(here, node.type, f"'{exc}': no further validation rules will be run due "
                                                            f"to call cost exceeds limit for rule: {_rule_text(rule)}"))
                raise _Stop() from None
            except cel.EvaluationError as exc:
                text = str(exc)
                if text.startswith("no such overload"):
                    detail = (f"'{text}': call arguments did not match a supported operator, function or macro "
                              f"signature for rule: {_rule_text(rule)}")
                else:
                    detail = f"{text} evaluating rule: {_rule_text(rule)}"
                self.errors.append(invalid(here, node.type, detail))
                continue
            if result is True:
                continue
            ratcheted = self.update and not rule.uses_old_self and unchanged  # upstream warns instead
            target = _child(path, rule.field_path.lstrip(".")) if rule.field_path else path
            detail = self._message(rule, activation, target or "<nil>", node.type, ratcheted,
                                   fixed_message) or _default_message(rule)
            if not ratcheted:
                self.errors.append(_error_for_reason(target or "<nil>", _shown(value, node), detail, rule.reason))

    def _message(self, rule: Rule, activation: cel.Activation, target: str, type_name: str, ratcheted: bool,
                 fixed_cost: int) -> str:
        """The evaluated messageExpression, or "" when it fails (upstream then logs and
        falls back to ``message``); running out of cost stops the validation."""
        if rule.message_program is None:
            return ""
        try:
            text = rule.message_program.evaluate(activation, self.budget, fixed_cost)
        except (cel.BudgetExhausted, cel.CostLimitExceeded) as exc:
            if not ratcheted:
                detail = MESSAGE_OUT_OF_BUDGET if isinstance(exc, cel.BudgetExhausted) else (
                    "no further validation rules will be run due to call cost exceeds limit for messageExpression: "
                    + go_quote(rule.message_expression))
                self.errors.append(invalid(target, type_name, detail))
            raise _Stop() from None
        except cel.CelError:
            return ""
        if not isinstance(text, str):
            return ""
        text = text.strip()
        if not text or "\n" in text or len(text.encode()) > MAX_MESSAGE_BYTES:
            return ""
        return text


def _fixed_costs(rule: Rule, node: Node) -> tuple[int, int]:
    """The rule's (and messageExpression's) cost when the values' sizes do not matter,
    worked out once with the kinds the schema declares (``self.n >= 0`` compares numbers)."""
    found = rule.fixed_costs
    if found is None:
        decl = Declarations().of(node.raw, node.embedded)
        kinds = cel.DeclSizes(decl) if decl is not None else None
        found = rule.fixed_costs = tuple(  # type: ignore[assignment]
            program.fixed_cost(kinds) if program is not None else UNBOUNDED
            for program in (rule.program, rule.message_program))
    return found  # type: ignore[return-value]


def _activation(value: Any, old: Any, has_old: bool, node: Node, resource_root: bool,
                optional: bool) -> cel.Activation:
    """self and oldSelf for a node's rules, bound once; only the fields they read. With
    ``optional`` (optionalOldSelf rules), oldSelf is ``optional.of(old)`` or ``optional.none()``."""
    self_value = _with_type_and_object_meta(value) if resource_root else value
    variables = {"self": _bind(self_value, node, node.self_fields)}
    if any(rule.uses_old_self for rule in node.rules):
        old_value = _bind(_with_type_and_object_meta(old) if resource_root else old, node, node.old_fields)
        if optional:
            old_value = cel.optional_of(old_value) if has_old else cel.optional_none()
        variables["oldSelf"] = old_value
    return cel.Activation(variables, node.programs)


def _cel_value(value: Any, node: Node | None) -> Any:
    """``value`` as upstream's UnstructuredToVal shows it to CEL: properties under their
    CEL names (map keys as they are), numbers as the schema types them."""
    if node is None or not node.cel_convert:
        return value
    if isinstance(value, dict):
        named: dict[str, Any] = {}
        for key, sub in value.items():
            if key in node.properties:
                name = node.cel_names[key]
                if name is not None:
                    named[name] = _cel_value(sub, node.properties[key])
            else:
                named[key] = _cel_value(sub, node.additional)
        return named
    if isinstance(value, list):
        return [_cel_value(element, node.items) for element in value]
    if node.type == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if node.type == "integer" and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def _bind(value: Any, node: Node, fields: frozenset[str] | None) -> Any:
    """What CEL gets of ``value``: only the top-level fields the rules read (by their CEL
    names; all of them when ``fields`` is None), converted (:func:`_cel_value`)."""
    if fields is None or not isinstance(value, dict):
        return _cel_value(value, node)
    bound: dict[str, Any] = {}
    for key, sub in value.items():
        if key in node.properties:
            name = node.cel_names[key]
            if name is not None and name in fields:
                bound[name] = _cel_value(sub, node.properties[key])
        elif key in fields:
            bound[key] = _cel_value(sub, node.additional)
    return bound


def _old_items(value: list[Any], old: Any, node: Node) -> list[Any]:
    """The old item each new item correlates with: same keys in a ``map`` list, else none."""
    if node.list_type != "map" or not isinstance(old, list) or not node.map_keys:
        return [_ABSENT] * len(value)
    by_key: dict[str, Any] = {}
    for item in old:
        if isinstance(item, dict):
            by_key.setdefault(_map_key(item, node.map_keys), item)
    return [by_key.get(_map_key(item, node.map_keys), _ABSENT) if isinstance(item, dict) else _ABSENT for item in value]


def _map_key(item: dict[str, Any], keys: list[str]) -> str:
    return repr([(k, item.get(k)) for k in keys])


def _with_type_and_object_meta(value: Any) -> Any:
    """What CEL sees of a resource: metadata reduced to name and generateName."""
    if not isinstance(value, dict) or not isinstance(value.get("metadata"), dict):
        return value
    meta = value["metadata"]
    return dict(value, metadata={k: meta[k] for k in ("name", "generateName") if k in meta})


def _rule_text(rule: Rule) -> str:
    return rule.message.strip() or rule.rule.strip()


def _default_message(rule: Rule) -> str:
    return rule.message.strip() if rule.message else f"failed rule: {rule.rule.strip()}"


def _shown(value: Any, node: Node) -> Any:
    """The value a failed rule's error shows: from 1.35 the judged value itself, left out for
    an object or array (a whole subtree is no help in a one-line message); before, the
    schema's type name."""
    if not emulated().cel_rule_shows_value:
        return node.type
    return OMIT_VALUE if node.type in ("object", "array") else value


def _error_for_reason(path: str, shown: Any, detail: str, reason: Any) -> FieldError:
    if reason == FIELD_FORBIDDEN:
        return forbidden(path, detail)
    if reason == FIELD_REQUIRED:
        return required(path, detail)
    if reason == FIELD_DUPLICATE:
        return duplicate(path, shown)
    return invalid(path, shown, detail)
