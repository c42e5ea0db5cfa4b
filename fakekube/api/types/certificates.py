"""certificates.k8s.io/v1 CertificateSigningRequests, with their ``status`` and ``approval``
subresources (``kubectl certificate approve|deny`` writes the approval).

As upstream's ``pkg/registry/certificates/certificates/strategy.go``: a new request gets its
requester's identity in ``spec.username``/``groups`` and an empty status; the spec never
changes after creation (an update's spec is replaced by the stored one, silently); a status
write cannot add or remove the Approved/Denied conditions, and an approval write changes
only the conditions. Condition timestamps are filled as upstream's
``populateConditionTimestamps`` does. Validation is ``ValidateCertificateSigningRequest*``'s
(``pkg/apis/certificates/validation``) for the fields clients write.
"""

from __future__ import annotations

import base64
import binascii
from typing import Any, Callable

from fakekube.api.auth.identity import ADMIN_GROUPS, ADMIN_USERNAME
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.api.machinery.validation import (DNS1123_LABEL_MAX_LENGTH, DNS1123_SUBDOMAIN_MAX_LENGTH,
                                               is_dns1123_label, is_dns1123_subdomain)
from fakekube.api.registry import APPROVAL, STATUS, ResourceType, Strategy, WriteContext
from fakekube.api.table import CERTIFICATE_SIGNING_REQUEST_TABLE
from fakekube.api.types import _pem
from fakekube.api.types._util import GoLiteral, Obj
from fakekube.clock import format_rfc3339

APPROVED = "Approved"
DENIED = "Denied"
FAILED = "Failed"
#: ``KeyUsage`` values upstream accepts, in its order.
KEY_USAGES = ["signing", "digital signature", "content commitment", "key encipherment", "key agreement",
              "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only", "any", "server auth",
              "client auth", "code signing", "email protection", "s/mime", "ipsec end system", "ipsec tunnel",
              "ipsec user", "timestamping", "ocsp signing", "microsoft sgc", "netscape sgc"]
#: The shortest certificate lifetime a request may ask for (10 minutes).
MIN_EXPIRATION_SECONDS = 600


def _go_bytes(data: bytes) -> GoLiteral:
    """A ``[]byte`` as Go's ``%#v`` prints it in a field error (JSON: base64 in a string)."""
    return GoLiteral("[]byte{" + ", ".join(f"0x{b:x}" for b in data) + "}",
                     '"' + base64.b64encode(data).decode() + '"')


def _request_problems(request: Any) -> list[FieldError]:
    """``spec.request``: base64 of a PEM ``CERTIFICATE REQUEST`` block (the signature is not
    checked: fakekube does not parse the DER it carries)."""
    if not request:
        return [errors.required("spec.request")]
    try:
        data = base64.b64decode(str(request), validate=True)
    except (binascii.Error, ValueError):
        return [errors.invalid("spec.request", GoLiteral("[]byte{}", '""'), _pem.CSR_TYPE_PROBLEM)]
    blocks = _pem.pem_blocks(data)
    if not blocks or blocks[0].type != _pem.CSR_BLOCK:
        return [errors.invalid("spec.request", _go_bytes(data), _pem.CSR_TYPE_PROBLEM)]
    return []


def _usage_problems(usages: Any, old_usages: Any) -> list[FieldError]:
    """Unknown and repeated usages, each allowed when the stored request already had them
    (upstream's ``allowUnknownUsages``/``allowDuplicateUsages``); the supported values are
    listed sorted, as upstream's string set prints them."""
    if not usages:
        return [errors.required("spec.usages", "usages must be provided")]
    problems: list[FieldError] = []
    if not any(usage not in KEY_USAGES for usage in old_usages or []):
        problems += [errors.not_supported(f"spec.usages[{i}]", usage, sorted(KEY_USAGES))
                     for i, usage in enumerate(usages) if usage not in KEY_USAGES]
    if len(set(old_usages or [])) == len(old_usages or []):
        problems += [errors.duplicate(f"spec.usages[{i}]", usage)
                     for i, usage in enumerate(usages) if usage in usages[:i]]
    return problems


def _signer_problems(signer: Any) -> list[FieldError]:
    """``ValidateSignerName``: ``<domain>/<path>``, the domain DNS-1123 labels (at least two),
    the path DNS-1123 subdomains."""
    path = "spec.signerName"
    if not signer:
        return [errors.required(path)]
    signer = str(signer)
    segments = signer.split("/")
    if len(segments) != 2:
        return [errors.invalid(path, signer, "must be a fully qualified domain and path of the form "
                                             "'example.com/signer-name'")]
    domain, name = segments
    problems: list[FieldError] = []
    if len(domain.encode()) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        problems.append(errors.too_long(path, "", DNS1123_SUBDOMAIN_MAX_LENGTH))
    problems += _label_problems(path, domain, domain.split("."), is_dns1123_label)
    if len(domain.split(".")) < 2:
        problems.append(errors.invalid(path, domain, "should be a domain with at least two segments separated by dots"))
    problems += _label_problems(path, name, name.split("."), is_dns1123_subdomain)
    longest = 2 * DNS1123_SUBDOMAIN_MAX_LENGTH + DNS1123_LABEL_MAX_LENGTH + 2
    if len(signer.encode()) > longest:
        problems.append(errors.too_long(path, "", longest))
    return problems


def _label_problems(path: str, segment: str, labels: list[str], check: Callable[[str], list[str]]) -> list[FieldError]:
    """The first label of a signer name's segment that ``check`` refuses, one error per problem."""
    for label in labels:
        found = check(label)
        if found:
            return [errors.invalid(path, segment, f'validating label "{label}": {problem}') for problem in found]
    return []


def _certificate_problems(new: Obj, old: Obj | None) -> list[FieldError]:
    """``status.certificate`` holds CERTIFICATE PEM blocks; a stored certificate that does
    not, or an update that leaves it alone, is tolerated (``allowArbitraryCertificate``)."""
    certificate = (new.get("status") or {}).get("certificate") or ""
    old_certificate = ((old or {}).get("status") or {}).get("certificate") or ""
    if old is not None and (certificate == old_certificate or _pem.certificate_problem(_decoded(old_certificate))):
        return []
    problem = _pem.certificate_problem(_decoded(certificate))
    return [errors.invalid("status.certificate", "<certificate data>", problem)] if problem else []


def _decoded(value: str) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return value.encode()


def _condition_problems(conditions: Any) -> list[FieldError]:
    problems: list[FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(conditions or []):
        path = f"status.conditions[{i}]"
        ctype = condition.get("type") or ""
        if not ctype:
            problems.append(errors.required(f"{path}.type"))
        status = condition.get("status") or ""
        if ctype in (APPROVED, DENIED, FAILED) and ctype in seen:
            problems.append(errors.duplicate(f"{path}.type", ctype))
        seen.add(ctype)
        if ctype in (APPROVED, DENIED) and status != "True":
            problems.append(errors.not_supported(f"{path}.status", status, ["True"]))
        elif status not in ("True", "False", "Unknown"):
            problems.append(errors.not_supported(f"{path}.status", status, ["False", "True", "Unknown"]))
    if APPROVED in seen and DENIED in seen:
        problems.append(errors.invalid("status.conditions", GoLiteral("[]certificates.CertificateSigningRequestCondition{...}"),
                                       "Approved and Denied conditions are mutually exclusive"))
    return problems


def _kept_approvals(new_conditions: list[Obj], old_conditions: list[Obj]) -> list[Obj]:
    """A /status write's conditions with the stored Approved/Denied ones in place of its own
    (upstream's ``preserveConditionInstances``)."""
    kept = [c for c in new_conditions if c.get("type") not in (APPROVED, DENIED)]
    return kept + [deep_copy(c) for c in old_conditions if c.get("type") in (APPROVED, DENIED)]


def _stamp_conditions(conditions: list[Obj], old_conditions: list[Obj], now: str) -> None:
    """``populateConditionTimestamps``: a new condition's times are now; a kept one keeps its
    transition time while its status is unchanged."""
    for condition in conditions:
        if not condition.get("lastUpdateTime"):
            condition["lastUpdateTime"] = now
        if condition.get("lastTransitionTime"):
            continue
        before = next((c for c in old_conditions if c.get("type") == condition.get("type")), None)
        if before is not None and before.get("status") == condition.get("status") and before.get("lastTransitionTime"):
            condition["lastTransitionTime"] = before["lastTransitionTime"]
        else:
            condition["lastTransitionTime"] = now


class CertificateSigningRequestStrategy(Strategy):
    """CSRs: the requester's identity stamped at create; spec fixed; approval by subresource.

    No write owns ``spec`` in managedFields (upstream's reset fields: the requester's identity
    is the server's), the main resource no status, each subresource only its own part."""

    reset_fields = {
        "": {"f:spec": {}, "f:status": {}},
        "status": {"f:spec": {}, "f:status": {"f:conditions": {}}},
        "approval": {"f:spec": {}, "f:status": {"f:certificate": {}}},
    }

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        """The requester's identity (``ctx.user``; None: the admin), never the client's claim."""
        spec = obj.setdefault("spec", {})
        for name in ("username", "uid", "groups", "extra"):
            spec.pop(name, None)
        user = ctx.user
        spec["username"] = user.username if user is not None else ADMIN_USERNAME
        if user is not None and user.uid:
            spec["uid"] = user.uid
        spec["groups"] = list(user.groups) if user is not None else list(ADMIN_GROUPS)
        if user is not None and user.extra:
            spec["extra"] = {key: list(values) for key, values in user.extra}
        obj["status"] = {}

    def prepare_for_update(self, new: Obj, old: Obj, ctx: WriteContext) -> None:
        new["spec"] = deep_copy(old.get("spec") or {})

    def validate(self, obj: Obj) -> list[FieldError]:
        return _csr_problems(obj, None)

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return _csr_problems(new, old)

    def prepare_subresource(self, subresource: str, new: Obj, old: Obj, ctx: WriteContext) -> Obj:
        now = format_rfc3339(ctx.now)
        old_conditions = (old.get("status") or {}).get("conditions") or []
        new_status = dict(new.get("status") or {})
        conditions = [dict(c) for c in new_status.get("conditions") or []]
        if subresource == STATUS:
            conditions = _kept_approvals(conditions, old_conditions)
            merged = new
        elif subresource == APPROVAL:
            merged = deep_copy(old)
            new_status = dict(merged.get("status") or {})
        else:
            return new
        _stamp_conditions(conditions, old_conditions, now)
        if conditions:
            new_status["conditions"] = conditions
        else:
            new_status.pop("conditions", None)
        merged["status"] = new_status
        return merged

    def validate_subresource(self, subresource: str, new: Obj, old: Obj) -> list[FieldError]:
        """``ValidateCertificateSigningRequest{Status,Approval}Update``: the whole request, then
        what the write may not do to the stored conditions and certificate."""
        problems = _csr_problems(new, old)
        old_status, new_status = old.get("status") or {}, new.get("status") or {}
        if subresource == APPROVAL:
            present = {c.get("type") for c in new_status.get("conditions") or []}
            for ctype in (APPROVED, DENIED):
                if any(c.get("type") == ctype for c in old_status.get("conditions") or []) and ctype not in present:
                    problems.append(errors.forbidden("status.conditions",
                                                     f'updates may not remove a condition of type "{ctype}"'))
        old_certificate = old_status.get("certificate") or ""
        if (new_status.get("certificate") or "") != old_certificate:
            if subresource != STATUS:
                problems.append(errors.forbidden("status.certificate", "updates may not set certificate content"))
            elif old_certificate:
                problems.append(errors.forbidden("status.certificate",
                                                 "updates may not modify existing certificate content"))
        return problems


def _csr_problems(obj: Obj, old: Obj | None) -> list[FieldError]:
    """``validateCertificateSigningRequest``'s checks, in its order (``old``: the stored
    request of an update, which allows what it already holds)."""
    spec = obj.get("spec") or {}
    old_usages = ((old or {}).get("spec") or {}).get("usages") if old is not None else None
    problems = _request_problems(spec.get("request")) + _usage_problems(spec.get("usages"), old_usages)
    problems += _signer_problems(spec.get("signerName"))
    seconds = spec.get("expirationSeconds")
    if seconds is not None and seconds < MIN_EXPIRATION_SECONDS:
        problems.append(errors.invalid("spec.expirationSeconds", seconds,
                                       "may not specify a duration less than 600 seconds (10 minutes)"))
    if old is not None:
        problems += _condition_problems((obj.get("status") or {}).get("conditions"))
    return problems + _certificate_problems(obj, old)


CERTIFICATE_SIGNING_REQUESTS = ResourceType(
    "certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests", namespaced=False,
    short_names=("csr",), subresources=(APPROVAL, STATUS), strategy=CertificateSigningRequestStrategy(),
    table=CERTIFICATE_SIGNING_REQUEST_TABLE,
)
