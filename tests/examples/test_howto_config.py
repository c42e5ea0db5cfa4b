"""docs/config.md, as tests: its command lines, Python and error messages (its YAML blocks
are loaded by test_docs_snippets.py)."""

from __future__ import annotations

import json
import re
import urllib.request
from pathlib import Path

import pytest

from fakekube.cli.main import main
from tests.examples.docs_blocks import region
from tests.examples.shell import environment, serving


@pytest.fixture
def config_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory holding the page's full example as cluster.yaml, and its manifests/."""
    (tmp_path / "cluster.yaml").write_text(region("docs/config.md", "full-example").text, encoding="utf-8")
    (tmp_path / "manifests").mkdir()
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_serve_with_a_config_file(config_dir: Path) -> None:
    lines = region("docs/config.md", "serve").text.splitlines()
    nodes = []
    for line in lines:
        with serving(line + " --kubeconfig kubeconfig", config_dir, environment()) as url:
            with urllib.request.urlopen(url + "/api/v1/nodes", timeout=10) as response:
                nodes.append([n["metadata"]["name"] for n in json.load(response)["items"]])
    assert nodes == [["big-1", "big-2", "control-plane", "node-1", "node-2"],    # the file's nodes
                     ["node-1", "node-2", "node-3", "node-4", "node-5"]]         # --nodes 5 wins


def test_build_a_cluster_from_a_config_file(config_dir: Path) -> None:
    # docs:begin docs/config.md#python
    from fakekube import Cluster
    from fakekube.cluster.configfile import load_config_file

    cluster = Cluster.from_config_file("cluster.yaml")          # keyword overrides allowed: (..., seed=3)
    config = load_config_file("cluster.yaml")                   # a ClusterConfig, to adjust before use
    # docs:end
    assert cluster.config.seed == config.seed == 42
    assert [n["metadata"]["name"] for n in cluster.list("v1", "Node")] == [
        "big-1", "big-2", "control-plane", "node-1", "node-2"]


def test_system_pods_from_python() -> None:
    # docs:begin docs/config.md#system-pods-python
    from fakekube import Cluster
    from fakekube.cluster.system import SystemPods

    Cluster(nodes=2, system_pods=True)
    Cluster(nodes=2, system_pods=SystemPods(core_dns=False))
    # docs:end


#: What each of the page's error lines is printed for.
BROKEN = [{"cluster.yaml": "nodes:\n  - zone: a\n  - zone: 3\n"},
          {"cluster.yaml": "nodeLifecycle:\n  nodeMonitorGracePeriode: 40s\n"},
          {"cluster.yaml": "seed: 1\nseed: 2\n"},
          {"cluster.yaml": "systemPods: false\nnodes: 1\nstaticPodPath: manifests\n",
           "manifests/web.yaml": "apiVersion: v1\nkind: Pod\nmetadata: {name: web}\n"
                                 "spec: {containers: [{name: Web_1, image: nginx}]}\n"},
          {"cluster.yaml": "systemPods: false\nstaticPodPath: manifests\n"}]


def test_config_errors_are_printed_as_the_page_shows(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    expected = region("docs/config.md", "errors").text.splitlines()
    assert len(expected) == len(BROKEN)
    for index, (files, shown) in enumerate(zip(BROKEN, expected)):
        directory = tmp_path / str(index)
        for name, text in files.items():
            (directory / name).parent.mkdir(parents=True, exist_ok=True)
            (directory / name).write_text(text, encoding="utf-8")
        monkeypatch.chdir(directory)
        assert main(["serve", "--config", "cluster.yaml"]) == 2
        printed = capsys.readouterr().err.strip()
        assert re.fullmatch(re.escape(shown).replace("…", ".*"), printed), (shown, printed)
