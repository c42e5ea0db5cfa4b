"""Printers of the cluster-administration types: CertificateSigningRequests, FlowSchemas and
PriorityLevelConfigurations, RuntimeClasses, ComponentStatuses and PodTemplates.

Columns and cells as upstream's ``pkg/printers/internalversion/printers.go`` (1.33).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from fakekube.api.table.cells import NONE, age_cell, container_cells, format_labels, get, meta
from fakekube.api.table.columns import AGE, NAME, Cells, Column, Obj, TableSpec, col, doc
from fakekube.api.table.duration import human_duration


def csr_condition(csr: Obj) -> str:
    """CONDITION: Denied, Approved or Pending, then Failed and Issued (extractCSRStatus)."""
    types = {c.get("type") for c in get(csr, "status", "conditions", default=[]) or []}
    if "Denied" in types:
        status = "Denied"
    elif "Approved" in types:
        status = "Approved"
    else:
        status = "Pending"
    if "Failed" in types:
        status += ",Failed"
    if get(csr, "status", "certificate"):
        status += ",Issued"
    return status


def _csr_cells(csr: Obj, now: datetime) -> Cells:
    spec = csr.get("spec") or {}
    seconds = spec.get("expirationSeconds")
    requested = NONE if seconds is None else human_duration(float(seconds))
    return [meta(csr, "name", ""), age_cell(csr, now), spec.get("signerName") or NONE, spec.get("username", ""),
            requested, csr_condition(csr)]


_V1BETA1_SIGNER_NAME_DOC = (
    "Requested signer for the request. It is a qualified name in the form: `scope-hostname.io/name`. If empty, it "
    "will be defaulted:\n 1. If it's a kubelet client certificate, it is assigned\n    "
    "\"kubernetes.io/kube-apiserver-client-kubelet\".\n 2. If it's a kubelet serving certificate, it is assigned\n"
    "    \"kubernetes.io/kubelet-serving\".\n 3. Otherwise, it is assigned \"kubernetes.io/legacy-unknown\".\n"
    "Distribution of trust for signers happens out of band. You can select on this field using `spec.signerName`.")

CERTIFICATE_SIGNING_REQUEST_TABLE = TableSpec((
    NAME,
    AGE,
    # upstream describes these with certificates/v1beta1's docs (served no more: their text is here)
    col("SignerName", description=_V1BETA1_SIGNER_NAME_DOC),
    col("Requestor", description="Base64-encoded PKCS#10 CSR data"),
    doc("RequestedDuration", "certificates.v1.CertificateSigningRequestSpec", "expirationSeconds"),
    col("Condition", description="Conditions applied to the request, such as approval or denial."),
), _csr_cells)


def _flow_schema_cells(fs: Obj, now: datetime) -> Cells:
    spec = fs.get("spec") or {}
    method = (spec.get("distinguisherMethod") or {}).get("type") or NONE
    missing = next((c.get("status", "") for c in get(fs, "status", "conditions", default=[]) or []
                    if c.get("type") == "Dangling"), "?")
    return [meta(fs, "name", ""), get(spec, "priorityLevelConfiguration", "name", default=""),
            spec.get("matchingPrecedence", 0), method, age_cell(fs, now), missing]


FLOW_SCHEMA_TABLE = TableSpec((
    NAME,
    doc("PriorityLevel", "flowcontrol.v1.PriorityLevelConfigurationReference", "name"),
    doc("MatchingPrecedence", "flowcontrol.v1.FlowSchemaSpec", "matchingPrecedence"),
    doc("DistinguisherMethod", "flowcontrol.v1.FlowSchemaSpec", "distinguisherMethod"),
    AGE,
    col("MissingPL", description="references a broken or non-existent PriorityLevelConfiguration"),
), _flow_schema_cells)


def _priority_level_cells(pl: Obj, now: datetime) -> Cells:
    spec = pl.get("spec") or {}
    limited = spec.get("limited")
    shares: Any = NONE
    queues: Any = NONE
    hand: Any = NONE
    length: Any = NONE
    if limited is not None:
        shares = limited.get("nominalConcurrencyShares", 0)
        queuing = (limited.get("limitResponse") or {}).get("queuing")
        if queuing is not None:
            queues, hand, length = (queuing.get("queues", 0), queuing.get("handSize", 0),
                                    queuing.get("queueLengthLimit", 0))
    return [meta(pl, "name", ""), spec.get("type", ""), shares, queues, hand, length, age_cell(pl, now)]


PRIORITY_LEVEL_CONFIGURATION_TABLE = TableSpec((
    NAME,
    doc("Type", "flowcontrol.v1.PriorityLevelConfigurationSpec", "type"),
    doc("NominalConcurrencyShares", "flowcontrol.v1.LimitedPriorityLevelConfiguration",
            "nominalConcurrencyShares"),
    doc("Queues", "flowcontrol.v1.QueuingConfiguration", "queues"),
    doc("HandSize", "flowcontrol.v1.QueuingConfiguration", "handSize"),
    doc("QueueLengthLimit", "flowcontrol.v1.QueuingConfiguration", "queueLengthLimit"),
    AGE,
), _priority_level_cells)


#: Upstream describes Handler with ObjectMeta's (absent) "handler" doc: an empty description.
RUNTIME_CLASS_TABLE = TableSpec((NAME, Column("Handler"), AGE),
                                lambda rc, now: [meta(rc, "name", ""), rc.get("handler", ""), age_cell(rc, now)])


def _component_status_cells(cs: Obj, now: datetime) -> Cells:
    status, message, error = "Unknown", "", ""
    for condition in cs.get("conditions") or []:
        if condition.get("type") == "Healthy":
            status = "Healthy" if condition.get("status") == "True" else "Unhealthy"
            message, error = condition.get("message", ""), condition.get("error", "")
            break
    return [meta(cs, "name", ""), status, message, error]


COMPONENT_STATUS_TABLE = TableSpec((
    NAME,
    col("Status", description="Status of the component conditions"),
    col("Message", description="Message of the component conditions"),
    col("Error", description="Error of the component conditions"),
), _component_status_cells)


def _pod_template_cells(pt: Obj, now: datetime) -> Cells:
    template = pt.get("template") or {}
    names, images = container_cells(template.get("spec"))
    return [meta(pt, "name", ""), names, images, format_labels((template.get("metadata") or {}).get("labels"))]


POD_TEMPLATE_TABLE = TableSpec((
    NAME,
    col("Containers", description="Names of each container in the template."),
    col("Images", description="Images referenced by each container in the template."),
    col("Pod Labels", description="The labels for the pod template."),
), _pod_template_cells)
