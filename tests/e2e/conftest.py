"""Real kubectl binaries against fakekube: the ``kubectl`` fixture.

``kubectl`` is parametrized over the client versions we promise to work with. Each
binary is found where the machine's Google Cloud CLI package keeps them (next to its
``kubectl`` dispatcher, as ``kubectl.1.29``…) or where ``.ci/fetch-kubectl`` caches one
(``.ci/cache/kubectl-<version>/kubectl``). A version that truly cannot be found is
skipped with that reason; nothing else is skipped.

Each kubectl 1.33–1.35 talks to a cluster emulating its own minor release (the skew kubectl
supports is ±1 minor); older ones talk to the default release (1.36), outside that skew, as
long as they work (:func:`server_version`; docs/api.md "Kubernetes versions").

kubectl runs with default flags except ``--kubeconfig``; its discovery and HTTP caches
go to a directory of this session (``KUBECACHEDIR``), so a run never sees another
run's cache. Every call has a wall-clock timeout, so a hang fails the test instead of
the suite.
"""

from __future__ import annotations

import contextlib
import os
import queue
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Iterator, NamedTuple

import pytest

from fakekube import Cluster
from fakekube.objects.versions import DEFAULT_VERSION, SUPPORTED_VERSIONS

VERSIONS = ("1.29", "1.31", "1.33", "1.35")
#: Wall-clock limit of one kubectl call; they take ~50–150 ms against fakekube.
CALL_TIMEOUT_S = 30.0
#: How long a test waits for a streaming kubectl (``get -w``) to print what it expects.
STREAM_WAIT_S = 10.0
REPO_ROOT = Path(__file__).resolve().parents[2]


def server_version(kubectl_version: str) -> str:
    """The release a kubectl of ``kubectl_version`` is tested against: its own when fakekube
    emulates it, else the default."""
    return kubectl_version if kubectl_version in SUPPORTED_VERSIONS else DEFAULT_VERSION


@pytest.fixture
def fakekube_config(request: pytest.FixtureRequest) -> dict[str, object]:
    """The ``fakekube`` cluster of a test parametrized by kubectl version emulates
    :func:`server_version` of it (a test's ``fakekube`` marker still wins)."""
    callspec = getattr(request.node, "callspec", None)
    version = callspec.params.get("kubectl") if callspec is not None else None
    return {"kubernetes_version": server_version(version)} if isinstance(version, str) else {}


def find_kubectl(version: str) -> str | None:
    """The path of a kubectl binary of ``version`` (e.g. "1.33"), or None."""
    candidates: list[Path] = []
    on_path = shutil.which("kubectl")
    if on_path:
        candidates.append(Path(os.path.realpath(on_path)).parent / f"kubectl.{version}")
    candidates.append(REPO_ROOT / ".ci" / "cache" / f"kubectl-{version}" / "kubectl")
    for candidate in candidates:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


class Result(NamedTuple):
    """What one kubectl call did: exit code and both output streams."""

    rc: int
    stdout: str
    stderr: str


class Stream:
    """A long-running kubectl (``get -w``) whose output lines a test reads as they come."""

    def __init__(self, process: subprocess.Popen[str]) -> None:
        self._process = process
        self._lines: queue.Queue[str | None] = queue.Queue()
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._process.stdout is not None
        for line in self._process.stdout:
            self._lines.put(line.rstrip("\n"))
        self._lines.put(None)

    def wait_for_lines(self, count: int, timeout_s: float = STREAM_WAIT_S) -> list[str]:
        """Every line printed so far, once there are at least ``count`` (or the time is up)."""
        deadline = time.monotonic() + timeout_s
        while len(self.lines) < count:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            try:
                line = self._lines.get(timeout=remaining)
            except queue.Empty:
                break
            if line is None:
                break
            self.lines.append(line)
        return list(self.lines)

    def stop(self) -> Result:
        """End the process (if it still runs) and return what it printed."""
        if self._process.poll() is None:
            self._process.terminate()
        try:
            self._process.wait(timeout=CALL_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._reader.join(timeout=CALL_TIMEOUT_S)
        while True:
            try:
                line = self._lines.get_nowait()
            except queue.Empty:
                break
            if line is not None:
                self.lines.append(line)
        stderr = self._process.stderr.read() if self._process.stderr else ""
        return Result(self._process.returncode, "\n".join(self.lines), stderr)


class Kubectl:
    """One kubectl binary pointed at one fake cluster."""

    def __init__(self, binary: str, version: str, kubeconfig: str, cache_dir: str) -> None:
        self.binary = binary
        self.version = version
        self.kubeconfig = kubeconfig
        self._env = {**os.environ, "KUBECACHEDIR": cache_dir}
        self._env.pop("KUBECONFIG", None)

    def _argv(self, args: tuple[str, ...]) -> list[str]:
        return [self.binary, "--kubeconfig", self.kubeconfig, *args]

    def __call__(self, *args: str, stdin: str | None = None, timeout_s: float = CALL_TIMEOUT_S) -> Result:
        """Run ``kubectl <args>`` to completion: (rc, stdout, stderr)."""
        done = subprocess.run(self._argv(args), input=stdin, capture_output=True, text=True, timeout=timeout_s,
                              env=self._env, check=False)
        return Result(done.returncode, done.stdout, done.stderr)

    def ok(self, *args: str, stdin: str | None = None) -> str:
        """Run kubectl, require exit code 0, return stdout."""
        result = self(*args, stdin=stdin)
        assert result.rc == 0, f"kubectl {' '.join(args)} exited {result.rc}: {result.stderr}"
        return result.stdout

    def stream(self, *args: str) -> Stream:
        """Start ``kubectl <args>`` in the background (for ``get -w``); stop it with ``.stop()``."""
        process = subprocess.Popen(self._argv(args), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                   env=self._env, bufsize=1)
        return Stream(process)


@pytest.fixture(scope="session")
def kubectl_cache_dir(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("kubectl-cache"))


@pytest.fixture(params=VERSIONS, ids=lambda v: f"kubectl{v}")
def kubectl(request: pytest.FixtureRequest, fakekube: Cluster, kubectl_cache_dir: str) -> Kubectl:
    """kubectl of one client version, talking to this test's clean fake cluster."""
    return kubectl_or_skip(request.param, fakekube, kubectl_cache_dir)


def kubectl_or_skip(version: str, cluster: Cluster, cache_dir: str) -> Kubectl:
    """kubectl ``version`` pointed at ``cluster``; the test is skipped, with where we looked,
    when that version cannot be found."""
    binary = find_kubectl(version)
    if binary is None:
        pytest.skip(f"kubectl {version} not found: neither kubectl.{version} beside the `kubectl` on PATH "
                    f"(Google Cloud CLI package) nor .ci/cache/kubectl-{version}/kubectl (.ci/fetch-kubectl)")
    return Kubectl(binary, version, cluster.kubeconfig, cache_dir)



class Served(NamedTuple):
    """A ``fakekube serve`` subprocess for one test module: kubectl pointed at it, the URL it
    printed and its banner lines."""

    kubectl: Kubectl
    url: str
    banner: list[str]


@contextlib.contextmanager
def served(directory: Path, *serve_args: str, version: str = "1.33") -> Iterator[Served]:
    """``fakekube serve SERVE_ARGS`` until the block ends, once its four-line banner is printed
    (the server answers then); the test is skipped when kubectl ``version`` cannot be found."""
    binary = find_kubectl(version)
    if binary is None:
        pytest.skip(f"kubectl {version} not found (.ci/fetch-kubectl)")
    kubeconfig = directory / "kc"
    if "--kubernetes-version" not in serve_args:
        serve_args = (*serve_args, "--kubernetes-version", server_version(version))
    proc = subprocess.Popen([sys.executable, "-m", "fakekube", "serve", *serve_args, "--kubeconfig", str(kubeconfig)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        banner = [proc.stdout.readline() for _ in range(4)] if proc.stdout else []
        url = banner[0].split(" at ")[1].strip() if " at " in banner[0] else ""
        yield Served(Kubectl(binary, version, str(kubeconfig), str(directory / "cache")), url, banner)
    finally:
        proc.terminate()
        proc.communicate(timeout=10)
