"""storage.k8s.io/v1 CSIDrivers, CSINodes and VolumeAttachments over HTTP: v1's defaults,
the fields fixed at creation, the status subresource and kubectl's columns."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from tests.integration.test_request_semantics import request

GROUP = "/apis/storage.k8s.io/v1"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def test_csi_driver_defaults_and_columns(fakekube: Cluster) -> None:
    api = client.StorageV1Api(fakekube.client())
    driver = api.create_csi_driver({"metadata": {"name": "ebs.csi.aws.com"}, "spec": {"podInfoOnMount": True}})
    spec = driver.spec
    assert (spec.attach_required, spec.pod_info_on_mount, spec.storage_capacity, spec.fs_group_policy,
            spec.requires_republish, spec.volume_lifecycle_modes, spec.se_linux_mount) == \
        (True, True, False, "ReadWriteOnceWithFSType", False, ["Persistent"], False)
    code, table, _ = request(fakekube, "GET", f"{GROUP}/csidrivers", accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "AttachRequired", "PodInfoOnMount",
                                                               "StorageCapacity", "TokenRequests", "RequiresRepublish",
                                                               "Modes", "Age"]
    assert table["rows"][0]["cells"] == ["ebs.csi.aws.com", True, True, False, "<unset>", False, "Persistent", "0s"]
    with pytest.raises(ApiException) as changed:
        api.patch_csi_driver("ebs.csi.aws.com", {"spec": {"attachRequired": False}})
    assert json.loads(changed.value.body)["message"].endswith("spec.attachRequired: Invalid value: false: "
                                                              "field is immutable")


def test_csi_node_counts_its_drivers(fakekube: Cluster) -> None:
    api = client.StorageV1Api(fakekube.client())
    api.create_csi_node({"metadata": {"name": "node-1"}, "spec": {"drivers": [
        {"name": "ebs.csi.aws.com", "nodeID": "i-123", "topologyKeys": ["topology.ebs.csi.aws.com/zone"]}]}})
    code, table, _ = request(fakekube, "GET", f"{GROUP}/csinodes", accept=TABLE)
    assert table["rows"][0]["cells"] == ["node-1", 1, "0s"]
    with pytest.raises(ApiException) as bad:
        api.create_csi_node({"metadata": {"name": "node-2"}, "spec": {"drivers": [{"name": "x", "nodeID": ""}]}})
    assert json.loads(bad.value.body)["details"]["causes"][0]["field"] == "spec.drivers[0].nodeID"


def test_volume_attachment_spec_is_fixed_and_status_is_the_attachers(fakekube: Cluster) -> None:
    api = client.StorageV1Api(fakekube.client())
    created = api.create_volume_attachment({"metadata": {"name": "csi-abc"}, "spec": {
        "attacher": "ebs.csi.aws.com", "nodeName": "node-1", "source": {"persistentVolumeName": "pv-1"}},
        "status": {"attached": True}})
    assert created.status.to_dict() == {"attached": False, "attach_error": None, "attachment_metadata": None,
                                        "detach_error": None}  # the status sent is dropped; attached is not omitempty
    attached = api.patch_volume_attachment_status("csi-abc", {"status": {"attached": True,
                                                                         "attachmentMetadata": {"devicePath": "/dev/xvdb"}}})
    assert attached.status.attached is True
    code, table, _ = request(fakekube, "GET", f"{GROUP}/volumeattachments", accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Attacher", "PV", "Node", "Attached", "Age"]
    assert table["rows"][0]["cells"] == ["csi-abc", "ebs.csi.aws.com", "pv-1", "node-1", True, "0s"]
    with pytest.raises(ApiException) as changed:
        api.patch_volume_attachment("csi-abc", {"spec": {"nodeName": "node-2"}})
    assert json.loads(changed.value.body)["details"]["causes"][0] == {
        "reason": "FieldValueInvalid", "field": "spec",
        "message": "Invalid value: storage.VolumeAttachmentSpec{...}: field is immutable"}
    with pytest.raises(ApiException) as two_sources:
        api.create_volume_attachment({"metadata": {"name": "x"}, "spec": {"attacher": "a", "nodeName": "n",
                                                                           "source": {}}})
    assert json.loads(two_sources.value.body)["details"]["causes"][0] == {
        "reason": "FieldValueRequired", "field": "spec.source",
        "message": "Required value: must specify exactly one of inlineVolumeSpec and persistentVolumeName"}
