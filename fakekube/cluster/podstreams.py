"""The simulated kubelets' side of the apiserver's streams to pods: the pod ``proxy``,
``pods/portforward`` and ``pods/attach`` (fakekube/api/verbs/connect.py's ``PodStreams``).

Every question is answered on the engine thread (``engine.run``), so a session's thread
never reads a pod's state while it moves; the answers themselves are the kubelet's
(kubelet/pods.py: ``http``, ``listens``, ``attach``). Long sessions (port-forward, attach)
are bounded: at most :data:`MAX_SESSIONS` open at once per cluster (one more is refused
with a 429), each on its own connection thread.
"""

from __future__ import annotations

import threading
from datetime import datetime
from typing import TYPE_CHECKING, Any

from fakekube.api.verbs.connect import ProxiedAnswer, ProxiedRequest
from fakekube.kubelet.httpmodel import HttpRequest, http_date
from fakekube.kubelet.logstream import ContainerFollow
from fakekube.kubelet.network import forward_error
from fakekube.objects.kinds import Resource

if TYPE_CHECKING:
    from fakekube.clock import VirtualClock
    from fakekube.engine import Engine
    from fakekube.kubelet.agents import Kubelets
    from fakekube.store import Store

#: Port-forward and attach sessions open at once per cluster.
MAX_SESSIONS = 256


class KubeletStreams:
    """``api.pod_streams`` and ``api.pod_http`` for a cluster's simulated kubelets."""

    def __init__(self, engine: "Engine", kubelets: "Kubelets", clock: "VirtualClock", store: "Store",
                 max_sessions: int = MAX_SESSIONS) -> None:
        self._engine, self._kubelets, self._clock, self._store = engine, kubelets, clock, store
        self.max_sessions = max_sessions
        self._open = 0
        self._lock = threading.Lock()

    def runs(self, namespace: str, pod: str) -> bool:
        return self._engine.run(lambda: self._kubelets.pods.pod_uid(namespace, pod)) is not None

    def listens(self, namespace: str, pod: str, port: int) -> bool:
        return bool(self._engine.run(lambda: self._kubelets.pods.listens(namespace, pod, port)))

    def forward_error(self, namespace: str, pod: str, port: int) -> str:
        uid = self._engine.run(lambda: self._kubelets.pods.pod_uid(namespace, pod)) or ""
        return forward_error(uid, port)

    def answer(self, namespace: str, pod: str, port: int, request: ProxiedRequest) -> ProxiedAnswer | None:
        """The pod's answer (None: nothing listens, or no kubelet runs the pod)."""
        wanted = HttpRequest(request.method, request.target, tuple(request.headers), request.body)
        try:
            answer = self._engine.run(lambda: self._kubelets.pods.http(namespace, pod, port, wanted))
        except LookupError:
            return None
        if answer is None:
            return None
        headers = tuple(answer.headers)
        if not any(name.lower() == "date" for name, _ in headers):
            headers += (("Date", http_date(self._clock.now())),)
        return ProxiedAnswer(answer.status, headers, b"" if request.method == "HEAD" else answer.body)

    def attach(self, namespace: str, pod: str, container: str) -> ContainerFollow:
        def start() -> ContainerFollow:
            try:
                return self._kubelets.pods.attach(namespace, pod, container, self._clock.now())
            except ValueError:
                raise LookupError(f'container not found ("{container}")') from None
        follow: ContainerFollow = self._engine.run(start)
        return follow

    def begin_session(self) -> bool:
        with self._lock:
            if self._open >= self.max_sessions:
                return False
            self._open += 1
            return True

    def end_session(self) -> None:
        with self._lock:
            self._open -= 1

    def stopped(self) -> bool:
        return bool(self._store.closed)

    def now(self) -> datetime:
        return self._clock.now()

    @property
    def open_sessions(self) -> int:
        return self._open


class StoreReads:
    """The kubelet's reads of Services and Endpoints for in-cluster requests (``PodRunner.reads``)."""

    def __init__(self, store: "Store") -> None:
        self._store = store

    def get(self, resource: Resource, namespace: str, name: str) -> dict[str, Any] | None:
        return self._store.get((resource.group, resource.plural), (namespace, name))

    def list(self, resource: Resource) -> list[dict[str, Any]]:
        return self._store.list((resource.group, resource.plural))[0]
