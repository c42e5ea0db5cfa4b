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
        _parse_int(query.get("timeoutSeconds", ""))  # converted for a list too: a bad one is its 400
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
#: The most keys one read of a list with a selector takes from the store: the first read
#: takes ``limit`` keys, and each read that leaves the page short doubles it up to this
#: (etcd3 store's ``maxLimit``), so a selective list costs the keys it walks, no more.
MAX_KEYS_PER_READ = 10_000


def encode_continue(rv: int, last_key: str) -> str:
    """An opaque continue token, upstream's: base64 JSON of the list's rv and the key after
    ``last_key`` (relative to the list's key prefix: the namespace, for a namespaced list)."""
    return _encode_token(rv, last_key + "\x00")


def _encode_token(rv: int, start: str) -> str:
    payload = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    """(rv, start key relative to the list's prefix) of a token; a bad one is upstream's 400
    ``invalid continue token: ...``."""
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
    return rv, _clean_start(start)


def _clean_start(start: str) -> str:
    """Upstream's guard against a start key that climbs out of the list's prefix: rooted at
    "/", it must already be as Go's ``path.Clean`` leaves it; the key without that "/"."""
    rooted = start if start.startswith("/") else "/" + start
    if _go_clean_rooted(rooted) != rooted:
        raise _bad_continue(f"continue key is not valid: {start}")
    return rooted[1:]


def _go_clean_rooted(path: str) -> str:
    """Go's ``path.Clean`` of a path starting with "/": no empty, "." or ".." elements."""
    parts: list[str] = []
    for part in path.split("/"):
        if part == "..":
            if parts:
                parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/" + "/".join(parts)


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


class _Cut(NamedTuple):
    """Where a page is cut from: the key range and the version it is read at."""

    resource: tuple[str, str]
    namespace: str
    start: str  # the first etcd key ("namespace/name") the page may hold; "" from the beginning
    rv: int | None  # None: the newest state
    limit: int  # 0: no limit


def list_page(store: Store, rt: ResourceType, namespace: str, options: ListOptions,
              match: Callable[[Obj], bool], filtered: bool) -> Page:
    """One page of a list, applying every rule of ListOptions.

    A page costs the keys it walks (a selector may skip some) plus a binary search, and the
    changes since the list's snapshot when writes came in between: a continue token resumes
    at its key, as etcd's range read does, whatever the collection's size.
    """
    limit = 0 if options.resource_version == "0" else options.limit
    if options.continue_token:
        token_rv, start = decode_continue(options.continue_token)
        if options.resource_version and options.resource_version != "0":
            raise errors.bad_request("specifying resource version is not allowed when using continue")
        snapshot_rv = None if token_rv == LATEST_RV else token_rv
        cut = _Cut(rt.key, namespace, _key_prefix(namespace) + start, snapshot_rv, limit)
        try:
            return _read_page(store, cut, match, filtered)
        except TooOldResourceVersion:  # upstream's 410 carries a token that continues at the newest state
            expired = errors.resource_expired(EXPIRED_CONTINUE)
            expired.metadata["continue"] = _encode_token(LATEST_RV, start)
            raise expired from None
    cut = _Cut(rt.key, namespace, "", _chosen_version(store, options), limit)
    try:
        return _read_page(store, cut, match, filtered)
    except TooOldResourceVersion:
        raise errors.resource_expired(
            f"too old resource version: {cut.rv} ({store.history.horizon_rv() + 1})") from None


def _key_prefix(namespace: str) -> str:
    """What a list's keys share, which its continue tokens leave out (etcd's key prefix)."""
    return namespace + "/" if namespace else ""


def _chosen_version(store: Store, options: ListOptions) -> int | None:
    """The version a list without a continue token is read at: an Exact one, else the newest."""
    rv_text = options.resource_version
    if not rv_text or rv_text == "0":
        return None
    rv = parse_resource_version(rv_text)
    if rv > store.resource_version:
        raise _too_large_resource_version(rv, store.resource_version)
    return rv if options.resource_version_match == EXACT else None


def _read_page(store: Store, cut: _Cut, match: Callable[[Obj], bool], filtered: bool) -> Page:
    """The page at ``cut`` (504 for a version not written yet; TooOldResourceVersion past the history)."""
    if cut.rv is not None and cut.rv > store.resource_version:
        raise _too_large_resource_version(cut.rv, store.resource_version)
    if filtered and cut.limit:
        return _selected_page(store, cut, match)
    run = store.range_at(cut.resource, cut.namespace, cut.start, cut.limit or None, cut.rv)
    if not cut.limit:
        return Page([obj for obj in run.objects if match(obj)] if filtered else run.objects, run.resource_version)
    page = Page(run.objects, run.resource_version)
    if run.remaining and run.objects:
        page.continue_token = _next_token(run.resource_version, cut.namespace, run.objects[-1])
        page.remaining = run.remaining  # only without a selector: etcd's count covers every key
    return page


def _selected_page(store: Store, cut: _Cut, match: Callable[[Obj], bool]) -> Page:
    """A page under a selector: read ``limit`` keys, then twice as many (up to
    :data:`MAX_KEYS_PER_READ`) while the page is short, as etcd3's store does; the token
    resumes after the key that filled the page, and is handed out when keys follow it."""
    items: list[Obj] = []
    start, keys, rv = cut.start, cut.limit, cut.rv
    while True:
        run = store.range_at(cut.resource, cut.namespace, start, keys, rv)
        rv = run.resource_version
        for index, obj in enumerate(run.objects):
            if not match(obj):
                continue
            items.append(obj)
            if len(items) == cut.limit:
                more = index + 1 < len(run.objects) or run.remaining > 0
                return Page(items, rv, _next_token(rv, cut.namespace, obj) if more else "")
        if not run.remaining or not run.objects:
            return Page(items, rv)
        start = object_sort_key(run.objects[-1]) + "\x00"
        keys = keys if keys >= MAX_KEYS_PER_READ else min(2 * keys, MAX_KEYS_PER_READ)


def _next_token(rv: int, namespace: str, last: Obj) -> str:
    return encode_continue(rv, object_sort_key(last)[len(_key_prefix(namespace)):])


def _too_large_resource_version(rv: int, current: int) -> ApiError:
    """Upstream waits ~3 s for the watch cache, then answers 504 Timeout with this cause."""
    message = f"Too large resource version: {rv}, current: {current}"
    return ApiError(504, "Timeout", message, {
        "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
        "retryAfterSeconds": 1,
    })
