"""CertificateSubjectRestriction (plugin/pkg/admission/certificates/subjectrestriction).

A CertificateSigningRequest for the ``kubernetes.io/kube-apiserver-client`` signer may not
ask for the ``system:masters`` organization: a certificate in that group is a cluster
admin that no RBAC binding can take back. The request is refused at create with a 403,
also when its PEM cannot be parsed.
"""

from __future__ import annotations

import base64
import binascii

from fakekube.api.admission.attributes import CREATE, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.api.types import _pem
from fakekube.objects.kinds import CERTIFICATE_SIGNING_REQUESTS

KUBE_APISERVER_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"
MASTERS_GROUP = "system:masters"


class CertificateSubjectRestriction(Handler):
    name = "CertificateSubjectRestriction"
    operations = frozenset((CREATE,))
    resources = {"validate": frozenset((CERTIFICATE_SIGNING_REQUESTS,))}

    def validate(self, a: Attributes) -> None:
        if a.rt.key != CERTIFICATE_SIGNING_REQUESTS or a.subresource or a.obj is None:
            return
        spec = a.obj.get("spec") or {}
        if spec.get("signerName") != KUBE_APISERVER_CLIENT_SIGNER:
            return
        try:
            organizations = _pem.csr_organizations(base64.b64decode(str(spec.get("request") or ""), validate=True))
        except (binascii.Error, ValueError) as problem:
            raise a.forbidden(f"failed to parse CSR: {problem}") from None
        if MASTERS_GROUP in organizations:
            raise a.forbidden(f"use of {KUBE_APISERVER_CLIENT_SIGNER} signer with {MASTERS_GROUP} group is not allowed")


def new(context: PluginContext) -> CertificateSubjectRestriction:
    return CertificateSubjectRestriction()
