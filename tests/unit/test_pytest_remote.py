"""The real-target face's pure parts (pytest_fakekube/remote.py): the target option, the test
namespace's name and kubeconfig, which settings a real cluster meets, and the wait for a new
namespace's ServiceAccount. The face against a server: tests/examples/test_howto_real_cluster.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

from fakekube.api.machinery.errors import ApiError
from pytest_fakekube import remote
from pytest_fakekube.remote import TargetError, kubeconfig_for_test, namespace_stem, parse_target, unmet_setting

KUBECONFIG = {"apiVersion": "v1", "kind": "Config", "current-context": "kind",
              "clusters": [{"name": "kind", "cluster": {"server": "https://127.0.0.1:6443",
                                                        "certificate-authority": "ca.crt"}}],
              "users": [{"name": "kind", "user": {"client-certificate": "certs/me.crt", "client-key": "/abs/me.key"}}],
              "contexts": [{"name": "kind", "context": {"cluster": "kind", "user": "kind"}},
                           {"name": "other", "context": {"cluster": "kind", "user": "kind", "namespace": "x"}}]}


def test_the_target_is_fake_or_a_readable_kubeconfig(tmp_path: Path) -> None:
    assert parse_target("fake") is None
    config = tmp_path / "kc"
    config.write_text(yaml.safe_dump(KUBECONFIG), encoding="utf-8")
    assert parse_target(f"kubeconfig:{config}") == config.resolve()
    for value, message in (("foo", "must be 'fake' or 'kubeconfig:PATH'"), ("kubeconfig:", "must be 'fake'"),
                           (f"kubeconfig:{tmp_path}/none", "no such kubeconfig file")):
        with pytest.raises(TargetError, match=message):
            parse_target(value)
    config.write_text("kind: Config\n", encoding="utf-8")
    with pytest.raises(TargetError, match="names no current-context"):
        parse_target(f"kubeconfig:{config}")


def test_a_namespace_stem_is_a_dns_label_prefix() -> None:
    assert namespace_stem("test_web[kubectl1.33-x]") == "fakekube-test-web-kubectl1-33-x-"
    assert len(namespace_stem("test_" + "a" * 100)) == len("fakekube-") + remote.NAMESPACE_TEST_CHARS + 1
    assert namespace_stem("___") == "fakekube-"


def test_the_tests_kubeconfig_defaults_to_its_namespace_with_paths_made_absolute(tmp_path: Path) -> None:
    original = tmp_path / "kind" / "kc"
    original.parent.mkdir()
    original.write_text(yaml.safe_dump(KUBECONFIG), encoding="utf-8")
    made = yaml.safe_load(kubeconfig_for_test(original, "fakekube-t-abcde", tmp_path).read_text(encoding="utf-8"))
    assert made["contexts"][0]["context"] == {"cluster": "kind", "user": "kind", "namespace": "fakekube-t-abcde"}
    assert made["contexts"][1]["context"]["namespace"] == "x"                      # not the current one
    assert made["clusters"][0]["cluster"]["certificate-authority"] == str(original.parent / "ca.crt")
    assert made["users"][0]["user"] == {"client-certificate": str(original.parent / "certs/me.crt"),
                                        "client-key": "/abs/me.key"}


class Answers:
    """A stand-in for remote.Connection: fixed nodes and version, scripted GETs."""

    def __init__(self, schedulable: int = 2, version: str = "1.34", misses: int = 0) -> None:
        self._schedulable = schedulable
        self.version = version
        self.misses = misses
        self.gets = 0

    def schedulable_nodes(self) -> list[str]:
        return [f"node-{n}" for n in range(self._schedulable)]

    def request(self, method: str, path: str, *rest: Any) -> Any:
        self.gets += 1
        if self.gets <= self.misses:
            raise ApiError(404, "NotFound", 'serviceaccounts "default" not found')
        return {}


def test_a_real_cluster_meets_a_node_count_and_a_release_and_nothing_else() -> None:
    cluster: Any = Answers(schedulable=2, version="1.34")
    marker = "@pytest.mark.fakekube"
    assert unmet_setting(cluster, {"nodes": (2, marker), "kubernetes_version": ("v1.34", marker),
                                   "seed": (7, "--fakekube-seed"), "immutability_guard": (False, marker)}) is None
    assert unmet_setting(cluster, {"nodes": (3, marker)}) == (
        "needs 3 schedulable node(s) (nodes=3, @pytest.mark.fakekube); the real cluster has 2 (Ready, not cordoned, "
        "no NoSchedule/NoExecute taint)")
    assert unmet_setting(cluster, {"kubernetes_version": ("1.36", "--fakekube-kubernetes-version")}) == (
        "needs Kubernetes 1.36 (kubernetes_version='1.36', --fakekube-kubernetes-version); the real cluster serves 1.34")
    assert unmet_setting(cluster, {"time_scale": (60, "the fakekube_config fixture")}) == (
        "needs fakekube's configuration: time_scale=60 (the fakekube_config fixture) has no equivalent on a real "
        "cluster, which is configured by whoever made it")


def test_a_new_namespace_waits_for_its_service_account_then_gives_up(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(remote, "POLL_INTERVAL_S", 0.0)
    late: Any = Answers(misses=3)
    remote._await_service_account(late, "ns")
    assert late.gets == 4                                           # three 404s, then there
    monkeypatch.setattr(remote, "SERVICE_ACCOUNT_WAIT_S", 0.0)
    never: Any = Answers(misses=10**6)
    remote._await_service_account(never, "ns")                      # a bare apiserver: on, after the wait
    assert never.gets == 1
