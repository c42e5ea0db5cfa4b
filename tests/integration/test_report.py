"""Cluster.report() outside pytest: bounded, within 100 columns, and it changes nothing."""

from __future__ import annotations

from fakekube import Cluster


def pod(name: str, cpu: str = "10m") -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]}}


def test_a_busy_cluster_reports_a_bounded_readable_page() -> None:
    cluster = Cluster(nodes=1, seed=3)
    for i in range(14):
        cluster.create(pod(f"small-{i:02d}"))
    for i in range(12):
        cluster.create(pod(f"huge-{i:02d}", cpu="1000"))
    cluster.advance(10)
    rv = cluster.store.resource_version
    text = cluster.report(replay="python story.py --seed 3")
    assert cluster.store.resource_version == rv  # a report writes nothing
    lines = text.splitlines()
    assert [line for line in lines if len(line) > 100] == []
    assert lines[0] == "seed 3, cluster time 2025-01-01T00:00:10Z, resourceVersion %d, nodes 1, pods 26" % rv
    assert lines[1].startswith("-- events (last 20 of ") and len([l for l in lines if l.startswith("  00:")]) == 20
    node = lines.index("  node-1")
    assert lines[node + 1:node + 12] == [f"    default/small-{i:02d} Running ready=yes (containers ready 1/1) restarts=0"
                                         for i in range(10)] + ["    ... and 4 more, all ready"]
    pending = next(i for i, line in enumerate(lines) if line.startswith("-- pending pods no node holds"))
    assert lines[pending + 1].startswith("  default/huge-00: 0/1 nodes are available: 1 Insufficient cpu.")
    assert lines[pending + 2].startswith("      ")  # a long message wraps under its first column
    assert lines[pending + 1 + 2 * 10] == "  ... and 2 more"
    assert lines[-2:] == ["-- replay " + "-" * 90, "  python story.py --seed 3"]


def test_controller_errors_are_listed() -> None:
    cluster = Cluster(nodes=0, seed=1)
    from fakekube.engine.engine import ControllerError
    cluster.engine.errors.append(ControllerError("deployment-controller", "default/web", cluster.now,
                                                 RuntimeError("boom")))
    text = cluster.report()
    assert ("-- controller errors (1) " in text and "  deployment-controller reconciling 'default/web' at "
            "2025-01-01T00:00:00+00:00: RuntimeError('boom')" in text)
    assert "-- replay" not in text
