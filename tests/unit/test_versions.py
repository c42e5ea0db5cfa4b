"""The version table (fakekube/objects/versions.py): a test per row, here or where named.

Rows tested elsewhere: served resources (tests/integration/test_builtin_api_coverage.py,
per release, against lightkube-models and the references' /apis), storage version hashes
and the null ``creationTimestamp`` of discovery (tests/unit/test_discovery.py), the owner
reference and label key messages (tests/unit/test_validation.py, test_selectors.py), the
node monitor grace period (tests/unit/test_nodelifecycle_health.py), the feature gates'
behaviour (tests/integration/test_versions.py).
"""

from __future__ import annotations

import pytest

from fakekube import ClusterConfig
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import emulating
from fakekube.api.types import builtin_types
from fakekube.cluster.configfile import ConfigError, parse_config_values
from fakekube.controllers.namespace.controller import NamespaceConfig
from fakekube.objects import versions
from fakekube.objects.versions import DEFAULT_VERSION, RELEASES, SUPPORTED_VERSIONS, UnsupportedVersion, release


def test_the_supported_releases_and_the_default() -> None:
    assert SUPPORTED_VERSIONS == ("1.33", "1.34", "1.35", "1.36") and DEFAULT_VERSION == "1.36"
    assert list(RELEASES) == list(SUPPORTED_VERSIONS)
    assert release("v1.34") is RELEASES["1.34"]
    assert ClusterConfig().kubernetes_version == "1.36"


@pytest.mark.parametrize("asked", ["1.32", "1.37", "2.0", "latest", "1.34.2", ""])
def test_an_unsupported_version_is_refused_naming_the_supported_ones(asked: str) -> None:
    with pytest.raises(UnsupportedVersion, match=r"fakekube emulates 1\.33, 1\.34, 1\.35, 1\.36 \(default 1\.36\)"):
        release(asked)
    with pytest.raises(ValueError, match="is not supported"):
        ClusterConfig(kubernetes_version=asked)


def test_the_yaml_key_takes_a_quoted_release_and_refuses_a_number() -> None:
    assert parse_config_values({"kubernetesVersion": "1.34", "patchVersion": 2}) == {
        "kubernetes_version": "1.34", "patch_version": 2}
    with pytest.raises(ConfigError, match=r'^kubernetesVersion: must be a string such as "1.34" \(quote it'):
        parse_config_values({"kubernetesVersion": 1.3})
    with pytest.raises(ConfigError, match=r"^kubernetesVersion: Kubernetes version '1.32' is not supported"):
        parse_config_values({"kubernetesVersion": "1.32"})


@pytest.mark.parametrize("version,count", [("1.33", 61), ("1.34", 66), ("1.35", 66), ("1.36", 68)])
def test_each_release_serves_its_types(version: str, count: int) -> None:
    served = {f"{rt.group}/{rt.version}/{rt.plural}" for rt in builtin_types(release(version))}
    assert len(served) == count
    assert ("resource.k8s.io/v1/resourceclaims" in served) is (version >= "1.34")
    assert ("admissionregistration.k8s.io/v1/mutatingadmissionpolicies" in served) is (version == "1.36")


@pytest.mark.parametrize("version,style", [("1.33", "go"), ("1.34", "json"), ("1.35", "json"), ("1.36", "json")])
def test_field_error_values_render_as_the_release_does(version: str, style: str) -> None:
    """apimachinery's ErrorBody: ``%#v`` up to v0.33, ``json.Marshal`` from v0.34 (kubernetes#132314);
    a string stays ``%q`` and a number ``%v`` in both."""
    value_map = errors.invalid("spec.template.metadata.labels", {"app": "x", "b": [1, 2.5]}, "does not match")
    nil = errors.invalid("spec", None, "must be set")
    with emulating(release(version)):
        assert release(version).field_error_values == style
        shown = (value_map.message(), nil.message(), errors.invalid("a", "x").message(), errors.invalid("n", 3).message())
    if style == "go":
        assert shown == ('spec.template.metadata.labels: Invalid value: map[string]interface {}{"app":"x", '
                         '"b":[]interface {}{1, 2.5}}: does not match', 'spec: Invalid value: "null": must be set',
                         'a: Invalid value: "x"', "n: Invalid value: 3")
    else:
        assert shown == ('spec.template.metadata.labels: Invalid value: {"app":"x","b":[1,2.5]}: does not match',
                         "spec: Invalid value: null: must be set", 'a: Invalid value: "x"', "n: Invalid value: 3")


def test_json_values_are_go_json() -> None:
    """Go's encoding/json: sorted map keys, HTML-safe escapes, whole floats without a fraction."""
    assert errors.go_json({"b": "<a&b>", "a": [1.0, 1e-7, 1e21, None, True]}) == \
        '{"a":[1,1e-7,1e+21,null,true],"b":"\\u003ca\\u0026b\\u003e"}'


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_null_creation_timestamp_only_up_to_1_33(version: str) -> None:
    assert release(version).null_creation_timestamp is (version == "1.33")


@pytest.mark.parametrize("gate,first", [("PodObservedGenerationTracking", "1.34"),
                                        ("DeploymentReplicaSetTerminatingReplicas", "1.35"),
                                        ("OrderedNamespaceDeletion", "1.33"),
                                        ("RelaxedServiceNameValidation", "1.36"),
                                        ("ConstrainedImpersonation", "1.36"),
                                        ("WatchList", "1.34"),
                                        ("MutablePodResourcesForSuspendedJobs", "1.36"),
                                        ("MutableSchedulingDirectivesForSuspendedJobs", "1.36")])
def test_feature_gates_at_each_releases_default(gate: str, first: str) -> None:
    """Upstream's versioned feature specs (pkg/features/kube_features.go, 1.36)."""
    assert [release(v).enabled(gate) for v in SUPPORTED_VERSIONS] == [v >= first for v in SUPPORTED_VERSIONS]
    with pytest.raises(KeyError):
        release("1.36").enabled("NoSuchGate")


def test_the_namespace_controller_reads_its_gate() -> None:
    assert all(NamespaceConfig.for_release(release(v)).ordered_deletion for v in SUPPORTED_VERSIONS)


@pytest.mark.parametrize("version,messages", [
    ("1.33", ("{field} must not be empty", "a qualified name", "characters")),
    ("1.34", ("must not be empty", "a qualified name", "characters")),
    ("1.35", ("must not be empty", "a valid label key", "bytes")),
    ("1.36", ("must not be empty", "a valid label key", "bytes")),
])
def test_message_texts_by_release(version: str, messages: tuple[str, str, str]) -> None:
    row = release(version)
    assert (row.message("owner_reference_empty"), row.message("label_key_noun"),
            row.message("label_length_unit")) == messages


@pytest.mark.parametrize("version,date,go", [("1.33", "2025-04-23", "go1.24"), ("1.34", "2025-08-27", "go1.24"),
                                             ("1.35", "2025-12-17", "go1.25"), ("1.36", "2026-04-22", "go1.26")])
def test_builds_and_the_patch_every_node_reports(version: str, date: str, go: str) -> None:
    row = release(version)
    assert row.build.build_date.startswith(date) and row.build.go_version.startswith(go)
    assert ClusterConfig(kubernetes_version=version, patch_version=4).kubelet_version == f"v{version}.4"
    assert versions.git_commit(version, 4) == versions.git_commit(version, 4) != versions.git_commit(version, 5)
    with pytest.raises(ValueError, match="patch_version"):
        ClusterConfig(patch_version=-1)


def test_bad_request_rows_start_at_1_35() -> None:
    """kubernetes#133358 (DeleteOptions) and the impersonation filter's rewrite, both in 1.35."""
    assert [release(v).delete_options_bad_request for v in SUPPORTED_VERSIONS] == [False, False, True, True]
    assert [release(v).impersonation_bad_request for v in SUPPORTED_VERSIONS] == [False, False, True, True]


def test_token_requests_carry_the_service_accounts_uid_from_1_34() -> None:
    """kubernetes#132803 and TokenRequestServiceAccountUIDValidation (on from 1.34)."""
    assert [release(v).token_request_uid for v in SUPPORTED_VERSIONS] == [False, True, True, True]


def test_a_failed_cel_rule_shows_its_value_from_1_35() -> None:
    """kubernetes#132798 and #133832; the messages: tests/unit/wire/test_structural_objects.py."""
    assert [release(v).cel_rule_shows_value for v in SUPPORTED_VERSIONS] == [False, False, True, True]


def test_the_pod_update_diff_is_json_from_1_34() -> None:
    assert [release(v).pod_spec_json_diff for v in SUPPORTED_VERSIONS] == [v >= "1.34" for v in SUPPORTED_VERSIONS]


def test_list_options_have_the_shard_selector_from_1_36() -> None:
    """apimachinery v0.36's ListOptions.shardSelector; the documents: tests/integration/test_openapi_v3.py."""
    assert [release(v).list_shard_selector for v in SUPPORTED_VERSIONS] == [False, False, False, True]
