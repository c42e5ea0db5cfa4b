"""apps/v1 strategies: Deployments, ReplicaSets, StatefulSets, DaemonSets, ControllerRevisions."""

from __future__ import annotations

import copy
import re
from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.validation import name_is_dns_label, validate_label_selector
from fakekube.api.registry import SCALE, STATUS, ResourceType, Strategy, WriteContext
from fakekube.api.table import (
    CONTROLLER_REVISION_TABLE,
    DAEMON_SET_TABLE,
    DEPLOYMENT_TABLE,
    REPLICA_SET_TABLE,
    STATEFUL_SET_TABLE,
)
from fakekube.api.types._util import (
    GoLiteral,
    Obj,
    ensure_dict,
    go_label_selector,
    immutable,
    non_negative,
    selector_is_empty,
    selector_matches,
    selector_mismatch,
)
from fakekube.api.types.core import default_pvc_spec, pvc_spec_errors
from fakekube.api.types.core_pods import (
    default_pod_template,
    template_deadline_errors,
    validate_replicated_template,
    zero_creation_timestamp,
)
from fakekube import objects
from fakekube.objects.syntax import go_quote
from fakekube.objects.versions import Release
from fakekube.objects.constants import ANNOTATION_DAEMONSET_TEMPLATE_GENERATION

STATEFULSET_FORBIDDEN_UPDATE = (
    "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', "
    "'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
)
#: The StatefulSet spec fields an update may change (upstream's ValidateStatefulSetUpdate).
_STATEFULSET_MUTABLE = ("replicas", "ordinals", "template", "updateStrategy", "revisionHistoryLimit",
                        "persistentVolumeClaimRetentionPolicy", "minReadySeconds")
#: The internal rolling-update structs' fields (Go names, JSON names), as a strategy prints in errors.
_ROLLING_FIELDS = {
    "RollingUpdateDeployment": (("MaxUnavailable", "maxUnavailable"), ("MaxSurge", "maxSurge")),
    "RollingUpdateDaemonSet": (("MaxUnavailable", "maxUnavailable"), ("MaxSurge", "maxSurge")),
    "RollingUpdateStatefulSetStrategy": (("Partition", "partition"), ("MaxUnavailable", "maxUnavailable")),
}
_PERCENT_RE = re.compile(r"^([0-9]+)%$")


def validate_selector_and_template(spec: Obj, kind_word: str) -> list[FieldError]:
    """Selector present, not empty, matching the template's labels; template valid.

    ``kind_word`` fills upstream's "empty selector is invalid for <kind>" message.
    """
    errs: list[FieldError] = []
    selector = spec.get("selector")
    template = spec.get("template")
    if selector is None:
        errs.append(errors.required("spec.selector"))
    else:
        errs += validate_label_selector(selector, "spec.selector")
        if selector_is_empty(selector):
            errs.append(errors.invalid("spec.selector", go_label_selector(selector),
                                       f"empty selector is invalid for {kind_word}"))
    if selector is not None and not _selector_parses(selector):  # LabelSelectorAsSelector fails: no template checks
        return errs + [errors.invalid("spec.selector", go_label_selector(selector), "invalid label selector")]
    if not isinstance(template, dict):
        return errs + [errors.required("spec.template")]
    labels = (template.get("metadata") or {}).get("labels") or {}
    # A missing selector is labels.Nothing() upstream, which matches no template labels, so
    # Deployments, ReplicaSets and StatefulSets report both errors (DaemonSets: unverified,
    # left as they were).
    nothing = selector is None and kind_word != "daemonset"
    if nothing or (selector is not None and not selector_is_empty(selector) and not selector_matches(selector, labels)):
        errs.append(selector_mismatch("spec.template", labels))
    return errs + validate_replicated_template(template, "spec.template")


def _selector_parses(selector: Any) -> bool:
    """Does ``metav1.LabelSelectorAsSelector`` accept it (operators, keys and values)?"""
    try:
        objects.selector_matches(selector, {})
    except ValueError:
        return False
    return True


def _strategy_shown(go_type: str, rolling_type: str, strategy: Obj) -> GoLiteral:
    """An internal strategy struct as a field error shows it: ``apps.DeploymentStrategy{Type:
    "x", RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}`` up to 1.33, ``{"Type":"x",
    "RollingUpdate":null}`` from 1.34 (no JSON tags on internal types: Go's field names)."""
    rolling = strategy.get("rollingUpdate")
    kind = str(strategy.get("type") or "")
    pointer = "nil" if rolling is None else "0xc000000000"
    go = f"apps.{go_type}{{Type:{go_quote(kind)}, RollingUpdate:(*apps.{rolling_type})({pointer})}}"
    rolling_json = "null"
    if isinstance(rolling, dict):
        pointer_type = "StatefulSet" in rolling_type  # its MaxUnavailable is a pointer: nil is null
        rolling_json = errors.go_json_struct(
            [(go_name, rolling.get(name, None if pointer_type and go_name == "MaxUnavailable" else 0))
             for go_name, name in _ROLLING_FIELDS[rolling_type]])
    return GoLiteral(go, '{"Type":' + errors.go_json(kind) + ',"RollingUpdate":' + rolling_json + "}")


def _selector_immutable(new: Obj, old: Obj) -> list[FieldError]:
    new_sel = (new.get("spec") or {}).get("selector")
    old_sel = (old.get("spec") or {}).get("selector")
    return immutable(new_sel, old_sel, "spec.selector", go_label_selector(new_sel))


def _default_unset(fields: Obj, **defaults: object) -> None:
    """Fill fields that are absent or null: Go decodes ``null`` to a nil pointer, which defaulting fills."""
    for name, value in defaults.items():
        if fields.get(name) is None:
            fields[name] = value


def _int_or_percent(value: Any, path: str) -> tuple[int | None, bool, list[FieldError]]:
    """(number, is_percent, errors) for an IntOrString like maxSurge."""
    if isinstance(value, int) and not isinstance(value, bool):
        if value < 0:
            return value, False, [errors.invalid(path, value, "must be greater than or equal to 0")]
        return value, False, []
    if isinstance(value, str):
        m = _PERCENT_RE.match(value)
        if not m:
            return None, True, [errors.invalid(path, value, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")]
        return int(m.group(1)), True, []
    return None, False, []


def _rolling_update_errors(rolling: Obj, path: str) -> list[FieldError]:
    surge, _, errs = _int_or_percent(rolling.get("maxSurge", 0), f"{path}.maxSurge")
    unavailable, unavailable_pct, more = _int_or_percent(rolling.get("maxUnavailable", 0), f"{path}.maxUnavailable")
    errs += more
    if unavailable_pct and unavailable is not None and unavailable > 100:
        errs.append(errors.invalid(f"{path}.maxUnavailable", rolling.get("maxUnavailable"), "must not be greater than 100%"))
    if surge == 0 and unavailable == 0:
        errs.append(errors.invalid(f"{path}.maxUnavailable", rolling.get("maxUnavailable"), "may not be 0 when `maxSurge` is 0"))
    return errs


def _daemon_set_rolling_update_errors(rolling: Obj, path: str) -> list[FieldError]:
    """``ValidateRollingUpdateDaemonSet``: each an int or percent, at most 100%, and exactly
    one of maxSurge and maxUnavailable non-zero."""
    unavailable, unavailable_pct, errs = _int_or_percent(rolling.get("maxUnavailable", 0), f"{path}.maxUnavailable")
    surge, surge_pct, more = _int_or_percent(rolling.get("maxSurge", 0), f"{path}.maxSurge")
    errs += more
    for name, value, pct in (("maxUnavailable", unavailable, unavailable_pct), ("maxSurge", surge, surge_pct)):
        if pct and value is not None and value > 100:
            errs.append(errors.invalid(f"{path}.{name}", rolling.get(name), "must not be greater than 100%"))
    if unavailable and surge:
        errs.append(errors.invalid(f"{path}.maxSurge", rolling.get("maxSurge"), "may not be set when maxUnavailable is non-zero"))
    elif not unavailable and not surge:
        errs.append(errors.required(f"{path}.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return errs


def _default_rolling_update(spec: Obj, field: str) -> Obj | None:
    """Default ``spec.<field>.type`` to RollingUpdate; return its ``rollingUpdate`` block if so.

    Deployments, StatefulSets and DaemonSets all start this way; each then fills the
    block with its own defaults. None when the type is something else (Recreate, OnDelete).
    """
    strategy = ensure_dict(spec, field)
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        return ensure_dict(strategy, "rollingUpdate")
    return None


class _WorkloadStrategy(Strategy):
    """Shared behaviour: generation tracking, empty status on create, immutable selector."""

    tracks_generation = True
    empty_status: dict[str, Any] = {}

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = copy.deepcopy(self.empty_status)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        # Upstream appends the immutable-selector error after the spec's own errors.
        return self.validate(new) + _selector_immutable(new, old)


class DeploymentStrategy(_WorkloadStrategy):
    """Deployments: 25%/25% rolling updates, 10 revisions, a 600 s progress deadline.
    Status writes carry annotations (upstream's status strategy resets only spec and labels)."""

    status_writes_annotations = True
    generation_metadata = ("annotations",)  # copied to the ReplicaSets: a change is a new generation

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        rolling = _default_rolling_update(spec, "strategy")
        if rolling is not None:
            _default_unset(rolling, maxUnavailable="25%", maxSurge="25%")
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        if spec.get("progressDeadlineSeconds") is None:
            spec["progressDeadlineSeconds"] = 600
        default_pod_template(spec.get("template"), ctx.release)

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = non_negative(spec.get("replicas", 0), "spec.replicas")
        errs += validate_selector_and_template(spec, "deployment")
        errs += template_deadline_errors(spec, "Deployment")
        strategy = spec.get("strategy") or {}
        kind = strategy.get("type")
        if kind == "Recreate" and strategy.get("rollingUpdate") is not None:
            errs.append(errors.forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"))
        elif kind == "RollingUpdate":
            errs += _rolling_update_errors(strategy.get("rollingUpdate") or {}, "spec.strategy.rollingUpdate")
        elif kind not in ("Recreate", "RollingUpdate"):
            errs.append(errors.not_supported("spec.strategy", _strategy_shown("DeploymentStrategy", "RollingUpdateDeployment",
                                                                              strategy), ["Recreate", "RollingUpdate"]))
        errs += non_negative(spec.get("revisionHistoryLimit", 0), "spec.revisionHistoryLimit")
        errs += non_negative(spec.get("minReadySeconds", 0), "spec.minReadySeconds")
        deadline = spec.get("progressDeadlineSeconds")
        if deadline is not None:
            errs += non_negative(deadline, "spec.progressDeadlineSeconds")
            if deadline <= spec.get("minReadySeconds", 0):
                errs.append(errors.invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"))
        return errs


    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """``ValidateDeploymentStatusUpdate``: counts not negative nor above ``replicas``, and
        a collision count that never goes down."""
        status = new.get("status") or {}
        errs = deployment_status_problems(status)
        old_count = (old.get("status") or {}).get("collisionCount")
        count = status.get("collisionCount")
        if old_count is not None and (count is None or count < old_count):
            errs.append(errors.invalid("status.collisionCount", count or 0, "cannot be decremented"))
        return errs


_DEPLOYMENT_COUNTS = ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas",
                      "unavailableReplicas", "terminatingReplicas", "collisionCount")


def deployment_status_problems(status: Obj) -> list[FieldError]:
    """``ValidateDeploymentStatus``, in its order."""
    errs = [e for name in _DEPLOYMENT_COUNTS for e in non_negative(status.get(name), f"status.{name}")]
    counts = {name: status.get(name) or 0 for name in ("replicas", "updatedReplicas", "readyReplicas",
                                                       "availableReplicas")}
    above = "cannot be greater than status.replicas"
    for name in ("updatedReplicas", "readyReplicas", "availableReplicas"):
        if counts[name] > counts["replicas"]:
            errs.append(errors.invalid(f"status.{name}", counts[name], above))
    if counts["availableReplicas"] > counts["readyReplicas"]:
        errs.append(errors.invalid("status.availableReplicas", counts["availableReplicas"],
                                   "cannot be greater than readyReplicas"))
    return errs


DEPLOYMENTS = ResourceType(
    "apps", "v1", "Deployment", "deployments", namespaced=True, short_names=("deploy",), categories=("all",),
    subresources=(STATUS, SCALE), strategy=DeploymentStrategy(), table=DEPLOYMENT_TABLE,
)


class ReplicaSetStrategy(_WorkloadStrategy):
    """ReplicaSets: one replica by default; status always carries ``replicas``."""

    empty_status = {"replicas": 0}

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        default_pod_template(spec.get("template"), ctx.release)

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = non_negative(spec.get("replicas", 0), "spec.replicas")
        errs += non_negative(spec.get("minReadySeconds", 0), "spec.minReadySeconds")
        errs += validate_selector_and_template(spec, "deployment")
        return errs + template_deadline_errors(spec, "ReplicaSet")


REPLICA_SETS = ResourceType(
    "apps", "v1", "ReplicaSet", "replicasets", namespaced=True, short_names=("rs",), categories=("all",),
    subresources=(STATUS, SCALE), strategy=ReplicaSetStrategy(), table=REPLICA_SET_TABLE,
)


def _default_claim_template(claim: Any, release: Release) -> None:
    """volumeClaimTemplates are PVC objects, so they get the PVC defaults and status, and
    apps/v1's conversion writes each with ``apiVersion: v1`` and ``kind:
    PersistentVolumeClaim`` whatever the client sent (as reflective conversion did before
    1.17, kubernetes#87583)."""
    if not isinstance(claim, dict):
        return
    claim["apiVersion"] = "v1"
    claim["kind"] = "PersistentVolumeClaim"
    zero_creation_timestamp(ensure_dict(claim, "metadata"), release)
    default_pvc_spec(ensure_dict(claim, "spec"))
    status = ensure_dict(claim, "status")
    status.setdefault("phase", "Pending")


def _as_validated(spec: Obj) -> Obj:
    """The spec whose template upstream validates (``ValidateStatefulSetSpec``): the
    controller sets each pod's hostname and subdomain, so the template's are not checked,
    and every volumeClaimTemplate is a volume of that name (a PVC claim of it) ahead of the
    template's own, so containers may mount it."""
    template = spec.get("template")
    claims = [c for c in spec.get("volumeClaimTemplates") or [] if isinstance(c, dict)]
    pod_spec = template.get("spec") if isinstance(template, dict) else None
    if not isinstance(pod_spec, dict) or not (claims or pod_spec.get("hostname") or pod_spec.get("subdomain")):
        return spec
    pod_spec = {k: v for k, v in pod_spec.items() if k not in ("hostname", "subdomain")}
    if claims:
        names = [(c.get("metadata") or {}).get("name") or "" for c in claims]
        added = {name: {"name": name, "persistentVolumeClaim": {"claimName": name}} for name in names}
        own = [v for v in pod_spec.get("volumes") or [] if not (isinstance(v, dict) and v.get("name") in added)]
        pod_spec["volumes"] = list(added.values()) + own
    return dict(spec, template=dict(template, spec=pod_spec))  # type: ignore[arg-type]


class StatefulSetStrategy(_WorkloadStrategy):
    """StatefulSets: OrderedReady, partition 0, Retain/Retain; most of the spec is frozen."""

    empty_status = {"replicas": 0, "availableReplicas": 0}

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        if not spec.get("podManagementPolicy"):
            spec["podManagementPolicy"] = "OrderedReady"
        rolling = _default_rolling_update(spec, "updateStrategy")
        if rolling is not None and rolling.get("partition") is None:
            rolling["partition"] = 0
        policy = ensure_dict(spec, "persistentVolumeClaimRetentionPolicy")
        policy.setdefault("whenDeleted", "Retain")
        policy.setdefault("whenScaled", "Retain")
        if spec.get("replicas") is None:
            spec["replicas"] = 1
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        default_pod_template(spec.get("template"), ctx.release)
        for claim in spec.get("volumeClaimTemplates") or []:
            _default_claim_template(claim, ctx.release)

    def validate(self, obj: Obj) -> list[FieldError]:
        return self._validate(obj, claims=True)

    def _validate(self, obj: Obj, claims: bool) -> list[FieldError]:
        """``ValidateStatefulSetSpec`` in its order; an update skips the claim templates
        (immutable: what was stored stays acceptable)."""
        spec = obj.get("spec") or {}
        policy = spec.get("podManagementPolicy")
        errs = []
        if policy not in ("OrderedReady", "Parallel"):
            errs.append(errors.invalid("spec.podManagementPolicy", policy, "must be 'OrderedReady' or 'Parallel'"))
        strategy = spec.get("updateStrategy") or {}
        if strategy.get("type") == "OnDelete" and strategy.get("rollingUpdate") is not None:
            errs.append(errors.invalid("spec.updateStrategy.rollingUpdate", "OnDelete",
                                       "only allowed for updateStrategy 'RollingUpdate'"))
        elif strategy.get("type") == "RollingUpdate":
            errs += non_negative((strategy.get("rollingUpdate") or {}).get("partition", 0),
                                 "spec.updateStrategy.rollingUpdate.partition")
        elif strategy.get("type") != "OnDelete":
            shown = _strategy_shown("StatefulSetUpdateStrategy", "RollingUpdateStatefulSetStrategy", strategy)
            errs.append(errors.invalid("spec.updateStrategy", shown, "must be 'RollingUpdate' or 'OnDelete'"))
        if claims:
            for index, claim in enumerate(spec.get("volumeClaimTemplates") or []):
                claim_spec = claim.get("spec") if isinstance(claim, dict) else None
                errs += pvc_spec_errors(claim_spec if isinstance(claim_spec, dict) else {},
                                        f"spec.volumeClaimTemplates[{index}].spec")
        errs += non_negative(spec.get("replicas", 0), "spec.replicas")
        errs += non_negative(spec.get("minReadySeconds", 0), "spec.minReadySeconds")
        ordinals = spec.get("ordinals")
        if isinstance(ordinals, dict):
            errs += non_negative(ordinals.get("start", 0), "spec.ordinals.start")
        errs += validate_selector_and_template(_as_validated(spec), "statefulset")
        return errs + template_deadline_errors(spec, "StatefulSet")

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        errs = self._validate(new, claims=False)
        new_rest = {k: v for k, v in (new.get("spec") or {}).items() if k not in _STATEFULSET_MUTABLE}
        old_rest = {k: v for k, v in (old.get("spec") or {}).items() if k not in _STATEFULSET_MUTABLE}
        if new_rest != old_rest:
            errs.append(errors.forbidden("spec", STATEFULSET_FORBIDDEN_UPDATE))
        return errs


# Names are DNS labels since 1.27: pod hostnames are derived from the StatefulSet name.
STATEFUL_SETS = ResourceType(
    "apps", "v1", "StatefulSet", "statefulsets", namespaced=True, short_names=("sts",), categories=("all",),
    subresources=(STATUS, SCALE), strategy=StatefulSetStrategy(), table=STATEFUL_SET_TABLE,
    name_rule=name_is_dns_label,
)


class DaemonSetStrategy(_WorkloadStrategy):
    """DaemonSets: rolling updates with maxUnavailable 1 and maxSurge 0 by default.

    The server owns the ``deprecated.daemonset.template.generation`` annotation (apps/v1's
    form of the internal ``spec.templateGeneration``): on create the client's value or at
    least 1, then one more on each update that changes the pod template, whatever the client
    sends (upstream's DaemonSet strategy and v1 conversion). The controller labels pods
    ``pod-template-generation`` with it.
    """

    empty_status = {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0, "numberReady": 0}

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        super().prepare_for_create(obj, ctx)
        _set_template_generation(obj, max(1, _template_generation(obj)))

    def add_converted_fields(self, obj: Obj) -> None:
        """apps/v1's conversion writes the annotation from ``spec.templateGeneration``,
        0 before the strategy sets it: the writer of an object sent without it owns it."""
        annotations = ensure_dict(ensure_dict(obj, "metadata"), "annotations")
        annotations.setdefault(ANNOTATION_DAEMONSET_TEMPLATE_GENERATION, "0")

    def prepare_for_update(self, new: Obj, old: Obj, ctx: WriteContext) -> None:
        generation = _template_generation(old)
        if (new.get("spec") or {}).get("template") != (old.get("spec") or {}).get("template"):
            generation += 1
        _set_template_generation(new, generation)

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        spec = ensure_dict(obj, "spec")
        rolling = _default_rolling_update(spec, "updateStrategy")
        if rolling is not None:
            _default_unset(rolling, maxUnavailable=1, maxSurge=0)
        if spec.get("revisionHistoryLimit") is None:
            spec["revisionHistoryLimit"] = 10
        default_pod_template(spec.get("template"), ctx.release)

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        errs = validate_selector_and_template(spec, "daemonset")
        errs += non_negative(spec.get("minReadySeconds", 0), "spec.minReadySeconds")
        errs += non_negative(spec.get("revisionHistoryLimit", 0), "spec.revisionHistoryLimit")
        strategy = spec.get("updateStrategy") or {}
        kind = strategy.get("type")
        if kind == "RollingUpdate":
            errs += _daemon_set_rolling_update_errors(strategy.get("rollingUpdate") or {},
                                                      "spec.updateStrategy.rollingUpdate")
        elif kind != "OnDelete":
            shown = _strategy_shown("DaemonSetUpdateStrategy", "RollingUpdateDaemonSet", strategy)
            errs.append(errors.not_supported("spec.updateStrategy", shown, ["RollingUpdate", "OnDelete"]))
        return errs + template_deadline_errors(spec, "DaemonSet")


def _template_generation(obj: Obj) -> int:
    """The annotation's value; 0 when it is missing or not an integer."""
    value = ((obj.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION_DAEMONSET_TEMPLATE_GENERATION)
    try:
        return int(value) if isinstance(value, str) else 0
    except ValueError:
        return 0


def _set_template_generation(obj: Obj, generation: int) -> None:
    annotations = ensure_dict(ensure_dict(obj, "metadata"), "annotations")
    annotations[ANNOTATION_DAEMONSET_TEMPLATE_GENERATION] = str(generation)


DAEMON_SETS = ResourceType(
    "apps", "v1", "DaemonSet", "daemonsets", namespaced=True, short_names=("ds",), categories=("all",),
    subresources=(STATUS,), strategy=DaemonSetStrategy(), table=DAEMON_SET_TABLE,
)


class ControllerRevisionStrategy(Strategy):
    """ControllerRevisions: the snapshot in ``data`` never changes (compared as the bytes a
    client sent: fakekube/api/verbs/rawextension.py); revision ≥ 0."""

    immutable_raw_fields = ("data",)

    def validate(self, obj: Obj) -> list[FieldError]:
        return non_negative(obj.get("revision", 0), "revision")

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """The revision's checks (``data``'s follow them, from ``immutable_raw_fields``)."""
        return self.validate(new)


CONTROLLER_REVISIONS = ResourceType(
    "apps", "v1", "ControllerRevision", "controllerrevisions", namespaced=True, strategy=ControllerRevisionStrategy(),
    table=CONTROLLER_REVISION_TABLE,
)
