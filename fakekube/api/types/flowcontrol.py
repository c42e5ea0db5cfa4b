"""flowcontrol.apiserver.k8s.io/v1 FlowSchemas and PriorityLevelConfigurations (API Priority
and Fairness), with upstream's defaults, validation and the objects a 1.33 cluster starts with.

fakekube does not queue or limit requests by them: they are stored and served so clients
that read or manage them (``kubectl get flowschemas``, operators tuning APF) see what a real
cluster has. A FlowSchema's ``Dangling`` condition is set when it is created (upstream's APF
controller sets it moments later), from whether the priority level it names exists.
"""

from __future__ import annotations

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.registry import STATUS, ResourceType, Strategy, WriteContext
from fakekube.api.table import FLOW_SCHEMA_TABLE, PRIORITY_LEVEL_CONFIGURATION_TABLE
from fakekube.api.types._util import Obj, ensure_dict
from fakekube.clock import format_rfc3339

GROUP = "flowcontrol.apiserver.k8s.io"
AUTO_UPDATE = "apf.kubernetes.io/autoupdate-spec"
PRIORITY_LEVEL_TYPES = ["Exempt", "Limited"]
LIMIT_RESPONSE_TYPES = ["Queue", "Reject"]
DISTINGUISHER_TYPES = ["ByNamespace", "ByUser"]
SUBJECT_KINDS = ["Group", "ServiceAccount", "User"]
#: v1's defaults (pkg/apis/flowcontrol/v1/defaults.go).
DEFAULT_MATCHING_PRECEDENCE = 1000
DEFAULT_NOMINAL_CONCURRENCY_SHARES = 30
DEFAULT_QUEUES = 64
DEFAULT_HAND_SIZE = 8
DEFAULT_QUEUE_LENGTH_LIMIT = 50
MAX_MATCHING_PRECEDENCE = 10000


class FlowSchemaStrategy(Strategy):
    """FlowSchemas: matchingPrecedence 1000 by default; the Dangling condition at create."""

    tracks_generation = True

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        if not spec.get("matchingPrecedence"):
            spec["matchingPrecedence"] = DEFAULT_MATCHING_PRECEDENCE

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        level = ((obj.get("spec") or {}).get("priorityLevelConfiguration") or {}).get("name") or ""
        exists = ctx.store.get_object(GROUP, "prioritylevelconfigurations", "", level) is not None
        obj["status"] = {"conditions": [dangling_condition(level, exists, format_rfc3339(ctx.now))]}

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        problems: list[FieldError] = []
        if not (spec.get("priorityLevelConfiguration") or {}).get("name"):
            problems.append(errors.required("spec.priorityLevelConfiguration.name", "must reference a priority level"))
        precedence = spec.get("matchingPrecedence", 0)
        if precedence <= 0:
            problems.append(errors.invalid("spec.matchingPrecedence", precedence, "must be a positive value"))
        if precedence > MAX_MATCHING_PRECEDENCE:
            problems.append(errors.invalid("spec.matchingPrecedence", precedence,
                                           f"must not be greater than {MAX_MATCHING_PRECEDENCE}"))
        if precedence == 1 and (obj.get("metadata") or {}).get("name") != "exempt":
            problems.append(errors.invalid("spec.matchingPrecedence", precedence,
                                           "only the schema named 'exempt' may have matchingPrecedence 1"))
        method = spec.get("distinguisherMethod")
        if method is not None and method.get("type") not in DISTINGUISHER_TYPES:
            problems.append(errors.not_supported("spec.distinguisherMethod.type", method.get("type") or "",
                                                 DISTINGUISHER_TYPES))
        for i, rule in enumerate(spec.get("rules") or []):
            problems += _rule_problems(rule, f"spec.rules[{i}]")
        return problems


def _rule_problems(rule: Obj, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    subjects = rule.get("subjects") or []
    if not subjects:
        problems.append(errors.required(f"{path}.subjects", "subjects must contain at least one value"))
    for j, subject in enumerate(subjects):
        if subject.get("kind") not in SUBJECT_KINDS:
            problems.append(errors.not_supported(f"{path}.subjects[{j}].kind", subject.get("kind") or "", SUBJECT_KINDS))
    if not rule.get("resourceRules") and not rule.get("nonResourceRules"):
        problems.append(errors.required(f"{path}", "at least one of resourceRules and nonResourceRules has to be "
                                                    "non-empty"))
    for j, resource_rule in enumerate(rule.get("resourceRules") or []):
        where = f"{path}.resourceRules[{j}]"
        for name in ("verbs", "apiGroups", "resources"):
            if not resource_rule.get(name):
                problems.append(errors.required(f"{where}.{name}", f"{name} must contain at least one value"))
        if not resource_rule.get("namespaces") and not resource_rule.get("clusterScope"):
            problems.append(errors.required(f"{where}.namespaces",
                                            "resource rules that are not cluster scoped must supply at least one "
                                            "namespace"))
    for j, url_rule in enumerate(rule.get("nonResourceRules") or []):
        for name in ("verbs", "nonResourceURLs"):
            if not url_rule.get(name):
                problems.append(errors.required(f"{path}.nonResourceRules[{j}].{name}",
                                                f"{name} must contain at least one value"))
    return problems


def dangling_condition(level: str, exists: bool, now: str) -> Obj:
    """The APF controller's ``Dangling`` condition of a FlowSchema naming ``level``."""
    if exists:
        return {"type": "Dangling", "status": "False", "lastTransitionTime": now, "reason": "Found",
                "message": f'This FlowSchema references the PriorityLevelConfiguration object named "{level}" '
                           "and it exists"}
    return {"type": "Dangling", "status": "True", "lastTransitionTime": now, "reason": "NotFound",
            "message": f'This FlowSchema references the PriorityLevelConfiguration object named "{level}" '
                       "but there is no such object"}


FLOW_SCHEMAS = ResourceType(
    GROUP, "v1", "FlowSchema", "flowschemas", namespaced=False, subresources=(STATUS,),
    strategy=FlowSchemaStrategy(), table=FLOW_SCHEMA_TABLE,
)


class PriorityLevelConfigurationStrategy(Strategy):
    """PriorityLevelConfigurations: v1's defaults for limited and exempt levels and queuing."""

    tracks_generation = True

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        limited = spec.get("limited")
        if isinstance(limited, dict):
            limited.setdefault("nominalConcurrencyShares", DEFAULT_NOMINAL_CONCURRENCY_SHARES)
            limited.setdefault("lendablePercent", 0)
            queuing = (limited.get("limitResponse") or {}).get("queuing")
            if isinstance(queuing, dict):
                queuing.setdefault("queues", DEFAULT_QUEUES)
                queuing.setdefault("handSize", DEFAULT_HAND_SIZE)
                queuing.setdefault("queueLengthLimit", DEFAULT_QUEUE_LENGTH_LIMIT)
        exempt = spec.get("exempt")
        if isinstance(exempt, dict):
            exempt.setdefault("nominalConcurrencyShares", 0)
            exempt.setdefault("lendablePercent", 0)

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {}

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        level_type = spec.get("type") or ""
        if level_type not in PRIORITY_LEVEL_TYPES:
            return [errors.not_supported("spec.type", level_type, PRIORITY_LEVEL_TYPES)]
        if level_type == "Exempt":
            if spec.get("limited") is not None:
                return [errors.forbidden("spec.limited", "must be nil if the type is not Limited")]
            return []
        limited = spec.get("limited")
        if limited is None:
            return [errors.required("spec.limited", "must not be empty when type is Limited")]
        return _limited_problems(limited)


def _limited_problems(limited: Obj) -> list[FieldError]:
    problems: list[FieldError] = []
    shares = limited.get("nominalConcurrencyShares", 0)
    if shares < 0:
        problems.append(errors.invalid("spec.limited.nominalConcurrencyShares", shares, "must be a non-negative integer"))
    lendable = limited.get("lendablePercent", 0)
    if not 0 <= lendable <= 100:
        problems.append(errors.invalid("spec.limited.lendablePercent", lendable, "must be between 0 and 100, inclusive"))
    response = limited.get("limitResponse") or {}
    response_type = response.get("type") or ""
    path = "spec.limited.limitResponse"
    if response_type not in LIMIT_RESPONSE_TYPES:
        return problems + [errors.not_supported(f"{path}.type", response_type, LIMIT_RESPONSE_TYPES)]
    queuing = response.get("queuing")
    if response_type == "Reject":
        if queuing is not None:
            problems.append(errors.forbidden(f"{path}.queuing", "must be nil if limited.limitResponse.type is not Limited"))
        return problems
    if queuing is None:
        return problems + [errors.required(f"{path}.queuing", "must not be empty if limited.limitResponse.type is Limited")]
    return problems + _queuing_problems(queuing, f"{path}.queuing")


def _queuing_problems(queuing: Obj, path: str) -> list[FieldError]:
    problems: list[FieldError] = []
    queues, hand = queuing.get("queues", 0), queuing.get("handSize", 0)
    if queues <= 0:
        problems.append(errors.invalid(f"{path}.queues", queues, "must be positive"))
    if hand <= 0:
        problems.append(errors.invalid(f"{path}.handSize", hand, "must be positive"))
    elif queues > 0 and hand > queues:
        problems.append(errors.invalid(f"{path}.handSize", hand, f"should not be greater than queues ({queues})"))
    length = queuing.get("queueLengthLimit", 0)
    if length <= 0:
        problems.append(errors.invalid(f"{path}.queueLengthLimit", length, "must be positive"))
    return problems


PRIORITY_LEVEL_CONFIGURATIONS = ResourceType(
    GROUP, "v1", "PriorityLevelConfiguration", "prioritylevelconfigurations", namespaced=False,
    subresources=(STATUS,), strategy=PriorityLevelConfigurationStrategy(), table=PRIORITY_LEVEL_CONFIGURATION_TABLE,
)


# -- the objects every cluster starts with (apiserver/pkg/apis/flowcontrol/bootstrap) -------

_EVERYTHING = {"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"], "clusterScope": True, "namespaces": ["*"]}
_ALL_URLS = {"verbs": ["*"], "nonResourceURLs": ["*"]}
_AUTHENTICATED = ["system:unauthenticated", "system:authenticated"]


def _groups(*names: str) -> list[Obj]:
    return [{"kind": "Group", "group": {"name": name}} for name in names]


def _users(*names: str) -> list[Obj]:
    return [{"kind": "User", "user": {"name": name}} for name in names]


def _kube_system_accounts(*names: str) -> list[Obj]:
    return [{"kind": "ServiceAccount", "serviceAccount": {"name": name, "namespace": "kube-system"}} for name in names]


def _resource_rule(verbs: list[str], groups: list[str], resources: list[str], cluster_scope: bool) -> Obj:
    rule: Obj = {"verbs": verbs, "apiGroups": groups, "resources": resources}
    if cluster_scope:
        rule["clusterScope"] = True
    rule["namespaces"] = ["*"]
    return rule


def _everything(subjects: list[Obj]) -> Obj:
    return {"subjects": subjects, "resourceRules": [dict(_EVERYTHING)], "nonResourceRules": [dict(_ALL_URLS)]}


def _flow_schema(name: str, level: str, precedence: int, method: str, rule: Obj) -> Obj:
    spec: Obj = {"priorityLevelConfiguration": {"name": level}, "matchingPrecedence": precedence}
    if method:
        spec["distinguisherMethod"] = {"type": method}
    spec["rules"] = [rule]
    return {"metadata": {"name": name, "annotations": {AUTO_UPDATE: "true"}}, "spec": spec}


def _limited(name: str, shares: int, lendable: int, queuing: tuple[int, int, int] | None) -> Obj:
    response: Obj = {"type": "Reject"}
    if queuing is not None:
        response = {"type": "Queue", "queuing": {"queues": queuing[0], "handSize": queuing[1],
                                                  "queueLengthLimit": queuing[2]}}
    return {"metadata": {"name": name, "annotations": {AUTO_UPDATE: "true"}},
            "spec": {"type": "Limited", "limited": {"nominalConcurrencyShares": shares, "lendablePercent": lendable,
                                                    "limitResponse": response}}}


def bootstrap_priority_levels() -> list[Obj]:
    """The mandatory (exempt, catch-all) and suggested priority levels, freshly built."""
    exempt = {"metadata": {"name": "exempt", "annotations": {AUTO_UPDATE: "true"}},
              "spec": {"type": "Exempt", "exempt": {"nominalConcurrencyShares": 0, "lendablePercent": 0}}}
    return [
        exempt,
        _limited("catch-all", 5, 0, None),
        _limited("system", 30, 33, (64, 6, 50)),
        _limited("node-high", 40, 25, (64, 6, 50)),
        _limited("leader-election", 10, 0, (16, 4, 50)),
        _limited("workload-high", 40, 50, (128, 6, 50)),
        _limited("workload-low", 100, 90, (128, 6, 50)),
        _limited("global-default", 20, 50, (128, 6, 50)),
    ]


def bootstrap_flow_schemas() -> list[Obj]:
    """The mandatory (exempt, catch-all) and suggested flow schemas, freshly built."""
    leases = _resource_rule(["get", "create", "update"], ["coordination.k8s.io"], ["leases"], False)
    return [
        _flow_schema("exempt", "exempt", 1, "", _everything(_groups("system:masters"))),
        _flow_schema("catch-all", "catch-all", 10000, "ByUser", _everything(_groups(*_AUTHENTICATED))),
        _flow_schema("probes", "exempt", 2, "", {"subjects": _groups(*_AUTHENTICATED), "nonResourceRules": [
            {"verbs": ["get"], "nonResourceURLs": ["/healthz", "/readyz", "/livez"]}]}),
        _flow_schema("system-leader-election", "leader-election", 100, "ByUser", {
            "subjects": _users("system:kube-controller-manager", "system:kube-scheduler") + _kube_system_accounts("*"),
            "resourceRules": [leases]}),
        _flow_schema("endpoint-controller", "workload-high", 150, "ByUser", {
            "subjects": _users("system:kube-controller-manager")
            + _kube_system_accounts("endpoint-controller", "endpointslicemirroring-controller"),
            "resourceRules": [_resource_rule(["get", "create", "update"], [""], ["endpoints"], False)]}),
        _flow_schema("workload-leader-election", "leader-election", 200, "ByUser", {
            "subjects": _kube_system_accounts("*"),
            "resourceRules": [_resource_rule(["get", "create", "update"], [""], ["endpoints", "configmaps"], False),
                              leases]}),
        _flow_schema("system-node-high", "node-high", 400, "ByUser", {
            "subjects": _groups("system:nodes"),
            "resourceRules": [_resource_rule(["*"], [""], ["nodes", "nodes/status"], True),
                              _resource_rule(["*"], ["coordination.k8s.io"], ["leases"], False)]}),
        _flow_schema("system-nodes", "system", 500, "ByUser", _everything(_groups("system:nodes"))),
        _flow_schema("kube-controller-manager", "workload-high", 800, "ByNamespace",
                     _everything(_users("system:kube-controller-manager"))),
        _flow_schema("kube-scheduler", "workload-high", 800, "ByNamespace", _everything(_users("system:kube-scheduler"))),
        _flow_schema("kube-system-service-accounts", "workload-high", 900, "ByNamespace",
                     _everything(_kube_system_accounts("*"))),
        _flow_schema("service-accounts", "workload-low", 9000, "ByUser", _everything(_groups("system:serviceaccounts"))),
        _flow_schema("global-default", "global-default", 9900, "ByUser", _everything(_groups(*_AUTHENTICATED))),
    ]
