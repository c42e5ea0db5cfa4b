"""Recording core/v1 Events: the recorder lives in :mod:`fakekube.api.events`.

It moved below the engine so kubelets (a sibling part of the controllers) record through
the same correlator; controllers keep importing ``record_event`` from here.
"""

from __future__ import annotations

from fakekube.api.events import EVENTS, EventSource, object_reference, record, record_event

__all__ = ["EVENTS", "EventSource", "object_reference", "record", "record_event"]
