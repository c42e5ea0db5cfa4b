"""README.md as a new user follows it: on a fresh clone of this repository's HEAD, its first
command as written (a new venv, ``pip install``, ``fakekube serve`` until its banner), its
kubectl line, then every Python and pytest snippet in order with that venv's python, and its
control API calls. The pip install reaches the package registries (pip's cache makes it
quick after the first run); nothing is skipped unless kubectl cannot be found.

Two words differ from the README, both places a reader's machine would differ: the
kubeconfig path (``/tmp/fakekube.kubeconfig`` is this run's own, so parallel runs do not
share it) and ``PORT`` (the port ``fakekube serve`` printed). One setting differs in the
environment: ``PIP_COMPILE=0``, so pip does not byte-compile what it installs (Python compiles
what is imported on first use, as it does for any package installed without bytecode).
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.e2e.conftest import find_kubectl
from tests.examples.docs_blocks import REPO_ROOT, Block, blocks, region
from tests.examples.shell import Background, BANNER, run

#: Wall-clock limit for the first command: a new venv and ``pip install`` of fakekube and its
#: dependencies, then serve. Measured at 100-115 s with a warm pip cache on a busy 2-core host,
#: most of it writing files: kubernetes-validate's schemas (17,000 files, 69 MB) and the
#: kubernetes client (3,900 files, 74 MB).
INSTALL_TIMEOUT_S = 900.0
KUBECONFIG = "/tmp/fakekube.kubeconfig"
KUBECTL_VERSION = "1.35"  # within the ±1 skew of the default release (1.36)


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    command = region("README.md", "run-the-tests").text.strip()
    assert command in (REPO_ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()


def new_user_environment(bin_dir: Path) -> dict[str, str]:
    """A shell without this test run's venv (the README makes its own), with ``kubectl`` on PATH."""
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHONPATH", "KUBECONFIG")}
    # pip's byte-compiling of what it installs (4,300 files, most of them the kubernetes
    # client's) was ~18 of the install's ~42 CPU-s; Python compiles what is imported anyway.
    env["PIP_COMPILE"] = "0"
    ours = str(Path(sys.executable).parent)
    env["PATH"] = os.pathsep.join([str(bin_dir), *(p for p in env.get("PATH", "").split(os.pathsep) if p != ours)])
    return env


def snippet_command(block: Block, index: int, workdir: Path, python: Path) -> list[str]:
    """How a reader runs a Python block: a test file under pytest, anything else as a script."""
    is_test = "def test_" in block.text
    path = workdir / (f"test_readme_{index}.py" if is_test else f"readme_{index}.py")
    path.write_text(block.text + "\n", encoding="utf-8")
    return [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider", path.name] if is_test else [str(python), path.name]


def test_readme_as_a_new_user(tmp_path: Path) -> None:
    kubectl = find_kubectl(KUBECTL_VERSION)
    if kubectl is None:
        pytest.skip(f"kubectl {KUBECTL_VERSION} not found (see tests/e2e/conftest.py find_kubectl)")
    clone = tmp_path / "fakekube"
    subprocess.run(["git", "clone", "--quiet", str(REPO_ROOT), str(clone)], check=True, timeout=120)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "kubectl").symlink_to(kubectl)
    env = new_user_environment(bin_dir)
    kubeconfig = str(tmp_path / "fakekube.kubeconfig")
    readme = blocks(clone / "README.md", root=clone)
    first, kubectl_line = readme[0].text.strip(), readme[1].text.strip()
    assert "fakekube serve" in first and kubectl_line.startswith("kubectl "), "README's first two blocks moved"

    started = time.monotonic()
    server = Background(first.replace(KUBECONFIG, kubeconfig), clone, env)
    try:
        url = server.wait_for(BANNER, INSTALL_TIMEOUT_S).split(" at ")[1].strip()
        print(f"install and serve: {time.monotonic() - started:.1f} s")
        shown = run(kubectl_line.replace(KUBECONFIG, kubeconfig), clone, env)
        assert shown.returncode == 0, shown.stderr
        assert [line.split()[0] for line in shown.stdout.splitlines()] == [
            "NAME", "fakekube-control-plane", "node-1", "node-2", "node-3"]
        python = clone / ".venv" / "bin" / "python"
        snippets = tmp_path / "snippets"
        snippets.mkdir()
        story = region("README.md", "failure-story").text.strip()
        # The failure story is an excerpt that fails on purpose (its WEB and BIG are defined in
        # tests/examples/test_howto_report.py, which runs it and checks the report line for line).
        runnable = [b for b in readme if b.lang == "python" and b.text.strip() != story]
        for index, block in enumerate(runnable):
            done = subprocess.run(snippet_command(block, index, snippets, python), cwd=snippets, env=env,
                                  text=True, capture_output=True, timeout=300)
            assert done.returncode == 0, f"{block.where}:\n{done.stdout}\n{done.stderr}"
        port = str(urlsplit(url).port)
        for block in (b for b in readme if b.lang == "sh" and "localhost:PORT" in b.text):
            for line in block.text.splitlines():
                done = run(line.replace("localhost:PORT", f"localhost:{port}"), clone, env)
                assert done.returncode == 0 and '"Failure"' not in done.stdout, (block.where, line, done.stdout)
    finally:
        server.stop()
