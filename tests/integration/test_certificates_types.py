"""certificates.k8s.io/v1 CertificateSigningRequests over HTTP: the requester stamped at
create, approval through its subresource (what ``kubectl certificate approve`` writes), a
status write that cannot touch approval, upstream's 422s and kubectl's columns."""

from __future__ import annotations

import base64
import http.client
import json
from urllib.parse import urlsplit

import pytest
from kubernetes import client
from kubernetes.client.rest import ApiException

from fakekube import Cluster
from tests.integration.test_request_semantics import request

CSRS = "/apis/certificates.k8s.io/v1/certificatesigningrequests"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
#: Requests and a certificate made with ``cryptography`` (P-256 keys), as kubectl users send them:
#: CN=alice O=devs, and CN=mallory O=system:masters.
PEM = b"""-----BEGIN CERTIFICATE REQUEST-----
MIHZMIGBAgEAMB8xDTALBgNVBAoMBGRldnMxDjAMBgNVBAMMBWFsaWNlMFkwEwYH
KoZIzj0CAQYIKoZIzj0DAQcDQgAEJu/OvQ7p40pmkYfhizqRIrL3M5RbZJzJ+fkh
6fna2BKQI4venMe7Mw0VDGdwTdJa5wVSBXRLbzG/QHB0WHLQ5qAAMAoGCCqGSM49
BAMCA0cAMEQCIGW5EN3dtCh74+mym8DZR/s3K/1VsEkTFEfOgK6Islg4AiBLq95Q
+FvGetwGCZ4r120JUJQo7aSBAwzrnySGwew1CQ==
-----END CERTIFICATE REQUEST-----
"""
MASTERS_PEM = b"""-----BEGIN CERTIFICATE REQUEST-----
MIHnMIGNAgEAMCsxFzAVBgNVBAoMDnN5c3RlbTptYXN0ZXJzMRAwDgYDVQQDDAdt
YWxsb3J5MFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAESHxb39A9RYr2TJrpB9PZ
iAXj3M1ERZyPvb3Os7V76IQG9v3BZpdd0rNcA3PHxJAdu2+XDGWEHHrDzcRMcZ23
AqAAMAoGCCqGSM49BAMCA0kAMEYCIQD6OLU9B+mWBefZmkVv17Vwb3KPhpRGr3Qm
2LytUCXPlAIhAKjfOT3ytbdOutzV6BWXz7hmKeOoUyWrFeQPniOWggFv
-----END CERTIFICATE REQUEST-----
"""
CERTIFICATE = b"""-----BEGIN CERTIFICATE-----
MIIBCzCBs6ADAgECAgEBMAoGCCqGSM49BAMCMBAxDjAMBgNVBAMMBWFsaWNlMB4X
DTI1MDEwMTAwMDAwMFoXDTI1MDEwMjAwMDAwMFowEDEOMAwGA1UEAwwFYWxpY2Uw
WTATBgcqhkjOPQIBBggqhkjOPQMBBwNCAAQQDv/bwOWjhgSLCTGjo7yZSdOHVnCB
nRv3xDRA+hbqj+c6Yd3BB36/UjyBYZKXYWjd9m+1rBwDm4IJUHMmkN66MAoGCCqG
SM49BAMCA0cAMEQCIDp/whp8EtJA+HgESrLXr3v+nMweHt7rLogPzlmcYJdOAiBE
bWILTIAWpPDRZNUiiAvRuvZOqCvH4Wn7nOKenLoMZQ==
-----END CERTIFICATE-----
"""


def csr_body(name: str = "alice", **spec: object) -> dict:
    return {"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest", "metadata": {"name": name},
            "spec": {"request": base64.b64encode(PEM).decode(), "signerName": "kubernetes.io/kube-apiserver-client",
                     "expirationSeconds": 86400, "usages": ["client auth"], **spec}}


def causes(exc: ApiException) -> list[tuple[str, str]]:
    body = json.loads(exc.body)
    return [(c["field"], c["message"]) for c in body["details"]["causes"]]


def test_create_stamps_the_requester_and_approval_writes_only_conditions(fakekube: Cluster) -> None:
    api = client.CertificatesV1Api(fakekube.client())
    created = api.create_certificate_signing_request({**csr_body(), "status": {"certificate": "eA=="}})
    assert (created.spec.username, created.spec.groups) == ("fakekube-admin", ["system:masters", "system:authenticated"])
    assert created.status.conditions is None and created.status.certificate is None

    fakekube.advance(30)
    created.status.conditions = [client.V1CertificateSigningRequestCondition(
        type="Approved", status="True", reason="KubectlApprove", message="This CSR was approved by kubectl certificate approve.")]
    created.spec.signer_name = "example.com/other"  # an approval write keeps the spec as stored
    approved = api.replace_certificate_signing_request_approval("alice", created)
    [condition] = approved.status.conditions
    assert (condition.type, condition.status, condition.reason) == ("Approved", "True", "KubectlApprove")
    assert condition.last_update_time.isoformat() == condition.last_transition_time.isoformat() == "2025-01-01T00:00:30+00:00"
    assert approved.spec.signer_name == "kubernetes.io/kube-apiserver-client"

    # The signer's /status write: a certificate and a Failed condition, but approval stays.
    status = {"status": {"certificate": base64.b64encode(CERTIFICATE).decode(),
                         "conditions": [{"type": "Failed", "status": "True", "reason": "SignerError"}]}}
    signed = api.patch_certificate_signing_request_status("alice", status)
    assert [c.type for c in signed.status.conditions] == ["Failed", "Approved"]
    code, table, _ = request(fakekube, "GET", CSRS, accept=TABLE)
    assert [c["name"] for c in table["columnDefinitions"]] == \
        ["Name", "Age", "SignerName", "Requestor", "RequestedDuration", "Condition"]
    assert table["rows"][0]["cells"] == ["alice", "30s", "kubernetes.io/kube-apiserver-client", "fakekube-admin", "24h",
                                         "Approved,Failed,Issued"]


def test_no_write_owns_a_csr_s_spec(fakekube: Cluster) -> None:
    """The CSR strategy's reset fields: spec (the requester's identity is the server's) and
    status are nobody's on the main resource, so a CSR created with only a spec has no
    managedFields, and one with labels owns only them (kube-apiserver 1.36's answers)."""
    api = client.CertificatesV1Api(fakekube.client())
    bare = api.create_certificate_signing_request(csr_body("bare"), field_manager="me")
    assert bare.metadata.managed_fields is None
    labelled = api.create_certificate_signing_request({**csr_body("labelled"), "metadata": {
        "name": "labelled", "labels": {"team": "a"}}}, field_manager="me")
    (entry,) = labelled.metadata.managed_fields
    assert entry.fields_v1 == {"f:metadata": {"f:labels": {".": {}, "f:team": {}}}}

def test_approval_cannot_be_withdrawn_nor_both_approved_and_denied(fakekube: Cluster) -> None:
    api = client.CertificatesV1Api(fakekube.client())
    csr = api.create_certificate_signing_request(csr_body())
    csr.status.conditions = [client.V1CertificateSigningRequestCondition(type="Approved", status="True"),
                             client.V1CertificateSigningRequestCondition(type="Denied", status="True")]
    with pytest.raises(ApiException) as both:
        api.replace_certificate_signing_request_approval("alice", csr)
    assert both.value.status == 422
    assert causes(both.value) == [("status.conditions", "Invalid value: []certificates.CertificateSigningRequestCondition"
                                                        "{...}: Approved and Denied conditions are mutually exclusive")]
    csr.status.conditions = csr.status.conditions[:1]
    approved = api.replace_certificate_signing_request_approval("alice", csr)
    approved.status.conditions = []
    with pytest.raises(ApiException) as removed:
        api.replace_certificate_signing_request_approval("alice", approved)
    assert causes(removed.value) == [("status.conditions", 'Forbidden: updates may not remove a condition of type "Approved"')]


def test_validation_of_a_new_request(fakekube: Cluster) -> None:
    """Upstream's order: request, usages, signer name, expiration; supported usages sorted."""
    code, bad, _ = request(fakekube, "POST", CSRS, csr_body(request=base64.b64encode(b"nope").decode(), signerName="",
                                                            expirationSeconds=60, usages=["client auth", "bogus"]))
    assert code == 422
    assert bad["message"].startswith('CertificateSigningRequest.certificates.k8s.io "alice" is invalid: [spec.request: '
                                     'Invalid value: "bm9wZQ==": PEM block type must be CERTIFICATE '
                                     'REQUEST, spec.usages[1]: Unsupported value: "bogus": supported values: "any", '
                                     '"cert sign", "client auth", ')
    assert bad["message"].endswith('"timestamping", spec.signerName: Required value, spec.expirationSeconds: Invalid '
                                   'value: 60: may not specify a duration less than 600 seconds (10 minutes)]')
    code, missing, _ = request(fakekube, "POST", CSRS, csr_body(usages=[]))
    assert code == 422 and missing["details"]["causes"] == [
        {"reason": "FieldValueRequired", "message": "Required value: usages must be provided", "field": "spec.usages"}]


@pytest.mark.parametrize(("signer", "causes"), [
    ("not a signer", [("spec.signerName", "Invalid value: \"not a signer\": must be a fully qualified domain and path "
                                          "of the form 'example.com/signer-name'")]),
    ("example/signer", [("spec.signerName", 'Invalid value: "example": should be a domain with at least two segments '
                                            "separated by dots")]),
    ("Example.com/s", [("spec.signerName", 'Invalid value: "Example.com": validating label "Example": a lowercase '
                                           "RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                                           "and must start and end with an alphanumeric character (e.g. 'my-name',  or "
                                           "'123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")]),
])
def test_signer_names_are_validated_as_upstream(fakekube: Cluster, signer: str, causes: list[tuple[str, str]]) -> None:
    code, bad, _ = request(fakekube, "POST", CSRS, csr_body(signerName=signer))
    assert code == 422, bad
    assert [(c["field"], c["message"]) for c in bad["details"]["causes"]] == causes


def test_a_status_certificate_must_be_pem_and_is_set_once(fakekube: Cluster) -> None:
    request(fakekube, "POST", CSRS, csr_body())
    merge = "application/merge-patch+json"

    def write(certificate: bytes) -> tuple[int, dict]:
        code, answer, _ = request(fakekube, "PATCH", f"{CSRS}/alice/status",
                                  {"status": {"certificate": base64.b64encode(certificate).decode()}}, content_type=merge)
        return code, answer

    code, bad = write(b"not a certificate")
    assert (code, bad["message"]) == (422, 'CertificateSigningRequest.certificates.k8s.io "alice" is invalid: '
                                           'status.certificate: Invalid value: "<certificate data>": must contain at '
                                           "least one CERTIFICATE PEM block")
    code, bad = write(PEM)
    assert bad["details"]["causes"][0]["message"] == ('Invalid value: "<certificate data>": only CERTIFICATE PEM '
                                                      'blocks are allowed, found "CERTIFICATE REQUEST"')
    assert write(CERTIFICATE)[0] == 200
    code, again = write(CERTIFICATE + CERTIFICATE)
    assert (code, again["details"]["causes"]) == (422, [{
        "reason": "FieldValueForbidden", "message": "Forbidden: updates may not modify existing certificate content",
        "field": "status.certificate"}])


def test_a_kube_apiserver_client_csr_may_not_ask_for_system_masters(fakekube: Cluster) -> None:
    """CertificateSubjectRestriction: the organization in the request's subject decides."""
    masters = base64.b64encode(MASTERS_PEM).decode()
    code, refused, _ = request(fakekube, "POST", CSRS, csr_body("mallory", request=masters))
    assert (code, refused["reason"], refused["message"]) == (
        403, "Forbidden", 'certificatesigningrequests.certificates.k8s.io "mallory" is forbidden: use of '
                          "kubernetes.io/kube-apiserver-client signer with system:masters group is not allowed")
    assert request(fakekube, "POST", CSRS, csr_body("mallory", request=masters, signerName="example.com/s"))[0] == 201


def test_the_requester_is_who_asked_not_who_the_body_claims() -> None:
    from fakekube.api.auth import UserInfo
    with Cluster(tls=False, static_tokens={"alice-token": UserInfo("alice", ("devs",), "u-1")}) as cluster:
        body = csr_body(username="mallory", groups=["system:masters"])
        url = urlsplit(cluster.url)
        connection = http.client.HTTPConnection(url.hostname, url.port, timeout=30)
        connection.request("POST", CSRS, body=json.dumps(body), headers={
            "Authorization": "Bearer alice-token", "Content-Type": "application/json"})
        created = json.loads(connection.getresponse().read())
        connection.close()
    assert (created["spec"]["username"], created["spec"]["uid"], created["spec"]["groups"]) == \
        ("alice", "u-1", ["devs", "system:authenticated"])
