"""A tiny raw-HTTP watch client for tests: reads newline-delimited events with a deadline."""

from __future__ import annotations

import http.client
import json
import socket
from typing import Any
from urllib.parse import urlparse


class WatchStream:
    """One open watch; ``next_event`` returns the next event or None at end of stream."""

    def __init__(self, url: str, path: str, read_timeout_s: float = 5.0, accept: str = "application/json") -> None:
        parsed = urlparse(url)
        self.conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=read_timeout_s)
        self.conn.request("GET", path, headers={"Accept": accept})
        self.response = self.conn.getresponse()

    @property
    def status(self) -> int:
        return self.response.status

    def next_event(self) -> dict[str, Any] | None:
        try:
            line = self.response.readline()
        except socket.timeout as exc:
            raise AssertionError("no watch event arrived within the read timeout") from exc
        if not line:
            return None
        return json.loads(line)

    def events(self, count: int) -> list[dict[str, Any]]:
        found = []
        for _ in range(count):
            event = self.next_event()
            if event is None:
                break
            found.append(event)
        return found

    def close(self) -> None:
        self.conn.close()

    def __enter__(self) -> "WatchStream":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def summary(events: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """(type, name) per event; bookmarks show their resourceVersion instead of a name."""
    out = []
    for event in events:
        meta = event["object"].get("metadata", {})
        label = meta.get("name") or meta.get("resourceVersion", "")
        out.append((event["type"], label))
    return out
