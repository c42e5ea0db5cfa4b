"""Pod defaults, QoS and update rules, checked against what a 1.33 apiserver returns."""

from __future__ import annotations

import copy
import random
from datetime import datetime, timezone

from fakekube.api.machinery.errors import invalid_object
from fakekube.api.registry import WriteContext
from fakekube.api import types
from fakekube.api.types.core_pods import POD_UPDATE_FORBIDDEN, compute_qos_class, image_pull_policy_for


class _Store:
    def get_object(self, group, resource, namespace, name):
        return None

    def list_objects(self, group, resource, namespace=""):
        return []


CTX = WriteContext(datetime(2025, 1, 1, tzinfo=timezone.utc), random.Random(1), _Store())
PODS = types.PODS.strategy


def _create(pod: dict) -> dict:
    pod = copy.deepcopy(pod)
    PODS.default(pod, CTX)
    PODS.prepare_for_create(pod, CTX)
    return pod


def _minimal() -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web", "namespace": "default"},
            "spec": {"containers": [{"name": "nginx", "image": "nginx", "ports": [{"containerPort": 80}]}]}}


def test_minimal_pod_gets_upstream_defaults():
    pod = _create(_minimal())
    spec = pod["spec"]
    assert spec["restartPolicy"] == "Always"
    assert spec["dnsPolicy"] == "ClusterFirst"
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["securityContext"] == {}
    assert spec["enableServiceLinks"] is True
    # Not defaulting: the ServiceAccount and Priority admission plugins set these
    # (tests/integration/test_admission_serviceaccount.py, test_priority.py).
    assert "serviceAccountName" not in spec and "serviceAccount" not in spec
    assert "priority" not in spec and "preemptionPolicy" not in spec
    assert spec["containers"][0] == {
        "name": "nginx", "image": "nginx", "ports": [{"containerPort": 80, "protocol": "TCP"}],
        "imagePullPolicy": "Always", "terminationMessagePath": "/dev/termination-log",
        "terminationMessagePolicy": "File", "resources": {},
    }
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    assert PODS.validate(pod) == []


def test_the_deprecated_service_account_field_mirrors_the_name():
    # v1's conversion: the old field alone names the account; the new one wins; both are written.
    assert _create({**_minimal(), "spec": {**_minimal()["spec"], "serviceAccount": "old"}})["spec"][
        "serviceAccountName"] == "old"
    both = _create({**_minimal(), "spec": {**_minimal()["spec"], "serviceAccount": "old", "serviceAccountName": "new"}})
    assert (both["spec"]["serviceAccountName"], both["spec"]["serviceAccount"]) == ("new", "new")


def test_image_pull_policy_follows_the_tag():
    assert image_pull_policy_for("nginx") == "Always"
    assert image_pull_policy_for("nginx:latest") == "Always"
    assert image_pull_policy_for("nginx:1.27") == "IfNotPresent"
    assert image_pull_policy_for("localhost:5000/app") == "Always"
    assert image_pull_policy_for("localhost:5000/app:v1") == "IfNotPresent"
    assert image_pull_policy_for("nginx@sha256:abc") == "IfNotPresent"


def test_qos_classes():
    def spec(*resources):
        return {"containers": [{"name": f"c{i}", "resources": r} for i, r in enumerate(resources)]}
    full = {"limits": {"cpu": "1", "memory": "1Gi"}, "requests": {"cpu": "1000m", "memory": "1Gi"}}
    assert compute_qos_class(spec(full)) == "Guaranteed"
    assert compute_qos_class(spec(full, {})) == "Burstable"
    assert compute_qos_class(spec({"requests": {"cpu": "100m"}})) == "Burstable"
    assert compute_qos_class(spec({"requests": {"cpu": "0"}})) == "BestEffort"
    assert compute_qos_class(spec({})) == "BestEffort"


def test_limits_only_pod_is_guaranteed_because_requests_default_to_limits():
    pod = _minimal()
    pod["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "500m", "memory": "128Mi"}}
    pod = _create(pod)
    assert pod["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "500m", "memory": "128Mi"}
    assert pod["status"]["qosClass"] == "Guaranteed"


def test_validation_messages_match_upstream():
    pod = _create({"metadata": {"name": "x"}, "spec": {"containers": [
        {"name": "Bad_Name", "image": "a"}, {"name": "dup", "image": "a"}, {"name": "dup", "image": ""}],
        "restartPolicy": "Sometimes"}})
    messages = [e.message() for e in PODS.validate(pod)]
    assert any(m.startswith('spec.containers[0].name: Invalid value: "Bad_Name": a lowercase RFC 1123 label') for m in messages)
    assert 'spec.containers[2].name: Duplicate value: "dup"' in messages
    assert "spec.containers[2].image: Required value" in messages
    assert ('spec.restartPolicy: Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"'
            in messages)


def test_no_containers_and_bad_port():
    pod = _create({"metadata": {"name": "x"}, "spec": {}})
    assert [e.message() for e in PODS.validate(pod)] == ["spec.containers: Required value"]
    pod = _minimal()
    pod["spec"]["containers"][0]["ports"] = [{"containerPort": 70000}]
    pod = _create(pod)
    assert [e.message() for e in PODS.validate(pod)] == [
        "spec.containers[0].ports[0].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive"]


def test_update_may_change_image_and_add_tolerations():
    old = _create(_minimal())
    new = copy.deepcopy(old)
    new["spec"]["containers"][0]["image"] = "nginx:1.27"
    new["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
    new["spec"]["activeDeadlineSeconds"] = 100
    assert PODS.validate_update(new, old) == []


def test_update_of_other_fields_is_forbidden_with_upstream_message():
    old = _create(_minimal())
    new = copy.deepcopy(old)
    new["spec"]["restartPolicy"] = "Never"
    new["spec"]["nodeName"] = "node-1"
    errs = PODS.validate_update(new, old)
    assert len(errs) == 1 and errs[0].path == "spec" and errs[0].type == "FieldValueForbidden"
    message = invalid_object("", "Pod", "web", errs).message
    assert message.startswith(
        'Pod "web" is invalid: spec: Forbidden: pod updates may not change fields other than '
        "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,"
        "`spec.tolerations` (only additions to existing tolerations),"
        "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)\n")
    assert errs[0].detail.startswith(POD_UPDATE_FORBIDDEN)


def test_update_rules_for_containers_deadline_and_tolerations():
    old = _minimal()
    old["spec"]["tolerations"] = [{"key": "k", "operator": "Exists", "effect": "NoSchedule"}]
    old["spec"]["activeDeadlineSeconds"] = 50
    old = _create(old)
    removed = copy.deepcopy(old)
    removed["spec"]["containers"].append({"name": "b", "image": "b"})
    PODS.default(removed, CTX)
    assert [e.message() for e in PODS.validate_update(removed, old)] == [
        "spec.containers: Forbidden: pod updates may not add or remove containers"]
    longer = copy.deepcopy(old)
    longer["spec"]["activeDeadlineSeconds"] = 60
    assert [e.message() for e in PODS.validate_update(longer, old)] == [
        "spec.activeDeadlineSeconds: Invalid value: 60: must be less than or equal to previous value"]
    dropped = copy.deepcopy(old)
    dropped["spec"]["tolerations"] = []
    assert [e.message() for e in PODS.validate_update(dropped, old)] == [
        "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds"]


def test_grace_period_may_go_from_negative_to_one():
    old = _minimal()
    old["spec"]["terminationGracePeriodSeconds"] = -1
    old = _create(old)
    new = copy.deepcopy(old)
    new["spec"]["terminationGracePeriodSeconds"] = 1
    assert PODS.validate_update(new, old) == []
    new["spec"]["terminationGracePeriodSeconds"] = 5
    assert PODS.validate_update(new, old) != []
