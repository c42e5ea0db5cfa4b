"""PrioritySort (QueueSort): higher ``spec.priority`` first, then the pod queued earliest."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from fakekube.scheduler.framework import QueuedPodInfo

if TYPE_CHECKING:
    from fakekube.scheduler.runtime import Handle

NAME = "PrioritySort"


class PrioritySort:
    name = NAME

    def __init__(self, handle: "Handle", args: Mapping[str, Any]) -> None:
        pass

    def sort_key(self, queued: QueuedPodInfo) -> tuple[Any, ...]:
        return (-queued.info.priority, queued.timestamp_s)
