"""VolumeBinding: a pod's PersistentVolumeClaims must be bound, or bindable on the node.

Upstream: ``pkg/scheduler/framework/plugins/volumebinding/volume_binding.go`` and
``binder.go`` (the SchedulerVolumeBinder), with ``component-helpers/storage/volume``.

* PreFilter: a claim that does not exist, is Lost or is being deleted makes the pod
  unresolvable; an unbound claim whose class is Immediate (or that has no class, or an
  unknown one) means the pod waits for the PV controller ("pod has unbound immediate
  PersistentVolumeClaims"). Pods without claims skip the plugin.
* Filter: a bound claim's PV must exist and its node affinity admit the node; an unbound
  WaitForFirstConsumer claim needs an Available PV that fits (smallest first) or a class
  with a provisioner whose ``allowedTopologies`` admit the node; a claim already
  annotated with a selected node fits only that node.
* Reserve assumes the chosen PV↔claim bindings and selected-node annotations (so the
  next pod does not pick the same PV); PreBind writes them as upstream's binder does —
  the PV's ``claimRef`` (plus ``pv.kubernetes.io/bound-by-controller``) for a static
  binding, the claim's ``volume.kubernetes.io/selected-node`` annotation for provisioning.

Upstream's PreBind then waits (up to ``bindTimeoutSeconds``) for the PV controller to
finish the binding. A binding cycle cannot block here, so PreBind checks once: fully bound
claims let the pod bind; otherwise the pod goes back to the queue (Pending,
:data:`WAITING_FOR_BINDING`) and is retried when one of its claims changes — once the PV
binder (fakekube/controllers/volume/), after a provisioner if need be, has bound the claim. Capacity
scoring (an alpha feature in 1.33) and CSIStorageCapacity checks (no CSIDriver objects
are served) are left out, as they are off or vacuous upstream in that setup.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Callable, Mapping

from fakekube.api.machinery.errors import ApiError
from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PERSISTENT_VOLUMES, STORAGE_CLASSES
from fakekube.objects.nodeselectors import NodeSelector, topology_terms_match
from fakekube.objects.quantity import parse_quantity
from fakekube.objects.syntax import go_quote
from fakekube.objects.volumes import (
    ANN_SELECTED_NODE, CLAIM_LOST, NOT_SUPPORTED_PROVISIONER, WAIT_FOR_FIRST_CONSUMER, bind_volume_to_claim,
    claim_class, ephemeral_claim_error, find_matching_volume, is_claim_fully_bound, pod_claims, pod_uses_claim,
    sorted_by_request, volume_class, with_selected_node,
)
from fakekube.scheduler.framework import (
    CSI_DRIVER, CSI_NODE, CSI_STORAGE_CAPACITY, NODE, PV, PVC, SKIP, STORAGE_CLASS, Action, ClusterEvent, Code,
    CycleState, EventHint, Hint, NodeInfo, PodInfo, Status, error, unresolvable,
)

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

Obj = dict[str, Any]

NAME = "VolumeBinding"
ERR_REASON_BIND_CONFLICT = "node(s) didn't find available persistent volumes to bind"
ERR_REASON_NODE_CONFLICT = "node(s) had volume node affinity conflict"
ERR_REASON_NOT_ENOUGH_SPACE = "node(s) did not have enough free storage"
ERR_REASON_PV_NOT_EXIST = "node(s) unavailable due to one or more pvc(s) bound to non-existent pv(s)"
UNBOUND_IMMEDIATE_CLAIMS = "pod has unbound immediate PersistentVolumeClaims"
#: PreBind's answer while the claims it wrote wait for someone to complete the binding.
WAITING_FOR_BINDING = "binding volumes: waiting for the PersistentVolumeClaims to be bound"

DEFAULT_BIND_TIMEOUT_S = 600
#: CSINode annotation listing the in-tree plugins migrated to CSI on that node.
_MIGRATED_PLUGINS_ANNOTATION = "storage.alpha.kubernetes.io/migrated-plugins"


class PodVolumes:
    """What binding the pod's claims on one node takes (upstream's PodVolumes)."""

    __slots__ = ("static_bindings", "dynamic_provisions")

    def __init__(self, static_bindings: list[tuple[Obj, Obj]] | None = None,
                 dynamic_provisions: list[Obj] | None = None) -> None:
        self.static_bindings: list[tuple[Obj, Obj]] = static_bindings if static_bindings is not None else []  # (PV, claim)
        self.dynamic_provisions: list[Obj] = dynamic_provisions if dynamic_provisions is not None else []  # to provision


class _State:
    """The pod's claims by kind, computed in PreFilter; per-node results from Filter."""

    __slots__ = ("bound", "unbound_delayed", "volumes_by_class", "by_node", "all_bound")

    def __init__(self, bound: list[tuple[Obj, Obj | None, NodeSelector | None]], unbound_delayed: list[Obj],
                 volumes_by_class: dict[str, list[Obj]], by_node: dict[str, PodVolumes] | None = None,
                 all_bound: bool = False) -> None:
        self.bound = bound  # (claim, its PV or None, PV affinity)
        self.unbound_delayed = unbound_delayed
        self.volumes_by_class = volumes_by_class
        self.by_node: dict[str, PodVolumes] = by_node if by_node is not None else {}
        self.all_bound = all_bound

    def clone(self) -> "_State":
        return self  # upstream shares it too: Filter results are per node


class VolumeBinding:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        self.handle = handle
        self.bind_timeout_s = _bind_timeout_s(args)
        if args.get("shape") is not None:
            raise ValueError("VolumeBindingArgs.shape: Invalid value: scoring by volume capacity is an alpha "
                             "feature that kube-scheduler 1.33 has off")
        #: Upstream's assume caches: PVs and claims as Reserve assumed them, until PreBind
        #: wrote them (or Unreserve dropped them). By PV name and by "namespace/name".
        self._assumed_pvs: dict[str, Obj] = {}
        self._assumed_claims: dict[str, Obj] = {}
        self._affinities: dict[tuple[str, str], NodeSelector | None] = {}

    # -- reads through the assume cache ----------------------------------------------------
    def _claim(self, namespace: str, name: str) -> Obj | None:
        return self._assumed_claims.get(f"{namespace}/{name}") or \
            self.handle.ctx.get(PERSISTENT_VOLUME_CLAIMS, name, namespace)

    def _volume(self, name: str) -> Obj | None:
        return self._assumed_pvs.get(name) or self.handle.ctx.get(PERSISTENT_VOLUMES, name)

    def _volumes_of_class(self, class_name: str) -> list[Obj]:
        out = []
        for pv in self.handle.ctx.list(PERSISTENT_VOLUMES):
            pv = self._assumed_pvs.get(pv["metadata"]["name"], pv)
            if volume_class(pv) == class_name:
                out.append(pv)
        return out

    def _affinity(self, pv: Mapping[str, Any]) -> NodeSelector | None:
        """The PV's required node affinity, compiled once per PV version (None: any node)."""
        meta = pv.get("metadata") or {}
        key = (meta.get("name") or "", meta.get("resourceVersion") or "")
        if key not in self._affinities:
            if len(self._affinities) > 4096:
                self._affinities.clear()
            required = ((pv.get("spec") or {}).get("nodeAffinity") or {}).get("required")
            self._affinities[key] = None if required is None else NodeSelector(required.get("nodeSelectorTerms"))
        return self._affinities[key]

    def _fits(self, node: NodeInfo) -> Callable[[Mapping[str, Any]], bool]:
        """CheckNodeAffinity against ``node``: upstream matches the labels alone (empty name)."""
        def fits(pv: Mapping[str, Any]) -> bool:
            selector = self._affinity(pv)
            return selector is None or selector.matches(node.labels, "")
        return fits

    # -- PreFilter -------------------------------------------------------------------------
    def pre_filter(self, state: CycleState, info: PodInfo) -> tuple[set[str] | None, Status | None]:
        claims = pod_claims(info.pod)
        if not claims:
            return None, SKIP
        problem = self._claim_problem(info, claims)
        if problem:
            return None, unresolvable(NAME, problem)
        try:
            data, immediate = self._pod_volume_claims(info, claims)
        except _BinderError as failed:
            return None, error(NAME, str(failed))
        if immediate:
            return None, unresolvable(NAME, UNBOUND_IMMEDIATE_CLAIMS)
        state.data[NAME] = data
        return None, None

    def _claim_problem(self, info: PodInfo, claims: list[tuple[str, bool]]) -> str:
        """podHasPVCs: why the pod's claims rule it out (read without the assume cache), or ""."""
        for name, ephemeral in claims:
            pvc = self.handle.ctx.get(PERSISTENT_VOLUME_CLAIMS, name, info.namespace)
            if pvc is None:
                if ephemeral:
                    return f"waiting for ephemeral volume controller to create the persistentvolumeclaim {go_quote(name)}"
                return f"persistentvolumeclaim {go_quote(name)} not found"
            if (pvc.get("status") or {}).get("phase") == CLAIM_LOST:
                volume = (pvc.get("spec") or {}).get("volumeName") or ""
                return f"persistentvolumeclaim {go_quote(name)} bound to non-existent persistentvolume {go_quote(volume)}"
            if (pvc.get("metadata") or {}).get("deletionTimestamp"):
                return f"persistentvolumeclaim {go_quote(name)} is being deleted"
            if ephemeral:
                owner_problem = ephemeral_claim_error(info.pod, pvc)
                if owner_problem:
                    return owner_problem
        return ""

    def _pod_volume_claims(self, info: PodInfo, claims: list[tuple[str, bool]]) -> tuple[_State, bool]:
        """GetPodVolumeClaims: bound claims (with their PVs), unbound delayed ones (with the
        PVs of their classes); and whether an unbound claim should already have been bound."""
        bound: list[tuple[Obj, Obj | None, NodeSelector | None]] = []
        delayed: list[Obj] = []
        immediate = False
        for name, _ in claims:
            pvc = self._claim(info.namespace, name)
            if pvc is None:
                raise _BinderError(f'error getting PVC "{info.namespace}/{name}": not found')
            if is_claim_fully_bound(pvc):
                pv = self._volume(pvc["spec"]["volumeName"])
                bound.append((pvc, pv, None if pv is None else self._affinity(pv)))
            elif self._delay_binding(pvc) and not (pvc.get("spec") or {}).get("volumeName"):
                delayed.append(pvc)
            else:
                immediate = True  # prebound claims count as immediate, as upstream
        by_class = {claim_class(pvc): self._volumes_of_class(claim_class(pvc)) for pvc in delayed}
        return _State(bound, delayed, by_class), immediate

    def _delay_binding(self, pvc: Obj) -> bool:
        """IsDelayBindingMode: the claim's class exists and is WaitForFirstConsumer."""
        class_name = claim_class(pvc)
        storage_class = self.handle.ctx.get(STORAGE_CLASSES, class_name) if class_name else None
        if storage_class is None:
            return False
        mode = storage_class.get("volumeBindingMode")
        if not mode:
            raise _BinderError(f"VolumeBindingMode not set for StorageClass {go_quote(class_name)}")
        return bool(mode == WAIT_FOR_FIRST_CONSUMER)

    # -- Filter ----------------------------------------------------------------------------
    def filter(self, state: CycleState, info: PodInfo, node: NodeInfo) -> Status | None:
        data: _State = state.data[NAME]
        try:
            volumes, reasons = self._find_pod_volumes(data, node)
        except _BinderError as failed:
            return error(NAME, str(failed))
        if reasons:
            return unresolvable(NAME, *reasons)
        data.by_node[node.name] = volumes
        return None

    def _find_pod_volumes(self, data: _State, node: NodeInfo) -> tuple[PodVolumes, list[str]]:
        """FindPodVolumes: what binding takes on ``node``, or why it cannot be done there."""
        bound_ok, pvs_found = True, True
        for _, pv, selector in data.bound:
            if pv is None:
                pvs_found = False
                break
            if selector is not None and not selector.matches(node.labels, ""):
                bound_ok = False
                break
        volumes = PodVolumes()
        unbound_ok = True
        if data.unbound_delayed:
            unbound_ok = self._find_unbound(data, node, volumes)
        reasons = []
        if not bound_ok:
            reasons.append(ERR_REASON_NODE_CONFLICT)
        if not unbound_ok:
            reasons.append(ERR_REASON_BIND_CONFLICT)
        if not pvs_found:
            reasons.append(ERR_REASON_PV_NOT_EXIST)
        return volumes, reasons

    def _find_unbound(self, data: _State, node: NodeInfo, volumes: PodVolumes) -> bool:
        to_match, to_provision = [], []
        for pvc in data.unbound_delayed:
            selected = ((pvc.get("metadata") or {}).get("annotations") or {}).get(ANN_SELECTED_NODE)
            if selected is None:
                to_match.append(pvc)
            elif selected != node.name:
                return False  # provisioning already started for another node
            else:
                to_provision.append(pvc)
        satisfied = True
        if to_match:
            satisfied, unmatched = self._find_matching(data, node, to_match, volumes)
            to_provision += unmatched
        if to_provision:
            # As upstream, the provisioning verdict replaces the matching one.
            satisfied = self._check_provisions(node, to_provision, volumes)
        return satisfied

    def _find_matching(self, data: _State, node: NodeInfo, claims: list[Obj],
                       volumes: PodVolumes) -> tuple[bool, list[Obj]]:
        """findMatchingVolumes: a PV per claim (smallest requests first, no PV twice)."""
        chosen: list[str] = []
        unmatched: list[Obj] = []
        fits = self._fits(node)
        for pvc in sorted_by_request(claims):
            try:
                pv = find_matching_volume(pvc, data.volumes_by_class.get(claim_class(pvc), []), fits, chosen, True)
            except ValueError as err:
                raise _BinderError(str(err)) from None
            if pv is None:
                unmatched.append(dict(pvc))
                continue
            chosen.append(pv["metadata"]["name"])
            volumes.static_bindings.append((dict(pv), dict(pvc)))
        return not unmatched, unmatched

    def _check_provisions(self, node: NodeInfo, claims: list[Obj], volumes: PodVolumes) -> bool:
        """checkVolumeProvisions: every claim's class can provision a volume reachable from ``node``."""
        for pvc in claims:
            class_name = claim_class(pvc)
            if not class_name:
                meta = pvc.get("metadata") or {}
                raise _BinderError(f'no class for claim "{meta.get("namespace", "")}/{meta.get("name", "")}"')
            storage_class = self.handle.ctx.get(STORAGE_CLASSES, class_name)
            if storage_class is None:
                raise _BinderError(f"failed to find storage class {go_quote(class_name)}")
            provisioner = storage_class.get("provisioner") or ""
            if not provisioner or provisioner == NOT_SUPPORTED_PROVISIONER:
                return False
            if not topology_terms_match(storage_class.get("allowedTopologies"), node.labels):
                return False
        volumes.dynamic_provisions.extend(claims)
        return True

    # -- Reserve / Unreserve ---------------------------------------------------------------
    def reserve(self, state: CycleState, info: PodInfo, node_name: str) -> Status | None:
        data: _State | None = state.data.get(NAME)
        volumes = None if data is None else data.by_node.get(node_name)
        if data is None or volumes is None:
            if data is not None:
                data.all_bound = True
            return None
        data.all_bound = self._assume(info, node_name, volumes)
        return None

    def _assume(self, info: PodInfo, node_name: str, volumes: PodVolumes) -> bool:
        """AssumePodVolumes: True when every claim is already fully bound; otherwise record
        the PVs bound to their claims and the claims annotated with the node."""
        if all(self._claim_bound(info.namespace, name) for name, _ in pod_claims(info.pod)):
            return True
        bindings = []
        for pv, pvc in volumes.static_bindings:
            new_pv, dirty = bind_volume_to_claim(pv, pvc)
            if dirty:
                self._assumed_pvs[new_pv["metadata"]["name"]] = new_pv
            bindings.append((new_pv, pvc))
        provisions = []
        for pvc in volumes.dynamic_provisions:
            annotated = with_selected_node(pvc, node_name)
            self._assumed_claims[_claim_key(annotated)] = annotated
            provisions.append(annotated)
        volumes.static_bindings, volumes.dynamic_provisions = bindings, provisions
        return False

    def _claim_bound(self, namespace: str, name: str) -> bool:
        pvc = self._claim(namespace, name)
        return pvc is not None and is_claim_fully_bound(pvc)

    def unreserve(self, state: CycleState, info: PodInfo, node_name: str) -> None:
        data: _State | None = state.data.get(NAME)
        volumes = None if data is None else data.by_node.get(node_name)
        if volumes is not None:
            self._revert(volumes)

    def _revert(self, volumes: PodVolumes) -> None:
        for pv, _ in volumes.static_bindings:
            self._assumed_pvs.pop(pv["metadata"]["name"], None)
        for pvc in volumes.dynamic_provisions:
            self._assumed_claims.pop(_claim_key(pvc), None)

    # -- PreBind ---------------------------------------------------------------------------
    def pre_bind(self, state: CycleState, info: PodInfo, node_name: str) -> Status | None:
        data: _State | None = state.data.get(NAME)
        if data is None or data.all_bound:
            return None
        volumes = data.by_node.get(node_name)
        if volumes is None:
            return error(NAME, f"no pod volumes found for node {go_quote(node_name)}")
        try:
            self._write_bindings(volumes)
        except ApiError as err:
            return error(NAME, err.message)
        finally:
            self._revert(volumes)  # the store has the truth now (or nothing changed)
        problem = self._binding_problem(info, node_name, volumes)
        if problem is None:
            return None
        if problem:
            return error(NAME, f"binding volumes: {problem}")
        return Status(Code.PENDING, (WAITING_FOR_BINDING,), NAME)

    def _write_bindings(self, volumes: PodVolumes) -> None:
        """bindAPIUpdate: the PVs' claimRefs, then the claims' selected-node annotations."""
        client = self.handle.ctx.client
        volumes.static_bindings = [(client.update(PERSISTENT_VOLUMES, pv), pvc)
                                   for pv, pvc in volumes.static_bindings]
        volumes.dynamic_provisions = [client.update(PERSISTENT_VOLUME_CLAIMS, pvc)
                                      for pvc in volumes.dynamic_provisions]

    def _binding_problem(self, info: PodInfo, node_name: str, volumes: PodVolumes) -> str | None:
        """checkBindings, once: None when every claim is fully bound, "" while some are not
        yet, or why the binding has to start over."""
        ctx = self.handle.ctx
        node = self.handle.snapshot.get(node_name)
        labels = node.labels if node is not None else {}
        complete = True
        for pv, pvc in volumes.static_bindings:
            current_pv = ctx.get(PERSISTENT_VOLUMES, pv["metadata"]["name"])
            current_pvc = ctx.get(PERSISTENT_VOLUME_CLAIMS, pvc["metadata"]["name"], info.namespace)
            if current_pv is None or current_pvc is None:
                return "failed to check binding: not found"
            selector = self._affinity(current_pv)
            if selector is not None and not selector.matches(labels, ""):
                return (f"pv {go_quote(pv['metadata']['name'])} node affinity doesn't match node "
                        f"{go_quote(node_name)}: no matching NodeSelectorTerms")
            if not ((current_pv.get("spec") or {}).get("claimRef") or {}).get("uid"):
                return f"ClaimRef got reset for pv {go_quote(pv['metadata']['name'])}"
            complete = complete and is_claim_fully_bound(current_pvc)
        for pvc in volumes.dynamic_provisions:
            current = ctx.get(PERSISTENT_VOLUME_CLAIMS, pvc["metadata"]["name"], info.namespace)
            if current is None:
                return "failed to check provisioning pvc: not found"
            annotations = (current.get("metadata") or {}).get("annotations") or {}
            if annotations.get(ANN_SELECTED_NODE) != node_name:
                return f"provisioning failed for PVC {go_quote(pvc['metadata']['name'])}"
            complete = complete and is_claim_fully_bound(current)
        return None if complete else ""

    # -- queueing --------------------------------------------------------------------------
    def events_to_register(self) -> list[EventHint]:
        # Queueing hints are on in 1.33: Node/UpdateNodeTaint is not registered.
        return [EventHint(ClusterEvent(STORAGE_CLASS, Action.ADD | Action.UPDATE), _after_storage_class_change),
                EventHint(ClusterEvent(PVC, Action.ADD | Action.UPDATE), _after_claim_change),
                EventHint(ClusterEvent(PV, Action.ADD | Action.UPDATE)),
                EventHint(ClusterEvent(NODE, Action.ADD | Action.UPDATE_NODE_LABEL)),
                EventHint(ClusterEvent(CSI_NODE, Action.ADD | Action.UPDATE), _after_csi_node_change),
                EventHint(ClusterEvent(CSI_DRIVER, Action.UPDATE), _after_csi_driver_change),
                EventHint(ClusterEvent(CSI_STORAGE_CAPACITY, Action.ADD | Action.UPDATE), _after_capacity_change)]


class _BinderError(Exception):
    """An internal error of the binder (upstream's AsStatus(err)): the cycle fails with it."""


def _bind_timeout_s(args: Mapping[str, Any]) -> int:
    value = args.get("bindTimeoutSeconds", DEFAULT_BIND_TIMEOUT_S)
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"VolumeBindingArgs.bindTimeoutSeconds: Invalid value: {value!r}: must be an integer")
    if value < 0:
        raise ValueError(f"bindTimeoutSeconds: Invalid value: {value}: invalid BindTimeoutSeconds, "
                         "should not be a negative value")
    return value


def _claim_key(pvc: Mapping[str, Any]) -> str:
    meta = pvc.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


# -- queueing hints ----------------------------------------------------------------------
def _after_claim_change(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """Queue when a claim the pod uses (same namespace, ephemeral ones included) was created or changed."""
    return Hint.QUEUE if new is not None and pod_uses_claim(pod, new) else Hint.SKIP


def _after_storage_class_change(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """Any new class; an update only when its allowedTopologies changed (the binding mode cannot)."""
    if old is None or new is None:
        return Hint.QUEUE
    return Hint.QUEUE if old.get("allowedTopologies") != new.get("allowedTopologies") else Hint.SKIP


def _after_csi_node_change(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """A new CSINode, or one whose migrated-plugins annotation changed (PVs translate differently)."""
    if old is None or new is None:
        return Hint.QUEUE

    def migrated(obj: Obj) -> str | None:
        return ((obj.get("metadata") or {}).get("annotations") or {}).get(_MIGRATED_PLUGINS_ANNOTATION)

    return Hint.QUEUE if migrated(old) != migrated(new) else Hint.SKIP


def _after_csi_driver_change(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """A driver of the pod's inline CSI volumes stopped tracking storage capacity."""
    if old is None or new is None:
        return Hint.SKIP
    name = (new.get("metadata") or {}).get("name")
    for volume in (pod.get("spec") or {}).get("volumes") or []:
        if (volume.get("csi") or {}).get("driver") != name:
            continue
        if (old.get("spec") or {}).get("storageCapacity") and not (new.get("spec") or {}).get("storageCapacity"):
            return Hint.QUEUE
    return Hint.SKIP


def _after_capacity_change(pod: Obj, old: Obj | None, new: Obj | None) -> Hint:
    """A new CSIStorageCapacity, or one whose usable size grew."""
    if old is None:
        return Hint.QUEUE
    old_limit, new_limit = _volume_limit(old), _volume_limit(new or {})
    return Hint.QUEUE if new_limit is not None and (old_limit is None or new_limit > old_limit) else Hint.SKIP


def _volume_limit(capacity: Obj) -> Any:
    """maximumVolumeSize when set, else capacity (None if neither parses)."""
    value = capacity.get("maximumVolumeSize")
    if value is None:
        value = capacity.get("capacity")
    try:
        return None if value is None else parse_quantity(value)
    except ValueError:
        return None
