"""Printers of admissionregistration.k8s.io: webhook configurations, policies, bindings."""

from __future__ import annotations

from datetime import datetime

from fakekube.api.table.cells import UNSET, age_cell, get, name_cell, simple
from fakekube.api.table.columns import AGE, NAME, Obj, TableSpec, col


def _param_kind(policy: Obj, now: datetime) -> str:
    kind = get(policy, "spec", "paramKind")
    if not isinstance(kind, dict):
        return UNSET
    return f"{kind.get('apiVersion', '')}/{kind.get('kind', '')}"


def _param_ref(binding: Obj, now: datetime) -> str:
    """A name as ``namespace/name`` (``*/name`` without a namespace), else the selector as
    Go's generated ``LabelSelector.String()`` prints it."""
    ref = get(binding, "spec", "paramRef")
    if not isinstance(ref, dict):
        return UNSET
    if ref.get("name"):
        return f"{ref.get('namespace') or '*'}/{ref['name']}"
    if isinstance(ref.get("selector"), dict):
        return go_label_selector_string(ref["selector"])
    return UNSET


def go_label_selector_string(selector: Obj) -> str:
    """``(*metav1.LabelSelector).String()`` (gogo-protobuf's struct dump)."""
    labels = selector.get("matchLabels") or {}
    label_text = "".join(f"{k}: {labels[k]}," for k in sorted(labels))
    expressions = "".join(
        f"LabelSelectorRequirement{{Key:{e.get('key', '')},Operator:{e.get('operator', '')},"
        f"Values:[{' '.join(e.get('values') or [])}],}},"
        for e in selector.get("matchExpressions") or [] if isinstance(e, dict))
    return (f"&LabelSelector{{MatchLabels:map[string]string{{{label_text}}},"
            f"MatchExpressions:[]LabelSelectorRequirement{{{expressions}}},}}")


WEBHOOK_TABLE = TableSpec((
    NAME,
    col("Webhooks", "integer", "Webhooks indicates the number of webhooks registered in this configuration"),
    AGE,
), simple(name_cell, lambda o, n: len(o.get("webhooks") or []), age_cell))

POLICY_TABLE = TableSpec((
    NAME,
    col("Validations", "integer", "Validations indicates the number of validation rules defined in this configuration"),
    col("ParamKind", description="ParamKind specifies the kind of resources used to parameterize this policy"),
    AGE,
), simple(name_cell, lambda o, n: len(get(o, "spec", "validations", default=[])), _param_kind, age_cell))

POLICY_BINDING_TABLE = TableSpec((
    NAME,
    col("PolicyName", description="PolicyName indicates the policy definition which the policy binding binded to"),
    col("ParamRef", description="ParamRef indicates the param resource which sets the configration param"),
    AGE,
), simple(name_cell, lambda o, n: get(o, "spec", "policyName", default=""), _param_ref, age_cell))

MUTATING_POLICY_TABLE = TableSpec((
    NAME,
    col("Mutations", "integer", "Mutation indicates the number of mutations rules defined in this configuration"),
    col("ParamKind", description="ParamKind specifies the kind of resources used to parameterize this policy"),
    AGE,
), simple(name_cell, lambda o, n: len(get(o, "spec", "mutations", default=[])), _param_kind, age_cell))

MUTATING_POLICY_BINDING_TABLE = TableSpec((
    NAME,
    col("PolicyName", description="PolicyName indicates the policy definition which the policy binding binded to"),
    col("ParamRef", description="ParamRef indicates the param resource which sets the configuration param"),
    AGE,
), simple(name_cell, lambda o, n: get(o, "spec", "policyName", default=""), _param_ref, age_cell))
