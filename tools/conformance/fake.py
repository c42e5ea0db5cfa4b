"""fakekube configured as the reference apiserver was, for the replay (tests/conformance) and
:mod:`.triage`.

The reference is a bare kube-apiserver: no kube-controller-manager (so no ``default``
ServiceAccount, no namespace deletion, no garbage collection), no scheduler (pods stay
unscheduled), no kubelet, static tokens for ``admin`` (``system:masters``) and ``alice``
(``devs``). The fake runs only the apiserver's own controllers (CRD naming and
establishing, Event TTL: ``APISERVER_CONTROLLERS`` in fakekube/cluster/wiring.py), no
nodes, no system pods, no metrics-server, plain HTTP.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from fakekube import Cluster
from fakekube.api.auth.identity import UserInfo
from tools.conformance import golden, runner
from tools.conformance.client import Server
from tools.conformance.scenario import Scenario
from tools.conformance.webhook import WebhookServer

Obj = dict[str, Any]

#: The reference's ``--token-auth-file`` lines (token,user,uid,"groups").
TOKENS = {"admintoken": UserInfo("admin", ("system:masters",), "admin-uid"),
          "alicetoken": UserInfo("alice", ("devs",), "alice-uid")}
USER_TOKENS = {"admin": "admintoken", "alice": "alicetoken"}
#: The run token of every replay (the recorder's is random; both are masked as ``${tok}``).
TOKEN = "zfake"
#: fakekube answers at once: a poll that does not hold now will not hold later either, and a
#: watch's events from history arrive at once (the steps ending with timeoutSeconds=1 need 1 s).
POLL_TIMEOUT_S = 1.0
WATCH_WAIT_S = 1.5


class Fakes:
    """One started cluster per (version, authorization mode), reset before each scenario."""

    def __init__(self) -> None:
        self._clusters: dict[tuple[str, str], Cluster] = {}
        self._webhook: WebhookServer | None = None

    def cluster(self, version: str, mode: str) -> Cluster:
        """A clean cluster (ValueError: fakekube cannot serve that version)."""
        key = (version, mode)
        if key not in self._clusters:
            self._clusters[key] = Cluster(
                kubernetes_version=version, controllers=(), scheduler=None, nodes=0, system_pods=False,
                metrics_server=False, authorization_mode=mode, tls=False, static_tokens=TOKENS).start()
        cluster = self._clusters[key]
        cluster.reset()
        return cluster

    @property
    def webhook(self) -> WebhookServer:
        if self._webhook is None:
            self._webhook = WebhookServer()
        return self._webhook

    def replay(self, scenario: Scenario, version: str) -> runner.Result:
        cluster = self.cluster(version, scenario.mode)
        return runner.run(scenario, Server(cluster.url, dict(USER_TOKENS), watch_wait_s=WATCH_WAIT_S), TOKEN,
                          self.webhook if scenario.webhook else None, cleanup=False, poll_timeout_s=POLL_TIMEOUT_S)

    def close(self) -> None:
        for cluster in self._clusters.values():
            cluster.stop()
        self._clusters.clear()
        if self._webhook is not None:
            self._webhook.close()
            self._webhook = None


def served_version(cluster: Cluster) -> str:
    info = Server(cluster.url, dict(USER_TOKENS)).send("GET", "/version", {}, None).json() or {}
    return f"{info.get('emulationMajor')}.{info.get('emulationMinor')}"


def recorded(directory: Path) -> list[Obj]:
    return golden.read(directory)["exchanges"]
