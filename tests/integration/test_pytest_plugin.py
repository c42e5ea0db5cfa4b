"""The pytest plugin as a user's test suite sees it (run in a nested pytest)."""

from __future__ import annotations

import os
import re

import pytest


def run(pytester: pytest.Pytester, source: str, *args: str) -> pytest.RunResult:
    pytester.makepyfile(source)
    return pytester.runpytest_inprocess("-p", "no:cacheprovider", *args)


def run_apart(pytester: pytest.Pytester, source: str) -> pytest.RunResult:
    """In a fresh interpreter: an in-process run re-imports fakekube's modules that an earlier
    nested run imported, and configs made with two generations of a class compare unequal."""
    pytester.makepyfile(source)
    return pytester.runpytest_subprocess("-p", "no:cacheprovider")


def test_each_test_gets_a_clean_cluster(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        def test_first(fakekube):
            fakekube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "leftover"}})

        def test_second(fakekube):
            names = [c["metadata"]["name"] for c in fakekube.list("v1", "ConfigMap", "default")]
            assert names == ["kube-root-ca.crt"]  # what every namespace has, not the first test's
    """)
    result.assert_outcomes(passed=2)


def test_marker_sets_nodes_and_kubeconfig_does_not_leak(pytester: pytest.Pytester) -> None:
    before = os.environ.get("KUBECONFIG")
    result = run(pytester, """
        import os
        import pytest

        @pytest.mark.fakekube(nodes=3)
        def test_nodes(fakekube):
            assert [n["metadata"]["name"] for n in fakekube.list("v1", "Node")] == ["node-1", "node-2", "node-3"]
            assert os.environ["KUBECONFIG"] == fakekube.kubeconfig

        def test_no_nodes(fakekube):
            assert fakekube.list("v1", "Node") == []
    """)
    result.assert_outcomes(passed=2)
    assert os.environ.get("KUBECONFIG") == before


def test_the_fixture_keeps_manual_time_from_the_fixed_epoch(pytester: pytest.Pytester) -> None:
    """Unlike ``fakekube serve`` (real time from now), a test's cluster moves only when told."""
    result = run(pytester, """
        def test_time(fakekube):
            assert (fakekube.config.time_scale, fakekube.scaled_time, fakekube.auto_advance) == (0.0, None, None)
            assert fakekube.now.isoformat() == "2025-01-01T00:00:00+00:00"
            fakekube.settle()
            assert fakekube.now.isoformat() == "2025-01-01T00:00:00+00:00"
    """)
    result.assert_outcomes(passed=1)


def test_command_line_seed_reaches_the_cluster(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        def test_seed(fakekube):
            assert fakekube.config.seed == 42
    """, "--fakekube-seed", "42")
    result.assert_outcomes(passed=1)


def test_the_image_policy_comes_from_the_command_line_and_a_marker_overrides_it(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        import pytest

        def test_option(fakekube):
            assert fakekube.config.image_policy.policy == "missing"

        @pytest.mark.fakekube(image_policy="exists")
        def test_marker(fakekube):
            assert fakekube.config.image_policy.policy == "exists"
    """, "--fakekube-image-policy", "missing")
    result.assert_outcomes(passed=2)


def test_config_fixture_can_be_overridden(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import pytest

        @pytest.fixture
        def fakekube_config():
            return {"nodes": 2, "seed": 9}
    """)
    result = run(pytester, """
        def test_config(fakekube):
            assert len(fakekube.list("v1", "Node")) == 2 and fakekube.config.seed == 9
    """)
    result.assert_outcomes(passed=1)


def test_failure_report_names_the_seed(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        import pytest
        from fakekube.cluster import NodeSpec

        @pytest.mark.fakekube(seed=1234, nodes=(NodeSpec(zone="a", count=2),))
        def test_fails(fakekube):
            assert False
    """)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*fakekube*", "seed 1234, cluster time 2025-01-01T00:00:00Z, *nodes 2*"])


#: A node-failure story that fails at its end: a Deployment on two nodes, a pod too big for
#: any node, node-1 fails and its pods are evicted 300 s after it is marked unreachable.
NODE_FAILURE_STORY = """
    import pytest

    DEPLOYMENT = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    BIG = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "big"},
           "spec": {"containers": [{"name": "c", "image": "nginx", "resources": {"requests": {"cpu": "100"}}}]}}

    @pytest.mark.fakekube(nodes=2, seed=77)
    def test_story(fakekube):
        fakekube.create(DEPLOYMENT)
        fakekube.create(BIG)
        fakekube.advance(30)
        fakekube.fail_node("node-1")
        fakekube.advance(400)
        assert OUTCOME

    def test_passes(fakekube):
        pass
"""


def story(outcome: str) -> str:
    return NODE_FAILURE_STORY.replace("OUTCOME", outcome)


def fakekube_section(output: list[str]) -> list[str]:
    """The lines of the captured "fakekube" report sections."""
    lines, inside = [], False
    for line in output:
        if line.startswith("-" * 10) or line.startswith("=" * 10) or line.startswith("_" * 10):
            inside = line.strip("-=_ ") == "fakekube"
            continue
        if inside:
            lines.append(line)
    return lines


def test_a_failing_test_report_explains_the_cluster(pytester: pytest.Pytester) -> None:
    result = run(pytester, story("False"))
    result.assert_outcomes(failed=1, passed=1)
    section = fakekube_section(result.outlines)
    text = "\n".join(section)
    assert section[0].startswith("seed 77, cluster time 2025-01-01T00:07:10Z"), section[:2]
    for part in ("-- events (last 20 of", "-- nodes --", "-- pods per node --", "-- pending pods no node holds",
                 "-- controller errors (0) --", "-- replay --"):
        assert part in text, part
    flat = " ".join(text.split())  # long rows wrap
    assert re.search(r"00:06:30 N Pod default/web-\S+ TaintManagerEviction: Marking for deletion Pod", flat)
    assert "node-1: MemoryPressure=Unknown DiskPressure=Unknown PIDPressure=Unknown Ready=Unknown; taints:" in text
    assert "node.kubernetes.io/unreachable:NoExecute since 00:01:30" in flat
    assert "  (not scheduled)\n    default/big Pending ready=no (containers ready 0/1) restarts=0" in text
    assert ("default/big: 0/2 nodes are available: 1 Insufficient cpu, 1 node(s) had untolerated taint "
            "{node.kubernetes.io/unreachable: }.") in flat
    assert "  pytest test_a_failing_test_report_explains_the_cluster.py::test_story --fakekube-seed 77" in text
    assert any(line.startswith("timeline: ") and line.endswith("test_story.html") for line in section)
    assert [line for line in section if len(line) > 100] == []
    assert text.count("-- replay --") == 1  # the passing test has no section


def test_the_replay_command_runs_the_same_story(pytester: pytest.Pytester) -> None:
    first = run(pytester, story("False"))
    replay = next(line.strip() for line in first.outlines if line.strip().startswith("pytest "))
    again = pytester.runpytest_inprocess("-p", "no:cacheprovider", *replay.split()[1:])
    again.assert_outcomes(failed=1)
    assert fakekube_section(again.outlines) == fakekube_section(first.outlines)


def test_timelines_are_written_for_failing_tests_or_as_asked(pytester: pytest.Pytester) -> None:
    result = run(pytester, story("False"))
    written = sorted(p.name for p in (pytester.path / ".fakekube" / "timelines").iterdir())
    assert written == ["test_timelines_are_written_for_failing_tests_or_as_asked.py_test_story.html"]
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--fakekube-timeline=all",
                                          "--fakekube-timeline-dir", "pages")
    assert sorted(p.name for p in (pytester.path / "pages").iterdir()) == [
        "test_timelines_are_written_for_failing_tests_or_as_asked.py_test_passes.html",
        "test_timelines_are_written_for_failing_tests_or_as_asked.py_test_story.html"]
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "--fakekube-timeline=none",
                                          "--fakekube-timeline-dir", "none")
    assert not (pytester.path / "none").exists()
    assert not any(line.startswith("timeline: ") for line in fakekube_section(result.outlines))


def test_server_side_errors_fail_the_test(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        import urllib.request

        def test_breaks_the_server(fakekube, monkeypatch):
            def explode(*args, **kwargs):
                raise RuntimeError("boom")
            monkeypatch.setattr(fakekube.api, "get", explode)
            try:
                urllib.request.urlopen(fakekube.url + "/api/v1/namespaces/default/pods/x")
            except urllib.error.HTTPError as err:
                assert err.code == 500
    """)
    result.assert_outcomes(errors=1, passed=1)
    result.stdout.fnmatch_lines(["*answered 1 request(s) with a 500*boom*"])


def test_a_template_is_prepared_once_and_restored_for_every_test(pytester: pytest.Pytester) -> None:
    """The conftest's default template (two nodes, a ConfigMap, a Deployment settled) is
    prepared by the first test only; each test gets it as prepared, not what the one
    before did to it; the clock too is back at the template's instant."""
    pytester.makeconftest("""
        import pytest_fakekube

        PREPARED = []

        @pytest_fakekube.template(nodes=2)
        def installed(cluster):
            PREPARED.append(cluster.now)
            cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"},
                            "data": {"mode": "fast"}})
            cluster.create({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "op"},
                            "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "op"}},
                                     "template": {"metadata": {"labels": {"app": "op"}},
                                                  "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}})
            cluster.advance(30)
    """)
    result = run_apart(pytester, """
        import pytest
        from conftest import PREPARED

        def ready(cluster):
            return cluster.get("apps/v1", "Deployment", "op")["status"].get("readyReplicas")

        @pytest.mark.parametrize("round", [1, 2, 3])
        def test_each_gets_the_template(fakekube, round):
            assert len(PREPARED) == 1
            assert fakekube.now.isoformat() == "2025-01-01T00:00:30+00:00"
            assert [n["metadata"]["name"] for n in fakekube.list("v1", "Node")] == ["node-1", "node-2"]
            assert fakekube.get("v1", "ConfigMap", "settings")["data"] == {"mode": "fast"}
            assert ready(fakekube) == 2
            fakekube.delete("v1", "ConfigMap", "settings")
            fakekube.fail_node("node-1")
            fakekube.advance(600)

        @pytest.mark.fakekube(template=None)
        def test_an_empty_cluster_on_request(fakekube):
            assert fakekube.list("v1", "Node") == []
            assert "settings" not in [c["metadata"]["name"] for c in fakekube.list("v1", "ConfigMap")]
    """)
    result.assert_outcomes(passed=4)


def test_a_marker_chooses_a_named_template_and_an_unknown_name_is_an_error(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import pytest_fakekube

        @pytest_fakekube.template("with-crd")
        def crd(cluster):
            cluster.create({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                            "metadata": {"name": "widgets.example.com"},
                            "spec": {"group": "example.com", "scope": "Namespaced",
                                     "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                                     "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                                         "openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}]}})
            cluster.advance(5)
    """)
    result = run_apart(pytester, """
        import pytest

        @pytest.mark.fakekube(template="with-crd")
        def test_the_crd_is_served(fakekube):
            fakekube.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
            assert fakekube.get("example.com/v1", "Widget", "w")["metadata"]["name"] == "w"

        @pytest.mark.fakekube(template="with-crd")
        def test_the_widget_of_the_test_before_is_gone(fakekube):
            assert fakekube.list("example.com/v1", "Widget") == []

        def test_no_template_by_default(fakekube):
            assert "widgets.example.com" not in [c["metadata"]["name"] for c in
                                                 fakekube.list("apiextensions.k8s.io/v1", "CustomResourceDefinition")]

        @pytest.mark.fakekube(template="missing")
        def test_unknown(fakekube):
            pass
    """)
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*no template named 'missing' (known: with-crd)*"])


def test_a_template_in_the_test_module_itself_wins_over_the_conftest_s(pytester: pytest.Pytester) -> None:
    pytester.makeconftest("""
        import pytest_fakekube

        @pytest_fakekube.template("prepared")
        def from_conftest(cluster):
            cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "conftest"}})
    """)
    result = run_apart(pytester, """
        import pytest
        import pytest_fakekube

        @pytest_fakekube.template("prepared")
        def from_module(cluster):
            cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "module"}})

        @pytest.mark.fakekube(template="prepared")
        def test_the_module_s(fakekube):
            names = [c["metadata"]["name"] for c in fakekube.list("v1", "ConfigMap", "default")]
            assert "module" in names and "conftest" not in names
    """)
    result.assert_outcomes(passed=1)


def test_under_xdist_each_worker_prepares_the_template_once_and_runs_its_own_clusters(
        pytester: pytest.Pytester) -> None:
    """pytest-xdist out of the box: two workers, each its own session — it prepares the
    template the first time one of its tests asks, restores it for the rest, and its
    clusters (each with its own port and kubeconfig) are its own."""
    pytest.importorskip("xdist", reason="pytest-xdist is in the [test] extra")
    pytester.makeconftest("""
        import os
        import pathlib

        import pytest_fakekube

        @pytest_fakekube.template(nodes=1)
        def installed(cluster):
            with open(pathlib.Path(__file__).parent / "prepared.txt", "a") as log:
                log.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n")
            cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "settings"}})
            cluster.advance(10)
    """)
    pytester.makepyfile("""
        import os
        import pathlib

        import pytest

        @pytest.mark.parametrize("round", range(6))
        def test_each_gets_the_template(fakekube, round):
            assert fakekube.get("v1", "ConfigMap", "settings")["metadata"]["name"] == "settings"
            with open(pathlib.Path(__file__).parent / "ran.txt", "a") as log:
                log.write(f"{os.environ['PYTEST_XDIST_WORKER']} {fakekube.url} {os.environ.get('KUBECONFIG', '')}\\n")
            fakekube.delete("v1", "ConfigMap", "settings")
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "-n", "2")
    result.assert_outcomes(passed=6)
    prepared = (pytester.path / "prepared.txt").read_text().split()
    ran = [line.split() for line in (pytester.path / "ran.txt").read_text().splitlines()]
    workers = sorted({worker for worker, *_ in ran})
    assert sorted(prepared) == workers and set(workers) <= {"gw0", "gw1"}
    for column in (1, 2):  # the cluster's URL, the KUBECONFIG the test saw
        seen = [{row[column] for row in ran if row[0] == worker} for worker in workers]
        assert len(seen) < 2 or not seen[0] & seen[1]


def test_a_report_that_cannot_be_built_still_names_the_seed_and_replay(pytester: pytest.Pytester) -> None:
    result = run(pytester, """
        import pytest

        @pytest.mark.fakekube(seed=5)
        def test_breaks_its_cluster(fakekube, monkeypatch):
            def broken(*_):
                raise RuntimeError("store gone")
            monkeypatch.setattr(type(fakekube), "events", broken)
            assert False
    """)
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["seed: 5", "report failed: RuntimeError('store gone')",
                                 "replay: pytest test_a_report_that_cannot_be_built_still_names_the_seed_and_replay.py"
                                 "::test_breaks_its_cluster --fakekube-seed 5",
                                 "timeline: not written (RuntimeError('store gone'))"])
    assert "INTERNALERROR" not in result.stdout.str()
