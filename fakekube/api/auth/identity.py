"""Who is asking: the one user fakekube knows, and the names upstream gives identities.

fakekube has no authentication (docs/api.md): every request is served as the cluster
admin its kubeconfig names. The review APIs (``kubectl auth whoami``/``can-i``) and
TokenReview must still answer with a user, so that user is declared here, once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

#: The bearer token the kubeconfig carries (``fakekube/cluster/kubeconfig.py``).
ADMIN_TOKEN = "fakekube"
#: The user every request is served as: a member of ``system:masters``, as kubeadm's admin.
ADMIN_USERNAME = "fakekube-admin"
ALL_AUTHENTICATED = "system:authenticated"
ADMIN_GROUPS = ("system:masters", ALL_AUTHENTICATED)

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


@dataclass(frozen=True)
class UserInfo:
    """Who made a request (``authentication.k8s.io/v1 UserInfo``): what authorization,
    admission (webhooks' ``userInfo``) and the review APIs see."""

    username: str
    groups: tuple[str, ...] = ()
    uid: str = ""
    extra: tuple[tuple[str, tuple[str, ...]], ...] = field(default=())

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
