"""A phased load (``Cluster.load(path, phased=True)``, what ``serve``'s boot cache uses):
the apiserver's side answers first, the engine's side is put in place after — and nothing
can tell the two apart from a full load: every read answers the same bytes, and a request
that needs the engine (a write and its consequences, time moving) waits for it
(docs/snapshots.md "Phased boot")."""

from __future__ import annotations

import json
import zlib
import threading
import urllib.request
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

import pytest

from fakekube import Cluster
from fakekube.cluster import SnapshotFileError
from fakekube.cluster import cluster as cluster_module
from fakekube.cluster.snapfile import MAGIC, document_bytes, whole_document

START = datetime(2025, 1, 1, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def boot_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A kind-like boot as ``serve`` caches it (system pods, metrics-server, fixed start)."""
    path = tmp_path_factory.mktemp("phased") / "boot.snap"
    Cluster(system_pods=True, metrics_server=True, start_time=START, time_scale=0, seed=3).save(path)
    return path


def http(cluster: Cluster | str, method: str, path: str, body: Any = None) -> tuple[int, bytes]:
    """(status, body) of one request to ``cluster`` (or a server's URL)."""
    data = json.dumps(body).encode() if body is not None else None
    url = cluster if isinstance(cluster, str) else cluster.url
    request = urllib.request.Request(url + path, data=data, method=method,
                                     headers={"Content-Type": "application/json", "Accept": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


#: Reads the engine's side answers: pod and node usage come from the kubelets.
ENGINE_READS = "/apis/metrics.k8s.io/"


def every_list(cluster: Cluster | str, skip: str = "\0") -> dict[str, bytes]:
    """The answer to a cluster-wide list of every served resource that can be listed
    (discovery's), but those under ``skip``."""
    answers: dict[str, bytes] = {}
    _, core = http(cluster, "GET", "/api/v1")
    prefixes = [("/api/v1", json.loads(core))]
    _, groups = http(cluster, "GET", "/apis")
    for group in json.loads(groups)["groups"]:
        version = group["preferredVersion"]["groupVersion"]
        prefixes.append((f"/apis/{version}", json.loads(http(cluster, "GET", f"/apis/{version}")[1])))
    for prefix, listing in prefixes:
        for resource in listing["resources"]:
            path = f"{prefix}/{resource['name']}"
            if "/" not in resource["name"] and "list" in resource["verbs"] and not path.startswith(skip):
                code, body = http(cluster, "GET", path)
                answers[path] = str(code).encode() + b" " + body
    return answers


def held_phase_two(monkeypatch: pytest.MonkeyPatch, during: Callable[[], None] | None = None) -> threading.Event:
    """``start``'s thread for the second phase waits for the returned event; with ``during``,
    that runs inside the second phase (before it decodes anything)."""
    release = threading.Event()
    original = cluster_module.Cluster._complete_load_in_background

    def held(self: Cluster) -> None:
        release.wait(120)
        later = self._later
        if later is not None and during is not None:
            rest = later.rest

            def rest_after_during() -> dict[str, Any]:
                during()
                return rest()
            later.rest = rest_after_during
        original(self)
    monkeypatch.setattr(cluster_module.Cluster, "_complete_load_in_background", held)
    return release


def test_before_its_engine_side_a_phased_load_answers_every_read_as_a_full_load(
        boot_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    full = Cluster.load(boot_file).start()
    release = held_phase_two(monkeypatch)
    phased = Cluster.load(boot_file, phased=True).start()
    try:
        expected = every_list(full, skip=ENGINE_READS)
        assert len(expected) > 50 and all(answer.startswith(b"200 ") for answer in expected.values())
        assert every_list(phased, skip=ENGINE_READS) == expected
        assert phased._later is not None  # all of that was served without the engine's side
        assert every_list(phased) == every_list(full)  # metrics wait for the kubelets, then answer the same
        assert phased._later is None
        for cluster in (full, phased):
            cluster.advance(400)  # needs the engine: the phased one puts it in place first
        assert every_list(phased) == every_list(full)
    finally:
        release.set()
        phased.stop()
        full.stop()


def test_a_write_arriving_during_the_second_phase_waits_and_keeps_its_consequences(
        boot_file: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "web", "namespace": "default"},
                  "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}},
                           "template": {"metadata": {"labels": {"app": "web"}},
                                        "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
    full = Cluster.load(boot_file).start()
    answers: dict[str, tuple[int, bytes]] = {}
    writer = threading.Thread(target=lambda: answers.update(
        phased=http(phased, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment)))
    sent, waiting = threading.Event(), threading.Event()
    complete = cluster_module.Cluster._complete_load

    def noting_the_writer(self: Cluster) -> None:
        if threading.current_thread().name != "fakekube-load":  # the server's thread for the write
            waiting.set()  # the write needs the engine's side: it waits for the second phase
        complete(self)
    monkeypatch.setattr(cluster_module.Cluster, "_complete_load", noting_the_writer)

    def send() -> None:  # inside the second phase, which goes on once the write waits for it
        writer.start()
        sent.set()
        waiting.wait(30)
    release = held_phase_two(monkeypatch, during=send)
    phased = Cluster.load(boot_file, phased=True).start()
    try:
        release.set()
        assert sent.wait(120)
        writer.join(120)
        answers["full"] = http(full, "POST", "/apis/apps/v1/namespaces/default/deployments", deployment)
        assert waiting.is_set() and answers["phased"] == answers["full"] and answers["full"][0] == 201
        for path in ("/apis/apps/v1/replicasets", "/api/v1/pods", "/api/v1/events"):
            assert http(phased, "GET", path) == http(full, "GET", path)  # its consequences ran, the same
        for cluster in (full, phased):
            cluster.advance(60)
        assert every_list(phased) == every_list(full)
    finally:
        release.set()
        phased.stop()
        full.stop()


def test_a_phased_load_used_in_process_completes_when_first_needed(boot_file: Path) -> None:
    full, phased = Cluster.load(boot_file), Cluster.load(boot_file, phased=True)
    assert phased._later is not None
    assert phased.list("v1", "Pod") == full.list("v1", "Pod")  # a read: no engine needed
    for cluster in (full, phased):
        cluster.advance(120)
    assert phased._later is None
    assert phased.list("v1", "Pod") == full.list("v1", "Pod")
    assert phased.events() == full.events()


def test_a_garbled_engine_side_fails_whoever_needs_the_engine_and_the_server_still_stops(
        boot_file: Path, tmp_path: Path) -> None:
    document = whole_document(boot_file)
    serving = set(document["serving"])
    engine_side = next(node for index, node in enumerate(document["nodes"])
                       if index not in serving and node[0] == "o" and node[1].startswith("fakekube.engine."))
    engine_side[1] = "os:system"  # a hostile class name, where only the second phase reads it
    garbled = tmp_path / "garbled.snap"
    garbled.write_bytes(document_bytes(document))
    with pytest.raises(SnapshotFileError, match="'os:system', which is not in the snapshot file's allow-list"):
        Cluster.load(garbled)
    phased = Cluster.load(garbled, phased=True).start()  # the serving side is sound: it serves
    try:
        assert http(phased, "GET", "/api/v1/namespaces/default")[0] == 200
        with pytest.raises(RuntimeError, match="engine side could not be loaded: .*'os:system'"):
            phased.advance(1)
        assert http(phased, "POST", "/api/v1/namespaces/default/configmaps",
                    {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}})[0] == 500
    finally:
        phased.stop()


def test_the_first_phase_parses_only_its_half_of_the_file(boot_file: Path, tmp_path: Path) -> None:
    """The nodes only the engine's side needs are a second compressed stream, parsed when the
    second phase runs: a garbled one fails a full load and the second phase, not the serving."""
    data = boot_file.read_bytes()
    inflater = zlib.decompressobj()
    inflater.decompress(data[len(MAGIC):])
    assert inflater.eof and len(inflater.unused_data) > 1000  # a second stream, and a sizeable one
    garbled = tmp_path / "second-stream.snap"
    garbled.write_bytes(data[:len(data) - len(inflater.unused_data)] + zlib.compress(b'[["o", "os:system", {}]]'))
    with pytest.raises(SnapshotFileError, match="garbled"):
        Cluster.load(garbled)
    phased = Cluster.load(garbled, phased=True).start()
    try:
        assert http(phased, "GET", "/api/v1/namespaces/default")[0] == 200
        with pytest.raises(RuntimeError, match="engine side could not be loaded: .*garbled"):
            phased.advance(1)
    finally:
        phased.stop()


def test_the_store_s_index_functions_from_controllers_are_in_place_after_the_second_phase(boot_file: Path) -> None:
    """Phase one leaves a store index's function from a controller's module to a stand-in (its
    module is not imported for the serving side); phase two puts the function itself there,
    as a full load has it."""
    full = Cluster.load(boot_file)
    phased = Cluster.load(boot_file, phased=True)
    functions = [index.fn for indexes in phased.store._indexes.values() for index in indexes.values()]
    assert any(type(fn).__name__ == "_PendingFunction" for fn in functions)
    phased.engine  # runs the second phase
    expected = {(resource, name): (index.fn, index.reads) for resource, indexes in full.store._indexes.items()
                for name, index in indexes.items()}
    assert {(resource, name): (index.fn, index.reads) for resource, indexes in phased.store._indexes.items()
            for name, index in indexes.items()} == expected
