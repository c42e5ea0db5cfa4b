"""What a cold start loads: heavy libraries wait for the feature that needs them.

Each case runs in a fresh interpreter and lists the modules it ended up with, so the
result does not depend on what this test process already imported. Timings live in
benchmarks/coldstart.py; this only guards which modules load (docs/performance.md,
"Cold start").
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from fakekube.store.frozen import GUARD_ENV

#: Libraries no cold start needs, with the feature that loads each.
HEAVY = {
    "cel": "CEL rules (CRD x-kubernetes-validations, ValidatingAdmissionPolicy)",
    "prompt_toolkit": "the cel package's command line, loaded with cel",
    "faker": "only Cluster.populate and serve --demo (node identities come from the seeded stream)",
    "cryptography": "TLS and RBAC's cluster CA",
    "kubernetes_validate": "schema tables, read as data",
    "jsonpatch": "JSON patches",
    "jsonpointer": "JSON patches",
    "kubernetes": "the official client (Cluster.client())",
    "freezegun": "frozen wall clock helpers",
    "prometheus_client": "a GET /metrics scrape",
}

#: Loaded only by a YAML body, a YAML answer, a config file or the guard.
YAML = "yaml"


def modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter holds after running ``code`` (as a user runs it:
    the test suite's immutability guard off)."""
    env = {key: value for key, value in os.environ.items() if key != GUARD_ENV}
    script = code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def loaded_after(code: str) -> set[str]:
    """The top-level packages among :func:`modules_after`."""
    return {name.split(".")[0] for name in modules_after(code)}


def test_import_fakekube_loads_no_cluster() -> None:
    modules = modules_after("import fakekube")
    assert "fakekube.cluster" not in modules
    assert "werkzeug" not in modules


def test_the_pytest_plugin_loads_no_cluster_until_a_fixture_asks() -> None:
    """pytest imports the plugin in every session of an environment with fakekube installed."""
    modules = modules_after("import pytest_fakekube.plugin")
    assert "fakekube.cluster" not in modules


@pytest.mark.parametrize("code", [
    "import fakekube",
    "from fakekube import Cluster",
    "import fakekube.cli.main",
    "from fakekube import Cluster\nCluster(nodes=2)",
    "import fakekube.cluster.demo",
])
def test_cold_paths_load_no_heavy_library(code: str) -> None:
    loaded = loaded_after(code)
    assert sorted(loaded & (set(HEAVY) | {YAML})) == []


#: What only a served cluster needs: werkzeug (and the standard library's HTTP client and
#: server, email and ssl that it imports), fakekube's REST layer, the webhook transport and
#: the TLS PKI; ``logging`` (with traceback, linecache and tokenize) loads with a
#: controller's first failure. ``dataclasses`` (with inspect and ast) is gone from the
#: import path: each ``@dataclass`` compiled generated source, and the module itself cost
#: as much as 10 of them.
SERVING_ONLY = ("werkzeug", "http.client", "http.server", "email", "ssl", "fakekube.api.http",
                "fakekube.api.admission.webhook_https", "fakekube.cluster.pki", "tempfile", "logging",
                "concurrent", "csv")


def test_an_in_process_cluster_loads_no_http_layer_nor_dataclasses() -> None:
    modules = modules_after("from fakekube import Cluster\ncluster = Cluster(nodes=2)\n"
                            "cluster.create({'apiVersion': 'v1', 'kind': 'ConfigMap', 'metadata': {'name': 'x'}})")
    assert sorted(m for m in modules if m.startswith(SERVING_ONLY)) == []
    assert "dataclasses" not in modules


def first_answer(path: str) -> str:
    """Code that starts a cluster with system pods and GETs ``path`` from it (a 200)."""
    return f"""
import http.client
from urllib.parse import urlparse
from fakekube import Cluster
cluster = Cluster(nodes=1, system_pods=True).start()
conn = http.client.HTTPConnection("127.0.0.1", urlparse(cluster.url).port, timeout=30)
conn.request("GET", {path!r})
assert conn.getresponse().status == 200
cluster.stop()
"""


def test_a_started_cluster_answering_loads_no_heavy_library_nor_yaml() -> None:
    """The kubeconfig is written without PyYAML (``kubeconfig_yaml``)."""
    loaded = loaded_after(first_answer("/version"))
    assert sorted(loaded & (set(HEAVY) | {YAML})) == []


def test_the_features_still_load_what_they_need() -> None:
    """The other side of laziness: CEL, JSON patches and YAML bodies work and load their library."""
    code = """
from fakekube import Cluster
cluster = Cluster()
cluster.create({"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                "metadata": {"name": "replicas"},
                "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                         "operations": ["CREATE"], "resources": ["deployments"]}]},
                         "validations": [{"expression": "object.spec.replicas <= 5"}]}})
from fakekube.api.wire import decoding
from fakekube.api.wire.patch.json_merge import apply_json_patch
assert decoding.parse_yaml(b"a: 1") == {"a": 1}
assert apply_json_patch({"a": 1}, [{"op": "replace", "path": "/a", "value": 2}]) == {"a": 2}
"""
    loaded = loaded_after(code)
    assert {"cel", "jsonpatch", YAML} <= loaded


def test_a_demo_loads_faker() -> None:
    assert "faker" in loaded_after("from fakekube.cluster import demo\ndemo.manifests(1, apps=1)")


#: fakekube's own subsystems a cluster without CRDs, policies or matchConditions never uses.
DEFERRED = (
    "fakekube.api.wire.cel",  # CRD rules, ValidatingAdmissionPolicy, webhook matchConditions
    "fakekube.api.wire.structural",  # CRD schemas
    "fakekube.api.types.custom",  # the types a CRD serves
    "fakekube.api.wire.protobuf",  # /openapi/v2 in protobuf (kubectl 1.27 and 1.28)
    "fakekube.api.http.execstream",  # kubectl exec's streams
    "fakekube.api.http.websocket",
)


def test_cold_cluster_loads_no_crd_or_cel_machinery() -> None:
    modules = modules_after("from fakekube import Cluster\nCluster(nodes=1, system_pods=True)")
    assert sorted(m for m in modules if m.startswith(DEFERRED)) == []


def test_a_first_answer_loads_no_exec_streams_or_protobuf() -> None:
    modules = modules_after(first_answer("/api/v1/pods"))
    assert sorted(m for m in modules if m.startswith(DEFERRED)) == []


def test_a_crd_loads_its_machinery() -> None:
    code = """
from fakekube import Cluster
cluster = Cluster()
cluster.create({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                "metadata": {"name": "widgets.example.com"},
                "spec": {"group": "example.com", "scope": "Namespaced",
                         "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                         "versions": [{"name": "v1", "served": True, "storage": True,
                                       "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-validations":
                                                  [{"rule": "has(self.spec)"}],
                                                  "properties": {"spec": {"type": "object"}}}}}]}})
"""
    modules = modules_after(code)
    assert {"fakekube.api.wire.cel", "fakekube.api.wire.structural", "fakekube.api.types.custom"} <= modules


def test_a_phased_load_s_first_half_loads_no_scheduler_or_pod_runner(tmp_path: Path) -> None:
    """``serve``'s boot cache loads the apiserver's side first: the scheduler's plugins and the
    kubelet's pod runner (its shell, coreutils, filesystems) wait for the engine's side."""
    from fakekube import Cluster
    path = tmp_path / "boot.json"
    Cluster(nodes=1).save(path)
    first_half = modules_after(f"from fakekube.cluster import Cluster\nCluster.load({str(path)!r}, phased=True)")
    assert {"fakekube.scheduler.scheduler", "fakekube.kubelet.agents", "fakekube.kubelet.pods",
            "fakekube.kubelet.coreutils"} & first_half == set()
    whole = modules_after(f"from fakekube.cluster import Cluster\nCluster.load({str(path)!r}, phased=True).engine")
    assert {"fakekube.scheduler.scheduler", "fakekube.kubelet.agents", "fakekube.kubelet.pods"} <= whole


#: What a build, a report or a copy needs and ``serve``'s first answer does not.
NOT_BEFORE_THE_FIRST_ANSWER = {
    "fakekube.scheduler.scheduler",  # every scheduler plugin (a config file's scheduler section is checked with them)
    "fakekube.cluster.bootstrap",  # the initial content's builder, and the kubelet's heartbeats it uses
    "fakekube.kubelet.heartbeat",
    "fakekube.cluster.rbacpolicy",
    "fakekube.cluster.statecopy",  # snapshot copies, with pickle
    "pickle",
    "fakekube.cluster.report",
    "fakekube.cluster.timeline",
    "fakekube.cluster.demo",
    "fakekube.cluster.configfile",
    "fakekube.controllers.endpointslice.controller",  # store index functions, in place once the engine's side is
    "fakekube.controllers.apiextensions.establishing",
    "fakekube.control.app",  # the control API: built at its first request
}


def test_serve_s_first_half_with_the_control_api_loads_no_builder_scheduler_or_copier(tmp_path: Path) -> None:
    """A kind-like boot loaded as ``serve``'s boot cache loads it, the control API mounted as
    ``serve`` mounts it: what only a build, a report, a copy, a config file or the control
    API needs loads at its first use (docs/performance.md "Lazy apiserver imports")."""
    from fakekube import Cluster
    path = tmp_path / "boot.json"
    Cluster(nodes=1, system_pods=True).save(path)
    first_half = modules_after(f"from fakekube.cluster import Cluster\n"
                               f"from fakekube.control import attach_on_first_use\n"
                               f"attach_on_first_use(Cluster.load({str(path)!r}, phased=True))")
    assert sorted(NOT_BEFORE_THE_FIRST_ANSWER & first_half) == []
