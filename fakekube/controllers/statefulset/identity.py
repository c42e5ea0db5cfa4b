"""A StatefulSet pod's identity and storage (upstream ``stateful_set_utils.go``, 1.33). Pure.

Pod ``<set>-<ordinal>`` for ordinals ``spec.ordinals.start`` (default 0) up to
``start + replicas - 1``; its labels are the template's plus
``statefulset.kubernetes.io/pod-name``, ``apps.kubernetes.io/pod-index`` (PodIndexLabel,
on by default since 1.28) and ``controller-revision-hash`` (the revision's *name*);
``spec.hostname`` is the pod name and ``spec.subdomain`` the set's ``serviceName``. Each
``volumeClaimTemplate`` gives the pod a claim ``<template>-<set>-<ordinal>`` (labels: the
template's plus the selector's ``matchLabels``) and a volume of the template's name.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any, Mapping

from fakekube.objects._json import deep_copy
from fakekube.objects.constants import LABEL_CONTROLLER_REVISION_HASH, LABEL_POD_INDEX, LABEL_STATEFULSET_POD_NAME
from fakekube.objects.owners import owner_reference
from fakekube.objects.pods import PHASE_FAILED, PHASE_SUCCEEDED, is_pod_available, is_pod_ready

Obj = dict[str, Any]

API_VERSION = "apps/v1"
KIND = "StatefulSet"
PHASE_RUNNING = "Running"
PHASE_PENDING = "Pending"

#: ``statefulPodRegex``: the parent's name and the ordinal, from a pod's name.
_POD_NAME = re.compile(r"^(.*)-([0-9]+)$")
#: ``strconv.ParseInt(s, 10, 32)`` accepts at most this.
_MAX_INT32 = 2**31 - 1


# -- names and ordinals -----------------------------------------------------------------
def parent_and_ordinal(pod: Mapping[str, Any]) -> tuple[str, int]:
    """``getParentNameAndOrdinal``: ("", -1) for a name that is not ``<parent>-<n>``."""
    found = _POD_NAME.match(str((pod.get("metadata") or {}).get("name") or ""))
    if found is None:
        return "", -1
    ordinal = int(found.group(2))
    return found.group(1), ordinal if ordinal <= _MAX_INT32 else -1


def ordinal_of(pod: Mapping[str, Any]) -> int:
    return parent_and_ordinal(pod)[1]


def start_ordinal(sts: Mapping[str, Any]) -> int:
    """``getStartOrdinal``: ``spec.ordinals.start``, else 0."""
    return int(((sts.get("spec") or {}).get("ordinals") or {}).get("start") or 0)


def replicas_of(sts: Mapping[str, Any]) -> int:
    return int((sts.get("spec") or {}).get("replicas") or 0)


def in_ordinal_range(pod: Mapping[str, Any], sts: Mapping[str, Any]) -> bool:
    """``podInOrdinalRange``."""
    ordinal = ordinal_of(pod)
    return start_ordinal(sts) <= ordinal < start_ordinal(sts) + replicas_of(sts)


def pod_name(sts: Mapping[str, Any], ordinal: int) -> str:
    return f"{sts['metadata']['name']}-{ordinal}"


def claim_name(sts: Mapping[str, Any], template: Mapping[str, Any], ordinal: int) -> str:
    """``getPersistentVolumeClaimName``: ``<template>-<set>-<ordinal>``."""
    return f"{(template.get('metadata') or {}).get('name', '')}-{sts['metadata']['name']}-{ordinal}"


def is_member_of(sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """``isMemberOf``: the pod's name says it belongs to this set."""
    return parent_and_ordinal(pod)[0] == sts["metadata"]["name"]


def pod_revision(pod: Mapping[str, Any]) -> str:
    """``getPodRevision``: the ``controller-revision-hash`` label ("" when missing)."""
    return str(((pod.get("metadata") or {}).get("labels") or {}).get(LABEL_CONTROLLER_REVISION_HASH) or "")


# -- pod states -------------------------------------------------------------------------
def _phase(pod: Mapping[str, Any]) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def is_created(pod: Mapping[str, Any]) -> bool:
    """``isCreated``: the apiserver has it (it sets the phase); a planned pod has none."""
    return _phase(pod) != ""


def is_pending(pod: Mapping[str, Any]) -> bool:
    return _phase(pod) == PHASE_PENDING


def is_finished(pod: Mapping[str, Any]) -> bool:
    """``isFailed || isSucceeded``: such a pod is deleted and made again."""
    return _phase(pod) in (PHASE_FAILED, PHASE_SUCCEEDED)


def is_terminating(pod: Mapping[str, Any]) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def is_running_and_ready(pod: Mapping[str, Any]) -> bool:
    return _phase(pod) == PHASE_RUNNING and is_pod_ready(pod)


def is_running_and_available(pod: Mapping[str, Any], min_ready_s: int, now: datetime) -> bool:
    """``isRunningAndAvailable`` (upstream checks ``IsPodAvailable`` only)."""
    return is_pod_available(pod, min_ready_s, now)


def is_healthy(pod: Mapping[str, Any]) -> bool:
    """``isHealthy``: running, ready and not being deleted."""
    return is_running_and_ready(pod) and not is_terminating(pod)


# -- claims -----------------------------------------------------------------------------
def claim_templates(sts: Mapping[str, Any]) -> list[Obj]:
    return list((sts.get("spec") or {}).get("volumeClaimTemplates") or [])


def claims_for(sts: Mapping[str, Any], ordinal: int) -> list[tuple[str, Obj]]:
    """``getPersistentVolumeClaims``: (template name, claim to create) in template order
    (upstream returns a Go map, so its order is random)."""
    match_labels = ((sts.get("spec") or {}).get("selector") or {}).get("matchLabels")
    claims = []
    for template in claim_templates(sts):
        meta = deep_copy(dict(template.get("metadata") or {}))
        meta.pop("creationTimestamp", None)
        meta["name"] = claim_name(sts, template, ordinal)
        meta["namespace"] = sts["metadata"]["namespace"]
        if meta.get("labels") is not None:
            meta["labels"] = {**meta["labels"], **(match_labels or {})}
        elif match_labels:
            meta["labels"] = dict(match_labels)
        claim: Obj = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                      "spec": deep_copy(template.get("spec") or {})}
        claims.append((str((template.get("metadata") or {}).get("name") or ""), claim))
    return claims


def storage_matches(sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """``storageMatches``: every claim template has its volume naming the pod's claim."""
    ordinal = ordinal_of(pod)
    if ordinal < 0:
        return False
    volumes = {v.get("name"): v for v in (pod.get("spec") or {}).get("volumes") or []}
    for template in claim_templates(sts):
        volume = volumes.get((template.get("metadata") or {}).get("name"))
        source = (volume or {}).get("persistentVolumeClaim")
        if not source or source.get("claimName") != claim_name(sts, template, ordinal):
            return False
    return True


def with_storage(sts: Mapping[str, Any], spec: Obj, ordinal: int) -> None:
    """``updateStorage``: the claims' volumes first, then the pod's other volumes."""
    claims = claims_for(sts, ordinal)
    names = {name for name, _ in claims}
    volumes = [{"name": name, "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}}
               for name, claim in claims]
    volumes += [v for v in spec.get("volumes") or [] if v.get("name") not in names]
    if volumes or "volumes" in spec:
        spec["volumes"] = volumes


# -- identity ---------------------------------------------------------------------------
def identity_matches(sts: Mapping[str, Any], pod: Mapping[str, Any]) -> bool:
    """``identityMatches``: name, namespace and pod-name label are the set's."""
    parent, ordinal = parent_and_ordinal(pod)
    meta = pod.get("metadata") or {}
    return (ordinal >= 0 and parent == sts["metadata"]["name"] and meta.get("name") == pod_name(sts, ordinal)
            and meta.get("namespace") == sts["metadata"]["namespace"]
            and (meta.get("labels") or {}).get(LABEL_STATEFULSET_POD_NAME) == meta.get("name"))


def with_identity(sts: Mapping[str, Any], meta: Obj, ordinal: int) -> None:
    """``updateIdentity``: name, namespace and the pod-name and pod-index labels."""
    meta["name"] = pod_name(sts, ordinal)
    meta["namespace"] = sts["metadata"]["namespace"]
    meta["labels"] = {**(meta.get("labels") or {}), LABEL_STATEFULSET_POD_NAME: meta["name"],
                      LABEL_POD_INDEX: str(ordinal)}


def new_pod(sts: Mapping[str, Any], template: Mapping[str, Any], ordinal: int, revision: str) -> Obj:
    """``newStatefulSetPod`` + ``setPodRevision``: the pod of ``ordinal`` from ``template``
    (the template of the revision it belongs to)."""
    template_meta = template.get("metadata") or {}
    meta: Obj = {"generateName": f"{sts['metadata']['name']}-", "labels": dict(template_meta.get("labels") or {})}
    if template_meta.get("annotations"):
        meta["annotations"] = dict(template_meta["annotations"])
    if template_meta.get("finalizers"):
        meta["finalizers"] = list(template_meta["finalizers"])
    meta["ownerReferences"] = [owner_reference(sts, API_VERSION, KIND)]
    with_identity(sts, meta, ordinal)
    meta["labels"][LABEL_CONTROLLER_REVISION_HASH] = revision
    spec = deep_copy(dict(template.get("spec") or {}))
    spec["hostname"] = meta["name"]
    service_name = (sts.get("spec") or {}).get("serviceName")
    if service_name:
        spec["subdomain"] = service_name
    with_storage(sts, spec, ordinal)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
