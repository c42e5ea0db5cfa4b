"""docs/start-ci.md's script (tests/examples/start_ci.sh) run as written against
``fakekube serve --auto-advance``, with kubectl and helm v4: the rollout and the chart are
waited for, no cluster time passes during the pause, and the node's wait returns."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.clients.conftest import find_helm
from tests.e2e.conftest import find_kubectl
from tests.examples.docs_blocks import REPO_ROOT, region
from tests.examples.shell import environment, run, serving

KUBECTL_VERSION = "1.33"


def test_the_ci_script_rolls_out_installs_and_sees_the_node_fail(tmp_path: Path) -> None:
    kubectl, helm = find_kubectl(KUBECTL_VERSION), find_helm()
    if kubectl is None or helm is None:
        pytest.skip(f"kubectl {KUBECTL_VERSION} or helm v4 not found (tests/e2e/conftest.py find_kubectl, "
                    "tests/clients/conftest.py find_helm; .ci/fetch-kubectl fetches them)")
    assert shutil.which("curl"), "the script uses curl"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").symlink_to(kubectl)
    (bin_dir / "helm").symlink_to(helm)
    env = {**environment(bin_dir), "HELM_CACHE_HOME": str(tmp_path / "helm" / "cache"),
           "HELM_CONFIG_HOME": str(tmp_path / "helm" / "config"), "HELM_DATA_HOME": str(tmp_path / "helm" / "data")}
    lines = region("docs/start-ci.md", "script").text.replace("/tmp/fakekube-ci.kubeconfig", str(tmp_path / "kc"))
    serve, script = lines.split("\n", 1)
    with serving(serve.split("#")[0], tmp_path, env) as url:
        done = run(script.replace("PORT=...", f"PORT={urlsplit(url).port}"), REPO_ROOT, env, timeout_s=180)
    assert done.returncode == 0, done.stderr + done.stdout
    out = done.stdout.splitlines()
    assert 'deployment "web" successfully rolled out' in out, done.stdout
    assert any(line.startswith("STATUS: deployed") for line in out), done.stdout
    assert out[-3].split()[:2] == ["node-1", "Ready"], done.stdout
    assert out[-2] == "node/node-1 condition met", done.stdout
    assert "now" in json.loads(out[-1]), out[-1]
