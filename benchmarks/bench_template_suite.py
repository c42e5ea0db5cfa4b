"""A template-based example suite: what a prepared cluster per test costs, with and without
a template, on one and on two pytest-xdist workers.

Run as a script (``python benchmarks/bench_template_suite.py [--tests N] [--rounds R]``) it
writes a small suite into a temporary directory — a conftest.py whose preparation installs
what a product's tests typically need (a CRD and an object of it, a namespace with a
ConfigMap and a Secret, a Deployment of 10 replicas run until every pod is Ready) and ``N``
tests that each read and change that state — and runs it with ``pytest`` in fresh
processes, four ways per round, interleaved:

- ``rebuild``: every test prepares its own cluster (what a suite without templates does);
- ``template``: the preparation is a ``@pytest_fakekube.template``: prepared once per
  session, restored for every test;
- each with ``-n 1`` and ``-n 2`` (pytest-xdist; each worker prepares its own template).

It prints wall time and the CPU time of the pytest process and its workers (from the
children's rusage), median (min–max) over the rounds, the ratio to the ``rebuild -n 1``
run of the same round, and the load. Nothing is asserted. What it cannot show: a real
product's preparation (an operator's install) usually costs far more than this one, so the
template's gain here is a lower bound.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import statistics
import textwrap
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import measure

CONFTEST = '''
import pytest
import pytest_fakekube

CRD = {{
    "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
    "metadata": {{"name": "widgets.example.com"}},
    "spec": {{"group": "example.com", "scope": "Namespaced",
              "names": {{"plural": "widgets", "singular": "widget", "kind": "Widget"}},
              "versions": [{{"name": "v1", "served": True, "storage": True,
                            "schema": {{"openAPIV3Schema": {{"type": "object",
                                        "x-kubernetes-preserve-unknown-fields": True}}}}}}]}}}}
PROBE = {{"httpGet": {{"path": "/", "port": 80}}, "periodSeconds": 5}}
DEPLOYMENT = {{
    "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {{"name": "web", "namespace": "shop"}},
    "spec": {{"replicas": 10, "selector": {{"matchLabels": {{"app": "web"}}}},
              "template": {{"metadata": {{"labels": {{"app": "web"}}}},
                          "spec": {{"containers": [{{"name": "web", "image": "nginx:1.27",
                                                   "readinessProbe": PROBE}}]}}}}}}}}


def prepare(cluster):
    cluster.create(CRD)
    cluster.create({{"apiVersion": "v1", "kind": "Namespace", "metadata": {{"name": "shop"}}}})
    cluster.create({{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {{"name": "settings", "namespace": "shop"}},
                    "data": {{"mode": "test"}}}})
    cluster.create({{"apiVersion": "v1", "kind": "Secret", "metadata": {{"name": "creds", "namespace": "shop"}},
                    "stringData": {{"password": "s3cret"}}}})
    cluster.create(DEPLOYMENT)
    cluster.create({{"apiVersion": "example.com/v1", "kind": "Widget",
                    "metadata": {{"name": "w", "namespace": "shop"}}, "spec": {{"size": 3}}}})
    cluster.advance(60)


if {use_template}:
    pytest_fakekube.template(nodes=3)(prepare)
else:
    @pytest.fixture()
    def prepared(fakekube):
        prepare(fakekube)
        return fakekube
'''

TESTS = '''
import pytest

{marker}
@pytest.mark.parametrize("case", range({tests}))
def test_the_shop(case, {fixture}):
    cluster = {fixture}
    deployment = cluster.get("apps/v1", "Deployment", "web", "shop")
    assert deployment["status"].get("readyReplicas") == 10
    cluster.create({{"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {{"name": f"case-{{case}}", "namespace": "shop"}}}})
    assert len(cluster.list("v1", "ConfigMap", "shop")) == 3  # settings, case-N, kube-root-ca.crt
'''


def write_suite(root: Path, use_template: bool, tests: int) -> None:
    """A conftest.py and one test module; the template form restores, the other rebuilds."""
    root.mkdir(parents=True)
    (root / "conftest.py").write_text(textwrap.dedent(CONFTEST.format(use_template=use_template)))
    marker = "@pytest.mark.fakekube(nodes=3)" if not use_template else ""
    fixture = "fakekube" if use_template else "prepared"
    (root / "test_shop.py").write_text(textwrap.dedent(TESTS.format(marker=marker, tests=tests, fixture=fixture)))


#: Median wall seconds of one test (set-up, call and tear-down, from the junit report) per
#: scenario and round: the per-test cost without the session's start (imports, the
#: template's one preparation, which falls in the first test's set-up).
PER_TEST_S: dict[str, list[float]] = {}


def run_suite(root: Path, workers: int) -> measure.Sample:
    """One pytest run in a fresh process: wall, and the CPU of it and its workers. Children
    run without ``PYTHONDONTWRITEBYTECODE``: a machine that sets it recompiles every module
    in every process, which would be measured instead of the suite."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    report = root / f"junit-{workers}.xml"
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-n", str(workers),
               f"--junitxml={report}", str(root)]
    env = {key: value for key, value in os.environ.items() if key != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run(command, cwd=root, capture_output=True, text=True, timeout=1800, env=env)
    wall_s = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"the example suite failed ({' '.join(command)}):\n{done.stdout[-3000:]}{done.stderr[-2000:]}")
    cpu_s = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    times = [float(case.get("time", "nan")) for case in ElementTree.parse(report).iter("testcase")]
    PER_TEST_S.setdefault(f"{root.name} -n {workers}", []).append(statistics.median(times))
    return measure.Sample(wall_s, cpu_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=int, default=60, help="tests in the example suite (default 60)")
    parser.add_argument("--rounds", type=int, default=3, help="interleaved rounds (default 3)")
    args = parser.parse_args()
    start = measure.Load.now()
    with tempfile.TemporaryDirectory(prefix="fakekube-template-suite-") as tmp:
        scenarios = {}
        for use_template in (False, True):
            root = Path(tmp) / ("template" if use_template else "rebuild")
            write_suite(root, use_template, args.tests)
            for workers in (1, 2):
                name = f"{root.name} -n {workers}"
                scenarios[name] = (lambda root=root, workers=workers: run_suite(root, workers))
        results = measure.interleave(scenarios, args.rounds, warmup=False)
    measure.report(f"A suite of {args.tests} tests, each on a prepared cluster (CRD, namespace, "
                   "10-replica Deployment Ready), wall and CPU of the pytest run (s)",
                   results, "rebuild -n 1", start, args.rounds, 0.0, unit="s", scale=1.0)
    print("one test (set-up, call, tear-down; junit report), wall ms, median of the tests, then over rounds:")
    for name, per_round in PER_TEST_S.items():
        print(f"  {name}: {measure.format_spread(measure.spread(per_round), scale=1e3)}")


if __name__ == "__main__":
    os.environ.setdefault("PYTHONHASHSEED", "0")
    main()
