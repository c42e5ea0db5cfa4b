"""The simulated kubelet's pure leaves: behaviour data, back-off, probe timing and logs.

* :mod:`~fakekube.kubelet.behaviour` — what a container does, chosen by image or annotation.
* :mod:`~fakekube.kubelet.backoff` — CrashLoopBackOff and ImagePullBackOff, upstream's curve.
* :mod:`~fakekube.kubelet.probes` — when Started/Ready flip and when a probe kills.
* :mod:`~fakekube.kubelet.logs` — what pods/log returns for a query.
* :mod:`~fakekube.kubelet.events` — the events the kubelet records, upstream's texts;
  :mod:`~fakekube.kubelet.probefailures` — when a container's probes fail (its Unhealthy events).
* :mod:`~fakekube.kubelet.termination` — how a container stops (preStop, SIGTERM, the grace);
  :mod:`~fakekube.kubelet.hooks` — what a preStop hook takes.
* :mod:`~fakekube.kubelet.imageref` and :mod:`~fakekube.kubelet.registry` — image references
  as the runtime parses them, and which images pull.
* :mod:`~fakekube.kubelet.httpmodel` — what a container answers over HTTP.
* What runs inside a container (docs/behaviour.md): its files (:mod:`~fakekube.kubelet.fs`,
  :mod:`~fakekube.kubelet.rootfs`, :mod:`~fakekube.kubelet.volumes`, :mod:`~fakekube.kubelet.podfs`),
  the shell (:mod:`~fakekube.kubelet.shellsyntax`, :mod:`~fakekube.kubelet.shell`,
  :mod:`~fakekube.kubelet.builtins`, :mod:`~fakekube.kubelet.arith`), its commands
  (:mod:`~fakekube.kubelet.coreutils`, :mod:`~fakekube.kubelet.textutils`, :mod:`~fakekube.kubelet.tarcmd`,
  :mod:`~fakekube.kubelet.netutils` over :mod:`~fakekube.kubelet.clusternet`), a container's own
  program (:mod:`~fakekube.kubelet.programs`) and exec (:mod:`~fakekube.kubelet.execs`,
  :mod:`~fakekube.kubelet.execsession`).

None of them reads a clock or the store; times are passed in. (:mod:`~fakekube.kubelet.heartbeat`
drives the engine and is imported on its own, not re-exported here.)
"""

from fakekube.kubelet.backoff import (
    CRASH_LOOP_BACK_OFF,
    INITIAL_BACKOFF_S,
    MAX_BACKOFF_ENTRIES,
    MAX_BACKOFF_S,
    RESET_AFTER_S,
    Backoff,
    ImagePullBackoff,
    RestartBackoff,
    format_go_duration,
)
from fakekube.kubelet.behaviour import (
    ALWAYS_HEALTHY,
    BEHAVIOUR_ANNOTATION,
    DEFAULT_BEHAVIOUR,
    ERR_IMAGE_PULL,
    IMAGE_PULL_BACKOFF,
    BehaviourCatalog,
    ContainerBehaviour,
    ImageRule,
    LogLine,
    Timeline,
    behaviour_from_dict,
)
from fakekube.kubelet.logs import (
    PREVIOUS_NOT_FOUND,
    ContainerLog,
    LogCursor,
    PodLogOptions,
    format_timestamp,
    read_logs,
)
from fakekube.kubelet.probes import (
    KILLED_BY_LIVENESS,
    KILLED_BY_STARTUP,
    ProbePlan,
    ProbeSpec,
    liveness_failure_s,
    plan_probes,
    readiness_transitions,
    startup_outcome,
)

__all__ = [
    "ALWAYS_HEALTHY", "BEHAVIOUR_ANNOTATION", "CRASH_LOOP_BACK_OFF", "DEFAULT_BEHAVIOUR", "ERR_IMAGE_PULL",
    "IMAGE_PULL_BACKOFF", "INITIAL_BACKOFF_S", "KILLED_BY_LIVENESS", "KILLED_BY_STARTUP", "MAX_BACKOFF_ENTRIES",
    "MAX_BACKOFF_S", "PREVIOUS_NOT_FOUND", "RESET_AFTER_S", "Backoff", "BehaviourCatalog", "ContainerBehaviour",
    "ContainerLog", "ImagePullBackoff", "ImageRule", "LogCursor", "LogLine", "PodLogOptions", "ProbePlan",
    "ProbeSpec", "RestartBackoff", "Timeline", "behaviour_from_dict", "format_go_duration", "format_timestamp",
    "liveness_failure_s", "plan_probes", "read_logs", "readiness_transitions", "startup_outcome",
]
