"""What a simulated kubelet reports: container statuses, the pod phase and its conditions.

Pure functions of the kubelet's container runs and an instant, following upstream's
``convertToAPIContainerStatuses`` and ``getPhase`` (``pkg/kubelet/kubelet_pods.go``) and the
condition generators of ``pkg/kubelet/status/generate.go``: texts, reasons and the order
of the kubelet-owned conditions (PodReadyToStartContainers, Initialized, Ready,
ContainersReady, PodScheduled) are upstream's, sidecars (restartable init containers)
included: a sidecar counts for initialization once started, for readiness while it runs,
and not at all for the phase once it has exited. Readiness gates are not modelled.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Sequence

from fakekube.clock import format_rfc3339
from fakekube.kubelet.backoff import CRASH_LOOP_BACK_OFF, format_go_duration
from fakekube.kubelet.behaviour import ERR_IMAGE_PULL, IMAGE_PULL_BACKOFF, normalize_image
from fakekube.kubelet.containers import (
    BACKOFF,
    ERR_IMAGE_NEVER_PULL,
    EXITED,
    INVALID_IMAGE,
    INVALID_IMAGE_NAME,
    NEVER_PULL,
    PULL_BACKOFF,
    PULL_ERROR,
    PULLING,
    RUNNING,
    STARTING,
    ContainerRun,
    Instance,
    image_id,
)

Obj = dict[str, Any]

PENDING, RUNNING_PHASE, SUCCEEDED, FAILED = "Pending", "Running", "Succeeded", "Failed"
TERMINAL_PHASES = (SUCCEEDED, FAILED)

#: Upstream's default waiting reasons (kubelet_pods.go) and condition reasons (status/generate.go).
CONTAINER_CREATING = "ContainerCreating"
POD_INITIALIZING = "PodInitializing"
CONTAINERS_NOT_READY = "ContainersNotReady"
CONTAINERS_NOT_INITIALIZED = "ContainersNotInitialized"
POD_COMPLETED = "PodCompleted"
POD_FAILED = "PodFailed"

#: Condition types the kubelet owns, in the order it writes them; others (DisruptionTarget) stay first.
KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady", "PodScheduled")


# -- containers --------------------------------------------------------------------------

def container_status(run: ContainerRun, pod_label: str, has_init: bool, now: datetime) -> Obj:
    """One entry of ``containerStatuses`` / ``initContainerStatuses`` at ``now``."""
    state, last = _states(run, pod_label, has_init)
    instance = run.current
    # prober_manager's UpdatePodStatus: a regular init container is ready once it completed.
    ready = run.succeeded if run.init and not run.sidecar else _ready(run, now)
    status: Obj = {"name": run.name, "state": state, "lastState": last,
                   "ready": ready, "restartCount": run.restart_count}
    if instance is None:
        status.update(image=run.image, imageID="", started=False)
        return status
    normalized = normalize_image(run.image)
    status.update(image=normalized, imageID=image_id(normalized),
                  containerID=instance.container_id, started=_started(run, now))
    return status


def _states(run: ContainerRun, pod_label: str, has_init: bool) -> tuple[Obj, Obj]:
    """(state, lastState) as upstream shows them for the run's stage."""
    current, previous = run.current, run.previous
    if run.stage == RUNNING and current is not None:
        return {"running": {"startedAt": format_rfc3339(current.started_at)}}, _terminated_or_empty(previous)
    if run.crash_backoff_s is not None and current is not None:
        message = (f"back-off {format_go_duration(run.crash_backoff_s)} restarting failed "
                   f"container={run.name} pod={pod_label}")
        return _waiting(CRASH_LOOP_BACK_OFF, message), terminated(current)
    restarting = run.stage in (EXITED, STARTING, BACKOFF) or run.stage == PULLING and not run.pull_failing
    if current is not None and current.finished_at is not None and restarting:
        return terminated(current), _terminated_or_empty(previous)
    last = _terminated_or_empty(current)  # a restart that cannot get its image shows the run before
    return _waiting_before_start(run, has_init), last


def _waiting_before_start(run: ContainerRun, has_init: bool) -> Obj:
    if run.stage == PULL_ERROR:
        return _waiting(ERR_IMAGE_PULL, run.pull_message)
    if run.stage in (INVALID_IMAGE, NEVER_PULL):
        return _waiting(INVALID_IMAGE_NAME if run.stage == INVALID_IMAGE else ERR_IMAGE_NEVER_PULL, run.pull_message)
    if run.stage == PULL_BACKOFF or run.pull_failing:
        # The image as written in the spec (upstream image_manager.go names imgRef, not the
        # tagged form), then the last pull's error (1.32+: "<reason>: <message>").
        return _waiting(IMAGE_PULL_BACKOFF, f'Back-off pulling image "{run.image}": {ERR_IMAGE_PULL}: {run.pull_message}')
    return _waiting(POD_INITIALIZING if has_init else CONTAINER_CREATING)


def _waiting(reason: str, message: str = "") -> Obj:
    waiting: Obj = {"reason": reason}
    if message:
        waiting["message"] = message
    return {"waiting": waiting}


#: What a container that never started shows as ``startedAt``: containerd reports a zero
#: start time, which the kubelet turns into the Unix epoch.
NEVER_STARTED = "1970-01-01T00:00:00Z"


def terminated(instance: Instance) -> Obj:
    finished = instance.finished_at or instance.started_at
    state: Obj = {"exitCode": instance.exit_code, "reason": instance.reason}
    if instance.start_error is not None:
        state.update(message=instance.start_error, startedAt=NEVER_STARTED)
    else:
        state["startedAt"] = format_rfc3339(instance.started_at)
    state.update(finishedAt=format_rfc3339(finished), containerID=instance.container_id)
    return {"terminated": state}


def _terminated_or_empty(instance: Instance | None) -> Obj:
    return terminated(instance) if instance is not None and instance.finished_at is not None else {}


def _ready(run: ContainerRun, now: datetime) -> bool:
    instance = run.current
    return run.stage == RUNNING and instance is not None and instance.plan.ready_at(instance.at_s(now))


def _started(run: ContainerRun, now: datetime) -> bool:
    instance = run.current
    if run.stage != RUNNING or instance is None or instance.plan.started_s is None:
        return False
    return instance.at_s(now) >= instance.plan.started_s


# -- phase ---------------------------------------------------------------------------------

def pod_phase(init_runs: Sequence[ContainerRun], runs: Sequence[ContainerRun], restart_policy: str,
              terminating_done: bool, now: datetime) -> str:
    """Upstream's ``getPhase``; ``terminating_done``: the pod was deleted and every process stopped.

    A sidecar keeps the pod Pending until it has started (unless an app container ran
    already), counts as running while it runs, and is left out once it has exited: so a
    pod whose app containers all succeeded is Succeeded once its sidecars are stopped."""
    regular_inits = [run for run in init_runs if not run.sidecar]
    if any(run.done and not run.succeeded for run in regular_inits):
        return FAILED  # an init container failed under restartPolicy Never
    pending_init = not all(run.succeeded for run in regular_inits)
    waiting = running = stopped = succeeded = 0
    for run in init_runs:
        if not run.sidecar:
            continue
        if run.stage == RUNNING:
            running += 1
            pending_init = pending_init or not _started(run, now)
        elif not _has_exited(run):
            waiting += 1
            pending_init = True
    for run in runs:
        if run.stage == RUNNING:
            running += 1
        elif _has_exited(run):
            stopped += 1
            succeeded += run.stage == EXITED and run.current is not None and run.current.exit_code == 0
        else:
            waiting += 1
    if pending_init and not any_regular_started(runs):
        return PENDING
    return _phase_from_counts(waiting, running, stopped, succeeded, restart_policy, terminating_done)


def _has_exited(run: ContainerRun) -> bool:
    """Has an instance of the container run and exited (its status shows a termination)?"""
    return run.current is not None and run.current.finished_at is not None


def any_regular_started(runs: Sequence[ContainerRun]) -> bool:
    """``HasAnyRegularContainerStarted``: an app container's status shows it running or
    terminated, so the pod was initialized even if a sidecar restarts now."""
    return any(run.stage == RUNNING or (_has_exited(run) and run.crash_backoff_s is None) for run in runs)


def _phase_from_counts(waiting: int, running: int, stopped: int, succeeded: int, restart_policy: str,
                       terminating_done: bool) -> str:
    if waiting:
        return PENDING
    if running:
        return RUNNING_PHASE
    if not stopped:
        return PENDING
    if terminating_done:
        return SUCCEEDED if stopped == succeeded else FAILED
    if restart_policy == "Always":
        return RUNNING_PHASE
    if stopped == succeeded:
        return SUCCEEDED
    return FAILED if restart_policy == "Never" else RUNNING_PHASE


# -- conditions ----------------------------------------------------------------------------

def pod_conditions(existing: Sequence[Obj], init_runs: Sequence[ContainerRun], runs: Sequence[ContainerRun],
                   phase: str, now: datetime, generation: int = 0) -> list[Obj]:
    """Conditions others own first (unchanged), then the kubelet's, each keeping its
    ``lastTransitionTime`` while its status does not change; ``generation`` (non-zero with
    PodObservedGenerationTracking) is the pod generation each of them observed."""
    before = {c.get("type"): c for c in existing}
    ready_status, ready_reason, ready_message = _containers_ready(init_runs, runs, phase, now)
    wanted = [
        ("PodReadyToStartContainers", "False" if phase in TERMINAL_PHASES else "True", "", ""),
        ("Initialized",) + _initialized(init_runs, runs, phase, now),
        ("Ready", ready_status, ready_reason, ready_message),
        ("ContainersReady", ready_status, ready_reason, ready_message),
        ("PodScheduled", "True", "", ""),
    ]
    others = [dict(c) for c in existing if c.get("type") not in KUBELET_CONDITIONS]
    return others + [_condition(kind, status, reason, message, before.get(kind), now, generation)
                     for kind, status, reason, message in wanted]


def observed_generation(pod: Obj, tracking: bool) -> int:
    """``CalculatePodStatusObservedGeneration``: the pod's generation when the gate is on (or
    the status already carries one), else 0 (not written)."""
    if tracking or (pod.get("status") or {}).get("observedGeneration"):
        return int((pod.get("metadata") or {}).get("generation") or 0)
    return 0


def _condition(kind: str, status: str, reason: str, message: str, previous: Obj | None, now: datetime,
               generation: int = 0) -> Obj:
    unchanged = previous is not None and previous.get("status") == status
    transition = previous.get("lastTransitionTime") if unchanged and previous else None
    condition: Obj = {"type": kind}
    if generation:  # PodCondition's field order: type, observedGeneration, status, …
        condition["observedGeneration"] = generation
    condition.update({"status": status, "lastProbeTime": None, "lastTransitionTime": transition or format_rfc3339(now)})
    if reason:
        condition["reason"] = reason
    if message:
        condition["message"] = message
    return condition


def _initialized(init_runs: Sequence[ContainerRun], runs: Sequence[ContainerRun], phase: str,
                 now: datetime) -> tuple[str, str, str]:
    """``GeneratePodInitializedCondition``: every regular init container completed and every
    sidecar started (or an app container ran: the pod was initialized before)."""
    if not init_runs:
        return "True", "", ""
    if phase == SUCCEEDED and all(run.current is not None for run in init_runs):
        return "True", POD_COMPLETED, ""
    incomplete = [run.name for run in init_runs if not (_started(run, now) if run.sidecar else run.succeeded)]
    if not incomplete or any_regular_started(runs):
        return "True", "", ""
    return "False", CONTAINERS_NOT_INITIALIZED, f"containers with incomplete status: [{' '.join(incomplete)}]"


def _containers_ready(init_runs: Sequence[ContainerRun], runs: Sequence[ContainerRun], phase: str,
                      now: datetime) -> tuple[str, str, str]:
    if phase == SUCCEEDED:
        return "False", POD_COMPLETED, ""
    if phase == FAILED:
        return "False", POD_FAILED, ""
    counted = [run for run in init_runs if run.sidecar] + list(runs)  # sidecars first, as upstream lists them
    unready = [run.name for run in counted if not _ready(run, now)]
    if unready:
        return "False", CONTAINERS_NOT_READY, f"containers with unready status: [{' '.join(unready)}]"
    return "True", "", ""
