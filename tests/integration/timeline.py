"""Helpers for tests that read a cluster's history as a timeline of virtual seconds."""

from __future__ import annotations

from fakekube import Cluster


def at(cluster: Cluster, seconds: float) -> None:
    """Advance to ``seconds`` after the cluster's start time (never back)."""
    cluster.advance(seconds - (cluster.now - cluster.config.start_time).total_seconds())


def noexecute_added(cluster: Cluster) -> dict[str, str]:
    """Node name → when (HH:MM:SS) its unreachable:NoExecute taint was added."""
    found = {}
    for node in cluster.list("v1", "Node"):
        for taint in node["spec"].get("taints") or []:
            if taint["effect"] == "NoExecute" and taint["key"] == "node.kubernetes.io/unreachable":
                found[node["metadata"]["name"]] = taint["timeAdded"][11:19]
    return found
