"""Every simulated node's kubelet, as the cluster sees it: three engine controllers that
share one view of which kubelets are faulted, and the faults a test can inject.

* :class:`~fakekube.kubelet.heartbeat.NodeHeartbeats` — Leases and NodeStatus, and the
  fault state (stopped, partitioned, reported conditions);
* :class:`~fakekube.kubelet.staticpods.StaticPodController` — mirror pods;
* :class:`~fakekube.kubelet.pods.PodRunner` — the pods bound to the node.

A kubelet that is stopped or partitioned writes nothing; the other two ask the
heartbeats whether the node's kubelet reaches the apiserver. When it comes back (recover,
heal, restart) its Lease and status are written at once and its static pods and pods
catch up to the current instant. Every fault method runs on the engine's thread (the
cluster calls them through ``engine.run``).
"""

from __future__ import annotations

from typing import Any, Sequence

from fakekube.engine import Controller, Engine
from fakekube.kubelet.backoff import ImagePullBackoff, RestartBackoff
from fakekube.kubelet.behaviour import BehaviourCatalog
from fakekube.kubelet.heartbeat import KUBELET_PORT, NodeHeartbeats
from fakekube.kubelet.pods import NODE_KEY, PodRunner, node_internal_ip
from fakekube.kubelet.registry import ImageCatalog
from fakekube.kubelet.resourcemetrics import ResourceMetrics
from fakekube.kubelet.settings import KubeletConfig  # re-exported: where the kubelet's settings were
from fakekube.kubelet.staticpods import StaticPodController, StaticPodManifest


class Kubelets:
    """The simulated kubelets of every node (see the module docstring)."""

    def __init__(self, config: KubeletConfig = KubeletConfig(), behaviours: BehaviourCatalog = BehaviourCatalog(),
                 manifests: Sequence[StaticPodManifest] = (), images: ImageCatalog = ImageCatalog(),
                 observed_generation: bool = True) -> None:
        """``observed_generation``: the release's PodObservedGenerationTracking gate
        (fakekube/objects/versions.py; off in 1.33): pod statuses carry the generation they show."""
        self.heartbeats = NodeHeartbeats(config.heartbeat)
        up = self.heartbeats.reaches_apiserver
        self.static_pods = StaticPodController(manifests, node_is_up=up)
        self.pods = PodRunner(behaviours, node_is_up=up,
                              restart_backoff=RestartBackoff(config.backoff_initial_s, config.backoff_max_s),
                              pull_backoff=ImagePullBackoff(config.backoff_initial_s, config.backoff_max_s),
                              image_pulled=self.heartbeats.image_pulled, image_held=self.heartbeats.image_held,
                              images=images, observed_generation=observed_generation)
        #: What metrics-server would report of these kubelets (metrics.k8s.io, kubectl top).
        self.metrics = ResourceMetrics(self.pods, node_is_up=up)

    def controllers(self) -> tuple[Controller, ...]:
        """In the order they register: a replaced mirror pod exists before the runner looks."""
        return (self.heartbeats, self.static_pods, self.pods)

    # -- faults (on the engine thread) -----------------------------------------------
    def fail(self, node: str) -> None:
        self.heartbeats.stop(node)

    def recover(self, node: str, engine: Engine) -> None:
        self.heartbeats.resume(node, engine)
        self._catch_up(node, engine)

    def partition(self, node: str) -> None:
        self.heartbeats.partition(node)

    def heal(self, node: str, engine: Engine) -> None:
        self.heartbeats.heal(node, engine)
        self._catch_up(node, engine)

    def restart(self, node: str, engine: Engine) -> None:
        self.heartbeats.restart(node, engine)
        self._catch_up(node, engine)

    def unreachable(self, node: dict[str, Any]) -> tuple[str, str] | None:
        """Where the apiserver dials this node's kubelet (its InternalIP, which kubeadm's
        ``--kubelet-preferred-address-types`` puts first, and the daemon endpoint's port) and
        Go's error for the dial; None when it answers. A stopped kubelet's machine is gone (no
        route to it), a partitioned node's packets are lost (the dial times out)."""
        name = node["metadata"]["name"]
        stopped, partitioned = self.heartbeats.stopped(name), self.heartbeats.partitioned(name)
        if not stopped and not partitioned:
            return None
        endpoint = ((node.get("status") or {}).get("daemonEndpoints") or {}).get("kubeletEndpoint") or {}
        address = f"{node_internal_ip(node) or name}:{endpoint.get('Port', KUBELET_PORT)}"
        why = "connect: no route to host" if stopped else "i/o timeout"
        return address, f"dial tcp {address}: {why}"

    def set_condition(self, node: str, condition_type: str, status: str, reason: str = "", message: str = "") -> None:
        self.heartbeats.set_condition(node, condition_type, status, reason, message)

    def clear_condition(self, node: str, condition_type: str) -> None:
        self.heartbeats.clear_condition(node, condition_type)

    def state(self, node: str) -> dict[str, Any]:
        return self.heartbeats.state(node)

    def _catch_up(self, node: str, engine: Engine) -> None:
        """The kubelet is back: its mirror pods and pods sync at once."""
        engine.enqueue(self.static_pods.name, node)
        engine.enqueue(self.pods.name, NODE_KEY + node)
