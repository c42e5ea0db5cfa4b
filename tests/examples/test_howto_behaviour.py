"""docs/behaviour.md "Behaviour reference", as tests: the annotation and the config-file forms
give the same container, as the page says, and the field table lists every field the
behaviour parser accepts (a new field without a line fails here)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from fakekube import Cluster
from fakekube.cluster.configfile import load_config_file
from fakekube.kubelet import behaviour
from tests.examples.docs_blocks import REPO_ROOT, region
from tests.integration.timeline import at

Obj = dict[str, Any]
PAGE = "docs/behaviour.md"


def reference_section() -> str:
    text = (REPO_ROOT / PAGE).read_text(encoding="utf-8")
    return text.split("## Behaviour reference\n", 1)[1].split("\n## ", 1)[0]


def documented_fields() -> list[str]:
    return re.findall(r"^\| `(\w+)` \|", reference_section(), flags=re.MULTILINE)


def test_the_reference_lists_every_field_the_parser_accepts_once() -> None:
    accepted = sorted(behaviour._FIELDS | behaviour._SHORTHANDS)
    assert sorted(documented_fields()) == accepted


@pytest.mark.parametrize("field", sorted(behaviour._FIELDS | behaviour._SHORTHANDS))
def test_each_fields_example_parses(field: str) -> None:
    row = next(line for line in reference_section().splitlines() if line.startswith(f"| `{field}` |"))
    example = re.findall(r"`([^`]+)`", row.rsplit("|", 2)[-2])[-1]
    parsed = yaml.safe_load(example)
    assert list(parsed) == [field]
    behaviour.behaviour_overlay(parsed)


def web_timeline(cluster: Cluster) -> list[tuple[int, str, bool, str]]:
    """(second, state, ready, log) of the pod ``web`` at each second the page names."""
    from kubernetes import client
    core = client.CoreV1Api(cluster.client())
    seen = []
    for second in (2, 3, 32, 33):
        at(cluster, second)
        status = cluster.get("v1", "Pod", "web")["status"]["containerStatuses"][0]
        log = core.read_namespaced_pod_log("web", "default") if "running" in status["state"] else ""
        seen.append((second, next(iter(status["state"])), status["ready"], log))
    return seen


EXPECTED = [(2, "waiting", False, ""), (3, "running", False, "listening on :8080\n"),
            (32, "running", False, "listening on :8080\n"), (33, "running", True, "listening on :8080\n")]


def test_the_annotation_form_runs_as_the_page_says() -> None:
    manifest = yaml.safe_load(region(PAGE, "reference-annotation").text)
    with Cluster(nodes=1) as cluster:
        cluster.create(manifest)
        assert web_timeline(cluster) == EXPECTED


def test_the_config_form_gives_the_same_container(tmp_path: Path) -> None:
    path = tmp_path / "cluster.yaml"
    path.write_text("nodes: 1\n" + region(PAGE, "reference-config").text, encoding="utf-8")
    manifest = yaml.safe_load(region(PAGE, "reference-annotation").text)
    del manifest["metadata"]["annotations"]
    with Cluster(load_config_file(path)) as cluster:
        cluster.create(manifest)
        assert web_timeline(cluster) == EXPECTED


def test_ready_after_s_without_a_readiness_probe_is_ready_at_start() -> None:
    manifest = yaml.safe_load(region(PAGE, "reference-annotation").text)
    del manifest["spec"]["containers"][0]["readinessProbe"]
    with Cluster(nodes=1) as cluster:
        cluster.create(manifest)
        at(cluster, 3)
        assert cluster.get("v1", "Pod", "web")["status"]["containerStatuses"][0]["ready"] is True
