"""NamespaceLifecycle (k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle).

No new content in a namespace that is missing (404) or terminating (403 with a
``NamespaceTerminating`` cause), no update of content in a missing namespace, and the
initial namespaces cannot be deleted. Upstream waits for its informer and looks a missing
namespace up live; fakekube reads the store, which is never stale.
"""

from __future__ import annotations

from fakekube.api.admission.attributes import CREATE, DELETE, UPDATE, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import ApiError
from fakekube.store import Store

#: Namespaces the plugin refuses to delete.
IMMORTAL_NAMESPACES = ("default", "kube-system", "kube-public")

NAMESPACES = ("", "namespaces")
#: A LocalSubjectAccessReview may be asked in any namespace (upstream's ``isAccessReview``).
ACCESS_REVIEWS = ("authorization.k8s.io", "localsubjectaccessreviews")


class NamespaceLifecycle(Handler):
    name = "NamespaceLifecycle"
    operations = frozenset((CREATE, UPDATE, DELETE))

    def __init__(self, store: Store) -> None:
        self.store = store

    def admit(self, a: Attributes) -> None:
        is_namespace = a.rt.key == NAMESPACES
        if is_namespace:
            if a.operation == DELETE and a.name in IMMORTAL_NAMESPACES:
                raise errors.forbidden_error("", "namespaces", a.name, "this namespace may not be deleted")
            return
        if not a.namespace or a.operation == DELETE or a.rt.key == ACCESS_REVIEWS:
            return
        namespace = self.store.get(NAMESPACES, ("", a.namespace))
        if namespace is None:
            raise errors.not_found("", "namespaces", a.namespace)
        if a.operation == CREATE and (namespace.get("status") or {}).get("phase") == "Terminating":
            raise _terminating(a)
        if a.operation == CREATE and (namespace.get("metadata") or {}).get("deletionTimestamp"):
            raise _terminating(a)  # the namespace's delete sets both at once


def _terminating(a: Attributes) -> ApiError:
    """Upstream's 403 with a ``NamespaceTerminating`` cause, which clients (kubectl, client-go's
    ``HasStatusCause``) use to tell this apart from an authorization failure."""
    message = f"unable to create new content in namespace {a.namespace} because it is being terminated"
    err = a.forbidden(message)
    err.details["causes"] = [{"reason": "NamespaceTerminating", "message": f"namespace {a.namespace} is being terminated",
                              "field": "metadata.namespace"}]
    return err


def new(context: PluginContext) -> NamespaceLifecycle:
    return NamespaceLifecycle(context.store)
