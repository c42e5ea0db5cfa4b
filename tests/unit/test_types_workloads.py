"""apps/v1 and batch/v1: defaults of minimal objects, selector rules, immutability."""

from __future__ import annotations

import copy
import random
from datetime import datetime, timezone

import pytest

from fakekube.api.machinery.errors import emulating
from fakekube.objects.versions import release
from fakekube import Cluster
from fakekube.api.registry import WriteContext
from fakekube.api.types import BUILTIN_TYPES

STRATEGIES = {f"{rt.group}/{rt.plural}": rt.strategy for rt in BUILTIN_TYPES}


class _Store:
    def get_object(self, group, resource, namespace, name):
        return None

    def list_objects(self, group, resource, namespace=""):
        return []


CTX = WriteContext(datetime(2025, 1, 1, tzinfo=timezone.utc), random.Random(1), _Store())


def _create(key, obj):
    strategy = STRATEGIES[key]
    obj = copy.deepcopy(obj)
    strategy.default(obj, CTX)
    strategy.prepare_for_create(obj, CTX)
    return obj


def _workload(kind_spec=None, labels=None):
    labels = labels or {"app": "web"}
    spec = {"selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]}}}
    spec.update(kind_spec or {})
    return {"metadata": {"name": "web", "namespace": "default", "uid": "0000-uid"}, "spec": spec}


def test_deployment_defaults():
    dep = _create("apps/deployments", _workload())
    spec = dep["spec"]
    assert spec["replicas"] == 1
    assert spec["strategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}
    assert spec["revisionHistoryLimit"] == 10 and spec["progressDeadlineSeconds"] == 600
    template = spec["template"]
    assert "creationTimestamp" not in template["metadata"]  # Go's zero time: omitted from 1.34 (the reference)
    in_1_33 = copy.deepcopy(_workload())
    STRATEGIES["apps/deployments"].default(in_1_33, WriteContext(CTX.now, CTX.rng, CTX.store, release=release("1.33")))
    assert in_1_33["spec"]["template"]["metadata"]["creationTimestamp"] is None  # null up to 1.33
    assert template["spec"]["restartPolicy"] == "Always"
    assert template["spec"]["containers"][0]["imagePullPolicy"] == "IfNotPresent"
    assert "enableServiceLinks" not in template["spec"]  # pod-only default
    assert "serviceAccountName" not in template["spec"]
    assert dep["status"] == {}
    assert STRATEGIES["apps/deployments"].validate(dep) == []
    assert STRATEGIES["apps/deployments"].tracks_generation


def test_selector_must_match_template_labels():
    dep = _create("apps/deployments", _workload(labels={"app": "other"}))
    assert [e.message() for e in STRATEGIES["apps/deployments"].validate(dep)] == [  # the reference, 1.36
        'spec.template.metadata.labels: Invalid value: {"app":"other"}: `selector` does not match template `labels`']
    with emulating(release("1.33")):  # Go's %#v of the map
        assert [e.message() for e in STRATEGIES["apps/deployments"].validate(dep)] == [
            'spec.template.metadata.labels: Invalid value: map[string]string{"app":"other"}: '
            "`selector` does not match template `labels`"]
    missing = _workload()
    del missing["spec"]["selector"]
    missing = _create("apps/deployments", missing)
    assert "spec.selector: Required value" in [e.message() for e in STRATEGIES["apps/deployments"].validate(missing)]


def test_deployment_selector_is_immutable():
    old = _create("apps/deployments", _workload())
    new = copy.deepcopy(old)
    new["spec"]["selector"] = {"matchLabels": {"app": "web2"}}
    new["spec"]["template"]["metadata"]["labels"] = {"app": "web2"}
    assert [e.message() for e in STRATEGIES["apps/deployments"].validate_update(new, old)] == [  # the reference
        'spec.selector: Invalid value: {"matchLabels":{"app":"web2"}}: field is immutable']
    with emulating(release("1.33")):
        assert [e.message() for e in STRATEGIES["apps/deployments"].validate_update(new, old)] == [
            'spec.selector: Invalid value: v1.LabelSelector{MatchLabels:map[string]string{"app":"web2"}, '
            "MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"]


def test_negative_replicas_and_restart_policy():
    dep = _workload({"replicas": -1})
    dep["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    dep = _create("apps/replicasets", dep)
    messages = [e.message() for e in STRATEGIES["apps/replicasets"].validate(dep)]
    assert "spec.replicas: Invalid value: -1: must be greater than or equal to 0" in messages
    assert 'spec.template.spec.restartPolicy: Unsupported value: "Never": supported values: "Always"' in messages
    assert dep["status"] == {"replicas": 0}


def test_statefulset_defaults_and_forbidden_update():
    sts = _workload({"serviceName": "web", "volumeClaimTemplates": [
        {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]})
    sts = _create("apps/statefulsets", sts)
    spec = sts["spec"]
    assert spec["podManagementPolicy"] == "OrderedReady"
    assert spec["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"partition": 0}}
    assert spec["persistentVolumeClaimRetentionPolicy"] == {"whenDeleted": "Retain", "whenScaled": "Retain"}
    assert spec["volumeClaimTemplates"][0]["spec"]["volumeMode"] == "Filesystem"
    assert spec["volumeClaimTemplates"][0]["status"] == {"phase": "Pending"}
    assert sts["status"] == {"replicas": 0, "availableReplicas": 0}
    strategy = STRATEGIES["apps/statefulsets"]
    scaled = copy.deepcopy(sts)
    scaled["spec"]["replicas"] = 3
    assert strategy.validate_update(scaled, sts) == []
    kept = copy.deepcopy(sts)
    kept["spec"]["revisionHistoryLimit"] = 3  # mutable, as the forbidden-update message says
    assert strategy.validate_update(kept, sts) == []
    renamed = copy.deepcopy(sts)
    renamed["spec"]["serviceName"] = "other"
    assert [e.message() for e in strategy.validate_update(renamed, sts)] == [
        "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
        "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are "
        "forbidden"]


def test_daemonset_defaults():
    ds = _create("apps/daemonsets", _workload())
    assert ds["spec"]["updateStrategy"] == {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1, "maxSurge": 0}}
    assert ds["spec"]["revisionHistoryLimit"] == 10
    assert STRATEGIES["apps/daemonsets"].validate(ds) == []
    assert ds["metadata"]["annotations"] == {"deprecated.daemonset.template.generation": "1"}


def test_daemonset_template_generation_counts_template_changes_only():
    strategy = STRATEGIES["apps/daemonsets"]
    old = _create("apps/daemonsets", _workload())
    relabelled = copy.deepcopy(old)
    relabelled["spec"]["template"]["metadata"]["labels"]["tier"] = "x"
    relabelled["metadata"]["annotations"]["deprecated.daemonset.template.generation"] = "9"  # the server owns it
    strategy.prepare_for_update(relabelled, old, CTX)
    assert relabelled["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"
    slower = copy.deepcopy(relabelled)
    slower["spec"]["minReadySeconds"] = 5
    strategy.prepare_for_update(slower, relabelled, CTX)
    assert slower["metadata"]["annotations"]["deprecated.daemonset.template.generation"] == "2"


def test_replication_controller_selector_defaults_from_template():
    rc = {"metadata": {"name": "rc"}, "spec": {"template": {"metadata": {"labels": {"app": "x"}},
                                                            "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    rc = _create("/replicationcontrollers", rc)
    assert rc["spec"]["selector"] == {"app": "x"} and rc["metadata"]["labels"] == {"app": "x"}
    assert rc["spec"]["replicas"] == 1
    assert STRATEGIES["/replicationcontrollers"].validate(rc) == []


def _job():
    return {"metadata": {"name": "pi", "namespace": "default", "uid": "1234"},
            "spec": {"template": {"spec": {"containers": [{"name": "pi", "image": "perl"}], "restartPolicy": "Never"}}}}


def test_job_defaults_and_generated_selector():
    job = _create("batch/jobs", _job())
    spec = job["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed" and spec["suspend"] is False
    assert spec["podReplacementPolicy"] == "TerminatingOrFailed"
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": "1234"}}
    assert spec["template"]["metadata"]["labels"] == {
        "batch.kubernetes.io/controller-uid": "1234", "batch.kubernetes.io/job-name": "pi",
        "controller-uid": "1234", "job-name": "pi"}
    assert job["metadata"]["labels"] == spec["template"]["metadata"]["labels"]
    assert job["status"] == {}
    assert STRATEGIES["batch/jobs"].validate(job) == []


def test_job_restart_policy_and_immutable_template():
    bad = _job()
    del bad["spec"]["template"]["spec"]["restartPolicy"]
    bad = _create("batch/jobs", bad)
    assert [e.message() for e in STRATEGIES["batch/jobs"].validate(bad)] == [
        'spec.template.spec.restartPolicy: Required value: valid values: "OnFailure", "Never"']
    old = _create("batch/jobs", _job())
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["containers"][0]["image"] = "perl:2"
    errs = STRATEGIES["batch/jobs"].validate_update(new, old)
    assert [(e.path, e.detail) for e in errs] == [("spec.template", "field is immutable")]


def test_suspended_job_may_change_scheduling_directives():
    old = _job()
    old["spec"]["suspend"] = True
    old = _create("batch/jobs", old)
    new = copy.deepcopy(old)
    new["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a"}
    assert STRATEGIES["batch/jobs"].validate_update(new, old) == []


def test_cronjob_defaults_and_validation():
    cj = {"metadata": {"name": "hello"}, "spec": {"schedule": "*/1 * * * *", "jobTemplate": {"spec": {"template": {
        "spec": {"containers": [{"name": "c", "image": "busybox"}], "restartPolicy": "OnFailure"}}}}}}
    cj = _create("batch/cronjobs", cj)
    spec = cj["spec"]
    assert (spec["concurrencyPolicy"], spec["suspend"], spec["successfulJobsHistoryLimit"],
            spec["failedJobsHistoryLimit"]) == ("Allow", False, 3, 1)
    assert "backoffLimit" not in spec["jobTemplate"]["spec"]
    assert STRATEGIES["batch/cronjobs"].validate(cj) == []
    cj["spec"]["schedule"] = ""
    assert "spec.schedule: Required value" in [e.message() for e in STRATEGIES["batch/cronjobs"].validate(cj)]


@pytest.mark.parametrize("kind, strategy, expected", [
    ("Deployment", "strategy", {"maxUnavailable": "25%", "maxSurge": "25%"}),
    ("DaemonSet", "updateStrategy", {"maxUnavailable": 1, "maxSurge": 0}),
])
def test_null_rolling_update_fields_get_their_defaults(kind: str, strategy: str, expected: dict) -> None:
    cluster = Cluster()
    labels = {"app": "x"}
    created = cluster.create({
        "apiVersion": "apps/v1", "kind": kind, "metadata": {"name": "x"},
        "spec": {"selector": {"matchLabels": labels},
                 strategy: {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": None, "maxUnavailable": None}},
                 "template": {"metadata": {"labels": labels}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}})
    assert created["spec"][strategy]["rollingUpdate"] == expected
