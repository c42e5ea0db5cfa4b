"""Admission attributes: what a write is, as upstream's ``admission.Attributes`` tells the
admission chain (webhooks and policies read them; the AdmissionReview request is made of them).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from fakekube.api.auth.identity import ADMIN, UserInfo
from fakekube.api.registry import ResourceType

Obj = dict[str, Any]

CREATE, UPDATE, DELETE = "CREATE", "UPDATE", "DELETE"
#: The options object an AdmissionReview carries, by operation.
OPTIONS_KINDS = {CREATE: "CreateOptions", UPDATE: "UpdateOptions", DELETE: "DeleteOptions"}


class Attributes(NamedTuple):
    """One write as admission sees it. ``namespace`` of a Namespace object is its own name
    (upstream's RequestInfo); ``old`` is the stored object for UPDATE and DELETE."""

    operation: str
    rt: ResourceType
    namespace: str
    name: str
    subresource: str = ""
    old: Obj | None = None
    user: UserInfo | None = None
    dry_run: bool = False
    #: The request's options (``dryRun``, ``fieldManager``, a delete's policy...), as sent.
    options: Obj | None = None

    @property
    def user_info(self) -> UserInfo:
        return self.user or ADMIN

    def options_object(self) -> Obj:
        """The ``meta.k8s.io/v1`` options an AdmissionReview's ``request.options`` holds."""
        body: Obj = {"kind": OPTIONS_KINDS[self.operation], "apiVersion": "meta.k8s.io/v1"}
        if self.dry_run:
            body["dryRun"] = ["All"]
        body.update(self.options or {})
        return body


def namespace_of(rt: ResourceType, obj: Obj | None, namespace: str) -> str:
    """The request namespace: a Namespace object's own name, else the object's namespace."""
    if rt.key == ("", "namespaces"):
        return ((obj or {}).get("metadata") or {}).get("name") or namespace
    return namespace if rt.namespaced else ""
