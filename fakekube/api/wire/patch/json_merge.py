"""RFC 6902 JSON patch and RFC 7386 JSON merge patch, with upstream's error mapping.

The apiserver applies both with evanphx/json-patch (v4) and maps failures as
k8s.io/apiserver ``handlers/patch.go`` does: a body that does not decode as a list of
operations is 400 BadRequest; more than 10000 operations is 413; any failure while
applying (a failed ``test``, a missing path, an unknown op) is a bare 422 Invalid whose
message does not say what failed, and so is a patch whose ``copy`` operations add more
than 3 MiB (json-patch's AccumulatedCopySizeLimit); a merge patch body that is not an
object is 400 ``Invalid JSON Patch``. As json-patch v4, a missing key of an existing object
reads as null: ``copy`` from it adds null, ``test`` of it holds against null.
"""

from __future__ import annotations

import json
from typing import Any


from fakekube.api.machinery.errors import ApiError, bad_request, invalid, invalid_object, request_entity_too_large
from fakekube.api.machinery.jsonutil import compact_json, deep_copy, go_marshal, nests_deeper_than
from fakekube.api.wire.decoding import SyntaxFailure, json_kind, parse_json, too_deep_value_error

MAX_JSON_PATCH_OPERATIONS = 10000
#: json-patch's AccumulatedCopySizeLimit as the apiserver sets it (JSONPatchMaxCopyBytes,
#: 3 MiB by default: twice etcd's 1.5 MiB request limit).
MAX_JSON_PATCH_COPY_BYTES = 3 * 1024 * 1024
_GENERIC_422 = "the server rejected our request due to an error in our request"


def parse_patch_body(raw: bytes) -> Any:
    """Decode a patch body as Go's decoder does (invalid UTF-8 and lone surrogates become
    U+FFFD, nesting is bounded); invalid JSON is 400 ``invalid JSON patch`` as upstream
    reports it."""
    try:
        return parse_json(raw)
    except SyntaxFailure:
        raise bad_request("invalid JSON patch") from None


class JsonPatchFailure(ValueError):
    """An RFC 6902 patch that did not apply (the patch library's words), or whose ``copy``
    operations went past :data:`MAX_JSON_PATCH_COPY_BYTES` (json-patch's words)."""


def apply_json_patch(original: dict, patch: Any) -> dict:
    """Apply an RFC 6902 patch (a decoded list of operations) to a copy of ``original``.

    Bounded as upstream bounds it: ``copy`` operations may add at most
    :data:`MAX_JSON_PATCH_COPY_BYTES` of JSON in all (past it, json-patch's
    AccumulatedCopySizeError: the bare 422), and a result nested past
    ``MAX_NESTING_DEPTH`` fails to decode (422 on ``patch``, as upstream's decoder).
    """
    _check_operations(patch)
    try:
        doc = apply_operations(original, patch)
    except JsonPatchFailure:
        raise ApiError(422, "Invalid", _GENERIC_422, {}) from None  # NewGenericServerResponse: "details":{}
    result = _require_object(doc)
    if nests_deeper_than(result):  # any depth: built by operations, not parsed
        detail = f"couldn't get version/kind; json parse error: {too_deep_value_error(result)}"
        raise invalid_object("", "", "", [invalid("patch", compact_json(result), detail)])
    return result


def apply_operations(original: Any, operations: list[dict]) -> Any:
    """``operations`` (a list of objects: see :func:`operations_problem`) applied to a copy
    of ``original``; :class:`JsonPatchFailure` when one does not apply or the copies pass
    their budget. The result may be any JSON value, nested any depth the operations make."""
    doc: Any = deep_copy(original)
    copied_bytes = 0
    for operation in operations:
        if operation.get("op") == "copy":
            copied_bytes += _copied_bytes(doc, operation)
            if copied_bytes > MAX_JSON_PATCH_COPY_BYTES:
                raise JsonPatchFailure(f"Unable to complete the copy, the accumulated size increase of copy is "
                                       f"{copied_bytes}, exceeding the limit {MAX_JSON_PATCH_COPY_BYTES}")
        doc = _apply_one(doc, operation)
    return doc


def _apply_one(doc: Any, operation: dict) -> Any:
    import jsonpatch  # only JSON patches need it: not loaded with the package (cold start)
    import jsonpointer
    op = operation.get("op")
    if op in ("copy", "test") and _names_missing_key(doc, operation.get("from" if op == "copy" else "path")):
        # json-patch v4 gets a missing key of an object as a nil node (partialDoc.get): a copy
        # adds null, a test holds against null (or no value) and fails against anything else.
        if op == "test":
            if operation.get("value") is not None:
                raise JsonPatchFailure(f"testing value {operation.get('path')} failed: test failed")
            return doc
        operation = {"op": "add", "path": operation.get("path"), "value": None}
    try:
        return jsonpatch.JsonPatch([operation]).apply(doc, in_place=True)
    except jsonpatch.JsonPatchTestFailed:
        raise JsonPatchFailure(f"testing value {operation.get('path')} failed: test failed") from None
    except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException, TypeError, KeyError,
            IndexError, ValueError, AttributeError, RecursionError):  # deep: a copy, a test's ==
        raise JsonPatchFailure(_go_failure(doc, operation)) from None


def _go_failure(doc: Any, operation: dict) -> str:
    """json-patch's words for an operation that does not apply, by its kind and whether the
    target's parent exists (the library's own would print the document as a Python repr)."""
    op, path, source = operation.get("op"), operation.get("path"), operation.get("from")
    if op in ("add", "remove", "replace") and _resolves(doc, str(path).rpartition("/")[0]):
        if op == "replace":
            return f"replace operation does not apply: doc is missing key: {path}: missing value"
        return f"error in {op} for path: '{path}': missing value"
    if op in ("add", "remove"):
        return f'{op} operation does not apply: doc is missing path: "{path}": missing value'
    if op == "replace":
        return f"replace operation does not apply: doc is missing path: {path}: missing value"
    if op in ("move", "copy"):
        return f"{op} operation does not apply: doc is missing from path: {source}: missing value"
    if op == "test":
        return f"test operation does not apply: is missing path: {path}: missing value"
    return f"Unexpected kind: {op if isinstance(op, str) else 'unknown'}"


def _names_missing_key(doc: Any, pointer: Any) -> bool:
    """Whether ``pointer`` names a key its parent object lacks (the parent itself exists)."""
    import jsonpointer  # with the first JSON patch, not with the package (cold start)
    if not isinstance(pointer, str) or not pointer:
        return False
    try:
        parts = jsonpointer.JsonPointer(pointer).parts
        parent = jsonpointer.JsonPointer.from_parts(parts[:-1]).resolve(doc)
    except (jsonpointer.JsonPointerException, TypeError, KeyError, IndexError, ValueError, AttributeError,
            RecursionError):
        return False
    return isinstance(parent, dict) and parts[-1] not in parent


def _resolves(doc: Any, pointer: str) -> bool:
    import jsonpointer  # with the first JSON patch, not with the package (cold start)
    try:
        jsonpointer.resolve_pointer(doc, pointer)
        return True
    except (jsonpointer.JsonPointerException, TypeError, KeyError, IndexError, ValueError, AttributeError):
        return False


def _copied_bytes(doc: Any, operation: dict) -> int:
    """What json-patch adds to its copy budget: the JSON size of the value copied (0 when
    ``from`` does not resolve: applying the operation then fails on its own)."""
    import jsonpointer  # with the first JSON patch, not with the package (cold start)
    try:
        value = jsonpointer.resolve_pointer(doc, str(operation.get("from")))
    except (jsonpointer.JsonPointerException, TypeError, KeyError, IndexError, ValueError, AttributeError,
            RecursionError):
        return 0
    return len(json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode())


def operations_problem(patch: Any) -> str | None:
    """Why a decoded patch is not a list of operations, in ``jsonpatch.DecodePatch``'s
    words (Go's, unmarshalling into ``[]map[string]*json.RawMessage``); None when it is."""
    if not isinstance(patch, list):
        return f"json: cannot unmarshal {json_kind(patch)} into Go value of type jsonpatch.Patch"
    for op in patch:
        if not isinstance(op, dict):
            return f"json: cannot unmarshal {json_kind(op)} into Go value of type jsonpatch.Operation"
    return None


def _check_operations(patch: Any) -> None:
    """Mirror jsonpatch.DecodePatch (a JSON array of objects) and the operation limit."""
    problem = operations_problem(patch)
    if problem is not None:
        raise bad_request(problem)
    if len(patch) > MAX_JSON_PATCH_OPERATIONS:
        raise request_entity_too_large(
            f"The allowed maximum operations in a JSON patch is "
            f"{MAX_JSON_PATCH_OPERATIONS}, got {len(patch)}")


def apply_merge_patch(original: dict, patch: Any) -> dict:
    """Apply an RFC 7386 merge patch to a copy of ``original``.

    ``null`` deletes a key, objects merge recursively, anything else replaces. Like
    evanphx/json-patch, nulls inside values that are added (not merged) are dropped from
    objects, but kept as array elements.
    """
    if isinstance(patch, list):
        return _require_object(_prune_nulls(patch))
    if not isinstance(patch, dict):
        raise bad_request("Invalid JSON Patch")
    return _merge_objects(deep_copy(original), patch)


def _merge_objects(doc: dict, patch: dict) -> dict:
    for key, value in patch.items():
        if value is None:
            doc.pop(key, None)
            continue
        current = doc.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            doc[key] = _merge_objects(current, value)
        elif isinstance(current, dict):
            doc[key] = deep_copy(value)  # an object replaced by a non-object keeps its nulls
        else:
            doc[key] = _prune_nulls(value)
    return doc


def merge_patch_text(original: dict, patch: Any) -> str:
    """The JSON text of :func:`apply_merge_patch`'s result as evanphx/json-patch marshals
    it (what a ``patch: Invalid value:`` error shows): an object the patch merged into is
    written with its keys sorted (a Go map), a value the patch brought in sorted with its
    nulls pruned, and whatever the patch did not touch as the original's encoding wrote it
    (a raw node: the Go struct's field order). HTML characters escaped, as json.Marshal."""
    if not isinstance(patch, dict):
        return go_marshal(apply_merge_patch(original, patch))
    return _merged_text(original, patch)


def _merged_text(doc: dict, patch: dict) -> str:
    entries = {key: _raw_text(value) for key, value in doc.items()}
    for key, value in patch.items():
        if value is None:
            entries.pop(key, None)
            continue
        current = doc.get(key)
        if isinstance(current, dict) and isinstance(value, dict):
            entries[key] = _merged_text(current, value)
        elif isinstance(current, dict):
            entries[key] = _raw_text(value)  # an object replaced by a non-object: the patch's node, as sent
        else:
            entries[key] = go_marshal(_prune_nulls(value))
    return "{" + ",".join(f"{_raw_text(key)}:{entries[key]}" for key in sorted(entries)) + "}"


def _raw_text(value: Any) -> str:
    """A value as its own encoding wrote it (key order kept), compacted and HTML-escaped."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                          ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def _prune_nulls(value: Any) -> Any:
    """A copy of ``value`` without null-valued object keys, at any depth."""
    if isinstance(value, dict):
        return {k: _prune_nulls(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_prune_nulls(v) for v in value]
    return value


def _require_object(result: Any) -> dict:
    """A patch whose result is not an object fails to decode: upstream's 422 ``patch`` error."""
    if isinstance(result, dict):
        return result
    text = json.dumps(result, separators=(",", ":"), sort_keys=True)
    detail = f"json: cannot unmarshal {json_kind(result)} into Go value of type map[string]interface {{}}"
    raise invalid_object("", "", "", [invalid("patch", text, detail)])
