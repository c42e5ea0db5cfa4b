"""`kubectl create quota`, `describe quota` and the refusal kubectl prints for the pod past it."""

from __future__ import annotations

import pytest

from fakekube import Cluster

from .conftest import Kubectl, kubectl_or_skip

pytestmark = pytest.mark.fakekube(nodes=1, kubernetes_version="1.33")  # kubectl 1.33's release


@pytest.fixture
def kubectl(fakekube: Cluster, kubectl_cache_dir: str) -> Kubectl:
    return kubectl_or_skip("1.33", fakekube, kubectl_cache_dir)


def test_describe_quota_shows_used_and_hard_and_the_next_pod_is_forbidden(kubectl: Kubectl) -> None:
    assert kubectl.ok("create", "quota", "small", "--hard=pods=1,requests.cpu=1,configmaps=4") == \
        "resourcequota/small created\n"
    kubectl.ok("run", "one", "--image=nginx", "--overrides",
               '{"spec":{"containers":[{"name":"one","image":"nginx","resources":{"requests":{"cpu":"250m"}}}]}}')
    described = kubectl.ok("describe", "quota", "small")
    lines = [line.split() for line in described.splitlines()]
    assert ["Name:", "small"] in lines and ["Namespace:", "default"] in lines
    assert ["Resource", "Used", "Hard"] in lines
    assert ["configmaps", "1", "4"] in lines and ["pods", "1", "1"] in lines and ["requests.cpu", "250m", "1"] in lines
    result = kubectl("run", "two", "--image=nginx", "--overrides",
                     '{"spec":{"containers":[{"name":"two","image":"nginx","resources":{"requests":{"cpu":"250m"}}}]}}')
    assert result.rc == 1
    assert result.stderr == ('Error from server (Forbidden): pods "two" is forbidden: exceeded quota: small, '
                             'requested: pods=1, used: pods=1, limited: pods=1\n')
