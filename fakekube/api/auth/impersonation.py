"""Impersonation headers: ``kubectl --as``/``--as-group`` (upstream's ``WithImpersonation`` filter).

``Impersonate-User`` (a ``system:serviceaccount:ns:name`` user is the service account),
``Impersonate-Group`` (repeatable), ``Impersonate-Uid`` and ``Impersonate-Extra-<key>``. The
requestor needs the ``impersonate`` verb on each: ``users``/``groups`` by name,
``serviceaccounts`` in the account's namespace, ``uids`` and ``userextras/<key>`` in
``authentication.k8s.io``; the first refusal is a 403 naming that attribute set. The
impersonated user joins ``system:authenticated`` (``system:unauthenticated`` for
``system:anonymous``) unless a group given says otherwise; a service account with no
groups given gets its fixed ones.
"""

from __future__ import annotations

from typing import Callable, Iterable
from urllib.parse import unquote

from fakekube.api.auth.attributes import Attributes
from fakekube.api.auth.identity import (
    ALL_AUTHENTICATED,
    ALL_UNAUTHENTICATED,
    ANONYMOUS_USERNAME,
    SERVICE_ACCOUNT_PREFIX,
    UserInfo,
    service_account_groups,
    service_account_username,
)
from fakekube.api.auth.rbac import Decision
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import ApiError
from fakekube.objects.syntax import go_quote

USER = "Impersonate-User"
GROUP = "Impersonate-Group"
UID = "Impersonate-Uid"
EXTRA_PREFIX = "Impersonate-Extra-"
AUTHENTICATION_GROUP = "authentication.k8s.io"


class ImpersonationError(Exception):
    """Headers upstream answers with a plain 500 (``responsewriters.InternalError``)."""


def impersonate(requestor: UserInfo, headers: Iterable[tuple[str, str]],
                authorize: Callable[[Attributes], Decision],
                forbidden: Callable[[Attributes, str], ApiError],
                request: Attributes | None = None) -> UserInfo:
    """The user to act as; raises the 403 of the first check that fails. With
    ConstrainedImpersonation (1.36) and the ``request``'s attributes, the constrained mode
    for the wanted user is tried first (:func:`_constrained`); its refusal is the one
    reported when the legacy ``impersonate`` checks refuse too."""
    pairs = list(headers)
    user_names = [value for name, value in pairs if name.lower() == USER.lower() and value]
    groups_asked = [value for name, value in pairs if name.lower() == GROUP.lower()]
    uids = [value for name, value in pairs if name.lower() == UID.lower()]
    # Upstream ranges over a Go map of keys (any order), each key's values in header order.
    extras = sorted(((unquote(name[len(EXTRA_PREFIX):].lower()), value) for name, value in pairs
                     if name.lower().startswith(EXTRA_PREFIX.lower())), key=lambda pair: pair[0])
    if not user_names and not groups_asked and not extras and not uids:
        return requestor
    if not user_names:
        raise _without_user(groups_asked, extras, uids[0] if uids else "")
    checks: list[Attributes] = []
    username = user_names[0]
    groups: list[str] = []
    sa = _service_account(username)
    if sa is not None:
        checks.append(_acting_as(requestor, "serviceaccounts", sa[1], namespace=sa[0]))
        username = service_account_username(*sa)
        if not groups_asked:
            groups = [group for group in service_account_groups(sa[0]) if group != ALL_AUTHENTICATED]
    else:
        checks.append(_acting_as(requestor, "users", username))
    for group in groups_asked:
        checks.append(_acting_as(requestor, "groups", group))
        groups.append(group)
    extra: dict[str, list[str]] = {}
    for key, value in extras:
        checks.append(_acting_as(requestor, "userextras", value, group=AUTHENTICATION_GROUP, subresource=key))
        extra.setdefault(key, []).append(value)
    uid = ""
    if uids:
        uid = uids[0]
        checks.append(_acting_as(requestor, "uids", uid, group=AUTHENTICATION_GROUP))
    extra_items = tuple((key, tuple(values)) for key, values in sorted(extra.items()))
    constrained_refusal: ApiError | None = None
    if request is not None and errors.emulated().enabled("ConstrainedImpersonation"):
        mode = _constrained_mode(username)
        on = _impersonate_on(request, mode)
        decision = authorize(on)
        if not decision.allowed:
            constrained_refusal = forbidden(on, decision.reason)
        else:
            refusal = _first_refusal(_constrained_checks(checks, mode, groups_asked), authorize, forbidden)
            if refusal is None:
                fixed = ["system:nodes"] if mode == NODE_MODE else groups
                return UserInfo(username, tuple(_with_default_group(username, fixed)), uid, extra_items)
            constrained_refusal = refusal
    refusal = _first_refusal(checks, authorize, forbidden)
    if refusal is not None:
        raise constrained_refusal or refusal
    groups = _with_default_group(username, groups)
    return UserInfo(username, tuple(groups), uid, extra_items)


#: Constrained impersonation's modes (KEP-5284): a node, a service account, anyone else.
NODE_MODE, SERVICE_ACCOUNT_MODE, USER_INFO_MODE = "arbitrary-node", "serviceaccount", "user-info"
NODE_PREFIX = "system:node:"


def _constrained_mode(username: str) -> str:
    """The mode whose filter takes the wanted user (associated-node, a service account on a
    node impersonating its own node, is not modelled: such a request goes by arbitrary-node)."""
    if username.startswith(NODE_PREFIX) and username[len(NODE_PREFIX):]:
        return NODE_MODE
    if _service_account(username) is not None:
        return SERVICE_ACCOUNT_MODE
    return USER_INFO_MODE


def _impersonate_on(request: Attributes, mode: str) -> Attributes:
    """``impersonateOnAttributes``: the request itself, with the verb ``impersonate-on:<mode>:<verb>``."""
    return Attributes(request.user, f"impersonate-on:{mode}:{request.verb}", request.resource_request,
                      request.namespace, request.api_group, request.api_version, request.resource,
                      request.subresource, request.name, request.path)


def _constrained_checks(checks: list[Attributes], mode: str, groups: list[str]) -> list[Attributes]:
    """The legacy checks with the mode's verb ``impersonate:<mode>``, in the rewritten filter's
    order (user name, uid, groups, extras); a node is checked as ``nodes``."""
    def renamed(attrs: Attributes) -> Attributes:
        resource, name = attrs.resource, attrs.name
        if resource == "users" and mode == NODE_MODE:
            resource, name = "nodes", name[len(NODE_PREFIX):]
        return Attributes(attrs.user, f"impersonate:{mode}", attrs.resource_request, attrs.namespace, attrs.api_group,
                          attrs.api_version, resource, attrs.subresource, name, attrs.path)
    order = {"users": 0, "serviceaccounts": 0, "uids": 1, "groups": 2, "userextras": 3}
    return [renamed(attrs) for attrs in sorted(checks, key=lambda a: order.get(a.resource, 4))]


def _first_refusal(checks: list[Attributes], authorize: Callable[[Attributes], Decision],
                   forbidden: Callable[[Attributes, str], ApiError]) -> ApiError | None:
    for attrs in checks:
        decision = authorize(attrs)
        if not decision.allowed:
            return forbidden(attrs, decision.reason)
    return None


def _acting_as(requestor: UserInfo, resource: str, name: str, group: str = "", namespace: str = "",
               subresource: str = "") -> Attributes:
    """``actingAsAttributes``: the ``impersonate`` check of one thing asked for. ``users``,
    ``groups``, ``userextras`` and ``uids`` are names for authorization only, never served."""
    return Attributes(requestor, "impersonate", resource_request=True, namespace=namespace, api_group=group,
                      api_version="v1", resource=resource, subresource=subresource, name=name)


def _service_account(username: str) -> tuple[str, str] | None:
    """``serviceaccount.SplitUsername``: (namespace, name) of a service-account user name."""
    if not username.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    parts = username[len(SERVICE_ACCOUNT_PREFIX):].split(":")
    if len(parts) != 2 or not parts[0] or not parts[1]:
        return None
    return parts[0], parts[1]


def _with_default_group(username: str, groups: list[str]) -> list[str]:
    if username != ANONYMOUS_USERNAME:
        if ALL_AUTHENTICATED not in groups and ALL_UNAUTHENTICATED not in groups:
            return [*groups, ALL_AUTHENTICATED]
        return groups
    return groups if ALL_UNAUTHENTICATED in groups else [*groups, ALL_UNAUTHENTICATED]


def _without_user(groups: list[str], extras: list[tuple[str, str]], uid: str) -> Exception:
    """Groups, extras or a uid asked for without a user, as the release words it: a plain 500
    up to 1.34, a 400 BadRequest from 1.35, and from 1.36 (ConstrainedImpersonation) naming
    the wanted ``user.DefaultInfo`` as ``%#v`` prints it."""
    release = errors.emulated()
    if release.enabled("ConstrainedImpersonation"):
        return errors.bad_request(f"requested {_go_default_info(groups, extras, uid)} without impersonating a user name")
    # []v1.ObjectReference as %v prints it: {Kind Namespace Name UID APIVersion ResourceVersion FieldPath}
    references = [*(f"{{Group  {g}    }}" for g in groups),
                  *(f"{{UserExtra  {v}  {AUTHENTICATION_GROUP}/v1  {k}}}" for k, v in extras),
                  *([f"{{UID  {uid}  {AUTHENTICATION_GROUP}/v1  }}"] if uid else [])]
    message = f"requested [{' '.join(references)}] without impersonating a user"
    return errors.bad_request(message) if release.impersonation_bad_request else ImpersonationError(message)


def _go_default_info(groups: list[str], extras: list[tuple[str, str]], uid: str) -> str:
    """``%#v`` of a ``*user.DefaultInfo`` without a name (nil slices and maps print as such)."""
    group_text = "[]string{" + ", ".join(map(go_quote, groups)) + "}" if groups else "[]string(nil)"
    by_key: dict[str, list[str]] = {}
    for key, value in extras:
        by_key.setdefault(key, []).append(value)
    extra_text = ("map[string][]string{" + ", ".join(
        f"{go_quote(key)}:[]string{{{', '.join(map(go_quote, values))}}}" for key, values in sorted(by_key.items()))
        + "}") if by_key else "map[string][]string(nil)"
    return f'&user.DefaultInfo{{Name:"", UID:{go_quote(uid)}, Groups:{group_text}, Extra:{extra_text}}}'
