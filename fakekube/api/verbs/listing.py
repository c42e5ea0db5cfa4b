"""List semantics: selectors, resourceVersion/resourceVersionMatch, limit + continue.

Pagination is consistent, as upstream's: the first page fixes a snapshot
resourceVersion, and every later page is cut from the store rolled back to that
version. When the history no longer reaches back that far, the continue token has
expired (410), exactly as after an etcd compaction.
"""

from __future__ import annotations

import base64
import json
from typing import Any, Callable, NamedTuple

from fakekube.api import selectors
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import ApiError
from fakekube.api.machinery.validation import go_quote
from fakekube.api.registry import ResourceType
from fakekube.api.verbs.deletion import parse_int64
from fakekube.api.wire import decoding
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


class ListOptions(NamedTuple):
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
            limit=_parse_int(query.get("limit", "")),
            continue_token=query.get("continue", ""),
            resource_version=query.get("resourceVersion", ""),
            resource_version_match=query.get("resourceVersionMatch", ""),
        )
        options.check()
        return options

    def check(self) -> None:
        """The ListOptions validation upstream applies before serving (``ValidateListOptions``):
        every problem at once, as a 422 on ``ListOptions.meta.k8s.io``."""
        match = self.resource_version_match
        if not match:
            return
        problems = []
        if not self.resource_version:
            problems.append(errors.forbidden("resourceVersionMatch",
                                             "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if self.continue_token:
            problems.append(errors.forbidden("resourceVersionMatch",
                                             "resourceVersionMatch is forbidden when continue is provided"))
        if match not in (EXACT, NOT_OLDER_THAN):
            problems.append(errors.not_supported("resourceVersionMatch", match, [EXACT, NOT_OLDER_THAN, ""]))
        if match == EXACT and self.resource_version == "0":
            problems.append(errors.forbidden("resourceVersionMatch",
                                             'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
        if problems:
            raise errors.invalid_options("ListOptions", problems)


def _parse_int(text: str) -> int:
    """An int64 query parameter; a bad one is the 400 upstream's parameter conversion gives."""
    return parse_int64(text) if text else 0


def parse_resource_version(text: str) -> int:
    """A resourceVersion string as an int; upstream's storage rejects others with 400."""
    if not (text.isascii() and text.isdigit()):
        quoted = go_quote(text)
        why = f"resourceVersion: Invalid value: {quoted}: strconv.ParseUint: parsing {quoted}: invalid syntax"
        raise errors.bad_request(f"invalid resource version: {why}")
    return int(text)


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
        """Whether a stored object matches."""
        if self._labels is not None:
            if not self._labels.matches((obj.get("metadata") or {}).get("labels") or {}):
                return False
        if self._fields is not None:
            # Fields are named in this API's shape; a stored object of another type's shape
            # (stored_as) is viewed as this API shows it first. A custom resource selects by
            # metadata only, which conversion keeps: no webhook call per object.
            shown = obj if self._rt.custom is not None else self._rt.view(obj)
            if not self._fields.matches(selectors.object_fields(self._rt, shown)):
                return False
        return True


_RAW_URL_BASE64 = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")

#: A continue token's resourceVersion meaning "continue at the newest state" (upstream
#: hands one out with an expired-list error; rv 0 is reserved for a broken token).
LATEST_RV = -1


def encode_continue(rv: int, last_key: str) -> str:
    """An opaque continue token shaped like upstream's (base64 JSON with rv and start key)."""
    return _encode_token(rv, last_key + "\x00")


def _encode_token(rv: int, start: str) -> str:
    payload = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    """(rv, start key) of a token; a bad one is upstream's 400 ``invalid continue token: ...``."""
    bad_byte = next((i for i, ch in enumerate(token) if ch not in _RAW_URL_BASE64), None)
    if bad_byte is None and len(token) % 4 == 1:
        bad_byte = len(token) - 1
    if bad_byte is not None:
        raise _bad_continue(f"continue key is not valid: illegal base64 data at input byte {bad_byte}")
    data = base64.urlsafe_b64decode((token + "=" * (-len(token) % 4)).encode())
    try:
        payload = decoding.parse_json(data)
    except decoding.SyntaxFailure as exc:
        raise _bad_continue(f"continue key is not valid: {exc}") from None
    if not isinstance(payload, dict) or payload.get("v") != "meta.k8s.io/v1":
        version = payload.get("v", "") if isinstance(payload, dict) else ""
        raise _bad_continue(f"continue key is not valid: server does not recognize this encoded version {version}")
    rv, start = payload.get("rv"), payload.get("start")
    if not isinstance(rv, int) or isinstance(rv, bool) or rv == 0:
        raise _bad_continue("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)")
    if not isinstance(start, str) or not start:
        raise _bad_continue("continue key is not valid: encoded start key empty (version meta.k8s.io/v1)")
    return rv, start


def _bad_continue(why: str) -> ApiError:
    return errors.bad_request(f"invalid continue token: {why}")


def object_sort_key(obj: Obj) -> str:
    meta = obj.get("metadata") or {}
    return sort_key((meta.get("namespace") or "", meta.get("name") or ""))


class Page:
    """One page of a list: its objects, the list's resourceVersion, and where the next
    page starts (``continue``) with how many objects remain after this one."""

    __slots__ = ("items", "resource_version", "continue_token", "remaining")

    def __init__(self, items: list[Obj], resource_version: int, continue_token: str = "",
                 remaining: int | None = None) -> None:
        self.items = items
        self.resource_version = resource_version
        self.continue_token = continue_token
        self.remaining = remaining


def list_page(store: Store, rt: ResourceType, namespace: str, options: ListOptions,
              match: Callable[[Obj], bool], filtered: bool) -> Page:
    """One page of a list, applying every rule of ListOptions."""
    snapshot_rv, start_key = 0, ""
    if options.continue_token:
        snapshot_rv, start_key = decode_continue(options.continue_token)
        if options.resource_version and options.resource_version != "0":
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        if snapshot_rv == LATEST_RV:
            objects, snapshot_rv = store.list(rt.key, namespace)
        else:
            objects = _continued_snapshot(store, rt, namespace, snapshot_rv, start_key)
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


def _continued_snapshot(store: Store, rt: ResourceType, namespace: str, rv: int, start_key: str) -> list[Obj]:
    """The snapshot a continue token points at; past the history, upstream's 410 carries a
    fresh token that continues from the same key at the newest state."""
    try:
        return _snapshot(store, rt, namespace, rv, expired=EXPIRED_CONTINUE)
    except ApiError as exc:
        if exc.code == 410:
            exc.metadata["continue"] = _encode_token(LATEST_RV, start_key)
        raise


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
    if not filtered:  # every object matches: a slice, with no call per object
        items = objects[index:index + limit] if limit else objects[index:]
        index += len(items)
    while filtered and index < len(objects):
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
