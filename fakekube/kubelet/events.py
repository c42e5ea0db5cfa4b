"""The events a simulated kubelet records, with upstream's reasons, types and exact texts.

Sources (Kubernetes 1.33): reasons from ``pkg/kubelet/events/event.go``; image texts from
``pkg/kubelet/images/image_manager.go`` (``EnsureImageExists``); container texts from
``pkg/kubelet/kuberuntime/kuberuntime_container.go`` (``startContainer``,
``killContainer``) and ``kuberuntime_manager.go`` (``computePodActions``, ``doBackOff``);
probe texts from ``pkg/kubelet/prober/prober.go`` and ``pkg/probe/{http,grpc}``.

Pure: texts in, texts out. Who records them and when is :mod:`fakekube.kubelet.containers`
and :mod:`fakekube.kubelet.pods`; the correlation (counts) is :mod:`fakekube.engine.events`.
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

from fakekube.engine.events import NORMAL, WARNING, EventText
from fakekube.clock import format_go_duration
from fakekube.kubelet.behaviour import normalize_image

#: The kubelet's event source component (``v1.EventSource{Component: "kubelet", Host: node}``).
KUBELET = "kubelet"

#: Upstream's ``backOffPeriod``: a pod whose sync failed (in a back-off) is synced again
#: after 10 s, recording its BackOff event again each time (upstream adds up to 50 % jitter;
#: we do not, so counts are exact).
POD_RESYNC_AFTER_ERROR_S = 10.0

#: What an unhealthy probe reports as its output, per handler (there is no real endpoint).
HTTP_FAILURE_STATUS = 500
GRPC_FAILURE_OUTPUT = 'service unhealthy (responded with "NOT_SERVING")'

#: Image sizes reported in the Pulled message: derived from the image name, in this range.
MIN_IMAGE_BYTES = 2_000_000
MAX_IMAGE_BYTES = 200_000_000


# -- images (image_manager.go) -------------------------------------------------------------

def pulling(image: str) -> EventText:
    return EventText(NORMAL, "Pulling", f'Pulling image "{image}"')


def pulled(image: str, pull_s: float) -> EventText:
    """A successful pull that took ``pull_s`` (no queueing in the fake: both durations are equal)."""
    took = go_duration(pull_s)
    return EventText(NORMAL, "Pulled", f'Successfully pulled image "{image}" in {took} ({took} including waiting). '
                                       f"Image size: {image_size_bytes(image)} bytes.")


def already_present(image: str) -> EventText:
    return EventText(NORMAL, "Pulled", f'Container image "{image}" already present on machine')


def pull_failed(image: str, error: str) -> EventText:
    return EventText(WARNING, "Failed", f'Failed to pull image "{image}": {error}')


def pull_backoff(image: str) -> EventText:
    """Recorded at every sync while the image's pull back-off runs."""
    return EventText(NORMAL, "BackOff", f'Back-off pulling image "{image}"')


def inspect_failed(message: str) -> EventText:
    """``EnsureImageExists``: the reference did not parse (reason ``InspectFailed``)."""
    return EventText(WARNING, "InspectFailed", message)


def never_pull_message(image: str) -> str:
    return f'Container image "{image}" is not present with pull policy of Never'


def never_pull(message: str) -> EventText:
    """``imageNotPresentOnNeverPolicyError``."""
    return EventText(WARNING, "ErrImageNeverPull", message)


def start_error(reason: str) -> EventText:
    """``startContainer``'s "Error: %v" after EnsureImageExists failed (ErrImagePull, ImagePullBackOff)."""
    return EventText(WARNING, "Failed", f"Error: {reason}")


# -- containers (kuberuntime_container.go, kuberuntime_manager.go) ---------------------------

#: fakekube's own reason (upstream's kubelet runs the real program and has no such event):
#: a container's command the program model cannot run (docs/behaviour.md).
COMMAND_NOT_SIMULATED = "CommandNotSimulated"
#: The longest command a CommandNotSimulated message quotes (a long script is cut, with "…").
MAX_QUOTED_COMMAND_CHARS = 200


def command_not_simulated(container: str, command: str) -> EventText:
    """Once per pod and container: what the model could not run, and how to say what it does."""
    if len(command) > MAX_QUOTED_COMMAND_CHARS:
        command = command[:MAX_QUOTED_COMMAND_CHARS - 1] + "…"
    return EventText(WARNING, COMMAND_NOT_SIMULATED,
                     f"fakekube does not simulate the command of container {container}: {command}; it runs as "
                     f"its behaviour declares (by default: until stopped, with no more log). Declare what it "
                     f"does with the pod annotation fakekube.io/behaviour (e.g. "
                     f"'{{\"{container}\": {{\"run_for_s\": 5, \"exit_code\": 0}}}}') or the config file's "
                     f"behaviours.images; see docs/behaviour.md \"Behaviour reference\"")


#: fakekube's own reason: a probe timeline declared for a container that has no such probe.
PROBE_NOT_DEFINED = "ProbeNotDefined"


def probe_not_defined(container: str, fields: list[str], probes: list[str]) -> EventText:
    """Once per pod and container: declared probe outcomes that nothing will probe (a
    ``ready_after_s`` without a readinessProbe is Ready at once, as in Kubernetes)."""
    return EventText(WARNING, PROBE_NOT_DEFINED,
                     f"container {container} has no {' or '.join(probes)}, so its behaviour's "
                     f"{' and '.join(fields)} timeline{'s are' if len(fields) > 1 else ' is'} never used: as in Kubernetes, a container without "
                     f"the probe counts as ready and alive while it runs. Add the probe to test it; see "
                     f"docs/behaviour.md \"Behaviour reference\"")


def created(container: str) -> EventText:
    return EventText(NORMAL, "Created", f"Created container: {container}")


def started(container: str) -> EventText:
    return EventText(NORMAL, "Started", f"Started container {container}")


def stopping(container: str) -> EventText:
    """``killContainer`` with no message: the pod is being deleted (or killed as a whole)."""
    return EventText(NORMAL, "Killing", f"Stopping container {container}")


def prestop_failed() -> EventText:
    """``executePreStopHook``: the hook failed (the message is fixed so no secret leaks)."""
    return EventText(WARNING, "FailedPreStopHook", "PreStopHook failed")


def probe_kill(container: str, probe: str, restart: bool) -> EventText:
    """``computePodActions``: a liveness/startup failure; ``probe`` is "liveness" or "startup"."""
    message = f"Container {container} failed {probe} probe"
    return EventText(NORMAL, "Killing", f"{message}, will be restarted" if restart else message)


def init_probe_kill(container: str, probe: str) -> EventText:
    """``computeInitContainerActions``: a sidecar's liveness/startup failure (it always restarts)."""
    return EventText(NORMAL, "Killing", f"Init container {container} failed {probe} probe")


def restart_backoff(container: str, pod_label: str) -> EventText:
    """``doBackOff``, at every sync while CrashLoopBackOff holds the restart; ``pod_label`` is
    upstream's ``format.Pod``: ``name_namespace(uid)``."""
    return EventText(WARNING, "BackOff", f"Back-off restarting failed container {container} in pod {pod_label}")


# -- the node (kubelet.go, nodestatus/setters.go) ----------------------------------------------

#: The event reason a kubelet records when one of its conditions takes a status (setters.go).
NODE_CONDITION_REASONS: Mapping[tuple[str, str], str] = {
    ("MemoryPressure", "True"): "NodeHasInsufficientMemory",
    ("MemoryPressure", "False"): "NodeHasSufficientMemory",
    ("DiskPressure", "True"): "NodeHasDiskPressure",
    ("DiskPressure", "False"): "NodeHasNoDiskPressure",
    ("PIDPressure", "True"): "NodeHasInsufficientPID",
    ("PIDPressure", "False"): "NodeHasSufficientPID",
    ("Ready", "True"): "NodeReady",
}


def starting_kubelet() -> EventText:
    return EventText(NORMAL, "Starting", "Starting kubelet.")


def allocatable_enforced() -> EventText:
    return EventText(NORMAL, "NodeAllocatableEnforced", "Updated Node Allocatable limit across pods")


def node_condition(node: str, condition_type: str, status: str) -> EventText | None:
    """The event for a kubelet condition that is new or changed status; None for a type the
    kubelet records nothing about. Ready anything but True is NodeNotReady."""
    reason = NODE_CONDITION_REASONS.get((condition_type, status))
    if reason is None and condition_type == "Ready":
        reason = "NodeNotReady"
    return None if reason is None else EventText(NORMAL, reason, f"Node {node} status is now: {reason}")


def node_reference(node: str) -> dict[str, str]:
    """The kubelet's reference to its node: upstream's ``nodeRef`` has the node's *name* as UID."""
    return {"kind": "Node", "name": node, "uid": node}


# -- probes (prober.go) ---------------------------------------------------------------------

def unhealthy(probe_type: str, output: str) -> EventText:
    """One failed probe; ``probe_type`` is "Liveness", "Readiness" or "Startup"."""
    return EventText(WARNING, "Unhealthy", f"{probe_type} probe failed: {output}")


def probe_failure_output(probe: Mapping[str, Any], container: Mapping[str, Any], pod_ip: str) -> str:
    """What a failing probe of this handler prints (exec prints nothing by default)."""
    if "httpGet" in probe:
        return f"HTTP probe failed with statuscode: {HTTP_FAILURE_STATUS}"
    if "tcpSocket" in probe:
        tcp = probe["tcpSocket"] or {}
        host = tcp.get("host") or pod_ip
        return f"dial tcp {host}:{_port_number(tcp.get('port'), container)}: connect: connection refused"
    if "grpc" in probe:
        return GRPC_FAILURE_OUTPUT
    return ""


def _port_number(port: Any, container: Mapping[str, Any]) -> Any:
    """A named port resolves through the container's ports, as the prober does."""
    if isinstance(port, str) and not port.isdigit():
        for declared in container.get("ports") or []:
            if declared.get("name") == port:
                return declared.get("containerPort")
    return port


# -- formatting -------------------------------------------------------------------------------

def go_duration(seconds: float) -> str:
    """Go's ``time.Duration.String`` after ``Truncate(time.Millisecond)``: 0s, 500ms, 1.5s, 2m3.25s."""
    return format_go_duration(int(seconds * 1000 + 1e-6) * 1_000_000)


def image_size_bytes(image: str) -> int:
    """A stable, plausible size for an image: the same image has one size everywhere."""
    digest = int(hashlib.sha256(normalize_image(image).encode()).hexdigest()[:12], 16)
    return MIN_IMAGE_BYTES + digest % (MAX_IMAGE_BYTES - MIN_IMAGE_BYTES)
