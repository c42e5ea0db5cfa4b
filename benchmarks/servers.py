"""The servers under test: a prepared fakekube cluster, the bare werkzeug "hello" ceiling
and the same-bytes references (``reference.py``: fakekube's own answers, recorded, sent
back with no work), served side by side — in this process or in a child process.

A child process has its own GIL, so the load generator does not compete with the
servers for it (``kubectl`` and client-go are separate processes too). Run as a script
(``python servers.py --pods N``) this module is that child: it prints the URLs as one
JSON line and serves until its stdin closes.
"""

from __future__ import annotations

import argparse
import json
import os
import select
import subprocess
import sys

import measure
import reference
import workload
from fakekube import Cluster
from fakekube.engine import freeze_startup_heap
from fakekube.api.http import BackgroundServer

HOST = "127.0.0.1"
#: By default the child process must print its URLs within this long (it creates the pods
#: first); a bound against a hung child, generous because a loaded host is slow, not broken.
SERVE_STARTUP_TIMEOUT_S = 300.0


class Servers:
    """A prepared fakekube cluster, the bare werkzeug ceiling and the same-bytes references,
    all on fakekube's transport (BackgroundServer), served side by side."""

    def __init__(self, pods: int) -> None:
        self.cluster = Cluster(nodes=3)
        workload.prepare(self.cluster, pods)
        self.hello = BackgroundServer(workload.hello_app, HOST, 0)
        self.same_bytes: BackgroundServer | None = None
        self.same_bytes_werkzeug: BackgroundServer | None = None

    def start(self) -> dict[str, str]:
        self.cluster.start()
        self.hello.start()
        bare = reference.SameBytesApp(reference.record(self.cluster.url))  # fakekube's answers, as sent
        self.same_bytes = BackgroundServer(bare, HOST, 0)
        self.same_bytes_werkzeug = BackgroundServer(reference.WerkzeugSameBytesApp(bare), HOST, 0)
        self.same_bytes.start()
        self.same_bytes_werkzeug.start()
        return {"fakekube": self.cluster.url, "hello": self.hello.url, "same-bytes": self.same_bytes.url,
                "same-bytes-werkzeug": self.same_bytes_werkzeug.url}

    def stop(self) -> None:
        for server in (self.same_bytes_werkzeug, self.same_bytes):
            if server is not None:
                server.stop()
        self.hello.stop()
        self.cluster.stop()


def serve_forever(pods: int) -> None:
    """Child-process mode: print the URLs as one JSON line, serve until stdin closes."""
    servers = Servers(pods)
    urls = servers.start()
    freeze_startup_heap()  # as ``fakekube serve`` does once its cluster is up
    print(json.dumps(urls), flush=True)
    sys.stdin.read()
    servers.stop()


class ServerProcess:
    """:func:`serve_forever` in a child interpreter (this module run as a script)."""

    def __init__(self, pods: int, startup_timeout_s: float = SERVE_STARTUP_TIMEOUT_S) -> None:
        self._process = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--pods", str(pods)],
                                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        assert self._process.stdout is not None
        ready, _, _ = select.select([self._process.stdout], [], [], startup_timeout_s)
        line = self._process.stdout.readline() if ready else ""
        if not line:
            self.stop()
            raise RuntimeError(f"the server process did not start within {startup_timeout_s:g} s")
        self.urls: dict[str, str] = json.loads(line)

    def cpu_s(self) -> float:
        """User + system CPU seconds the server process has used so far (Linux /proc)."""
        return measure.process_cpu_s(self._process.pid)

    def stop(self) -> None:
        if self._process.stdin is not None:
            self._process.stdin.close()
        try:
            self._process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait(timeout=5)


def main() -> None:
    parser = argparse.ArgumentParser(description="serve the benchmark's servers until stdin closes")
    parser.add_argument("--pods", type=int, default=1000)
    serve_forever(parser.parse_args().pods)


if __name__ == "__main__":
    main()
