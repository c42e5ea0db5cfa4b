"""Static pod defaulting, hashing and manifest reading, as upstream's kubelet does them."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest

from fakekube.kubelet.staticpods import (
    StaticPodManifest,
    config_hash,
    format_rfc3339_nano,
    load_manifest_dir,
    mirror_pod,
    pod_identity,
    static_pod,
)

SEEN = datetime(2025, 1, 1, tzinfo=timezone.utc)


def manifest(**meta: object) -> StaticPodManifest:
    return StaticPodManifest({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", **meta},
                              "spec": {"containers": [{"name": "c", "image": "nginx"}]}}, "web.yaml")


def test_the_kubelet_names_namespaces_binds_and_annotates_a_static_pod() -> None:
    pod = static_pod(manifest(), "Node-A", SEEN)
    meta = pod["metadata"]
    assert (meta["name"], meta["namespace"], pod["spec"]["nodeName"]) == ("web-node-a", "default", "Node-A")
    assert meta["annotations"] == {"kubernetes.io/config.hash": config_hash(manifest(), "Node-A"),
                                   "kubernetes.io/config.seen": "2025-01-01T00:00:00Z",
                                   "kubernetes.io/config.source": "file"}
    assert pod["spec"]["tolerations"] == [{"operator": "Exists", "effect": "NoExecute"}]


def test_the_no_execute_toleration_is_not_added_twice() -> None:
    tolerating = manifest()
    tolerating.pod["spec"]["tolerations"] = [{"operator": "Exists", "effect": "NoExecute"}]
    assert len(static_pod(tolerating, "n", SEEN)["spec"]["tolerations"]) == 1


def test_the_hash_covers_manifest_host_and_source() -> None:
    base = config_hash(manifest(), "n1")
    assert len(base) == 32 and base == config_hash(manifest(), "n1")
    assert config_hash(manifest(), "n2") != base
    assert config_hash(StaticPodManifest(manifest().pod, "other.yaml"), "n1") != base
    assert config_hash(manifest(labels={"a": "b"}), "n1") != base


def test_a_mirror_pod_carries_the_hash_and_is_owned_by_its_node() -> None:
    pod = static_pod(manifest(), "n1", SEEN)
    mirror = mirror_pod(pod, {"metadata": {"name": "n1", "uid": "u-1"}})
    assert mirror["metadata"]["annotations"]["kubernetes.io/config.mirror"] == config_hash(manifest(), "n1")
    assert mirror["metadata"]["ownerReferences"] == [
        {"apiVersion": "v1", "kind": "Node", "name": "n1", "uid": "u-1", "controller": True}]
    assert pod_identity(mirror) == config_hash(manifest(), "n1")
    assert pod_identity({"metadata": {"uid": "u-2"}}) == "u-2"


def test_seen_times_are_go_rfc3339_nano() -> None:
    assert format_rfc3339_nano(datetime(2025, 1, 1, 0, 0, 1, 500000, tzinfo=timezone.utc)) == "2025-01-01T00:00:01.5Z"
    assert format_rfc3339_nano(SEEN) == "2025-01-01T00:00:00Z"


def write(path: Path, name: str) -> None:
    path.write_text(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: {name}}}\nspec: {{containers: [{{name: c, image: x}}]}}\n")


def test_a_manifest_directory_is_read_in_name_order_skipping_hidden_and_other_files(tmp_path: Path) -> None:
    write(tmp_path / "b.yaml", "b")
    write(tmp_path / "a.json", "a")  # YAML is a superset of this flow style; a real JSON file reads too
    (tmp_path / "c.json").write_text('{"metadata": {"name": "c"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}')
    write(tmp_path / ".hidden.yaml", "hidden")
    write(tmp_path / "notes.txt", "txt")
    (tmp_path / "sub.yaml").mkdir()
    found = load_manifest_dir(tmp_path)
    assert [(m.source, m.pod["metadata"]["name"]) for m in found] == [("a.json", "a"), ("b.yaml", "b"),
                                                                      ("c.json", "c")]


def test_an_unreadable_manifest_names_its_file(tmp_path: Path) -> None:
    (tmp_path / "bad.yaml").write_text("metadata: [\n")
    with pytest.raises(ValueError, match=r"^staticPodPath: bad.yaml: cannot read it"):
        load_manifest_dir(tmp_path)
