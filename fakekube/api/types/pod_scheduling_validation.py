"""Validation of a pod spec's scheduling fields, as Kubernetes 1.33's ``ValidatePodSpec`` runs it.

Upstream (``pkg/apis/core/validation/validation.go``) checks these at create, so a pod whose
affinity, spread constraints or tolerations could never be read by kube-scheduler is a 422,
not a pod stuck in Pending. The rules, each in upstream's order of checks:

- ``nodeSelector``: label keys and values (``ValidateLabels``);
- ``affinity``: node affinity (at least one required term; per-operator value counts; label
  values of required terms only; ``matchFields`` on ``metadata.name`` with one node name;
  preferred weights 1-100) and pod (anti-)affinity (label and namespace selectors,
  namespaces, matchLabelKeys/mismatchLabelKeys, a required qualified topologyKey, weights);
- ``schedulingGates``: qualified names, no duplicates;
- ``topologySpreadConstraints``: maxSkew, topologyKey, whenUnsatisfiable, no repeated
  {topologyKey, whenUnsatisfiable}, minDomains, node inclusion policies, matchLabelKeys,
  then the labelSelector;
- ``tolerations`` and ``priorityClassName``.

Quirks kept because clients see them: a namespace error's path ends in ``.namespace``, a key
in both matchLabelKeys and labelSelector is reported at the term's path indexed by the key's
position (``...podAffinityTerm[0]``), and Gt/Lt values are not checked to be integers (the
scheduler then matches no node). Callers validate pods after ``matchLabelKeys`` were merged
into the selector (the strategy's create step), as upstream does.
"""

from __future__ import annotations

from typing import Any, Iterable, Mapping

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.validation import (
    is_valid_label_value,
    name_is_dns_label,
    name_is_dns_subdomain,
    validate_label_name,
    validate_label_selector,
    validate_labels,
)
from fakekube.objects.nodeselectors import NODE_NAME_FIELD

Obj = Mapping[str, Any]

_NODE_SET_OPERATORS = ("In", "NotIn")
_NODE_EXISTS_OPERATORS = ("Exists", "DoesNotExist")
_NODE_NUMBER_OPERATORS = ("Gt", "Lt")
_WEIGHT_RANGE = "must be in the range 1-100"
_NOT_POSITIVE = "must be greater than zero"
_NO_SELECTOR = "must not be specified when labelSelector is not set"
_BOTH_KEYS = "exists in both matchLabelKeys and labelSelector"
_REQUIRED = "requiredDuringSchedulingIgnoredDuringExecution"
_PREFERRED = "preferredDuringSchedulingIgnoredDuringExecution"

DO_NOT_SCHEDULE = "DoNotSchedule"
#: ``sets.List`` order, as the NotSupported messages list them.
WHEN_UNSATISFIABLE = [DO_NOT_SCHEDULE, "ScheduleAnyway"]
NODE_INCLUSION_POLICIES = ["Honor", "Ignore"]
TOLERATION_OPERATORS = ["Equal", "Exists"]
#: ``validateTaintEffect``'s list, in its (unsorted) order.
TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


def _dict(value: Any) -> Obj:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _strings(value: Any) -> list[str]:
    return [str(v) for v in _list(value)]


def _int(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def scheduling_constraint_errors(spec: Obj, path: str) -> list[FieldError]:
    """The checks ``ValidatePodSpec`` makes between dnsPolicy and nodeName: nodeSelector,
    affinity, schedulingGates and topologySpreadConstraints, in that order."""
    errs = validate_labels(_dict(spec.get("nodeSelector")), f"{path}.nodeSelector")
    if isinstance(spec.get("affinity"), Mapping):
        errs += affinity_errors(spec["affinity"], f"{path}.affinity")
    errs += scheduling_gate_errors(spec.get("schedulingGates"), f"{path}.schedulingGates")
    errs += topology_spread_errors(spec.get("topologySpreadConstraints"), f"{path}.topologySpreadConstraints")
    return errs


# --- affinity ---------------------------------------------------------------------

def affinity_errors(affinity: Obj, path: str) -> list[FieldError]:
    """``validateAffinity``: node affinity, then pod affinity, then pod anti-affinity."""
    errs: list[FieldError] = []
    if isinstance(affinity.get("nodeAffinity"), Mapping):
        errs += _node_affinity_errors(affinity["nodeAffinity"], f"{path}.nodeAffinity")
    for kind in ("podAffinity", "podAntiAffinity"):
        if isinstance(affinity.get(kind), Mapping):
            errs += _pod_affinity_errors(affinity[kind], f"{path}.{kind}")
    return errs


def _node_affinity_errors(node_affinity: Obj, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    required = node_affinity.get(_REQUIRED)
    if isinstance(required, Mapping):
        errs += node_selector_errors(required, f"{path}.{_REQUIRED}")
    for i, entry in enumerate(_list(node_affinity.get(_PREFERRED))):
        entry = _dict(entry)
        weight = _int(entry.get("weight"))
        if not 1 <= weight <= 100:
            errs.append(errors.invalid(f"{path}.{_PREFERRED}[{i}].weight", weight, _WEIGHT_RANGE))
        # Preferred terms keep invalid label values: they still score on the nodes they match.
        errs += _node_selector_term_errors(_dict(entry.get("preference")), f"{path}.{_PREFERRED}[{i}].preference",
                                           check_values=False)
    return errs


def node_selector_errors(selector: Obj, path: str) -> list[FieldError]:
    """``ValidateNodeSelector`` for a required selector (label values checked, as 1.33 does on create)."""
    terms = _list(selector.get("nodeSelectorTerms"))
    if not terms:
        return [errors.required(f"{path}.nodeSelectorTerms", "must have at least one node selector term")]
    errs: list[FieldError] = []
    for i, term in enumerate(terms):
        errs += _node_selector_term_errors(_dict(term), f"{path}.nodeSelectorTerms[{i}]", check_values=True)
    return errs


def _node_selector_term_errors(term: Obj, path: str, *, check_values: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, requirement in enumerate(_list(term.get("matchExpressions"))):
        errs += _node_requirement_errors(_dict(requirement), f"{path}.matchExpressions[{i}]", check_values)
    for i, requirement in enumerate(_list(term.get("matchFields"))):
        errs += _node_field_requirement_errors(_dict(requirement), f"{path}.matchFields[{i}]")
    return errs


def _node_requirement_errors(requirement: Obj, path: str, check_values: bool) -> list[FieldError]:
    """``ValidateNodeSelectorRequirement``: operator and value count, key, then values."""
    operator = str(requirement.get("operator") or "")
    values = _strings(requirement.get("values"))
    errs: list[FieldError] = []
    if operator in _NODE_SET_OPERATORS:
        if not values:
            errs.append(errors.required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in _NODE_EXISTS_OPERATORS:
        if values:
            errs.append(errors.forbidden(f"{path}.values",
                                         "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    elif operator in _NODE_NUMBER_OPERATORS:
        if len(values) != 1:
            errs.append(errors.required(f"{path}.values",
                                        "must be specified single value when `operator` is 'Lt' or 'Gt'"))
    else:
        errs.append(errors.invalid(f"{path}.operator", operator, "not a valid selector operator"))
    errs += validate_label_name(str(requirement.get("key") or ""), f"{path}.key")
    if check_values:
        for i, value in enumerate(values):
            errs += [errors.invalid(f"{path}.values[{i}]", value, m) for m in is_valid_label_value(value)]
    return errs


def _node_field_requirement_errors(requirement: Obj, path: str) -> list[FieldError]:
    """``ValidateNodeFieldSelectorRequirement``: In/NotIn with one value, on metadata.name only."""
    operator = str(requirement.get("operator") or "")
    values = _strings(requirement.get("values"))
    key = str(requirement.get("key") or "")
    errs: list[FieldError] = []
    if operator in _NODE_SET_OPERATORS:
        if len(values) != 1:
            errs.append(errors.required(f"{path}.values", "must be only one value when `operator` is 'In' or "
                                                          "'NotIn' for node field selector"))
    else:
        errs.append(errors.invalid(f"{path}.operator", operator, "not a valid selector operator"))
    if key != NODE_NAME_FIELD:
        errs.append(errors.invalid(f"{path}.key", key, "not a valid field selector key"))
    else:
        for i, value in enumerate(values):
            errs += [errors.invalid(f"{path}.values[{i}]", value, m) for m in name_is_dns_subdomain(value)]
    return errs


def _pod_affinity_errors(section: Obj, path: str) -> list[FieldError]:
    """``validatePodAffinity`` / ``validatePodAntiAffinity`` (the same rules)."""
    errs: list[FieldError] = []
    for i, term in enumerate(_list(section.get(_REQUIRED))):
        errs += pod_affinity_term_errors(_dict(term), f"{path}.{_REQUIRED}[{i}]")
    for i, entry in enumerate(_list(section.get(_PREFERRED))):
        entry = _dict(entry)
        weight = _int(entry.get("weight"))
        if not 1 <= weight <= 100:
            errs.append(errors.invalid(f"{path}.{_PREFERRED}[{i}].weight", weight, _WEIGHT_RANGE))
        errs += pod_affinity_term_errors(_dict(entry.get("podAffinityTerm")),
                                         f"{path}.{_PREFERRED}[{i}].podAffinityTerm")
    return errs


def pod_affinity_term_errors(term: Obj, path: str) -> list[FieldError]:
    """``validatePodAffinityTerm``: selectors, namespaces, label keys, then topologyKey."""
    errs = validate_label_selector(term.get("labelSelector"), f"{path}.labelSelector")
    errs += validate_label_selector(term.get("namespaceSelector"), f"{path}.namespaceSelector")
    for name in _strings(term.get("namespaces")):
        errs += [errors.invalid(f"{path}.namespace", name, m) for m in name_is_dns_label(name)]
    errs += _affinity_label_key_errors(term, path)
    topology_key = str(term.get("topologyKey") or "")
    if not topology_key:
        errs.append(errors.required(f"{path}.topologyKey", "can not be empty"))
    return errs + validate_label_name(topology_key, f"{path}.topologyKey")


def _affinity_label_key_errors(term: Obj, path: str) -> list[FieldError]:
    """``validateMatchLabelKeysAndMismatchLabelKeys``.

    The selector already holds ``key In (value)`` for each matchLabelKeys key the pod has,
    so a key is "in both" when it is in matchLabels or an earlier expression as well.
    """
    selector = term.get("labelSelector")
    match_keys = _strings(term.get("matchLabelKeys"))
    mismatch_keys = _strings(term.get("mismatchLabelKeys"))
    errs = _label_keys_errors(match_keys, selector, f"{path}.matchLabelKeys")
    errs += _label_keys_errors(mismatch_keys, selector, f"{path}.mismatchLabelKeys")
    if isinstance(selector, Mapping):
        position = {key: i for i, key in enumerate(match_keys)}  # the last index of a repeated key, as Go's map
        seen = set(_dict(selector.get("matchLabels")))
        for expression in _list(selector.get("matchExpressions")):
            key = str(_dict(expression).get("key") or "")
            if key in position and key in seen:
                errs.append(errors.invalid(f"{path}[{position[key]}]", key, _BOTH_KEYS))
            seen.add(key)
    mismatched = set(mismatch_keys)
    errs += [errors.invalid(f"{path}.matchLabelKeys[{i}]", key, "exists in both matchLabelKeys and mismatchLabelKeys")
             for i, key in enumerate(match_keys) if key in mismatched]
    return errs


def _label_keys_errors(keys: list[str], selector: Any, path: str) -> list[FieldError]:
    """``validateLabelKeys``: no keys without a selector; each key a label name."""
    if not keys:
        return []
    if selector is None:
        return [errors.forbidden(path, _NO_SELECTOR)]
    return [e for i, key in enumerate(keys) for e in validate_label_name(key, f"{path}[{i}]")]


# --- scheduling gates -------------------------------------------------------------

def scheduling_gate_errors(gates: Any, path: str) -> list[FieldError]:
    """``validateSchedulingGates``: each name qualified, none repeated (errors at ``[i]``)."""
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, gate in enumerate(_list(gates)):
        name = str(_dict(gate).get("name") or "")
        errs += validate_label_name(name, f"{path}[{i}]")
        if name in seen:
            errs.append(errors.duplicate(f"{path}[{i}]", name))
        seen.add(name)
    return errs


# --- topology spread --------------------------------------------------------------

def topology_spread_errors(constraints: Any, path: str) -> list[FieldError]:
    """``validateTopologySpreadConstraints``, constraint by constraint."""
    items = [_dict(c) for c in _list(constraints)]
    errs: list[FieldError] = []
    for i, constraint in enumerate(items):
        errs += _spread_constraint_errors(constraint, items[i + 1:], f"{path}[{i}]")
    return errs


def _spread_constraint_errors(constraint: Obj, later: list[Obj], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    max_skew = _int(constraint.get("maxSkew"))
    if max_skew <= 0:
        errs.append(errors.invalid(f"{path}.maxSkew", max_skew, _NOT_POSITIVE))
    topology_key = str(constraint.get("topologyKey") or "")
    if not topology_key:
        errs.append(errors.required(f"{path}.topologyKey", "can not be empty"))
    action = str(constraint.get("whenUnsatisfiable") or "")
    if action not in WHEN_UNSATISFIABLE:
        errs.append(errors.not_supported(f"{path}.whenUnsatisfiable", action, WHEN_UNSATISFIABLE))
    # {topologyKey, whenUnsatisfiable} names one kind of constraint: the first of a repeat is reported.
    if any(str(c.get("topologyKey") or "") == topology_key and str(c.get("whenUnsatisfiable") or "") == action
           for c in later):
        errs.append(errors.duplicate(f"{path}.{{topologyKey, whenUnsatisfiable}}", f"{{{topology_key}, {action}}}"))
    errs += _min_domains_errors(constraint.get("minDomains"), action, f"{path}.minDomains")
    for name in ("nodeAffinityPolicy", "nodeTaintsPolicy"):
        policy = constraint.get(name)
        if policy is not None and policy not in NODE_INCLUSION_POLICIES:
            errs.append(errors.not_supported(f"{path}.{name}", policy, NODE_INCLUSION_POLICIES))
    selector = constraint.get("labelSelector")
    errs += _spread_label_key_errors(_strings(constraint.get("matchLabelKeys")), selector, f"{path}.matchLabelKeys")
    return errs + validate_label_selector(selector, f"{path}.labelSelector")


def _min_domains_errors(min_domains: Any, action: str, path: str) -> list[FieldError]:
    if min_domains is None:
        return []
    errs: list[FieldError] = []
    if _int(min_domains) <= 0:
        errs.append(errors.invalid(path, min_domains, _NOT_POSITIVE))
    if action != DO_NOT_SCHEDULE:
        errs.append(errors.invalid(path, min_domains,
                                   f"can only use minDomains if whenUnsatisfiable={DO_NOT_SCHEDULE}, not {action}"))
    return errs


def _spread_label_key_errors(keys: list[str], selector: Any, path: str) -> list[FieldError]:
    """``validateMatchLabelKeysInTopologySpread``: a selector to add to, and keys that are
    label names not already in it."""
    if not keys:
        return []
    errs: list[FieldError] = []
    if isinstance(selector, Mapping):
        in_selector = set(_dict(selector.get("matchLabels")))
        in_selector |= {str(_dict(e).get("key") or "") for e in _list(selector.get("matchExpressions"))}
    else:
        in_selector = set()
        errs.append(errors.forbidden(path, _NO_SELECTOR))
    for i, key in enumerate(keys):
        errs += validate_label_name(key, f"{path}[{i}]")
        if key in in_selector:
            errs.append(errors.invalid(f"{path}[{i}]", key, _BOTH_KEYS))
    return errs


# --- tolerations and priority class -----------------------------------------------

def toleration_errors(tolerations: Iterable[Any], path: str) -> list[FieldError]:
    """``ValidateTolerations``: key, empty key needs Exists, tolerationSeconds needs
    NoExecute, the operator's value rule, then the effect."""
    errs: list[FieldError] = []
    for i, toleration in enumerate(tolerations):
        errs += _toleration_errors(_dict(toleration), f"{path}[{i}]")
    return errs


def _toleration_errors(toleration: Obj, path: str) -> list[FieldError]:
    key = str(toleration.get("key") or "")
    operator = str(toleration.get("operator") or "")
    value = str(toleration.get("value") or "")
    effect = str(toleration.get("effect") or "")
    errs = validate_label_name(key, f"{path}.key") if key else []
    if not key and operator != "Exists":
        errs.append(errors.invalid(f"{path}.operator", operator, "operator must be Exists when `key` is empty, "
                                                                  'which means "match all values and all keys"'))
    if toleration.get("tolerationSeconds") is not None and effect != "NoExecute":
        errs.append(errors.invalid(f"{path}.effect", effect,
                                   "effect must be 'NoExecute' when `tolerationSeconds` is set"))
    if operator in ("", "Equal"):
        messages = is_valid_label_value(value)
        if messages:
            errs.append(errors.invalid(f"{path}.operator", value, ";".join(messages)))
    elif operator == "Exists":
        if value:
            errs.append(errors.invalid(f"{path}.operator", value, "value must be empty when `operator` is 'Exists'"))
    else:
        errs.append(errors.not_supported(f"{path}.operator", operator, TOLERATION_OPERATORS))
    if effect and effect not in TAINT_EFFECTS:
        errs.append(errors.not_supported(f"{path}.effect", effect, TAINT_EFFECTS))
    return errs


def priority_class_name_errors(name: Any, path: str) -> list[FieldError]:
    """``ValidatePriorityClassName``: a DNS subdomain (a pod naming an unknown class is the
    Priority admission plugin's 403, which comes first)."""
    if not name:
        return []
    return [errors.invalid(path, str(name), m) for m in name_is_dns_subdomain(str(name))]
