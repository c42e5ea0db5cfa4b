"""The writes of one StatefulSet sync, with upstream's events (``stateful_pod_control.go``, 1.33).

Events (source ``statefulset-controller``): SuccessfulCreate "create Pod web-0 in StatefulSet
web successful" and "create Claim www-web-0 Pod web-0 in StatefulSet web success",
SuccessfulDelete "delete Pod web-1 in StatefulSet web successful", SuccessfulUpdate "update
Pod ...", and their Failed* forms ("create Pod web-0 in StatefulSet web failed error: ...",
"create Claim www-web-0 for Pod web-0 in StatefulSet web failed error: ...").

A failed write raises :class:`SyncError` carrying the message upstream's error would print.
"""

from __future__ import annotations

from typing import Any, Mapping

from fakekube.api.machinery.errors import ApiError
from fakekube.controllers.statefulset import identity, retention
from fakekube.engine import Context
from fakekube.objects.kinds import PERSISTENT_VOLUME_CLAIMS, PODS

Obj = dict[str, Any]

COMPONENT = "statefulset-controller"


class SyncError(Exception):
    """A write failed: the sync stops where upstream's would and the set is retried."""


class PodControl:
    """``StatefulPodControl`` for one set, writing through the reconcile's context."""

    def __init__(self, sts: Obj, ctx: Context) -> None:
        self.sts = sts
        self.ctx = ctx
        #: Pods created in this sync (a Parallel sync stops at a bound: sync.py).
        self.creates = 0
        self.namespace: str = sts["metadata"]["namespace"]

    # -- events ---------------------------------------------------------------------
    def event(self, event_type: str, reason: str, message: str) -> None:
        self.ctx.record_event(self.sts, identity.KIND, event_type, reason, message, COMPONENT, identity.API_VERSION)

    def pod_event(self, verb: str, pod: Mapping[str, Any], error: str | None) -> None:
        """``recordPodEvent``."""
        name, set_name = pod["metadata"]["name"], self.sts["metadata"]["name"]
        if error is None:
            self.event("Normal", f"Successful{verb.title()}", f"{verb} Pod {name} in StatefulSet {set_name} successful")
        else:
            self.event("Warning", f"Failed{verb.title()}",
                       f"{verb} Pod {name} in StatefulSet {set_name} failed error: {error}")

    def claim_event(self, pod: Mapping[str, Any], claim: str, error: str | None) -> None:
        """``recordClaimEvent("create", ...)``."""
        pod_name, set_name = pod["metadata"]["name"], self.sts["metadata"]["name"]
        if error is None:
            self.event("Normal", "SuccessfulCreate", f"create Claim {claim} Pod {pod_name} in StatefulSet {set_name} success")
        else:
            self.event("Warning", "FailedCreate",
                       f"create Claim {claim} for Pod {pod_name} in StatefulSet {set_name} failed error: {error}")

    # -- pods -----------------------------------------------------------------------
    def create_pod(self, pod: Obj) -> None:
        """``CreateStatefulPod``: the claims first, then the pod, then the claims' owners."""
        try:
            self.create_claims(pod)
        except SyncError as error:
            self.pod_event("create", pod, str(error))
            raise
        try:
            self.ctx.client.create(PODS, dict(pod, metadata=dict(pod["metadata"], namespace=self.namespace)))
        except ApiError as error:
            if error.code == 409 and error.reason == "AlreadyExists":
                raise SyncError(error.message) from None
            self.pod_event("create", pod, error.message)
            raise SyncError(error.message) from None
        self.creates += 1
        self.fix_claims(pod, record_failure=True)
        self.pod_event("create", pod, None)

    def delete_pod(self, pod: Mapping[str, Any]) -> None:
        """``DeleteStatefulPod`` (a pod already gone is reported like any failure, as upstream)."""
        try:
            self.ctx.client.delete(PODS, pod["metadata"]["name"], self.namespace)
        except ApiError as error:
            self.pod_event("delete", pod, error.message)
            if error.code != 404:
                raise SyncError(error.message) from None
            return
        self.pod_event("delete", pod, None)

    def update_pod(self, update_set: Obj, pod: Mapping[str, Any]) -> None:
        """``UpdateStatefulPod``: restore identity and storage, fix the claims' owners."""
        meta, spec = dict(pod["metadata"]), dict(pod.get("spec") or {})
        ordinal = identity.ordinal_of(pod)
        if not identity.identity_matches(update_set, pod):
            identity.with_identity(update_set, meta, ordinal)
        if not identity.storage_matches(update_set, pod):
            identity.with_storage(update_set, spec, ordinal)
            try:
                self.create_claims(dict(pod, metadata=meta))
            except SyncError as error:
                self.pod_event("update", pod, str(error))
                raise
        if not self.claims_match(pod, update_set):
            self.fix_claims(pod, record_failure=True, sts=update_set)
        try:
            self.ctx.client.update(PODS, dict(pod, metadata=meta, spec=spec))
        except ApiError as error:
            self.pod_event("update", pod, error.message)
            raise SyncError(error.message) from None
        self.pod_event("update", pod, None)

    # -- claims ---------------------------------------------------------------------
    def create_claims(self, pod: Mapping[str, Any]) -> None:
        """``createPersistentVolumeClaims``: each missing claim; one being deleted is an error."""
        problems = []
        for _, claim in identity.claims_for(self.sts, identity.ordinal_of(pod)):
            name = claim["metadata"]["name"]
            existing = self.ctx.get(PERSISTENT_VOLUME_CLAIMS, name, self.namespace)
            if existing is not None:
                if existing["metadata"].get("deletionTimestamp"):
                    problems.append(f"pvc {name} is being deleted")
                continue
            try:
                self.ctx.client.create(PERSISTENT_VOLUME_CLAIMS, claim)
            except ApiError as error:
                problems.append(f"failed to create PVC {name}: {error.message}")
                if error.reason != "AlreadyExists":
                    self.claim_event(pod, name, error.message)
                continue
            self.claim_event(pod, name, None)
        if problems:
            raise SyncError(problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")

    def claims_match(self, pod: Mapping[str, Any], sts: Obj | None = None) -> bool:
        """``ClaimsMatchRetentionPolicy``: every existing claim's owners fit the policy."""
        sts = sts or self.sts
        for template in identity.claim_templates(sts):
            claim = self.ctx.get(PERSISTENT_VOLUME_CLAIMS, identity.claim_name(sts, template, identity.ordinal_of(pod)),
                                 self.namespace)
            if claim is not None and not retention.up_to_date(claim, sts, pod):
                return False
        return True

    def fix_claims(self, pod: Mapping[str, Any], record_failure: bool, sts: Obj | None = None) -> None:
        """``UpdatePodClaimForRetentionPolicy``: rewrite our references on each claim that needs it."""
        sts = sts or self.sts
        for template in identity.claim_templates(sts):
            name = identity.claim_name(sts, template, identity.ordinal_of(pod))
            claim = self.ctx.get(PERSISTENT_VOLUME_CLAIMS, name, self.namespace)
            if claim is None:
                continue
            if retention.unexpected_controller(claim, sts, pod):
                self.event("Warning", "ConflictingController",
                           f"PersistentVolumeClaim {name} has a conflicting OwnerReference that acts as a manging "
                           "controller, the retention policy is ignored for this claim")
            if retention.up_to_date(claim, sts, pod):
                continue
            refs = retention.updated_refs(claim, sts, pod)
            meta = dict(claim["metadata"])
            if refs:
                meta["ownerReferences"] = refs
            else:
                meta.pop("ownerReferences", None)
            try:
                self.ctx.client.update(PERSISTENT_VOLUME_CLAIMS, dict(claim, metadata=meta))
            except ApiError as error:
                message = f"could not update claim {name} for delete policy ownerRefs: {error.message}"
                if record_failure:
                    self.pod_event("update", pod, message)
                raise SyncError(message) from None

    def claim_is_stale(self, pod: Mapping[str, Any]) -> bool:
        """``PodClaimIsStale``."""
        if retention.policy(self.sts)[0] != retention.DELETE:
            return False
        for _, claim in identity.claims_for(self.sts, identity.ordinal_of(pod)):
            existing = self.ctx.get(PERSISTENT_VOLUME_CLAIMS, claim["metadata"]["name"], self.namespace)
            if existing is not None and retention.is_stale(existing, self.sts, pod):
                return True
        return False
