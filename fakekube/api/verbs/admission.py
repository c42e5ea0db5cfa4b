"""Admission: the checks upstream's admission chain makes before a write is stored.

For now: NamespaceLifecycle (no writes into a missing or terminating namespace, the
initial namespaces cannot be deleted). DefaultTolerationSeconds and friends arrive with
the controllers that need them.
"""

from __future__ import annotations

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import ApiError
from fakekube.api.registry import ResourceType
from fakekube.store import Store

#: Namespaces the NamespaceLifecycle plugin refuses to delete.
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")

NAMESPACES = ("", "namespaces")


def check_namespace_for_create(store: Store, rt: ResourceType, namespace: str, name: str) -> None:
    """Refuse to create namespaced content in a namespace that is missing or terminating."""
    if not rt.namespaced:
        return
    ns = store.get(NAMESPACES, ("", namespace))
    if ns is None:
        raise errors.not_found("", "namespaces", namespace)
    if (ns.get("metadata") or {}).get("deletionTimestamp") or (ns.get("status") or {}).get("phase") == "Terminating":
        raise _terminating(rt, namespace, name)


def check_namespace_delete(name: str) -> None:
    """The built-in namespaces cannot be deleted (upstream: 403 Forbidden)."""
    if name in IMMORTAL_NAMESPACES:
        raise errors.forbidden_error("", "namespaces", name, "this namespace may not be deleted")


def _terminating(rt: ResourceType, namespace: str, name: str) -> ApiError:
    """Upstream's 403 with a ``NamespaceTerminating`` cause, which clients (kubectl, client-go's
    ``HasStatusCause``) use to tell this apart from an authorization failure."""
    message = f"unable to create new content in namespace {namespace} because it is being terminated"
    err = errors.forbidden_error(rt.group, rt.plural, name, message)
    err.details["causes"] = [{"reason": "NamespaceTerminating", "message": f"namespace {namespace} is being terminated",
                              "field": "metadata.namespace"}]
    return err
