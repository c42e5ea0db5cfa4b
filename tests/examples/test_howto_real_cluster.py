"""``pytest --fakekube-target=kubeconfig:PATH``: the example suite (test_story_suite.py) passes on
fakekube and, unchanged, on a real cluster — here a ``fakekube serve`` subprocess stands in for
one (kind-like: a tainted control-plane node and two workers, cluster time at 20 × wall time)
— where the tests bound to the virtual clock or to fault injection skip with their reason."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

SUITE = Path(__file__).with_name("test_story_suite.py")

#: A test that checks, from inside, that its objects are on the stand-in server (read back
#: through that server's own kubeconfig, by another client), that KUBECONFIG defaults to its
#: namespace, and fails to show the report.
EVIDENCE = '''
import json
import os
from pathlib import Path
from kubernetes import client, config

def test_objects_are_on_the_server_and_a_failure_says_where(fakekube):
    made = fakekube.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "evidence"}})
    _, current = config.list_kube_config_contexts(config_file=os.environ["KUBECONFIG"])
    assert os.environ["KUBECONFIG"] == fakekube.kubeconfig and current["context"]["namespace"] == fakekube.namespace
    other = client.CoreV1Api(config.new_client_from_config(config_file=%(kubeconfig)r))
    seen = other.read_namespaced_config_map("evidence", fakekube.namespace)
    Path(%(record)r).write_text(json.dumps({"namespace": fakekube.namespace, "uid": seen.metadata.uid,
                                            "made": made["metadata"]["uid"], "url": fakekube.url}))
    assert fakekube.list("v1", "ConfigMap", field_selector="metadata.name=evidence") == []  # fails: it is there
'''


@pytest.fixture(scope="module")
def stand_in(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, str]]:
    """``fakekube serve`` as the "real" cluster: (its kubeconfig, its URL)."""
    kubeconfig = tmp_path_factory.mktemp("stand-in") / "kubeconfig"
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", "--port", "0", "--nodes", "2",
                             "--time-scale", "20", "--kubeconfig", str(kubeconfig)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        url = first.split(" at ")[1].strip()
        yield kubeconfig, url
    finally:
        proc.terminate()
        proc.communicate(timeout=20)


def test_the_suite_runs_on_a_real_cluster_and_skips_what_needs_the_fake(
        pytester: pytest.Pytester, stand_in: tuple[Path, str]) -> None:
    kubeconfig, url = stand_in
    pytester.makepyfile(test_story=SUITE.read_text(encoding="utf-8"))
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rA", f"--fakekube-target=kubeconfig:{kubeconfig}")
    result.assert_outcomes(passed=4, skipped=2)
    skipped = [line for line in result.outlines if line.startswith("SKIPPED")]
    text = "\n".join(skipped)
    assert "needs fakekube's virtual clock: advance() on a real cluster (--fakekube-target=kubeconfig:...)" in text
    assert (f"needs 3 schedulable node(s) (nodes=3, @pytest.mark.fakekube); the real cluster has 2 (Ready, not "
            f"cordoned, no NoSchedule/NoExecute taint) (--fakekube-target=kubeconfig:{kubeconfig})") in text


def test_objects_land_on_the_real_cluster_and_a_failure_reports_it(
        pytester: pytest.Pytester, stand_in: tuple[Path, str], tmp_path: Path) -> None:
    kubeconfig, url = stand_in
    record = tmp_path / "record.json"
    pytester.makepyfile(test_evidence=EVIDENCE % {"kubeconfig": str(kubeconfig), "record": str(record)})
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", f"--fakekube-target=kubeconfig:{kubeconfig}")
    result.assert_outcomes(failed=1)
    seen = json.loads(record.read_text(encoding="utf-8"))
    assert seen["uid"] == seen["made"] and seen["url"] == url and seen["namespace"].startswith("fakekube-test-objects-")
    lines = result.outlines
    start = next(i for i, line in enumerate(lines) if line.strip("-= ") == "fakekube") + 1
    end = next(i for i in range(start, len(lines)) if lines[i].startswith("=" * 10))
    shown = " ".join(" ".join(lines[start:end]).split())  # the report's lines wrap at 100 columns
    assert shown.startswith(f"a real cluster (kubeconfig:{kubeconfig}, {url}), namespace {seen['namespace']}: "
                            "no virtual clock, no seed (the timings are the cluster's own)")
    assert "-- nodes -" in shown and "taints: node-role.kubernetes.io/control-plane:NoSchedule" in shown
    assert shown.endswith(f"-- replay {'-' * 90} pytest test_evidence.py::test_objects_are_on_the_server_and_a_"
                          f"failure_says_where --fakekube-target=kubeconfig:{kubeconfig}")
    for fake_only in ("--fakekube-seed", "cluster time", "controller errors", "timeline:"):
        assert fake_only not in shown
    # After the test its namespace is deleted (terminating, or gone already).
    from kubernetes import client, config
    core = client.CoreV1Api(config.new_client_from_config(config_file=str(kubeconfig)))
    try:
        namespace = core.read_namespace(seen["namespace"])
        assert namespace.metadata.deletion_timestamp is not None
    except client.ApiException as gone:
        assert gone.status == 404


@pytest.mark.parametrize(("value", "message"), [
    ("foo", "--fakekube-target: must be 'fake' or 'kubeconfig:PATH' (the kubeconfig of a real cluster: kind, k3d, "
            "a cloud one), got 'foo'"),
    ("kubeconfig:/nonexistent/kc", "--fakekube-target: kubeconfig:/nonexistent/kc: no such kubeconfig file"),
])
def test_a_bad_target_is_one_usage_error(pytester: pytest.Pytester, value: str, message: str) -> None:
    pytester.makepyfile(test_x="def test_x(fakekube): pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", f"--fakekube-target={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    assert result.errlines == [f"ERROR: {message}", ""] or result.errlines == [f"ERROR: {message}"]


SETTINGS = '''
import pytest
import pytest_fakekube

@pytest_fakekube.template("config")
def config_made(cluster):
    cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "made-by-template"}})

@pytest_fakekube.template("settled")
def settled(cluster):
    cluster.advance(60)

@pytest.mark.fakekube(template="config")
def test_the_template_is_prepared_in_each_tests_namespace(fakekube):
    assert [c["metadata"]["name"] for c in fakekube.list("v1", "ConfigMap")
            if c["metadata"]["name"] == "made-by-template"] == ["made-by-template"]
    fakekube.delete("v1", "ConfigMap", "made-by-template")

@pytest.mark.fakekube(template="config")
def test_the_next_test_has_it_again(fakekube):
    assert fakekube.get("v1", "ConfigMap", "made-by-template")["metadata"]["namespace"] == fakekube.namespace

@pytest.mark.fakekube(template="settled")
def test_a_template_that_advances(fakekube):
    pass

@pytest.mark.fakekube(image_policy="missing")
def test_a_fake_only_setting(fakekube):
    pass

def test_a_fault(fakekube):
    fakekube.fail_node("node-1")

def test_a_cluster_scoped_object_is_deleted_after(fakekube):
    fakekube.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "made-by-a-test"}})
'''


def test_templates_settings_and_faults_on_a_real_cluster(pytester: pytest.Pytester, stand_in: tuple[Path, str]) -> None:
    kubeconfig, _ = stand_in
    pytester.makepyfile(test_settings=SETTINGS)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-rs", f"--fakekube-target=kubeconfig:{kubeconfig}")
    result.assert_outcomes(passed=3, skipped=3)
    text = "\n".join(line for line in result.outlines if line.startswith("SKIPPED"))
    assert "needs fakekube's virtual clock: advance() on a real cluster" in text
    assert ("needs fakekube's configuration: image_policy='missing' (@pytest.mark.fakekube) has no equivalent on a "
            "real cluster, which is configured by whoever made it") in text
    assert "needs fakekube's fault injection (cordon and drain is another story: no NotReady, no eviction): " \
           "fail_node() on a real cluster" in text
    from kubernetes import client, config
    core = client.CoreV1Api(config.new_client_from_config(config_file=str(kubeconfig)))
    try:
        assert core.read_namespace("made-by-a-test").metadata.deletion_timestamp is not None
    except client.ApiException as gone:
        assert gone.status == 404
