"""Kubernetes ``Status`` errors.

Every failure the apiserver reports is an :class:`ApiError`; the REST layer turns it
into a ``Status`` object with upstream's HTTP code, ``reason`` and ``details`` so
clients (client-go, kubectl, the Python client) classify it exactly as they would
against a real cluster. Helper constructors mirror apimachinery's
``k8s.io/apimachinery/pkg/api/errors`` so call sites read like upstream's.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from typing import Any, NamedTuple

from fakekube.objects.syntax import go_quote
from fakekube.objects.versions import DEFAULT_VERSION, JSON_VALUES, RELEASES, Release

# Field error types, as apimachinery's field.ErrorType renders them in causes.
FIELD_REQUIRED = "FieldValueRequired"
FIELD_INVALID = "FieldValueInvalid"
FIELD_NOT_SUPPORTED = "FieldValueNotSupported"
FIELD_FORBIDDEN = "FieldValueForbidden"
FIELD_DUPLICATE = "FieldValueDuplicate"
FIELD_TOO_LONG = "FieldValueTooLong"
FIELD_TOO_MANY = "FieldValueTooMany"
FIELD_NOT_FOUND = "FieldValueNotFound"
#: field.TypeInvalid (a value of the wrong JSON type; kube-openapi type and format failures).
FIELD_TYPE_INVALID = "FieldValueTypeInvalid"

_FIELD_ERROR_PHRASES = {
    FIELD_REQUIRED: "Required value",
    FIELD_INVALID: "Invalid value",
    FIELD_NOT_SUPPORTED: "Unsupported value",
    FIELD_FORBIDDEN: "Forbidden",
    FIELD_DUPLICATE: "Duplicate value",
    FIELD_TOO_LONG: "Too long",
    FIELD_TOO_MANY: "Too many",
    FIELD_NOT_FOUND: "Not found",
    FIELD_TYPE_INVALID: "Invalid value",
}

_NO_VALUE = object()
#: A field error's value that is left out of its message (apimachinery's
#: ``field.OmitValueType``): ``spec: Invalid value: detail``.
OMIT_VALUE = _NO_VALUE

#: The error types whose ``ErrorBody`` shows the bad value.
_SHOWS_VALUE = (FIELD_INVALID, FIELD_NOT_SUPPORTED, FIELD_DUPLICATE, FIELD_TYPE_INVALID, FIELD_TOO_MANY)


class FieldError(NamedTuple):
    """One problem with one field, like apimachinery's ``field.Error``.

    ``path`` is the dotted/indexed field path (``spec.containers[0].image``).
    ``detail`` is the human explanation. ``value`` is shown for Invalid-style errors.
    """

    type: str
    path: str
    detail: str = ""
    value: Any = _NO_VALUE

    def body(self) -> str:
        """``field.Error.ErrorBody()``: ``Invalid value: "x": detail``, without the path."""
        text = _FIELD_ERROR_PHRASES.get(self.type, self.type)
        if self.value is not _NO_VALUE and self.type in _SHOWS_VALUE:
            text += f": {_render_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def message(self) -> str:
        """Render as upstream does: ``path: Invalid value: "x": detail``."""
        return f"{self.path}: {self.body()}"

    def cause(self) -> dict[str, str]:
        """The ``StatusCause`` entry for ``details.causes``: upstream puts the error body
        (no path) in ``message`` and omits an empty ``field``."""
        cause = {"reason": self.type, "message": self.body()}
        if self.path:
            cause["field"] = self.path
        return cause


#: The most of a bad value a field error shows (its Go-quoted text is cut here and says
#: how long it was). Upstream echoes any value whole — a 422 for a patched 3 MiB object
#: quotes all of it twice (message and cause); here the answer stays a few dozen KiB.
MAX_SHOWN_VALUE_BYTES = 16 * 1024


#: The release whose rules word and render errors: the one switch, set around each
#: apiserver call (:func:`emulating`) from the cluster's release (fakekube/objects/versions.py):
#: how a bad value shows (``field_error_values``) and the texts that changed (``messages``).
#: A context variable, so concurrent requests to clusters of different releases each get
#: their own; outside any call, the default release.
_RELEASE: ContextVar[Release] = ContextVar("emulated_release", default=RELEASES[DEFAULT_VERSION])


class emulating:  # noqa: N801 (used as a function: ``with emulating(release):``)
    """Word and render errors raised inside as ``release`` does. A class rather than a
    ``contextlib.contextmanager``: every request enters it twice, and a generator-based
    context manager costs several times as much per use."""

    __slots__ = ("_release", "_token")

    def __init__(self, release: Release) -> None:
        self._release = release
        self._token: Token[Release] | None = None

    def __enter__(self) -> None:
        self._token = _RELEASE.set(self._release)

    def __exit__(self, *exc_info: object) -> None:
        if self._token is not None:
            _RELEASE.reset(self._token)
            self._token = None


def emulated() -> Release:
    """The release errors are worded for now (see :func:`emulating`)."""
    return _RELEASE.get()


class Shown:
    """A bad value already rendered the way upstream shows it: ``go`` as Go's ``%#v`` (up to
    1.33), ``json`` as ``json.Marshal`` (from 1.34; None: the same text as ``go``). For the
    values validation holds as Go structs (``rbac.RoleRef{...}``), which a decoded body cannot
    render by itself."""

    __slots__ = ("go", "json")

    def __init__(self, go: str, json: str | None = None) -> None:
        self.go = go
        self.json = json

    def text(self, style: str) -> str:
        return self.json if style == JSON_VALUES and self.json is not None else self.go

    def __str__(self) -> str:
        return self.text(_RELEASE.get().field_error_values)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.go!r}, {self.json!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Shown) and (other.go, other.json) == (self.go, self.json)

    def __hash__(self) -> int:
        return hash((self.go, self.json))


def _render_value(value: Any) -> str:
    """``ErrorBody``'s value: a string as ``%q`` (quotes, backslashes and non-printables
    escaped), a number or bool as ``%v``; anything else
    as the release renders it (:func:`emulated`): up to 1.33 nil as the quoted string
    ``"null"`` and a decoded JSON object or array as ``%#v``, from 1.34 as JSON (``null``,
    ``{"a":1}``) — cut after MAX_SHOWN_VALUE_BYTES."""
    if isinstance(value, str):
        size = len(value.encode("utf-8", errors="replace"))
        if size <= MAX_SHOWN_VALUE_BYTES:
            return go_quote(value)
        head = value.encode("utf-8", errors="replace")[:MAX_SHOWN_VALUE_BYTES].decode("utf-8", errors="ignore")
        return go_quote(head) + f"... ({size} bytes in all, truncated)"
    if isinstance(value, bool):
        return "true" if value else "false"
    style = _RELEASE.get().field_error_values
    if value is None:
        return "null" if style == JSON_VALUES else '"null"'
    if isinstance(value, Shown):
        text = value.text(style)
    elif isinstance(value, (dict, list)):
        text = go_json(value) if style == JSON_VALUES else go_sharp(value)
    else:
        text = go_float(value) if isinstance(value, float) else str(value)
    if len(text) > MAX_SHOWN_VALUE_BYTES:
        return text[:MAX_SHOWN_VALUE_BYTES] + f"... ({len(text)} bytes in all, truncated)"
    return text


def go_json(value: Any) -> str:
    """Go's ``json.Marshal`` of a value decoded from JSON into ``interface{}``: compact,
    map keys sorted, ``<``, ``>`` and ``&`` escaped, whole floats without a fraction."""
    if isinstance(value, dict):
        return "{" + ",".join(f"{_json_string(str(k))}:{go_json(value[k])}" for k in sorted(value)) + "}"
    if isinstance(value, list):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _json_string(value)
    if isinstance(value, float):
        return _json_float(value)
    return str(value)


def go_json_struct(fields: list[tuple[str, Any]]) -> str:
    """``json.Marshal`` of a Go struct: its fields in declaration order (internal types have
    no JSON tags, so the names are Go's: ``{"APIGroup":"…","Kind":"…"}``)."""
    return "{" + ",".join(f"{_json_string(name)}:{go_json(value)}" for name, value in fields) + "}"


def _json_string(text: str) -> str:
    """encoding/json's string: HTML-safe escapes and U+2028/U+2029 escaped, UTF-8 kept."""
    import json
    out = json.dumps(text, ensure_ascii=False)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        out = out.replace(raw, escaped)
    return out


def _json_float(value: float) -> str:
    """encoding/json's float64: the shortest digits, %e form below 1e-6 or from 1e21."""
    if value == int(value) and abs(value) < 1e21:
        return str(int(value))
    if abs(value) < 1e-6 or abs(value) >= 1e21:
        head, _, exponent = repr(value).partition("e")
        return f"{head}e{int(exponent):+03d}".replace("e+0", "e+").replace("e-0", "e-")
    return repr(value)


def go_sharp(value: Any) -> str:
    """Go's ``%#v`` of a value decoded from JSON into ``interface{}``: maps with sorted keys
    (``map[string]interface {}{"a":1, "b":[]interface {}{true}}``), never a Python repr."""
    if isinstance(value, dict):
        items = ", ".join(f"{go_quote(str(k))}:{go_sharp(value[k])}" for k in sorted(value))
        return "map[string]interface {}{" + items + "}"
    if isinstance(value, list):
        return "[]interface {}{" + ", ".join(go_sharp(v) for v in value) + "}"
    if value is None:
        return "interface {}(nil)"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def go_float(value: float) -> str:
    """Go's ``%v`` of a float64: shortest round-trip digits, %e form when exp < -4 or >= 6
    (strconv's threshold for the shortest form), else plain (``2``, ``1.5``)."""
    if value != value or value in (float("inf"), float("-inf")):
        return {"nan": "NaN", "inf": "+Inf", "-inf": "-Inf"}[repr(value)]
    sci = "%.*e" % (_shortest_precision(abs(value)), abs(value))
    head, _, exp_part = sci.partition("e")
    exponent = int(exp_part)
    sign = "-" if value < 0 else ""
    if exponent < -4 or exponent >= 6:
        return f"{sign}{head}e{'-' if exponent < 0 else '+'}{abs(exponent):02d}"
    return sign + repr(abs(value)).removesuffix(".0")


def _shortest_precision(value: float) -> int:
    """Digits after the point needed in %e form to round-trip ``value``."""
    for precision in range(17):
        if float("%.*e" % (precision, value)) == value:
            return precision
    return 17


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(FIELD_REQUIRED, path, detail)


def invalid(path: str, value: Any, detail: str = "") -> FieldError:
    return FieldError(FIELD_INVALID, path, detail, value)


def not_supported(path: str, value: Any, valid: list[str]) -> FieldError:
    detail = "supported values: " + ", ".join(f'"{v}"' for v in valid)
    return FieldError(FIELD_NOT_SUPPORTED, path, detail, value)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(FIELD_FORBIDDEN, path, detail)


def duplicate(path: str, value: Any) -> FieldError:
    return FieldError(FIELD_DUPLICATE, path, "", value)


def too_long(path: str, value: Any, max_length: int) -> FieldError:
    return FieldError(FIELD_TOO_LONG, path, f"may not be more than {max_length} bytes", value)


class ApiError(Exception):
    """An error the apiserver returns to the client as a ``Status``."""

    def __init__(self, code: int, reason: str, message: str, details: dict[str, Any] | None = None,
                 headers: dict[str, str] | None = None, metadata: dict[str, Any] | None = None) -> None:
        self.code = code
        self.reason = reason
        self.message = message
        self.details: dict[str, Any] = {} if details is None else details
        #: Whether upstream's Status has a details pointer (its constructors with a resource,
        #: ``NewGenericServerResponse``...): then ``details`` is sent even when empty, ``{}``.
        self.has_details = details is not None
        #: Response headers the Status is sent with (``Retry-After``).
        self.headers: dict[str, str] = {} if headers is None else headers
        #: The Status's ListMeta (an expired list's fresh ``continue`` token).
        self.metadata: dict[str, Any] = {} if metadata is None else metadata
        #: Warnings the request earned before it failed (admission webhooks' answers, a
        #: deprecated type): upstream records them as they come, so the Status carries them too.
        self.warnings: list[str] = []

    def __str__(self) -> str:
        return f"{self.code} {self.reason}: {self.message}"

    def status(self) -> dict[str, Any]:
        """The ``metav1.Status`` body for this error, keys in upstream's wire order.

        Go's encoding/json writes a struct's fields in declaration order and drops empty
        ``omitempty`` ones, so clients that compare bytes see exactly
        ``kind, apiVersion, metadata, status, message, reason, details, code``;
        ``details`` and its causes are put in their struct order too (:func:`status_details`).
        """
        body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": dict(self.metadata),
                                "status": "Failure"}
        if self.message:
            body["message"] = self.message
        if self.reason:  # Go omits an empty reason (e.g. some 500s from patching)
            body["reason"] = self.reason
        details = status_details(self.details)
        if details or self.has_details:
            body["details"] = details
        if self.code:
            body["code"] = self.code
        return body


#: ``metav1.StatusDetails`` and ``metav1.StatusCause`` fields in declaration order — the
#: order Go's encoding/json writes them (k8s.io/apimachinery/pkg/apis/meta/v1/types.go).
STATUS_DETAILS_FIELDS = ("name", "group", "kind", "uid", "causes", "retryAfterSeconds")
STATUS_CAUSE_FIELDS = ("reason", "message", "field")


def status_details(details: dict[str, Any]) -> dict[str, Any]:
    """``details`` as upstream serializes it: struct order, empty (omitempty) fields
    dropped, each cause in ``reason, message, field`` order. Call sites build details
    in whatever order reads best; this is the one place the wire order lives."""
    ordered: dict[str, Any] = {}
    for key in STATUS_DETAILS_FIELDS:
        value = details.get(key)
        if not value:
            continue
        if key == "causes":
            value = [_ordered_cause(cause) for cause in value]
        ordered[key] = value
    return ordered


def _ordered_cause(cause: dict[str, Any]) -> dict[str, Any]:
    return {key: cause[key] for key in STATUS_CAUSE_FIELDS if cause.get(key)}


def _qualified(group: str, resource: str) -> str:
    """``deployments.apps`` / ``pods``, as upstream's GroupResource.String()."""
    return f"{resource}.{group}" if group else resource


def _details(name: str, group: str, resource: str) -> dict[str, Any]:
    details: dict[str, Any] = {"kind": resource}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    return details


def not_found(group: str, resource: str, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{_qualified(group, resource)} "{name}" not found', _details(name, group, resource))


def already_exists(group: str, resource: str, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{_qualified(group, resource)} "{name}" already exists', _details(name, group, resource))


def conflict(group: str, resource: str, name: str, why: str) -> ApiError:
    message = f'Operation cannot be fulfilled on {_qualified(group, resource)} "{name}": {why}'
    return ApiError(409, "Conflict", message, _details(name, group, resource))


STALE_OBJECT = "the object has been modified; please apply your changes to the latest version and try again"


def invalid_object(group: str, kind: str, name: str, errors: list[FieldError]) -> ApiError:
    """422 Invalid, with one cause per field error, formatted as upstream's NewInvalid.

    The message lists each distinct error once (``ErrorList.ToAggregate``); the details
    omit empty fields, as Go's ``omitempty`` does.
    """
    qualified_kind = f"{kind}.{group}" if group else kind
    messages = list(dict.fromkeys(e.message() for e in errors))
    summary = messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"
    details: dict[str, Any] = {}
    if name:
        details["name"] = name
    if group:
        details["group"] = group
    if kind:
        details["kind"] = kind
    details["causes"] = [e.cause() for e in errors]
    return ApiError(422, "Invalid", f'{qualified_kind} "{name}" is invalid: {summary}', details)


def invalid_options(kind: str, errors: list[FieldError]) -> ApiError:
    """The 422 for bad query options (``CreateOptions.meta.k8s.io "" is invalid: ...``)."""
    return invalid_object("meta.k8s.io", kind, "", errors)


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def method_not_supported(group: str, resource: str, verb: str) -> ApiError:
    """``NewMethodNotSupported``: a handler that exists but cannot do ``verb`` (e.g. watch)."""
    return ApiError(405, "MethodNotAllowed", f'{verb} is not supported on resources of kind "{_qualified(group, resource)}"',
                    _details("", group, resource))


NO_ROUTE = "the server does not allow this method on the requested resource"


def method_not_allowed() -> ApiError:
    """No route for this method on this path: go-restful's 405, as the apiserver words it
    (``NewGenericServerResponse``: an empty details pointer, ``"details":{}``)."""
    return ApiError(405, "MethodNotAllowed", NO_ROUTE, {})


def is_no_route(error: ApiError) -> bool:
    """Is this go-restful's 405 (:func:`method_not_allowed`)? No handler ran for it."""
    return error.code == 405 and error.message == NO_ROUTE


def unknown_error(code: int, message: str) -> ApiError:
    """A plain Go error that reached the client: a Status with no reason (``StatusReasonUnknown``)."""
    return ApiError(code, "", message)


def gone(message: str) -> ApiError:
    """410 Gone: a watch resourceVersion older than the history."""
    return ApiError(410, "Expired", message)


def resource_expired(message: str) -> ApiError:
    """410 Expired: a list ``continue`` token or exact resourceVersion past the history."""
    return ApiError(410, "Expired", message)


def request_entity_too_large(message: str) -> ApiError:
    """``NewRequestEntityTooLargeError``: ``Request entity too large: <message>``."""
    return ApiError(413, "RequestEntityTooLarge", f"Request entity too large: {message}")


#: The patch types a built-in resource's PATCH route lists, in upstream's order.
PATCH_MEDIA_TYPES = ("application/json-patch+json", "application/merge-patch+json",
                     "application/strategic-merge-patch+json", "application/apply-patch+yaml")


def unsupported_media_type(content_type: str = "", accepted: tuple[str, ...] = PATCH_MEDIA_TYPES) -> ApiError:
    """415 from a handler for a body in a format it does not take (``NewUnsupportedMediaTypeError``)."""
    return ApiError(415, "UnsupportedMediaType",
                    "the body of the request was in an unknown format - accepted media types include: "
                    + ", ".join(accepted))


def unsupported_media_type_route() -> ApiError:
    """415 from go-restful's router: a body whose Content-Type the route does not consume (a
    built-in type's PATCH with no patch type never reaches the handler), as the apiserver
    words it (``NewGenericServerResponse``: ``"details":{}``)."""
    return ApiError(415, "UnsupportedMediaType", "415: Unsupported Media Type", {})


def not_acceptable_route(produces: tuple[str, ...]) -> ApiError:
    """406 from go-restful's router: no media type of the Accept header is one the route
    produces (``"details":{}``, as :func:`unsupported_media_type_route`)."""
    return ApiError(406, "NotAcceptable", "406: Not Acceptable\n\nAvailable representations: " + ", ".join(produces), {})


def forbidden_error(group: str, resource: str, name: str, why: str) -> ApiError:
    message = f'{_qualified(group, resource)} "{name}" is forbidden: {why}' if name else f"{_qualified(group, resource)} is forbidden: {why}"
    return ApiError(403, "Forbidden", message, _details(name, group, resource))


def too_many_requests(message: str, retry_after_s: int = 1) -> ApiError:
    return ApiError(429, "TooManyRequests", message, {"retryAfterSeconds": retry_after_s},
                    {"Retry-After": str(retry_after_s)})


def internal_error(message: str) -> ApiError:
    """``NewInternalError``: the error's text again as the one cause."""
    return ApiError(500, "InternalError", f"Internal error occurred: {message}", {"causes": [{"message": message}]})
