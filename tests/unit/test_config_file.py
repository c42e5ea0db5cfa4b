"""The YAML cluster config loader: what it accepts, and the one-line errors it gives."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path

import pytest
import yaml

from fakekube.cluster import ClusterConfig
from fakekube.cluster.configfile import (
    NODE_LIFECYCLE_KEYS,
    ConfigError,
    load_config_file,
    parse_config,
    parse_duration_s,
)
from fakekube.cluster.nodespec import NodeSpec
from fakekube.controllers.nodelifecycle.config import NodeLifecycleConfig


def load(text: str, tmp_path: Path) -> ClusterConfig:
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    return load_config_file(path)


def test_an_empty_file_is_the_default_cluster(tmp_path: Path) -> None:
    assert load("", tmp_path) == ClusterConfig()
    assert load("# nothing but a comment\n", tmp_path) == ClusterConfig()


def test_top_level_values_become_the_config(tmp_path: Path) -> None:
    config = load("seed: 7\nstartTime: '2030-05-06T07:08:09Z'\ntimeScale: 60\nnodes: 3\n"
                  "clusterCIDR: 10.100.0.0/16\nnodeCIDRMaskSize: 26\n", tmp_path)
    assert (config.seed, config.time_scale, config.nodes) == (7, 60.0, 3)
    assert config.start_time == datetime(2030, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
    assert (config.cluster_cidr, config.node_cidr_mask_size) == ("10.100.0.0/16", 26)


def test_an_unquoted_yaml_timestamp_is_accepted_with_its_timezone(tmp_path: Path) -> None:
    config = load("startTime: 2030-05-06T07:08:09+02:00\n", tmp_path)
    assert config.start_time == datetime(2030, 5, 6, 5, 8, 9, tzinfo=timezone.utc)


def test_node_specs_keep_every_field(tmp_path: Path) -> None:
    config = load("""
nodes:
  - name: cp
    zone: a
    region: r
    labels: {tier: control}
    taints: [{key: dedicated, value: infra, effect: NoSchedule}]
    capacity: {cpu: 8, memory: 32Gi}
    allocatable: {cpu: 7500m}
  - count: 2
""", tmp_path)
    assert config.nodes == (
        NodeSpec(name="cp", zone="a", region="r", labels={"tier": "control"},
                 taints=({"key": "dedicated", "effect": "NoSchedule", "value": "infra"},),
                 capacity={"cpu": "8", "memory": "32Gi"}, allocatable={"cpu": "7500m"}),
        NodeSpec(count=2),
    )


def test_every_node_lifecycle_key_sets_its_field(tmp_path: Path) -> None:
    config = load("""
nodeLifecycle:
  nodeMonitorPeriod: 2s
  nodeMonitorGracePeriod: 1m30s
  nodeStartupGracePeriod: 2m
  nodeEvictionRate: 0.5
  secondaryNodeEvictionRate: 0.05
  unhealthyZoneThreshold: 0.6
  largeClusterSizeThreshold: 20
  defaultNotReadyTolerationSeconds: 60
  defaultUnreachableTolerationSeconds: 30
  nodeEvictionPeriod: 200ms
  evictionBurst: 2
  maxQueuedNodesPerZone: 10
""", tmp_path)
    assert config.node_lifecycle == NodeLifecycleConfig(
        monitor_period_s=2, grace_period_s=90, startup_grace_period_s=120, eviction_rate_per_s=0.5,
        secondary_eviction_rate_per_s=0.05, unhealthy_zone_threshold=0.6, large_cluster_size_threshold=20,
        default_not_ready_toleration_s=60, default_unreachable_toleration_s=30, noexecute_tainting_period_s=0.2,
        eviction_burst=2, max_queued_nodes_per_zone=10)


def test_every_node_lifecycle_setting_has_a_yaml_key() -> None:
    fields = set(NodeLifecycleConfig().fields())
    assert {field for field, _ in NODE_LIFECYCLE_KEYS.values()} == fields


def test_behaviours_use_the_behaviour_field_names(tmp_path: Path) -> None:
    config = load("behaviours:\n  default: {start_delay_s: 3}\n  images: [{image: 'busybox*', exit_code: 2}]\n",
                  tmp_path)
    assert config.behaviours.default.start_delay_s == 3
    assert config.behaviours.for_image("busybox:1.36").exit_code == 2
    assert config.behaviours.for_image("nginx").exit_code == 0


@pytest.mark.parametrize(("text", "seconds"), [
    ("40s", 40.0), ("1m30s", 90.0), ("500ms", 0.5), ("1h", 3600.0), ("1.5m", 90.0), ("0", 0.0), (12, 12.0),
    (0.25, 0.25),
])
def test_durations_are_go_durations_or_seconds(text: object, seconds: float) -> None:
    assert parse_duration_s(text, "d") == seconds


@pytest.mark.parametrize("text", ["40", "4x", "-1s", "s", "", "1m 30s"])
def test_a_bad_duration_names_the_key(text: str) -> None:
    with pytest.raises(ConfigError, match=r"^d: must be a duration"):
        parse_duration_s(text, "d")


@pytest.mark.parametrize(("text", "message"), [
    ("bogus: 1\n", "bogus: unknown key; known keys: apiVersion, kind, seed,"),
    ("seeds: 1\n", "seeds: unknown key (did you mean seed?)"),
    ("seed: abc\n", "seed: must be an integer, got a string ('abc')"),
    ("seed: true\n", "seed: must be an integer, got a boolean (True)"),
    ("timeScale: -1\n", "timeScale: must be >= 0, got -1"),
    ("startTime: '2025-01-01T00:00:00'\n", "startTime: needs a timezone"),
    ("startTime: yesterday\n", "startTime: must be an RFC 3339 time"),
    ("nodes: -2\n", "nodes: must be >= 0, got -2"),
    ("nodes: many\n", "nodes: must be a count or a list of node specs, got a string ('many')"),
    ("nodes: [{zone: 3}]\n", "nodes[0].zone: must be a string, got an integer (3)"),
    ("nodes: [{}, {zonee: a}]\n", "nodes[1].zonee: unknown key (did you mean zone?)"),
    ("nodes: [{count: 0}]\n", "nodes[0].count: must be >= 1, got 0"),
    ("nodes: [{zone: 'not a label'}]\n", "nodes[0].zone: 'not a label' is invalid"),
    ("nodes: [{labels: {a: 1}}]\n", "nodes[0].labels.a: must be a string, got an integer (1)"),
    ("nodes: [{taints: [{key: k, effect: Sometimes}]}]\n",
     "nodes[0].taints[0].effect: must be one of NoExecute, NoSchedule, PreferNoSchedule, got 'Sometimes'"),
    ("nodes: [{taints: [{effect: NoSchedule}]}]\n", "nodes[0].taints[0].key: required"),
    ("nodes: [{taints: [{key: k, effect: NoSchedule}, {key: k, effect: NoSchedule}]}]\n",
     "nodes[0].taints[1]: a second taint with key 'k' and effect NoSchedule"),
    ("nodes: [{capacity: {cpu: lots}}]\n", "nodes[0].capacity.cpu: must be a quantity >= 0"),
    ("nodes: [{name: a}, {name: a}]\n", "nodes: two nodes are named 'a'"),
    ("nodes: [{name: Bad_Name}]\n", "nodes: node name 'Bad_Name' is invalid"),
    ("nodeLifecycle: {nodeMonitorGracePeriod: forty}\n",
     "nodeLifecycle.nodeMonitorGracePeriod: must be a duration such as 40s"),
    ("nodeLifecycle: {unhealthyZoneThreshold: 2}\n", "nodeLifecycle: unhealthyZoneThreshold must be in (0, 1]"),
    ("nodeLifecycle: {nodeMonitorGracePeriod: 0s}\n", "nodeLifecycle: nodeMonitorGracePeriod must be > 0"),
    ("nodeLifecycle: 40s\n", "nodeLifecycle: must be a mapping, got a string ('40s')"),
    ("clusterCIDR: 10.244.1.0/16\n", "clusterCIDR: 10.244.1.0/16 has host bits set"),
    ("clusterCIDR: 10.0.0.0/8\nnodeCIDRMaskSize: 30\n", "clusterCIDR: node CIDR mask size 30 is more than 16 bits"),
    ("behaviours: {images: [{image: x, run_for: 3}]}\n", "behaviours.images[0]: unknown field(s) run_for"),
    ("staticPods: [{metadata: {}}]\n", "staticPods[0].metadata.name: a static pod needs a name"),
    ("staticPods: {a: 1}\n", "staticPods: must be a list of Pod manifests, got a mapping"),
    ("staticPods: [{kind: Deployment}]\n", "staticPods[0]: a static pod manifest must be apiVersion v1, kind Pod"),
    ("staticPodPath: nowhere\n", "staticPodPath: 'nowhere' is not a directory"),
    ("apiVersion: fakekube.io/v2\n", "apiVersion: must be fakekube.io/v1alpha1, got 'fakekube.io/v2'"),
    ("seed: 1\nseed: 2\n", "seed: given twice in one mapping (line 2, column 1)"),
    ("nodes: [\n", "not valid YAML: expected the node content, but found '<stream end>' (line 2, column 1)"),
    ("- 1\n", "(top level): must be a mapping, got a list"),
])
def test_bad_config_errors_name_the_key_on_one_line(text: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        load(text, tmp_path)
    assert str(caught.value).startswith(message)
    assert "\n" not in str(caught.value)


def test_a_missing_file_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read .*missing.yaml"):
        load_config_file(tmp_path / "missing.yaml")


def test_a_relative_static_pod_path_is_taken_from_the_file_s_directory(tmp_path: Path) -> None:
    (tmp_path / "manifests").mkdir()
    config = load("staticPodPath: manifests\n", tmp_path)
    assert config.static_pod_path == str(tmp_path / "manifests")


def test_json_is_yaml_too(tmp_path: Path) -> None:
    assert load('{"seed": 3, "nodes": [{"zone": "a"}]}', tmp_path).nodes == (NodeSpec(zone="a"),)


def test_parse_config_takes_already_loaded_data() -> None:
    assert parse_config(yaml.safe_load("seed: 5")).seed == 5


def test_controllers_pod_gc_and_kubelet_timings_have_yaml_keys(tmp_path: Path) -> None:
    config = load("controllers: ['*', '-podgc']\npodGC: {checkPeriod: 10s, quarantinePeriod: 1m}\n"
                  "kubelet: {nodeLeaseDurationSeconds: 60, nodeStatusUpdateFrequency: 20s,\n"
                  "          nodeStatusReportFrequency: 10m, initialBackOff: 1s, maxContainerRestartPeriod: 30s}\n",
                  tmp_path)
    assert config.controllers == ("*", "-podgc")
    assert (config.pod_gc.period_s, config.pod_gc.quarantine_s) == (10.0, 60.0)
    heartbeat = config.kubelet.heartbeat
    assert (heartbeat.lease_duration_s, heartbeat.status_update_period_s, heartbeat.status_report_period_s) == (
        60, 20.0, 600.0)
    assert (config.kubelet.backoff_initial_s, config.kubelet.backoff_max_s) == (1.0, 30.0)
    assert load("controllers: '*, -nodeipam'\n", tmp_path).controllers == ("*", "-nodeipam")


@pytest.mark.parametrize(("text", "message"), [
    ("controllers: 3\n", "controllers: must be a list of controller names"),
    ("podGC: {period: 10s}\n", "podGC.period: unknown key"),
    ("podGC: {checkPeriod: 0s}\n", "podGC.checkPeriod: must be a positive duration"),
    ("kubelet: {nodeLeaseDurationSeconds: 0}\n", "kubelet.nodeLeaseDurationSeconds: must be >= 1"),
])
def test_bad_runtime_settings_name_the_key(text: str, message: str, tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="^" + message.replace(".", r"\.").replace("*", r"\*")):
        load(text, tmp_path)


def test_an_unknown_controller_in_the_config_is_refused_when_the_cluster_is_built(tmp_path: Path) -> None:
    from fakekube import Cluster

    with pytest.raises(ValueError, match='"replicaset-controlr" is not in the list of known controllers'):
        Cluster(load("controllers: [replicaset-controlr]\n", tmp_path))


def test_image_policy_is_a_name_or_lists_and_a_bad_one_is_refused(tmp_path: Path) -> None:
    from fakekube.kubelet.registry import ImageCatalog

    assert load("imagePolicy: missing\n", tmp_path).image_policy == ImageCatalog("missing")
    listed = load("imagePolicy: {images: [example/*], digests: ['sha256:" + "a" * 64 + "']}\n", tmp_path)
    assert (listed.image_policy.policy, listed.image_policy.images) == ("plausible", ("example/*",))
    with pytest.raises(ConfigError, match="imagePolicy: must be one of plausible, exists, missing, got 'maybe'"):
        load("imagePolicy: maybe\n", tmp_path)
    with pytest.raises(ConfigError, match="imagePolicy: unknown key"):
        load("imagePolicy: {allow: [x]}\n", tmp_path)
