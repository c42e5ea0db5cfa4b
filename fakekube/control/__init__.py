"""The control API: ``/fakekube/v1/...`` for what Kubernetes has no verb for (DESIGN.md part 8).

:func:`attach` builds it now; ``fakekube serve`` mounts it with :func:`attach_on_first_use`,
which builds it (and imports its modules) at the first ``/fakekube/`` request: a server's first
answers do not need it (docs/performance.md "Lazy apiserver imports").
"""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING, Any, Callable, Iterable

if TYPE_CHECKING:
    from fakekube.cluster.cluster import Cluster
    from fakekube.control.app import ControlApp, attach

__all__ = ["ControlApp", "attach", "attach_on_first_use"]


def attach_on_first_use(cluster: "Cluster", snapshot_out: str | None = None) -> None:
    """Serve the control API on ``cluster`` as :func:`attach` does, built at its first request."""
    cluster.mount(_OnFirstUse(cluster, snapshot_out))


class _OnFirstUse:
    """A WSGI app that builds the control API at its first request (one, under a lock) and
    hands that and every later request to it."""

    def __init__(self, cluster: "Cluster", snapshot_out: str | None) -> None:
        self._cluster = cluster
        self._snapshot_out = snapshot_out
        self._lock = threading.Lock()
        self._app: ControlApp | None = None

    def __call__(self, environ: dict, start_response: Callable) -> Iterable[bytes]:
        return self.app()(environ, start_response)

    def app(self) -> "ControlApp":
        with self._lock:
            if self._app is None:
                from fakekube.control.app import ControlApp
                self._app = ControlApp(self._cluster, self._snapshot_out)
            return self._app


def __getattr__(name: str) -> Any:
    """``ControlApp`` and ``attach``, imported on first use (see the module docstring)."""
    if name in ("ControlApp", "attach"):
        from fakekube.control import app
        return getattr(app, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
