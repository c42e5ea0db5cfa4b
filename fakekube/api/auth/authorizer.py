"""The authorization chain and its 403 (``--authorization-mode``).

Modes, as kube-apiserver's flag names them: ``AlwaysAllow`` (fakekube's default: every
caller may do everything) and ``RBAC``. With RBAC, members of ``system:masters`` are
allowed first (upstream's privileged-groups authorizer, ahead of any mode), then the RBAC
authorizer decides. A denial is upstream's ``responsewriters.Forbidden``: a 403 whose
message names the user, the verb and the resource or path (``forbiddenMessage``), with
the authorizer's reason after a colon.
"""

from __future__ import annotations


from fakekube.api.auth.attributes import Attributes
from fakekube.api.auth.identity import MASTERS
from fakekube.api.auth.rbac import Decision, RBACAuthorizer
from fakekube.api.machinery.errors import ApiError, forbidden_error
from fakekube.api.registry import StoreReader

ALWAYS_ALLOW = "AlwaysAllow"
RBAC = "RBAC"
MODES = (ALWAYS_ALLOW, RBAC)


def parse_mode(text: str) -> str:
    """``--authorization-mode``: one mode, or a comma list of them (the last wins here;
    ``Node`` is accepted and ignored: fakekube has no Node authorizer)."""
    modes = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [mode for mode in modes if mode not in (*MODES, "Node")]
    if unknown or not modes:
        raise ValueError(f"authorization-mode {text!r}: use one of {', '.join(MODES)} (or Node,RBAC)")
    return RBAC if RBAC in modes else ALWAYS_ALLOW


def authorize(mode: str, store: StoreReader, attrs: Attributes) -> Decision:
    """The chain's decision for ``attrs``."""
    if mode != RBAC or MASTERS in attrs.user.groups:
        return Decision(True)
    return RBACAuthorizer(store).authorize(attrs)


def forbidden_message(attrs: Attributes) -> str:
    """``forbiddenMessage``."""
    user = attrs.user.username
    if not attrs.resource_request:
        return f'User "{user}" cannot {attrs.verb} path "{attrs.path}"'
    resource = attrs.combined_resource
    if attrs.namespace:
        return (f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" '
                f'in the namespace "{attrs.namespace}"')
    return f'User "{user}" cannot {attrs.verb} resource "{resource}" in API group "{attrs.api_group}" at the cluster scope'


def forbidden(attrs: Attributes, reason: str) -> ApiError:
    """``responsewriters.Forbidden``: ``NewForbidden(group/resource, name, message[: reason])``."""
    message = forbidden_message(attrs)
    if reason:
        message = f"{message}: {reason}"
    if not attrs.resource_request or not attrs.resource:  # an empty details pointer: "details":{}
        return ApiError(403, "Forbidden", f"forbidden: {message}", {})
    return forbidden_error(attrs.api_group, attrs.resource, attrs.name, message)

