"""kubectl against the rest of the built-in API: ``certificate approve``/``deny``, ``get
componentstatuses``, ``get flowschemas``, and what ``kubectl exec`` says (fakekube lists
exec but does not run commands)."""

from __future__ import annotations

import base64

import pytest

from fakekube import Cluster

from .conftest import Kubectl

pytestmark = pytest.mark.fakekube(nodes=1)

#: A real request (CN=alice, O=devs): the kube-apiserver-client signer's admission parses it.
PEM = b"""-----BEGIN CERTIFICATE REQUEST-----
MIHZMIGBAgEAMB8xDTALBgNVBAoMBGRldnMxDjAMBgNVBAMMBWFsaWNlMFkwEwYH
KoZIzj0CAQYIKoZIzj0DAQcDQgAEJu/OvQ7p40pmkYfhizqRIrL3M5RbZJzJ+fkh
6fna2BKQI4venMe7Mw0VDGdwTdJa5wVSBXRLbzG/QHB0WHLQ5qAAMAoGCCqGSM49
BAMCA0cAMEQCIGW5EN3dtCh74+mym8DZR/s3K/1VsEkTFEfOgK6Islg4AiBLq95Q
+FvGetwGCZ4r120JUJQo7aSBAwzrnySGwew1CQ==
-----END CERTIFICATE REQUEST-----
"""


def csr(name: str) -> str:
    return f"""apiVersion: certificates.k8s.io/v1
kind: CertificateSigningRequest
metadata:
  name: {name}
spec:
  request: {base64.b64encode(PEM).decode()}
  signerName: kubernetes.io/kube-apiserver-client
  expirationSeconds: 86400
  usages: [client auth]
"""


def test_certificate_approve_and_deny(kubectl: Kubectl, fakekube: Cluster) -> None:
    kubectl.ok("apply", "-f", "-", stdin=csr("alice") + "---\n" + csr("bob"))
    assert kubectl.ok("certificate", "approve", "alice") == \
        "certificatesigningrequest.certificates.k8s.io/alice approved\n"
    assert kubectl.ok("certificate", "deny", "bob") == "certificatesigningrequest.certificates.k8s.io/bob denied\n"
    assert kubectl.ok("get", "csr") == (
        "NAME    AGE   SIGNERNAME                            REQUESTOR        REQUESTEDDURATION   CONDITION\n"
        "alice   0s    kubernetes.io/kube-apiserver-client   fakekube-admin   24h                 Approved\n"
        "bob     0s    kubernetes.io/kube-apiserver-client   fakekube-admin   24h                 Denied\n")
    [approved] = fakekube.get("certificates.k8s.io/v1", "CertificateSigningRequest", "alice")["status"]["conditions"]
    assert (approved["type"], approved["reason"]) == ("Approved", "KubectlApprove")
    again = kubectl("certificate", "deny", "alice")
    assert (again.rc, again.stderr) == (1, 'error: certificate signing request "alice" is already Approved\n')


def test_get_componentstatuses(kubectl: Kubectl) -> None:
    result = kubectl("get", "componentstatuses")
    assert result.rc == 0
    assert result.stderr == "Warning: v1 ComponentStatus is deprecated in v1.19+\n"
    assert result.stdout == ("NAME                 STATUS    MESSAGE   ERROR\n"
                             "scheduler            Healthy   ok        \n"
                             "controller-manager   Healthy   ok        \n"
                             "etcd-0               Healthy   ok        \n")


def test_get_flowschemas_and_priority_levels(kubectl: Kubectl) -> None:
    lines = kubectl.ok("get", "flowschemas").splitlines()
    assert lines[0].split() == ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"]
    assert lines[1].split() == ["catch-all", "catch-all", "10000", "ByUser", "0s", "False"]
    assert len(lines) == 14
    assert kubectl.ok("get", "prioritylevelconfiguration", "exempt").splitlines()[1].split() == \
        ["exempt", "Exempt", "<none>", "<none>", "<none>", "<none>", "0s"]
