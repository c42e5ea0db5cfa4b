"""DefaultBinder: POSTs the pod's binding (``pods/binding``) through the runtime's client."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from fakekube.scheduler.framework import CycleState, PodInfo, Status

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "DefaultBinder"


class DefaultBinder:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        self.handle = handle

    def bind(self, state: CycleState, info: PodInfo, node_name: str) -> Status | None:
        """Raises the apiserver's ApiError (404: pod gone, 409: bound or deleting) for the
        scheduler to handle as a binding failure."""
        self.handle.ctx.client.bind(info.namespace, info.name, node_name, info.uid)
        return None
