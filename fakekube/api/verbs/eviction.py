"""The pods/eviction subresource: a pod deletion that PodDisruptionBudgets may refuse.

As upstream's ``EvictionREST`` (``pkg/registry/core/pod/storage/eviction.go``, 1.33):

* a pod that is Succeeded, Failed, Pending or already being deleted is deleted at once
  (a non-terminal one with its resourceVersion as a precondition);
* more than one budget guarding the pod: refused with a 500 Status without reason ("This
  pod has more than one PodDisruptionBudget, which the eviction subresource does not
  support.", as kubectl reports it: "Error from server: ...");
* a budget whose status has not caught up with its generation: 429 TooManyRequests, "the
  budget is still being processed", Retry-After 10;
* a Ready pod (or an unready one when the budget is not met under the default
  ``IfHealthyBudget`` policy): ``status.disruptionsAllowed`` must be above 0, else 429 with
  the DisruptionBudget cause "The disruption budget <name> needs <n> healthy pods and has
  <m> currently"; it is decremented and the pod recorded in ``status.disruptedPods`` (with
  the budget's resourceVersion as precondition, retried on a conflict) before the delete;
* an unready pod under ``AlwaysAllow``, or while the budget is met, is deleted without
  touching the budget, guarded by the pod's resourceVersion (a conflict: 429);
* the pod gets the ``DisruptionTarget`` condition (EvictionByEvictionAPI) before the
  graceful delete, unless it is a dry run.

The request holds the store lock throughout, so the read-check-decrement-delete is one
step: upstream's 20 conflict retries 500 ms apart collapse into at most one try each
(a conflict can then only come from the client's own preconditions, answered at once).
Eviction bodies are policy/v1 or policy/v1beta1 ``Eviction`` objects.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.registry import STATUS, ResourceType
from fakekube.api.verbs.apiserver import APIServer, WriteOptions
from fakekube.api.verbs.deletion import DeleteOptions, check_preconditions
from fakekube.objects import disruption as rules
from fakekube.objects.pods import DISRUPTION_TARGET, update_pod_condition

Obj = dict[str, Any]

#: The Eviction versions the subresource accepts (``AcceptsGroupVersion``).
EVICTION_API_VERSIONS = ("policy/v1", "policy/v1beta1")
#: ``MaxDisruptedPodSize``: past this many unconfirmed evictions a budget refuses more.
MAX_DISRUPTED_POD_SIZE = 2000
#: ``EvictionsRetry.Steps``: how often a budget write is retried after a conflict.
EVICTIONS_RETRY_STEPS = 20
REFUSED = "Cannot evict pod as it would violate the pod's disruption budget."
MULTIPLE_BUDGETS = "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support."
#: How upstream's refusals name the budget's resource (``policy.Resource("poddisruptionbudget")``:
#: singular, so the 403 reads ``poddisruptionbudget.policy "<name>" is forbidden``).
_BUDGET_RESOURCE = "poddisruptionbudget"
#: Writes the server makes on its own behalf: no wire checks on objects it built.
_INTERNAL = WriteOptions(internal=True)


def evict(api: APIServer, namespace: str, name: str, body: Any, options: WriteOptions) -> Obj:
    """Evict pod ``namespace/name`` as the Eviction ``body`` asks; returns the Status to send
    (raises ``ApiError`` for a refusal)."""
    delete_options = _delete_options(_checked_eviction(body, namespace, name), options)
    pods = api.registry.lookup("", "v1", "pods")
    with api.store.lock:
        pod = api.get(pods, namespace, name)
        if _can_ignore_budgets(pod):
            guarded = _with_rv(delete_options, pod) if _enforces_rv(pod) else delete_options
            _mark_and_delete(api, pods, namespace, name, guarded)
            return success()
        budget_rt = api.registry.lookup("policy", "v1", "poddisruptionbudgets")
        budgets = rules.budgets_for_pod(api.store.list(budget_rt.key, namespace)[0], pod)
        if len(budgets) > 1:
            raise errors.unknown_error(500, MULTIPLE_BUDGETS)
        guard = bool(budgets) and _unhealthy_may_go(pod, budgets[0])
        if budgets and not guard:
            _check_and_decrement(api, budget_rt, budgets[0], name, delete_options.dry_run)
        try:
            _mark_and_delete(api, pods, namespace, name, _with_rv(delete_options, pod) if guard else delete_options)
        except errors.ApiError as failure:
            if failure.code == 409 and guard and delete_options.precondition_rv is None:
                raise _being_processed(budgets[0]["metadata"]["name"]) from None
            raise
    return success()


def success() -> Obj:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def _checked_eviction(body: Any, namespace: str, name: str) -> Obj:
    """The Eviction body, after the create handler's and EvictionREST's own checks."""
    if not isinstance(body, dict) or not isinstance(body.get("metadata", {}), dict):
        raise errors.bad_request("the object provided is unrecognized or malformed")
    api_version = body.get("apiVersion") or "policy/v1"
    if api_version not in EVICTION_API_VERSIONS:
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API "
                                 "version (policy/v1)")
    meta = body.get("metadata") or {}
    if meta.get("namespace") not in (None, "", namespace):
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the "
                                 "request")
    if meta.get("name") != name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    return body


def _delete_options(eviction: Obj, options: WriteOptions) -> DeleteOptions:
    """The eviction's DeleteOptions with the request's dryRun carried in (``propagateDryRun``;
    the only valid dryRun is [All], so the two never disagree)."""
    parsed = DeleteOptions.parse(eviction.get("deleteOptions"), {})
    return parsed._replace(dry_run=True) if options.dry_run else parsed


def _phase(pod: Obj) -> str:
    return (pod.get("status") or {}).get("phase") or ""


def _deleting(pod: Obj) -> bool:
    return bool((pod.get("metadata") or {}).get("deletionTimestamp"))


def _can_ignore_budgets(pod: Obj) -> bool:
    """``canIgnorePDB``: a finished, pending or already terminating pod disrupts nothing."""
    return _phase(pod) in ("Succeeded", "Failed", "Pending") or _deleting(pod)


def _enforces_rv(pod: Obj) -> bool:
    """``shouldEnforceResourceVersion``: guard the delete unless the pod is finished or going."""
    return _phase(pod) not in ("Succeeded", "Failed") and not _deleting(pod)


def _with_rv(options: DeleteOptions, pod: Obj) -> DeleteOptions:
    """The options with the pod's resourceVersion as precondition, unless the client set one."""
    if options.precondition_rv is not None:
        return options
    return options._replace(precondition_rv=pod["metadata"]["resourceVersion"])


def _unhealthy_may_go(pod: Obj, pdb: Obj) -> bool:
    """An unready pod may go without spending the budget: always under AlwaysAllow, else
    while the budget is met (currentHealthy >= desiredHealthy > 0)."""
    if rules.is_healthy(pod):
        return False
    if (pdb.get("spec") or {}).get("unhealthyPodEvictionPolicy") == rules.ALWAYS_ALLOW:
        return True
    status = pdb.get("status") or {}
    desired = status.get("desiredHealthy") or 0
    return (status.get("currentHealthy") or 0) >= desired > 0


def _check_and_decrement(api: APIServer, rt: ResourceType, pdb: Obj, pod_name: str, dry_run: bool) -> None:
    """``checkAndDecrement`` with its conflict retries: spend one disruption and record the pod."""
    for _ in range(EVICTIONS_RETRY_STEPS):
        updated = _spent(pdb, pod_name, api.clock.now(), dry_run)
        if dry_run:
            return
        try:
            api.update(rt, pdb["metadata"]["namespace"], pdb["metadata"]["name"], updated, _INTERNAL, STATUS)
            return
        except errors.ApiError as failure:
            if failure.code != 409:
                raise
            pdb = api.get(rt, pdb["metadata"]["namespace"], pdb["metadata"]["name"])
    raise errors.ApiError(504, "Timeout", f'Timeout: couldn\'t update PodDisruptionBudget "{pdb["metadata"]["name"]}" '
                          "due to conflicts", {"retryAfterSeconds": 10}, {"Retry-After": "10"})


def _spent(pdb: Obj, pod_name: str, now: Any, dry_run: bool) -> Obj:
    """The budget with one disruption spent, or the refusal upstream gives."""
    meta, status = pdb["metadata"], pdb.get("status") or {}
    name = meta["name"]
    if (status.get("observedGeneration") or 0) < (meta.get("generation") or 0):
        raise _being_processed(name)
    allowed = status.get("disruptionsAllowed") or 0
    if allowed < 0:
        raise errors.forbidden_error("policy", _BUDGET_RESOURCE, name, "pdb disruptions allowed is negative")
    if len(status.get("disruptedPods") or {}) > MAX_DISRUPTED_POD_SIZE:
        raise errors.forbidden_error("policy", _BUDGET_RESOURCE, name,
                                     "DisruptedPods map too big - too many evictions not confirmed by PDB controller")
    if allowed == 0:
        cause = (f"The disruption budget {name} needs {status.get('desiredHealthy') or 0} healthy pods and has "
                 f"{status.get('currentHealthy') or 0} currently")
        raise errors.ApiError(429, "TooManyRequests", REFUSED,
                              {"causes": [{"reason": rules.DISRUPTION_BUDGET_CAUSE, "message": cause}]})
    disrupted = status.get("disruptedPods") if dry_run else rules.disrupted_now(status.get("disruptedPods"),
                                                                               pod_name, now)
    new_status = rules.pdb_status(status.get("currentHealthy") or 0, status.get("desiredHealthy") or 0,
                                  status.get("expectedPods") or 0, allowed - 1, disrupted or {},
                                  status.get("observedGeneration") or 0, status.get("conditions"))
    if allowed - 1 == 0:
        new_status = rules.with_allowed_condition(new_status, now)
    return {**pdb, "status": new_status}


def _being_processed(pdb_name: str) -> errors.ApiError:
    """``createTooManyRequestsError``: the budget's status lags its spec (or a guarded delete
    raced a readiness change); retry in 10 s."""
    cause = f"The disruption budget {pdb_name} is still being processed by the server."
    return errors.ApiError(429, "TooManyRequests", REFUSED,
                           {"causes": [{"reason": rules.DISRUPTION_BUDGET_CAUSE, "message": cause}],
                            "retryAfterSeconds": 10}, {"Retry-After": "10"})


def _mark_and_delete(api: APIServer, pods: ResourceType, namespace: str, name: str, options: DeleteOptions) -> None:
    """``addConditionAndDeletePod``: the DisruptionTarget condition (status subresource, the
    preconditions checked against the latest pod), then the delete — its resourceVersion
    precondition moved on past the condition's own write."""
    if not options.dry_run:
        latest = api.get(pods, namespace, name)
        check_preconditions(pods, latest, options)
        marked = update_pod_condition(latest, {"type": DISRUPTION_TARGET, "status": "True",
                                               "reason": "EvictionByEvictionAPI",
                                               "message": "Eviction API: evicting"}, api.clock.now())
        if marked is not None:
            stored = api.update(pods, namespace, name, marked, _INTERNAL, STATUS).obj
            if options.precondition_rv is not None:
                options = options._replace(precondition_rv=stored["metadata"]["resourceVersion"])
    api.delete(pods, namespace, name, options)
