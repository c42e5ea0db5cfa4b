"""Who is asking: the identities fakekube knows, and the names upstream gives them.

The kubeconfig's user is the admin (``system:masters``). Other callers authenticate with
static tokens, service-account tokens or client certificates (:mod:`.authn`); a request
with no credentials is the anonymous user. While authorization is off every caller is
served, as the admin when it names nobody else.
"""

from __future__ import annotations

from typing import Any, NamedTuple

Obj = dict[str, Any]

#: The bearer token the kubeconfig carries (``fakekube/cluster/kubeconfig.py``).
ADMIN_TOKEN = "fakekube"
#: The user every request is served as: a member of ``system:masters``, as kubeadm's admin.
ADMIN_USERNAME = "fakekube-admin"
ALL_AUTHENTICATED = "system:authenticated"
ALL_UNAUTHENTICATED = "system:unauthenticated"
#: ``user.SystemPrivilegedGroup``: its members are authorized for everything, RBAC or not.
MASTERS = "system:masters"
ADMIN_GROUPS = (MASTERS, ALL_AUTHENTICATED)
ANONYMOUS_USERNAME = "system:anonymous"

#: kubeadm's ``--service-account-issuer``; with no ``--api-audiences`` it is also the
#: apiserver's one audience, the default of a TokenRequest's and a TokenReview's audiences.
ISSUER = "https://kubernetes.default.svc.cluster.local"
API_AUDIENCES = (ISSUER,)

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
ALL_SERVICE_ACCOUNTS = "system:serviceaccounts"


def admin_user_info() -> Obj:
    """``authentication.k8s.io/v1 UserInfo`` of the admin (no uid, no extra: omitted)."""
    return {"username": ADMIN_USERNAME, "groups": list(ADMIN_GROUPS)}


def service_account_username(namespace: str, name: str) -> str:
    """``serviceaccount.MakeUsername``."""
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def service_account_groups(namespace: str) -> list[str]:
    """``serviceaccount.MakeGroupNames`` plus the group every authenticated user gets."""
    return [ALL_SERVICE_ACCOUNTS, f"{ALL_SERVICE_ACCOUNTS}:{namespace}", ALL_AUTHENTICATED]


class UserInfo(NamedTuple):
    """Who made a request (``authentication.k8s.io/v1 UserInfo``): what authorization,
    admission (webhooks' ``userInfo``) and the review APIs see."""

    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = ()

    @classmethod
    def from_json(cls, value: Obj) -> "UserInfo":
        """From ``authentication.k8s.io/v1 UserInfo`` (as :func:`tokens.authenticate` gives it)."""
        extra = value.get("extra") or {}
        return cls(value.get("username") or "", tuple(value.get("groups") or ()), value.get("uid") or "",
                   tuple((key, tuple(extra[key])) for key in sorted(extra)))

    def with_authenticated(self) -> "UserInfo":
        """``group.AuthenticatedGroupAdder``: every authenticated user is in ``system:authenticated``."""
        if ALL_AUTHENTICATED in self.groups:
            return self
        return UserInfo(self.username, (*self.groups, ALL_AUTHENTICATED), self.uid, self.extra)

    def to_json(self) -> Obj:
        """As upstream serializes it: empty ``uid`` and ``extra`` omitted."""
        out: Obj = {"username": self.username}
        if self.uid:
            out["uid"] = self.uid
        out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {key: list(values) for key, values in self.extra}
        return out


#: The kubeconfig's user, and every caller while authorization is off.
ADMIN = UserInfo(ADMIN_USERNAME, ADMIN_GROUPS)
#: A request with no credentials (kube-apiserver's ``--anonymous-auth``, on by default).
ANONYMOUS = UserInfo(ANONYMOUS_USERNAME, (ALL_UNAUTHENTICATED,))
