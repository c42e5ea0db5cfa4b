"""README.md's CI script (tests/examples/ci_auto_advance.sh) run as written against
``fakekube serve --auto-advance``: the node is still Ready after the script's pause, and
``kubectl wait`` returns once the 55 virtual seconds to Unknown have passed."""

from __future__ import annotations

import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import find_kubectl
from tests.examples.docs_blocks import region
from tests.examples.shell import environment, run, serving

KUBECTL_VERSION = "1.33"


def test_the_ci_script_sees_no_time_pass_in_its_pause_and_its_wait_returns(tmp_path: Path) -> None:
    kubectl = find_kubectl(KUBECTL_VERSION)
    if kubectl is None:
        pytest.skip(f"kubectl {KUBECTL_VERSION} not found (see tests/e2e/conftest.py find_kubectl)")
    assert shutil.which("curl"), "the README's CI script uses curl"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").symlink_to(kubectl)
    env = environment(bin_dir)
    lines = region("README.md", "ci-auto-advance").text.replace("/tmp/ci.kubeconfig", str(tmp_path / "kc"))
    serve, script = lines.split("\n", 1)
    with serving(serve.split("#")[0], tmp_path, env) as url:
        done = run(script.replace("PORT=...", f"PORT={urlsplit(url).port}"), tmp_path, env, timeout_s=90)
    assert done.returncode == 0, done.stderr
    node_row, waited = done.stdout.splitlines()[-2:]
    assert node_row.split()[:2] == ["node-1", "Ready"], done.stdout
    assert waited == "node/node-1 condition met"
