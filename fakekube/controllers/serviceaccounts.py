"""The service account controller: every active namespace has a ``default`` ServiceAccount.

Upstream's kube-controller-manager (pkg/controller/serviceaccount/serviceaccounts_controller.go)
creates the ServiceAccounts named in ``--service-account-names`` (``default``) in every
namespace that is not terminating, and puts one back when it is deleted. Clients rely on
it: ``kubectl create token default`` and pods that name no service account.
"""

from __future__ import annotations

from typing import Any, Iterable

from fakekube.api.machinery.errors import ApiError
from fakekube.controllers.common import INTERNAL
from fakekube.engine import Context
from fakekube.store import DELETED, Change

Obj = dict[str, Any]

NAMESPACES = ("", "namespaces")
SERVICE_ACCOUNTS = ("", "serviceaccounts")
#: Upstream's default for ``--service-account-names``... (the flag is internal: always "default").
DEFAULT_SERVICE_ACCOUNT = "default"


class ServiceAccountsController:
    """Keeps a ``default`` ServiceAccount in every active namespace."""

    name = "serviceaccounts"
    resources = (NAMESPACES, SERVICE_ACCOUNTS)

    def keys_for(self, change: Change) -> Iterable[str]:
        """A namespace that appears or changes, or whose ``default`` account was deleted."""
        if change.resource == NAMESPACES[1]:
            return [] if change.type == DELETED else [change.name]
        if change.type == DELETED and change.name == DEFAULT_SERVICE_ACCOUNT:
            return [change.namespace]
        return []

    def reconcile(self, key: str, ctx: Context) -> None:
        namespace = ctx.api.store.get(NAMESPACES, ("", key))
        if namespace is None or not _active(namespace):
            return
        if ctx.api.store.get(SERVICE_ACCOUNTS, (key, DEFAULT_SERVICE_ACCOUNT)) is not None:
            return
        rt = ctx.api.registry.lookup("", "v1", "serviceaccounts")
        try:
            ctx.api.create(rt, key, {"metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": key}}, INTERNAL)
        except ApiError as exc:
            if exc.code != 409:  # a client created it meanwhile: fine
                raise


def _active(namespace: Obj) -> bool:
    """Not being deleted (upstream skips namespaces whose phase is Terminating)."""
    phase = (namespace.get("status") or {}).get("phase")
    return phase != "Terminating" and not (namespace.get("metadata") or {}).get("deletionTimestamp")
