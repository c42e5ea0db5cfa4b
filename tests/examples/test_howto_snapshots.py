"""Snapshots and templates (docs/time-and-faults.md "Snapshots", README "Use it from pytest"),
as tests: each code block is a region of this file, run by the test around it."""

from __future__ import annotations

from pathlib import Path

import pytest

from fakekube import Cluster


def test_howto_snapshot_and_restore() -> None:
    # docs:begin docs/time-and-faults.md#snapshots
    cluster = Cluster(nodes=3, seed=7)
    # ... install, deploy, advance until settled ...
    snap = cluster.snapshot()          # the whole state now: store, clock and timers, queues,
                                       # controllers, scheduler, kubelets (files too), random streams
    cluster.fail_node("node-1"); cluster.advance(400)
    cluster.restore(snap)              # back to that instant; restore as often as you like
    other = Cluster(nodes=3, seed=7)
    other.restore(snap)                # or into another cluster built with the same config
    # docs:end
    assert cluster.now == other.now == snap.time
    assert cluster.list("v1", "Node") == other.list("v1", "Node")
    assert all("taints" not in (node["spec"] or {}) for node in cluster.list("v1", "Node"))


def test_howto_save_and_load(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    # docs:begin docs/snapshots.md#save-and-load
    cluster = Cluster(nodes=3, seed=7)
    # ... install, deploy, advance until settled ...
    cluster.save("prepared.snap")                 # the whole state now

    again = Cluster.load("prepared.snap")         # in this process or any other, with the same fakekube
    again.advance(400)                            # continues exactly as `cluster` would have
    # docs:end
    cluster.advance(400)
    assert again.now == cluster.now
    assert again.list("v1", "Event") == cluster.list("v1", "Event")


def test_howto_template(pytester: pytest.Pytester) -> None:
    """The README's template: the block is both the conftest.py and the test file (pytest
    collects no tests from a conftest.py, and templates only from conftest.py files)."""
    block = """
        # docs:begin README.md#template
        # conftest.py
        import pytest
        import pytest_fakekube

        @pytest_fakekube.template("operator", nodes=3)     # one named "default" serves every test
        def operator_installed(cluster):
            cluster.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "operators"}})
            cluster.advance(60)

        # test_operator.py
        @pytest.mark.fakekube(template="operator")
        def test_reconciles(fakekube):
            assert fakekube.now.isoformat() == "2025-01-01T00:01:00+00:00"   # the template's instant
            fakekube.delete("v1", "Namespace", "operators", namespace="")   # the next test has it again
        # docs:end
    """
    pytester.makeconftest(block)
    pytester.makepyfile(test_operator=block, test_again=block.replace("test_reconciles", "test_again"))
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=2)
