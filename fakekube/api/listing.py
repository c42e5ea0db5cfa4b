"""List semantics: selectors, resourceVersion/resourceVersionMatch, limit + continue.

Pagination is consistent, as upstream's: the first page fixes a snapshot
resourceVersion, and every later page is cut from the store rolled back to that
version. When the history no longer reaches back that far, the continue token has
expired (410), exactly as after an etcd compaction.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from typing import Any, Callable

from fakekube.api import errors, selectors
from fakekube.api.errors import ApiError
from fakekube.api.registry import ResourceType
from fakekube.store import Store, TooOldResourceVersion
from fakekube.store.memory import sort_key

Obj = dict[str, Any]

NOT_OLDER_THAN = "NotOlderThan"
EXACT = "Exact"

EXPIRED_CONTINUE = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter, or use the continue token "
    "in this response to retrieve the remainder of the results. Continuing with the provided "
    "token results in an inconsistent list - objects that were created, modified, or deleted "
    "between the time the first chunk was returned and now may show up in the list."
)


@dataclass(frozen=True)
class ListOptions:
    """The query parameters of a list or watch request, parsed and validated."""

    label_selector: str = ""
    field_selector: str = ""
    limit: int = 0
    continue_token: str = ""
    resource_version: str = ""
    resource_version_match: str = ""

    @classmethod
    def from_query(cls, query: dict[str, str]) -> "ListOptions":
        options = cls(
            label_selector=query.get("labelSelector", ""),
            field_selector=query.get("fieldSelector", ""),
            limit=_parse_int(query.get("limit", ""), "limit"),
            continue_token=query.get("continue", ""),
            resource_version=query.get("resourceVersion", ""),
            resource_version_match=query.get("resourceVersionMatch", ""),
        )
        options.check()
        return options

    def check(self) -> None:
        """The ListOptions validation upstream applies before serving."""
        if self.resource_version_match and self.resource_version_match not in (NOT_OLDER_THAN, EXACT):
            raise _invalid_options("resourceVersionMatch", self.resource_version_match,
                                   'supported values: "Exact", "NotOlderThan"')
        if self.resource_version_match and not self.resource_version:
            raise _invalid_options("resourceVersionMatch", None,
                                   "resourceVersionMatch is forbidden unless resourceVersion is provided")
        if self.continue_token and self.resource_version and self.resource_version != "0":
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        if self.resource_version_match == EXACT and self.resource_version == "0":
            raise _invalid_options("resourceVersionMatch", EXACT,
                                   'resourceVersionMatch "exact" is forbidden for resourceVersion "0"')


def _invalid_options(field: str, value: Any, detail: str) -> ApiError:
    error = errors.invalid(field, value, detail) if value is not None else errors.forbidden(field, detail)
    return errors.invalid_object("meta.k8s.io", "ListOptions", "", [error])


def _parse_int(text: str, name: str) -> int:
    if not text:
        return 0
    try:
        return int(text)
    except ValueError:
        raise errors.bad_request(f'invalid value for {name}: "{text}"') from None


def parse_resource_version(text: str) -> int:
    """A resourceVersion string as an int; upstream rejects non-numeric ones with 400."""
    try:
        value = int(text)
    except ValueError:
        raise errors.bad_request(f'invalid resource version "{text}"') from None
    if value < 0:
        raise errors.bad_request(f'invalid resource version "{text}"')
    return value


class Matcher:
    """Label and field selectors of one request, compiled once."""

    def __init__(self, rt: ResourceType, label_selector: str, field_selector: str) -> None:
        self._rt = rt
        self._labels = selectors.parse_label_selector(label_selector) if label_selector else None
        self._fields = selectors.parse_field_selector(field_selector) if field_selector else None
        if self._fields is not None:
            self._fields = selectors.convert_field_selector(rt, self._fields)

    @property
    def filters(self) -> bool:
        return self._labels is not None or self._fields is not None

    def __call__(self, obj: Obj) -> bool:
        if self._labels is not None:
            if not self._labels.matches((obj.get("metadata") or {}).get("labels") or {}):
                return False
        if self._fields is not None:
            if not self._fields.matches(selectors.object_fields(self._rt, obj)):
                return False
        return True


def encode_continue(rv: int, last_key: str) -> str:
    """An opaque continue token shaped like upstream's (base64 JSON with rv and start key)."""
    payload = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": last_key + "\x00"}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    try:
        padded = token + "=" * (-len(token) % 4)
        payload = json.loads(base64.urlsafe_b64decode(padded.encode()))
        rv, start = int(payload["rv"]), str(payload["start"])
        if payload.get("v") != "meta.k8s.io/v1" or rv <= 0:
            raise ValueError("bad version")
    except (ValueError, KeyError, TypeError):
        raise errors.bad_request("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)") from None
    return rv, start


def object_sort_key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return sort_key((meta.get("namespace") or "", meta.get("name") or ""))


@dataclass
class Page:
    items: list[Obj]
    resource_version: int
    continue_token: str = ""
    remaining: int | None = None


def list_page(store: Store, rt: ResourceType, namespace: str, options: ListOptions,
              match: Callable[[Obj], bool], filtered: bool) -> Page:
    """One page of a list, applying every rule of ListOptions."""
    snapshot_rv, start_key = 0, ""
    if options.continue_token:
        snapshot_rv, start_key = decode_continue(options.continue_token)
        objects = _snapshot(store, rt, namespace, snapshot_rv, expired=EXPIRED_CONTINUE)
    else:
        objects, snapshot_rv = _select_version(store, rt, namespace, options)
    limit = 0 if options.resource_version == "0" else options.limit
    return _cut_page(objects, snapshot_rv, start_key, limit, match, filtered)


def _select_version(store: Store, rt: ResourceType, namespace: str, options: ListOptions) -> tuple[list[Obj], int]:
    rv_text = options.resource_version
    if not rv_text or rv_text == "0":
        return store.list(rt.key, namespace)
    rv = parse_resource_version(rv_text)
    if options.resource_version_match == EXACT:
        return _snapshot(store, rt, namespace, rv, expired=None), rv
    if rv > store.resource_version:
        raise _too_large_resource_version(rv, store.resource_version)
    return store.list(rt.key, namespace)


def _snapshot(store: Store, rt: ResourceType, namespace: str, rv: int, expired: str | None) -> list[Obj]:
    if rv > store.resource_version:
        raise _too_large_resource_version(rv, store.resource_version)
    try:
        return store.list_at(rt.key, namespace, rv)
    except TooOldResourceVersion:
        message = expired or f"too old resource version: {rv} ({store.history.horizon_rv() + 1})"
        raise errors.resource_expired(message) from None


def _too_large_resource_version(rv: int, current: int) -> ApiError:
    """Upstream waits ~3 s for the watch cache, then answers 504 Timeout with this cause."""
    message = f"Too large resource version: {rv}, current: {current}"
    return ApiError(504, "Timeout", message, {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    })


def _cut_page(objects: list[Obj], snapshot_rv: int, start_key: str, limit: int,
              match: Callable[[Obj], bool], filtered: bool) -> Page:
    index = 0
    if start_key:
        index = _first_at_or_after(objects, start_key)
    items: list[Obj] = []
    while index < len(objects):
        obj = objects[index]
        index += 1
        if match(obj):
            items.append(obj)
            if limit and len(items) == limit:
                break
    page = Page(items, snapshot_rv)
    if limit and len(items) == limit and index < len(objects) and _any_match(objects, index, match, filtered):
        page.continue_token = encode_continue(snapshot_rv, object_sort_key(items[-1]))
        if not filtered:
            page.remaining = len(objects) - index
    return page


def _any_match(objects: list[Obj], index: int, match: Callable[[Obj], bool], filtered: bool) -> bool:
    """Upstream sets continue when etcd has more keys, even if none would match; so do we."""
    return True if not filtered else index < len(objects)


def _first_at_or_after(objects: list[Obj], start_key: str) -> int:
    lo, hi = 0, len(objects)
    while lo < hi:
        mid = (lo + hi) // 2
        if object_sort_key(objects[mid]) < start_key:
            lo = mid + 1
        else:
            hi = mid
    return lo
