"""Snapshots as files (cluster/snapfile.py): ``Cluster.save`` / ``Cluster.load``.

A loaded cluster continues exactly as the saved one would; a file from another fakekube or
Kubernetes version, a truncated or garbled one, and a hostile one (naming a class or a
function outside the allow-list) are refused with a SnapshotFileError saying why — and a
hostile file never gets to import or run anything.
"""

from __future__ import annotations

import json
import sys
import zlib
from pathlib import Path
from typing import Any, Callable

import pytest

from fakekube import Cluster
from fakekube.cluster import SnapshotFileError
from fakekube.api.machinery.errors import ApiError
from fakekube.cluster.snapfile import FORMAT_VERSION, MAGIC, document_bytes, whole_document
from tests.integration.test_snapshots import dump, story, workload


@pytest.fixture(scope="module")
def saved(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """A cluster saved after the workload, and the dump of the original after the story."""
    path = tmp_path_factory.mktemp("snapfile") / "cluster.snap"
    original = Cluster(nodes=3, seed=7)
    workload(original)
    original.save(path)
    (path.parent / "now").write_text(original.now.isoformat())
    story(original)
    return path, dump(original)


def rewrite(source: Path, target: Path, change: Callable[[dict[str, Any]], None]) -> Path:
    """``source`` with its document changed by ``change``, written to ``target``."""
    document = whole_document(source)
    change(document)
    target.write_bytes(document_bytes(document))
    return target


def first_node(document: dict[str, Any], tag: str) -> list[Any]:
    return next(node for node in document["nodes"] if node[0] == tag)


def test_a_loaded_cluster_continues_byte_for_byte_as_the_saved_one(saved: tuple[Path, str]) -> None:
    path, expected = saved
    loaded = Cluster.load(path)
    assert loaded.now.isoformat() == (path.parent / "now").read_text()
    story(loaded)
    assert dump(loaded) == expected


def test_a_file_loads_any_number_of_times_and_serves(saved: tuple[Path, str]) -> None:
    path, _ = saved
    first, second = Cluster.load(path), Cluster.load(path)
    assert dump(first) == dump(second)
    assert len(first.list("v1", "Pod")) == 5
    with first:
        import requests
        answer = requests.get(f"{first.url}/api/v1/namespaces/default/pods", timeout=10)
        assert answer.status_code == 200 and len(answer.json()["items"]) == 5


def test_a_file_of_another_fakekube_version_is_refused(saved: tuple[Path, str], tmp_path: Path) -> None:
    foreign = rewrite(saved[0], tmp_path / "old.snap", lambda doc: doc["header"].update(fakekube="0.0.9"))
    with pytest.raises(SnapshotFileError, match=r"saved by fakekube '0.0.9'; this is fakekube"):
        Cluster.load(foreign)


def test_a_file_of_another_kubernetes_version_is_refused(saved: tuple[Path, str]) -> None:
    with pytest.raises(SnapshotFileError, match=r"holds a Kubernetes '1.36' cluster; this cluster is Kubernetes 1.33"):
        Cluster.load(saved[0], kubernetes_version="1.33")


def test_a_file_of_an_unknown_format_version_is_refused(saved: tuple[Path, str], tmp_path: Path) -> None:
    future = rewrite(saved[0], tmp_path / "future.snap", lambda doc: doc["header"].update(format=FORMAT_VERSION + 1))
    with pytest.raises(SnapshotFileError, match=f"snapshot file format {FORMAT_VERSION + 1}; this fakekube reads "
                                                f"format {FORMAT_VERSION}"):
        Cluster.load(future)


def test_a_truncated_file_is_refused(saved: tuple[Path, str], tmp_path: Path) -> None:
    data = saved[0].read_bytes()
    truncated = tmp_path / "truncated.snap"
    truncated.write_bytes(data[:len(data) // 2])
    with pytest.raises(SnapshotFileError, match="truncated"):
        Cluster.load(truncated)


@pytest.mark.parametrize("content", [b"", b"apiVersion: v1\n", MAGIC + b"\x00garbage", MAGIC + zlib.compress(b"[1, 2")])
def test_garbled_files_are_refused(tmp_path: Path, content: bytes) -> None:
    garbled = tmp_path / "garbled.snap"
    garbled.write_bytes(content)
    with pytest.raises(SnapshotFileError):
        Cluster.load(garbled)


def test_a_missing_file_is_refused_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(SnapshotFileError, match="missing.snap: cannot read it"):
        Cluster.load(tmp_path / "missing.snap")


HOSTILE_MODULE = "fakekube_snapfile_hostile_probe"


@pytest.fixture
def hostile_module(tmp_path: Path) -> Path:
    """A module whose import leaves a mark: a file naming it must never import it."""
    mark = tmp_path / "imported"
    (tmp_path / f"{HOSTILE_MODULE}.py").write_text(
        f"import pathlib\npathlib.Path({str(mark)!r}).write_text('ran')\n"
        "class Boom:\n    pass\ndef boom(*args, **kwargs):\n    pass\n")
    sys.path.insert(0, str(tmp_path))
    yield mark
    sys.path.remove(str(tmp_path))
    sys.modules.pop(HOSTILE_MODULE, None)


def test_a_class_outside_the_allow_list_is_refused_before_anything_is_imported(
        saved: tuple[Path, str], tmp_path: Path, hostile_module: Path) -> None:
    hostile = rewrite(saved[0], tmp_path / "class.snap",
                      lambda doc: first_node(doc, "o").__setitem__(1, f"{HOSTILE_MODULE}:Boom"))
    with pytest.raises(SnapshotFileError, match=f"names class '{HOSTILE_MODULE}:Boom', which is not in the "
                                                "snapshot file's allow-list"):
        Cluster.load(hostile)
    assert not hostile_module.exists() and HOSTILE_MODULE not in sys.modules


@pytest.mark.parametrize("name", [f"{HOSTILE_MODULE}:boom", "os:system", "builtins:eval"])
def test_a_function_outside_the_allow_list_is_refused(saved: tuple[Path, str], tmp_path: Path,
                                                      hostile_module: Path, name: str) -> None:
    hostile = rewrite(saved[0], tmp_path / "function.snap", lambda doc: first_node(doc, "m").__setitem__(2, name))
    with pytest.raises(SnapshotFileError, match=f"names function '{name}', which is not in the snapshot file's"):
        Cluster.load(hostile)
    assert not hostile_module.exists() and HOSTILE_MODULE not in sys.modules


def test_a_method_bound_to_an_object_of_another_class_is_refused(saved: tuple[Path, str], tmp_path: Path) -> None:
    """An allowed method name cannot be bound to any object the file likes."""
    def rebind(doc: dict[str, Any]) -> None:
        method = first_node(doc, "m")
        method[2] = "fakekube.engine.workqueue:WorkQueue.add" if "WorkQueue" not in method[2] else \
            "fakekube.clock.virtual:VirtualClock.call_at"
        for node in doc["nodes"]:
            if node[0] == "m" and node is not method:
                node[2] = method[2]
    hostile = rewrite(saved[0], tmp_path / "method.snap", rebind)
    with pytest.raises(SnapshotFileError, match="is not a method of the object it is bound to"):
        Cluster.load(hostile)


def test_deeply_nested_values_are_refused_not_a_crash(saved: tuple[Path, str], tmp_path: Path) -> None:
    def nest(doc: dict[str, Any]) -> None:
        doc["nodes"] = doc["nodes"] + [["t", [["#", len(doc["nodes"]) + i + 1]]] for i in range(500)] + [["t", []]]
        doc["root"] = ["#", len(doc["nodes"]) - 501]
    with pytest.raises(SnapshotFileError, match="nest (more than 100|too) deep"):
        Cluster.load(rewrite(saved[0], tmp_path / "deep.snap", nest))
    deep = tmp_path / "deep-json.snap"
    deep.write_bytes(MAGIC + zlib.compress(b'{"header": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"))
    with pytest.raises(SnapshotFileError, match="garbled"):
        Cluster.load(deep)


def test_state_that_is_not_data_is_refused_at_save_naming_its_path(tmp_path: Path) -> None:
    cluster = Cluster(nodes=1, seed=1)
    secret = 41
    cluster.controllers["job-controller"].hook = lambda: secret + 1  # a closure: not data
    with pytest.raises(TypeError, match=r"cannot save function .*<lambda> at .*\.hook: it has no name to load it by"):
        cluster.save(tmp_path / "closure.snap")

    class Local:
        pass
    cluster.controllers["job-controller"].hook = Local()
    with pytest.raises(TypeError, match=r"cannot save .*Local at .*\.hook: not in the snapshot file's allow-list"):
        cluster.save(tmp_path / "local.snap")
    assert not (tmp_path / "local.snap").exists()


def test_the_allow_list_covers_a_busy_cluster(tmp_path: Path) -> None:
    """Every part busy (system pods, metrics, a Deployment, a CronJob, a failed node): saves
    and loads. A new class holding state fails here until cluster/snapfile_names.py lists it."""
    cluster = Cluster(nodes=3, seed=5, system_pods=True, metrics_server=True)
    workload(cluster)
    story(cluster)
    cluster.save(tmp_path / "busy.snap")
    loaded = Cluster.load(tmp_path / "busy.snap")
    assert dump(loaded) == dump(cluster)
    cluster.advance(60)
    loaded.advance(60)
    assert dump(loaded) == dump(cluster)


CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "widgets.example.com"},
       "spec": {"group": "example.com", "scope": "Namespaced",
                "names": {"plural": "widgets", "singular": "widget", "kind": "Widget"},
                "versions": [{"name": "v1", "served": True, "storage": True,
                              "additionalPrinterColumns": [{"name": "Size", "type": "integer", "jsonPath": ".spec.size"}],
                              "schema": {"openAPIV3Schema": {"type": "object", "properties": {"spec": {
                                  "type": "object", "properties": {"size": {"type": "integer", "maximum": 10}}}}}}}]}}


def widget(name: str, size: int) -> dict[str, Any]:
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": name, "namespace": "default"},
            "spec": {"size": size}}


def test_a_cluster_serving_a_crd_is_saved_and_its_types_made_again_on_load(tmp_path: Path) -> None:
    cluster = Cluster(nodes=1, seed=2)
    cluster.create(CRD)
    cluster.advance(5)
    cluster.create(widget("a", 1))
    cluster.save(tmp_path / "crd.snap")
    loaded = Cluster.load(tmp_path / "crd.snap")
    for each in (cluster, loaded):
        each.create(widget("b", 2))
        each.advance(30)
        with pytest.raises(Exception, match="should be less than or equal to 10"):
            each.create(widget("c", 11))  # the schema's rules came along
    assert [w["metadata"] for w in loaded.list("example.com/v1", "Widget")] == \
        [w["metadata"] for w in cluster.list("example.com/v1", "Widget")]
    assert dump(loaded) == dump(cluster)


#: Loads a file in a fresh interpreter and prints which parts of fakekube that imported.
_LOAD_AND_LIST_MODULES = """
import json, sys
from fakekube import Cluster
cluster = Cluster.load(sys.argv[1])
cluster.start()
cluster.stop()
print(json.dumps(sorted(name for name in sys.modules if name.startswith("fakekube."))))
"""


def test_loading_a_file_that_serves_no_crd_leaves_the_crd_machinery_unimported(tmp_path: Path) -> None:
    """``serve``'s boot cache restores files with no CRD: its start must not pay for structural
    schemas and CEL, which only a served CRD needs (they are imported with the first one)."""
    import subprocess
    path = tmp_path / "plain.snap"
    Cluster(nodes=1, seed=3).save(path)
    done = subprocess.run([sys.executable, "-c", _LOAD_AND_LIST_MODULES, str(path)], capture_output=True, text=True,
                          timeout=300, check=True)
    modules = json.loads(done.stdout.strip().splitlines()[-1])
    assert "fakekube.cluster.snapfile" in modules
    assert [name for name in modules if name.startswith(("fakekube.api.wire.structural", "fakekube.api.wire.cel",
                                                          "fakekube.api.types.custom"))] == []


POLICY = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
          "metadata": {"name": "no-bad"},
          "spec": {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                           "operations": ["CREATE"], "resources": ["configmaps"]}]},
                   "validations": [{"expression": "object.metadata.name != 'bad'"}]}}
BINDING = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
           "metadata": {"name": "no-bad"}, "spec": {"policyName": "no-bad", "validationActions": ["Deny"]}}
HOOKS = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
         "metadata": {"name": "hooks"},
         "webhooks": [{"name": "only-bad.example.com", "admissionReviewVersions": ["v1"], "sideEffects": "None",
                       "failurePolicy": "Ignore", "clientConfig": {"url": "https://127.0.0.1:9/"},
                       "matchConditions": [{"name": "bad", "expression": "object.metadata.name == 'bad2'"}],
                       "rules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                  "resources": ["configmaps"]}]}]}


def refused_code(cluster: Cluster, name: str) -> int | None:
    try:
        cluster.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}})
    except ApiError as refused:
        return refused.code
    return None


def test_a_cluster_that_ran_admission_policies_and_match_conditions_snapshots_saves_and_loads(tmp_path: Path) -> None:
    """The CEL programs a policy and a webhook's matchCondition compiled at their first use
    are not the cluster's state: a snapshot, a restore, a file and a load all work, and the
    policy still refuses afterwards (the snapshot failed with "cannot pickle 'builtins.Program'")."""
    cluster = Cluster(nodes=1)
    for obj in (POLICY, BINDING, HOOKS):
        cluster.create(obj)
    assert refused_code(cluster, "bad") == 422
    assert refused_code(cluster, "bad2") is None  # matched, the webhook unreachable: Ignore
    snap = cluster.snapshot()
    assert refused_code(cluster, "good") is None
    cluster.restore(snap)
    assert refused_code(cluster, "good") is None and refused_code(cluster, "bad") == 422
    cluster.save(tmp_path / "policies.snap")
    loaded = Cluster.load(tmp_path / "policies.snap")
    assert refused_code(loaded, "bad") == 422 and refused_code(loaded, "bad3") is None
