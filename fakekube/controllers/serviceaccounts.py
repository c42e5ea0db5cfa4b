"""The service account controller: every active namespace has a ``default`` ServiceAccount.

Upstream's kube-controller-manager (pkg/controller/serviceaccount/serviceaccounts_controller.go)
creates the ServiceAccounts named in ``--service-account-names`` (``default``) in every
namespace that is not terminating, and puts one back when it is deleted. Clients rely on
it: ``kubectl create token default`` and pods that name no service account.

It is the smallest controller written against the runtime, and the worked example in
docs/architecture.md ("Writing a controller").
"""

from __future__ import annotations

from typing import Any, Iterable

from fakekube.engine import Context
from fakekube.objects.kinds import NAMESPACES, SERVICE_ACCOUNTS
from fakekube.store import DELETED, Change

Obj = dict[str, Any]

#: Upstream's default for ``--service-account-names`` (the flag is internal: always "default").
DEFAULT_SERVICE_ACCOUNT = "default"


class ServiceAccountsController:
    """Keeps a ``default`` ServiceAccount in every active namespace."""

    name = "serviceaccount-controller"
    resources = (NAMESPACES, SERVICE_ACCOUNTS)

    def keys_for(self, change: Change) -> Iterable[str]:
        """A namespace that appears or changes, or whose ``default`` account was deleted
        (the key is the namespace's name)."""
        if change.resource == NAMESPACES.plural:
            return [] if change.type == DELETED else [change.name]
        if change.type == DELETED and change.name == DEFAULT_SERVICE_ACCOUNT:
            return [change.namespace]
        return []

    def reconcile(self, key: str, ctx: Context) -> None:
        namespace = ctx.get(NAMESPACES, key)
        if namespace is None or not _active(namespace):
            return
        if ctx.get(SERVICE_ACCOUNTS, DEFAULT_SERVICE_ACCOUNT, namespace=key) is not None:
            return
        # A 409 (a client created it meanwhile) or 403 (the namespace began terminating)
        # is retried by the runtime, and the retry finds nothing to do.
        ctx.client.create(SERVICE_ACCOUNTS, {"metadata": {"name": DEFAULT_SERVICE_ACCOUNT, "namespace": key}})


def _active(namespace: Obj) -> bool:
    """Not being deleted (upstream skips namespaces whose phase is Terminating)."""
    phase = (namespace.get("status") or {}).get("phase")
    return phase != "Terminating" and not (namespace.get("metadata") or {}).get("deletionTimestamp")
