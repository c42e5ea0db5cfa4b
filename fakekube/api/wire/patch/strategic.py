"""Strategic merge patch, applied server-side as apimachinery's ``strategicpatch`` does.

A strategic merge patch is a JSON merge patch whose lists may merge instead of being
replaced: the type's schema says, per field, whether a list merges (and by which key)
and whether a struct keeps only the keys the patch names (``retainKeys``). Directives
inside the patch (``$patch``, ``$retainKeys``, ``$setElementOrder/<field>``,
``$deleteFromPrimitiveList/<field>``) delete, replace and order elements.

Fields the schema does not know (and types it does not have) merge like a JSON merge
patch: maps merge recursively, lists are replaced. Upstream refuses some of those cases
with an internal error instead.

Errors map as in apiserver's ``interpretStrategicMergePatchError``: malformed directive
lists are 400 BadRequest, lists of lists and retainKeys mismatches 422, and everything
else (a missing merge key, an unknown ``$patch`` value) reaches the client as a 500
with no reason, which kubectl prints as ``Error from server: <message>``.
"""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery.errors import ApiError, bad_request
from fakekube.api.machinery.jsonutil import deep_copy
from fakekube.api.wire.decoding import json_kind
from fakekube.api.wire.patch._gofmt import go_type, go_value
from fakekube.api.wire.patch.schema_node import ARRAY, MAP, OBJECT, FieldInfo, SchemaNode, root_node

DIRECTIVE = "$patch"
DELETE = "delete"
REPLACE = "replace"
MERGE = "merge"
RETAIN_KEYS = "retainKeys"
RETAIN_KEYS_DIRECTIVE = "$retainKeys"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList"
SET_ELEMENT_ORDER = "$setElementOrder"

# mergepatch's sentinel errors, with the status apiserver gives each.
ERR_BAD_PRIMITIVE_LIST = "invalid patch format of primitive list"
ERR_BAD_RETAIN_KEYS = "invalid patch format of retainKeys"
ERR_BAD_SET_ELEMENT_ORDER = "invalid patch format of setElementOrder list"
ERR_NO_LIST_OF_LISTS = "lists of lists are not supported"


def _internal(message: str) -> ApiError:
    """A plain Go error that is not a Status: 500 with an empty reason."""
    return ApiError(500, "", message)


def _unprocessable() -> ApiError:
    """``NewGenericServerResponse(422, ...)``: upstream replaces the specific message
    (e.g. ``lists of lists are not supported``) with a generic one, and keeps an empty
    details pointer (``"details":{}``)."""
    return ApiError(422, "Invalid", "the server rejected our request due to an error in our request", {})


def apply_strategic_merge_patch(original: dict, patch: Any, schema_set: Any,
                                group: str, version: str, kind: str) -> dict:
    """Apply ``patch`` to a copy of ``original`` using the schema of group/version/kind.

    ``schema_set`` is a :class:`fakekube.api.wire.schema.SchemaSet` (or None: merge-patch
    semantics everywhere). Neither argument is mutated.
    """
    if patch is None:
        return deep_copy(original)
    if not isinstance(patch, dict):
        raise bad_request(f"json: cannot unmarshal {json_kind(patch)} into Go value of type map[string]interface {{}}")
    node = root_node(schema_set, group, version, kind)
    return _merge_map(deep_copy(original), deep_copy(patch), node)


# --- maps -------------------------------------------------------------------------------

def _merge_map(original: dict | None, patch: dict, node: SchemaNode | None) -> dict:
    """mergeMap: ``original`` and ``patch`` are private copies and may be changed in place."""
    if DIRECTIVE in patch:
        return _map_directive(patch)
    if original is None:
        original = {}
    _apply_retain_keys(original, patch)
    _apply_set_element_order(original, patch, node)
    for key in list(patch):
        _merge_key(original, key, patch[key], node)
    return original


def _map_directive(patch: dict) -> dict:
    directive = patch[DIRECTIVE]
    if directive == REPLACE and isinstance(directive, str):
        del patch[DIRECTIVE]
        return _clean(patch)
    if directive == DELETE and isinstance(directive, str):
        return {}
    raise _internal(f"unknown patch type: {go_value(directive)} in map: {go_value(patch)}")


def _merge_key(original: dict, key: str, patch_value: Any, node: SchemaNode | None) -> None:
    is_delete_list = key.startswith(DELETE_FROM_PRIMITIVE_LIST)
    if is_delete_list:
        key = _directive_target(key, DELETE_FROM_PRIMITIVE_LIST, ERR_BAD_PRIMITIVE_LIST)
    if patch_value is None:
        original.pop(key, None)
        return
    if key not in original or type(original[key]) is not type(patch_value):
        if not is_delete_list:
            _set_cleaned(original, key, patch_value)
        return
    current = original[key]
    info = _field(node, key)
    if isinstance(current, dict):
        strategy = _strategy(info)
        sub = info.node if info is not None else None
        original[key] = _clean(patch_value) if strategy == REPLACE else _merge_map(current, patch_value, sub)
    elif isinstance(current, list):
        original[key] = _merge_list_field(current, patch_value, info, is_delete_list)
    else:
        _set_cleaned(original, key, patch_value)


def _set_cleaned(target: dict, key: str, value: Any) -> None:
    """Take a patch value as the new value, minus nulls and directives (removeDirectives)."""
    cleaned, keep = _remove_directives(value)
    if keep:
        target[key] = cleaned
    else:
        target.pop(key, None)


def _field(node: SchemaNode | None, key: str) -> FieldInfo | None:
    if node is None or node.kind not in (OBJECT, MAP):
        return None
    return node.field(key)


def _strategy(info: FieldInfo | None) -> str:
    """The non-retainKeys strategy of a field (extractRetainKeysPatchStrategy)."""
    if info is None:
        return ""
    strategies = list(info.patch_strategies)
    if len(strategies) > 2 or (len(strategies) == 2 and RETAIN_KEYS not in strategies):
        raise _internal(f"unexpected patch strategy: [{' '.join(strategies)}]")
    others = [s for s in strategies if s != RETAIN_KEYS]
    return others[0] if others else ""


def _directive_target(key: str, prefix: str, error: str) -> str:
    """``$setElementOrder/containers`` → ``containers`` (extractKey)."""
    head, sep, rest = key.partition("/")
    if not sep or head != prefix:
        raise bad_request(error)
    return rest


def _apply_retain_keys(original: dict, patch: dict) -> None:
    """Drop keys of ``original`` that ``$retainKeys`` does not list; the patch must be a subset."""
    if RETAIN_KEYS_DIRECTIVE not in patch:
        return
    retain = patch.pop(RETAIN_KEYS_DIRECTIVE)
    if not isinstance(retain, list):
        raise bad_request(ERR_BAD_RETAIN_KEYS)
    keep = {v for v in retain if isinstance(v, str)}
    for key, value in patch.items():
        if value is None or key.startswith(DELETE_FROM_PRIMITIVE_LIST) or key.startswith(SET_ELEMENT_ORDER):
            continue
        if key not in keep:
            raise bad_request(ERR_BAD_RETAIN_KEYS)
    for key in [k for k in original if k not in keep]:
        del original[key]


# --- lists ------------------------------------------------------------------------------

def _list_meta(info: FieldInfo | None) -> tuple[str, str, SchemaNode | None]:
    """(strategy, merge key, element node) of a list field; unknown fields replace."""
    if info is None or info.node.kind != ARRAY:
        return "", "", None
    return _strategy(info), info.merge_key, info.node.item()


def _merge_list_field(current: list, patch_list: list, info: FieldInfo | None, is_delete_list: bool) -> list:
    """mergeSliceHandler: merge when the field's strategy says so, else take the patch."""
    strategy, merge_key, item = _list_meta(info)
    if strategy == MERGE or is_delete_list:
        return _merge_list(current, patch_list, item, merge_key, is_delete_list)
    return _clean(patch_list)


def _merge_list(original: list, patch: list, item: SchemaNode | None, merge_key: str, is_delete_list: bool) -> list:
    """mergeSlice: merge two lists of scalars (as sets) or of maps (by merge key)."""
    if not original and not patch:
        return original
    element_type = _element_type(original, patch)
    if element_type is not dict:
        if is_delete_list:
            return [v for v in original if not any(_same(v, d) for d in patch)]
        merged = _dedupe(original + patch)
        patch_items, server_only = _partition_scalars(merged, patch)
        return _normalize_order(patch_items, server_only, patch, original, "")
    if not merge_key:
        raise _internal(f"cannot merge lists without merge key for {item.name if item else 'unknown'}")
    original, patch = _apply_list_directives(original, patch, merge_key)
    merged = _merge_by_key(original, patch, merge_key, item)
    patch_items, server_only = _partition_maps(merged, patch, merge_key)
    return _normalize_order(patch_items, server_only, patch, original, merge_key)


def _element_type(*lists: list) -> type:
    """sliceElementType: all elements must share one type, and not be lists."""
    found: type | None = None
    for values in lists:
        for value in values:
            if found is None:
                found = type(value)
                if found is list:
                    raise _unprocessable()  # ERR_NO_LIST_OF_LISTS
            elif type(value) is not found:
                raise _internal("list element types are not identical: " + go_value(list(lists)))
    if found is None:
        raise _internal("no elements in any of the given slices")
    return found


def _same(left: Any, right: Any) -> bool:
    """Go's interface equality: same dynamic type and value (so 1 != 1.0 and 1 != true)."""
    return type(left) is type(right) and left == right


def _dedupe(values: list) -> list:
    result: list = []
    for value in values:
        if not any(_same(value, seen) for seen in result):
            result.append(value)
    return result


def _apply_list_directives(original: list, patch: list, merge_key: str) -> tuple[list, list]:
    """mergeSliceWithSpecialElements: handle ``$patch`` elements; returns (original, patch)."""
    plain: list = []
    replace = False
    for element in patch:
        if DIRECTIVE not in element:
            plain.append(element)
            continue
        directive = element[DIRECTIVE]
        if _same(directive, DELETE):
            if merge_key not in element:
                raise _no_merge_key(element, merge_key)
            original = [e for e in original if not _key_matches(e, merge_key, element[merge_key])]
        elif _same(directive, REPLACE):
            replace = True
        elif _same(directive, MERGE):
            raise _internal("merging lists cannot yet be specified in the patch")
        else:
            raise _internal(f"unknown patch type: {go_value(directive)} in map: {go_value(element)}")
    if replace:
        return plain, []
    return original, plain


def _key_matches(element: Any, merge_key: str, value: Any) -> bool:
    if not isinstance(element, dict):
        raise _internal("value for key is not a map")
    return merge_key in element and _same(element[merge_key], value)


def _no_merge_key(element: dict, merge_key: str) -> ApiError:
    return _internal(f"map: {go_value(element)} does not contain declared merge key: {merge_key}")


def _merge_by_key(original: list, patch: list, merge_key: str, item: SchemaNode | None) -> list:
    """mergeSliceWithoutSpecialElements: merge elements with equal keys, append new ones."""
    result = list(original)
    for element in patch:
        if merge_key not in element:
            raise _no_merge_key(element, merge_key)
        index = _find_by_key(result, merge_key, element[merge_key])
        if index < 0:
            result.append(element)
        else:
            result[index] = _merge_map(result[index], element, item)
    return result


def _find_by_key(values: list, merge_key: str, value: Any) -> int:
    for index, element in enumerate(values):
        if _key_matches(element, merge_key, value):
            return index
    return -1


def _partition_scalars(merged: list, by: list) -> tuple[list, list]:
    inside = [v for v in merged if any(_same(v, b) for b in by)]
    outside = [v for v in merged if not any(_same(v, b) for b in by)]
    return inside, outside


def _partition_maps(merged: list, by: list, merge_key: str) -> tuple[list, list]:
    inside: list = []
    outside: list = []
    for element in merged:
        if not isinstance(element, dict):
            raise _internal(f"expected a map[string]interface {{}}, but received a {go_type(element)}")
        if merge_key not in element:
            raise _no_merge_key(element, merge_key)
        (inside if _find_by_key(by, merge_key, element[merge_key]) >= 0 else outside).append(element)
    return inside, outside


# --- ordering ---------------------------------------------------------------------------

def _order_index(order: list, value: Any, merge_key: str) -> int:
    """Position of ``value`` in ``order`` (by merge key for maps), or -1."""
    probe = value.get(merge_key) if merge_key and isinstance(value, dict) else value
    for index, candidate in enumerate(order):
        other = candidate.get(merge_key) if merge_key and isinstance(candidate, dict) else candidate
        if _same(probe, other):
            return index
    return -1


def _sort_by(values: list, order: list, merge_key: str) -> list:
    """normalizeSliceOrder: stable sort by position in ``order``; ``$patch: delete`` items last."""
    if merge_key:
        for element in list(values) + list(order):
            if isinstance(element, dict) and merge_key not in element:
                raise _no_merge_key(element, merge_key)
    deletes = [v for v in values if merge_key and isinstance(v, dict) and _same(v.get(DIRECTIVE), DELETE)]
    keep = [v for v in values if not any(v is d for d in deletes)]
    found = [v for v in keep if _order_index(order, v, merge_key) >= 0]
    missing = [v for v in keep if _order_index(order, v, merge_key) < 0]
    found.sort(key=lambda v: _order_index(order, v, merge_key))
    return missing + found + deletes


def _normalize_order(patch_items: list, server_only: list, patch_order: list,
                     server_order: list, merge_key: str) -> list:
    """normalizeElementOrder + mergeSortedSlice.

    Patch items keep the patch's order, server-only items the live order; a server-only
    item goes before a patch item only when both are in the live list and it was there
    first — so items new to the list land before the remaining server-only items.
    """
    right = _sort_by(patch_items, patch_order, merge_key)
    left = _sort_by(server_only, server_order, merge_key)
    result: list = []
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right):
            result.append(left[i])
            i += 1
        elif i >= len(left):
            result.append(right[j])
            j += 1
        else:
            li = _order_index(server_order, left[i], merge_key)
            ri = _order_index(server_order, right[j], merge_key)
            if li >= 0 and ri >= 0 and li < ri:
                result.append(left[i])
                i += 1
            else:
                result.append(right[j])
                j += 1
    return result


def _apply_set_element_order(original: dict, patch: dict, node: SchemaNode | None) -> None:
    """mergePatchIntoOriginal: merge each list named by ``$setElementOrder/<field>`` in that order."""
    for key in [k for k in patch if k.startswith(SET_ELEMENT_ORDER)]:
        order = patch.pop(key)
        if not isinstance(order, list):
            raise _internal(f"expected a []interface {{}}, but received a {go_type(order)}")
        field = _directive_target(key, SET_ELEMENT_ORDER, ERR_BAD_SET_ELEMENT_ORDER)
        info = _field(node, field)
        merge_key = _list_meta(info)[1]
        in_original, in_patch = field in original, field in patch
        current = original.get(field)
        patch_list = patch.get(field)
        if in_original and not isinstance(current, list):
            raise _internal(f"expected a []interface {{}}, but received a {go_type(current)}")
        if in_patch and not isinstance(patch_list, list):
            raise _internal(f"expected a []interface {{}}, but received a {go_type(patch_list)}")
        # Past the checks above, each is a list where present.
        current_items: list[Any] = current if isinstance(current, list) else []
        patch_items: list[Any] = patch_list if isinstance(patch_list, list) else []
        _check_order(patch_items, order, merge_key)
        server_order = current_items
        if in_original and in_patch:
            merged = _merge_list_field(current_items, patch_items, info, False)
            if merge_key and _list_meta(info)[0] == MERGE:
                server_order = _go_aliased_original(current_items, patch_items, merge_key)
        elif in_patch:
            merged, _ = _remove_directives(patch_items)
        elif in_original:
            merged = current_items
        else:
            continue
        if merge_key:
            patch_items, server_only = _partition_maps(merged, order, merge_key)
        else:
            patch_items, server_only = _partition_scalars(merged, order)
        original[field] = _normalize_order(patch_items, server_only, order, server_order, merge_key)
        patch.pop(field, None)


def _go_aliased_original(original: list, patch: list, merge_key: str) -> list:
    """The live list as upstream sees it after merging, Go slice aliasing included.

    Upstream merges in place: ``$patch: delete`` shifts elements left inside the live
    list's backing array and new elements are appended into its spare capacity, and the
    ``$setElementOrder`` step then orders server-only items by that overwritten array.
    Upstream's own tests pin the resulting order, so we replay it, assuming the capacity
    that Go's append growth gives a decoded list (the next power of two).
    """
    length = len(original)
    capacity = 1 << (length - 1).bit_length() if length else 0
    array = list(original) + [None] * (capacity - length)
    for element in patch:
        if isinstance(element, dict) and _same(element.get(DIRECTIVE), DELETE) and merge_key in element:
            while (i := _find_by_key(array[:length], merge_key, element[merge_key])) >= 0:
                array[i:length - 1] = array[i + 1:length]
                length -= 1
        elif isinstance(element, dict) and _same(element.get(DIRECTIVE), REPLACE):
            return array[:len(original)]
    for element in patch:
        if not isinstance(element, dict) or DIRECTIVE in element or merge_key not in element:
            continue
        if _find_by_key(array[:length], merge_key, element[merge_key]) >= 0:
            continue
        if length >= capacity:
            break  # Go reallocates: later appends no longer touch the live list
        array[length] = element
        length += 1
    return array[:len(original)]


def _check_order(patch_list: list, order: list, merge_key: str) -> None:
    """validatePatchWithSetOrderList: patch items must appear in ``order``, in that order."""
    if not patch_list or not order:
        return
    items = patch_list
    if merge_key:
        for element in patch_list:
            if not isinstance(element, dict):
                raise _internal(f"expected a map[string]interface {{}}, but received a {go_type(element)}")
        items = [e for e in patch_list if not _same(e.get(DIRECTIVE), DELETE)]
    p = s = 0
    while p < len(items) and s < len(order):
        if isinstance(items[p], dict) and DIRECTIVE in items[p]:
            p += 1
            continue
        if _order_item_equal(items[p], order[s], merge_key):
            p += 1
        s += 1
    if p < len(items) and s >= len(order):
        raise _internal(f"The order in patch list:\n{go_value(patch_list)}\n doesn't match "
                        f"{SET_ELEMENT_ORDER} list:\n{go_value(order)}\n")


def _order_item_equal(left: Any, right: Any, merge_key: str) -> bool:
    if not merge_key:
        return _same(left, right)
    for value in (left, right):
        if not isinstance(value, dict):
            raise _internal(f"expected a map[string]interface {{}}, but received a {go_type(value)}")
        if merge_key not in value:
            raise _no_merge_key(value, merge_key)
    return _same(left[merge_key], right[merge_key])


# --- clean-up of values taken from the patch -------------------------------------------

def _remove_directives(value: Any) -> tuple[Any, bool]:
    """removeDirectives plus discardNullValuesFromPatch: (value to store, keep it?).

    Also drops ``$retainKeys``/``$setElementOrder``/``$deleteFromPrimitiveList`` keys,
    which upstream leaves in and the typed decode then discards.
    """
    if isinstance(value, dict):
        if DIRECTIVE in value:
            return None, False
        result = {}
        for key, sub in value.items():
            if sub is None or _is_directive_key(key):
                continue
            cleaned, keep = _remove_directives(sub)
            if keep:
                result[key] = cleaned
        return result, True
    if isinstance(value, list):
        out = []
        for sub in value:
            cleaned, keep = _remove_directives(sub)
            if keep:
                out.append(cleaned)
        return out, True
    return value, True


def _is_directive_key(key: str) -> bool:
    return key == RETAIN_KEYS_DIRECTIVE or key.startswith(SET_ELEMENT_ORDER + "/") or \
        key.startswith(DELETE_FROM_PRIMITIVE_LIST + "/")


def _clean(value: Any) -> Any:
    """A replaced value as the typed decode would keep it: no nulls, no directive keys."""
    cleaned, keep = _remove_directives(value)
    return cleaned if keep else {}
