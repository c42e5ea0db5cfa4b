"""Admission attributes: what a request is, as upstream's ``admission.Attributes`` tells the
admission chain — the operation, the resource, who asks, the object being written (which a
mutating plugin may edit or replace) and the stored one. Webhooks and policies read them;
the AdmissionReview request is made of them.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.auth.identity import ADMIN, UserInfo
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import ApiError
from fakekube.api.registry import ResourceType

Obj = dict[str, Any]

#: The operations a plugin may handle (upstream's ``admission.Operation``).
CREATE, UPDATE, DELETE, CONNECT = "CREATE", "UPDATE", "DELETE", "CONNECT"
OPERATIONS = (CREATE, UPDATE, DELETE, CONNECT)
#: The options object an AdmissionReview carries, by operation (a CONNECT carries none).
OPTIONS_KINDS = {CREATE: "CreateOptions", UPDATE: "UpdateOptions", DELETE: "DeleteOptions"}


class Attributes:
    """One request as admission sees it.

    ``namespace`` of a Namespace object is its own name (upstream's RequestInfo); ``name``
    is the name the request gave (empty for a ``generateName`` create until validation,
    where the generated one is known); ``obj`` is the object being written (None for a
    DELETE; for a CONNECT the request's options, e.g. a ``PodExecOptions``), which a
    mutating plugin edits in place or replaces; ``old`` is the stored object (UPDATE and
    DELETE). ``kind`` is the object's kind when it is not the resource's (a CONNECT's
    options). Plugins add ``Warning`` texts to ``warnings``.
    """

    __slots__ = ("operation", "rt", "namespace", "name", "subresource", "obj", "old", "user", "dry_run", "options",
                 "kind", "internal", "warnings")

    def __init__(self, operation: str, rt: ResourceType, namespace: str, name: str, subresource: str = "",
                 obj: Obj | None = None, old: Obj | None = None, user: UserInfo | None = None,
                 dry_run: bool = False, options: Obj | None = None, kind: str = "", internal: bool = False) -> None:
        self.operation = operation
        self.rt = rt
        self.namespace = namespace
        self.name = name
        self.subresource = subresource
        self.obj = obj
        self.old = old
        self.user = user
        self.dry_run = dry_run
        #: The request's options (``dryRun``, ``fieldManager``, a delete's policy...), as sent.
        self.options = options
        self.kind = kind or rt.kind
        #: A write fakekube makes itself (its bootstrap, simulated kubelets and controllers).
        self.internal = internal
        self.warnings: list[str] = []

    def replace(self, **changes: Any) -> "Attributes":
        """A copy with ``changes`` (its own warnings list, empty)."""
        values = {name: getattr(self, name) for name in self.__slots__ if name != "warnings"}
        values.update(changes)
        return Attributes(**values)

    def __repr__(self) -> str:
        return f"Attributes({self.operation} {self.rt.plural}/{self.subresource} {self.namespace}/{self.name})"

    @property
    def user_info(self) -> UserInfo:
        return self.user or ADMIN

    def options_object(self) -> Obj | None:
        """The ``meta.k8s.io/v1`` options an AdmissionReview's ``request.options`` holds
        (None for a CONNECT, whose options are its object)."""
        if self.operation not in OPTIONS_KINDS:
            return None
        body: Obj = {"kind": OPTIONS_KINDS[self.operation], "apiVersion": "meta.k8s.io/v1"}
        if self.dry_run:
            body["dryRun"] = ["All"]
        body.update(self.options or {})
        return body

    def object_name(self) -> str:
        """The name admission errors give the object (upstream's ``extractResourceName``):
        the request's, else the object's, else its ``generateName`` (admission runs before
        a name is generated), else ``Unknown``."""
        if self.name:
            return self.name
        meta = (self.obj or {}).get("metadata") or {}
        return meta.get("name") or meta.get("generateName") or "Unknown"

    def forbidden(self, why: str) -> ApiError:
        """``admission.NewForbidden``: a 403 naming the object, ``<resource> "<name>" is forbidden: <why>``."""
        return errors.forbidden_error(self.rt.group, self.rt.plural, self.object_name(), why)


def namespace_of(rt: ResourceType, obj: Obj | None, namespace: str) -> str:
    """The request namespace: a Namespace object's own name, else the object's namespace."""
    if rt.key == ("", "namespaces"):
        return ((obj or {}).get("metadata") or {}).get("name") or namespace
    return namespace if rt.namespaced else ""
