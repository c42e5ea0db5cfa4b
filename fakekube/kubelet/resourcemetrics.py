"""What metrics-server would report of the simulated kubelets: usage at the last scrape.

The kubelets' containers use what their behaviour's ``cpu_usage_m`` and
``memory_usage_bytes`` timelines say (fakekube/kubelet/usage.py). metrics-server scrapes
every kubelet on a fixed grid (:func:`~fakekube.objects.metrics.last_scrape`) and keeps
the last two scrapes; nothing is stored here, because a container's figures are a pure
function of its instance's start and end and the scrape instants, so the answer is
computed on each read, the same on every run. metrics-server's rules, as in its
``pkg/storage``:

* a container reports at a scrape if an instance of it is running then;
* it has figures at the last scrape ``S`` if the same instance also ran at the scrape
  before (started at or before ``S - 15 s``: window 15 s; a process that starts exactly
  on a scrape is reported by it, as a real scrape's stats are always read after the
  start), or if it started between 10 s and 15 s before ``S`` (window: since its start,
  metrics-server's fresh-container rule);
* a pod has figures when every container reporting at ``S`` has them; its window is its
  first container's;
* a node has figures when its kubelet is reachable and it was registered by the scrape
  before ``S``: its running containers' usage plus :data:`NODE_OVERHEAD_CPU_M` and
  :data:`NODE_OVERHEAD_MEMORY_BYTES` (kubelet, containerd, the node's own processes).

CPU is the average of the timeline over the window, memory its value at ``S``.
Simplification: a node's CPU counts only containers still running at ``S`` (one that
exited during the window adds nothing), and a node whose kubelet is stopped or
partitioned has no figures at all (nor have its pods), whatever the last scrape was.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Callable, Iterable, Sequence

from fakekube.kubelet.containers import ContainerRun, Instance, seconds_between
from fakekube.kubelet.pods import PodRunner, PodState
from fakekube.objects.metrics import (
    FRESH_CONTAINER_MIN_S,
    METRIC_RESOLUTION_S,
    ContainerUsage,
    NodeUsage,
    PodUsage,
    last_scrape,
)

#: What a node uses besides its pods' containers (kubelet, containerd, systemd): fixed, so
#: figures are deterministic. An idle kind node's runtime uses about this much.
NODE_OVERHEAD_CPU_M = 25.0
NODE_OVERHEAD_MEMORY_BYTES = 256 * 1024 * 1024

_NANOCORES_PER_MILLICORE = 1_000_000


class ResourceMetrics:
    """The :class:`~fakekube.objects.metrics.UsageReader` figures, read from the pod runner.

    Call it on the engine thread (the cluster does, through ``engine.run``): container
    runs move only there."""

    def __init__(self, pods: PodRunner, node_is_up: Callable[[str], bool],
                 resolution_s: float = METRIC_RESOLUTION_S) -> None:
        self._pods = pods
        self._node_is_up = node_is_up
        self.resolution_s = resolution_s

    def pod_usage(self, pods: Sequence[tuple[str, str]], now: datetime) -> dict[tuple[str, str], PodUsage]:
        scrape = last_scrape(now, self.resolution_s)
        found: dict[tuple[str, str], PodUsage] = {}
        for namespace, name in pods:
            state = self._pods.state_of(f"{namespace}/{name}")
            if state is None or not self._node_is_up(state.node):
                continue
            usage = self._pod_at(state, scrape)
            if usage is not None:
                found[(namespace, name)] = usage
        return found

    def node_usage(self, nodes: Sequence[tuple[str, datetime]], now: datetime) -> dict[str, NodeUsage]:
        scrape = last_scrape(now, self.resolution_s)
        previous = scrape - timedelta(seconds=self.resolution_s)
        wanted = {name for name, registered in nodes if registered <= previous and self._node_is_up(name)}
        cpu_m = dict.fromkeys(wanted, NODE_OVERHEAD_CPU_M)
        memory = dict.fromkeys(wanted, float(NODE_OVERHEAD_MEMORY_BYTES))
        for state in self._pods.states():
            if state.node not in wanted:
                continue
            for run in state.all_runs:
                instance = running_at(run, scrape)
                if instance is not None:
                    start_s = max(0.0, instance.at_s(previous))
                    cpu_m[state.node] += run.behaviour.cpu_usage_m.average(start_s, instance.at_s(scrape))
                    memory[state.node] += run.behaviour.memory_usage_bytes.value_at(instance.at_s(scrape))
        return {name: NodeUsage(scrape, self.resolution_s, _nanocores(cpu_m[name]), int(memory[name]))
                for name in sorted(wanted)}

    def _pod_at(self, state: PodState, scrape: datetime) -> PodUsage | None:
        """The pod's figures at ``scrape``, or None when metrics-server has none for it."""
        containers: list[ContainerUsage] = []
        first_window_s: float | None = None
        for run in state.all_runs:
            instance = running_at(run, scrape)
            if instance is None:
                continue  # not running at the scrape: the kubelet does not report it
            window_s = self._window_s(instance, scrape)
            if window_s is None:
                return None  # reported once only: metrics-server leaves the whole pod out
            end_s = instance.at_s(scrape)
            behaviour = run.behaviour
            containers.append(ContainerUsage(run.name, _nanocores(behaviour.cpu_usage_m.average(end_s - window_s, end_s)),
                                             int(behaviour.memory_usage_bytes.value_at(end_s))))
            first_window_s = window_s if first_window_s is None else first_window_s
        if first_window_s is None:
            return None
        return PodUsage(scrape, first_window_s, tuple(containers))

    def _window_s(self, instance: Instance, scrape: datetime) -> float | None:
        """The seconds between this instance's two points, or None with only one."""
        up_s = seconds_between(instance.started_at, scrape)
        if FRESH_CONTAINER_MIN_S <= up_s < self.resolution_s:
            return up_s
        return self.resolution_s if up_s >= self.resolution_s else None


def running_at(run: ContainerRun, moment: datetime) -> Instance | None:
    """The instance of ``run`` whose process was running at ``moment`` (current or previous)."""
    for instance in _instances(run):
        if instance.started_at <= moment and (instance.finished_at is None or instance.finished_at > moment):
            return instance
    return None


def _instances(run: ContainerRun) -> Iterable[Instance]:
    return (instance for instance in (run.current, run.previous) if instance is not None)


def _nanocores(millicores: float) -> int:
    return int(round(millicores * _NANOCORES_PER_MILLICORE))

