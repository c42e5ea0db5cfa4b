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
from typing import Any

from fakekube.api.auth.identity import ADMIN_GROUPS, ADMIN_USERNAME
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.api.registry import APPROVAL, STATUS, ResourceType, Strategy, WriteContext
from fakekube.api.table import CERTIFICATE_SIGNING_REQUEST_TABLE
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
PEM_PROBLEM = "PEM block type must be CERTIFICATE REQUEST"
_PEM_BEGIN = b"-----BEGIN CERTIFICATE REQUEST-----"


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
        return [errors.invalid("spec.request", GoLiteral("[]byte{}", '""'), PEM_PROBLEM)]
    begin = data.find(_PEM_BEGIN)
    if begin < 0 or b"-----END CERTIFICATE REQUEST-----" not in data[begin:]:
        return [errors.invalid("spec.request", _go_bytes(data), PEM_PROBLEM)]
    return []


def _usage_problems(usages: Any) -> list[FieldError]:
    if not usages:
        return [errors.required("spec.usages", "usages must be provided")]
    problems: list[FieldError] = []
    seen: set[str] = set()
    for i, usage in enumerate(usages):
        if usage not in KEY_USAGES:
            problems.append(errors.not_supported(f"spec.usages[{i}]", usage, KEY_USAGES))
        elif usage in seen:
            problems.append(errors.duplicate(f"spec.usages[{i}]", usage))
        seen.add(usage)
    return problems


def _signer_problems(signer: Any) -> list[FieldError]:
    if not signer:
        return [errors.required("spec.signerName")]
    domain, slash, path = str(signer).partition("/")
    if not slash or not domain or not path or "." not in domain:
        return [errors.invalid("spec.signerName", signer, "should be a domain with at least two segments "
                                                          "separated by dots")]
    return []


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
    """CSRs: the requester's identity stamped at create; spec fixed; approval by subresource."""

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
        spec = obj.get("spec") or {}
        problems = _request_problems(spec.get("request")) + _signer_problems(spec.get("signerName"))
        seconds = spec.get("expirationSeconds")
        if seconds is not None and seconds < MIN_EXPIRATION_SECONDS:
            problems.append(errors.invalid("spec.expirationSeconds", seconds,
                                           "may not specify a duration less than 600 seconds (10 minutes)"))
        return problems + _usage_problems(spec.get("usages"))

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return self.validate(new)

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
        conditions = (new.get("status") or {}).get("conditions") or []
        problems = _condition_problems(conditions)
        if subresource == APPROVAL:
            present = {c.get("type") for c in conditions}
            for ctype in (APPROVED, DENIED):
                if any(c.get("type") == ctype for c in (old.get("status") or {}).get("conditions") or []) \
                        and ctype not in present:
                    problems.append(errors.forbidden("status.conditions",
                                                     f'updates may not remove a condition of type "{ctype}"'))
        return problems


CERTIFICATE_SIGNING_REQUESTS = ResourceType(
    "certificates.k8s.io", "v1", "CertificateSigningRequest", "certificatesigningrequests", namespaced=False,
    short_names=("csr",), subresources=(APPROVAL, STATUS), strategy=CertificateSigningRequestStrategy(),
    table=CERTIFICATE_SIGNING_REQUEST_TABLE,
)
