"""Run a docs shell block's lines as a reader would type them, in bash.

``fakekube serve`` runs until Ctrl-C, so a block that starts it is run in the background
until its banner names the URL, and stopped (its whole process group) afterwards."""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

#: Wall-clock limit for ``fakekube serve`` to print its banner (it takes well under a second).
BANNER_TIMEOUT_S = 30.0
#: The banner line that names the URL: "fakekube: serving Kubernetes v1.36.0 at http://...".
BANNER = "fakekube: serving "


def environment(extra_path: Path | None = None) -> dict[str, str]:
    """This process's environment with this Python's ``bin`` (where ``fakekube`` and ``pip``
    are installed) first on PATH, as in a shell where the venv is active."""
    env = dict(os.environ)
    path = [str(Path(sys.executable).parent)] + ([str(extra_path)] if extra_path else [])
    env["PATH"] = os.pathsep.join([*path, env.get("PATH", "")])
    return env


class Background:
    """A bash command line running in its own process group, with its output read as it comes."""

    def __init__(self, command: str, cwd: Path, env: dict[str, str]) -> None:
        self.process = subprocess.Popen(["bash", "-c", command], cwd=cwd, env=env, text=True,
                                        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
        self.lines: list[str] = []
        self._queue: queue.Queue[str | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self._queue.put(line.rstrip("\n"))
        self._queue.put(None)

    def wait_for(self, prefix: str, timeout_s: float) -> str:
        """The first output line starting with ``prefix``; fails with all output so far when the
        command ends or the time is up first."""
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                line = self._queue.get(timeout=max(0.0, deadline - time.monotonic()))
            except queue.Empty:
                line = None
            if line is None:
                raise AssertionError(f"no line starting {prefix!r} within {timeout_s:.0f} s; output:\n"
                                     + "\n".join(self.lines))
            self.lines.append(line)
            if line.startswith(prefix):
                return line

    def stop(self) -> int:
        """SIGTERM to the command's process group (``fakekube serve`` stops cleanly on it)."""
        if self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
        try:
            return self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            return self.process.wait(timeout=15)


@contextmanager
def serving(command: str, cwd: Path, env: dict[str, str], timeout_s: float = BANNER_TIMEOUT_S) -> Iterator[str]:
    """Run ``command`` (a line that ends in ``fakekube serve ...``) until the server is up;
    yields its URL, and stops it on leaving."""
    background = Background(command, cwd, env)
    try:
        yield background.wait_for(BANNER, timeout_s).split(" at ")[1].strip()
    finally:
        background.stop()


def run(command: str, cwd: Path, env: dict[str, str], timeout_s: float = 60.0) -> subprocess.CompletedProcess[str]:
    """Run ``command`` in bash with ``set -e -o pipefail``: the first failing line fails it."""
    return subprocess.run(["bash", "-e", "-o", "pipefail", "-c", command], cwd=cwd, env=env, text=True,
                          capture_output=True, timeout=timeout_s)
