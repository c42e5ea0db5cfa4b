"""Tests for fakekube.api.wire.patch: JSON patch, JSON merge patch and strategic merge patch.

The strategic merge patch table is upstream's: the raw test cases of
k8s.io/apimachinery/pkg/util/strategicpatch/patch_test.go (custom cases applied two-way,
the others as the three-way patch applied to the current object), run against a schema
that mirrors upstream's ``MergeItem`` test struct.
"""

from __future__ import annotations

import copy

import pytest

from fakekube.api.wire import schema
from fakekube.api.machinery.errors import ApiError
from fakekube.api.wire.patch import (
    MAX_JSON_PATCH_OPERATIONS,
    apply_json_patch,
    apply_merge_patch,
    apply_strategic_merge_patch,
    parse_patch_body,
)
from fakekube.api.wire.schema import SchemaSet

_R = "#/$defs/"


def _list(items: dict, strategy: str = "", key: str = "") -> dict:
    s: dict = {"type": ["array", "null"], "items": items}
    if strategy:
        s["x-kubernetes-patch-strategy"] = strategy
    if key:
        s["x-kubernetes-patch-merge-key"] = key
    return s


_ITEM = {"$ref": _R + "mergeItem"}
_STR = {"type": ["string", "null"]}
_INT = {"type": ["integer", "null"]}
_SIMPLE_MAP = {"type": "object", "additionalProperties": _STR}

# upstream's MergeItem / RetainKeysMergeItem test structs, as OpenAPI definitions
MERGE_ITEM_SCHEMA = SchemaSet({
    "mergeItem": {
        "type": "object",
        "x-kubernetes-group-version-kind": [{"group": "test", "version": "v1", "kind": "MergeItem"}],
        "properties": {
            "name": _STR, "value": _STR, "other": _STR,
            "mergingList": _list(_ITEM, "merge", "name"),
            "nonMergingList": _list(_ITEM),
            "mergingIntList": _list(_INT, "merge"),
            "nonMergingIntList": _list(_INT),
            "mergeItemPtr": _list(_ITEM, "merge", "name"),
            "simpleMap": _SIMPLE_MAP,
            "replacingItem": {"$ref": _R + "RawExtension", "x-kubernetes-patch-strategy": "replace"},
            "jsonItem": {"type": "object"},
            "retainKeysMap": {"$ref": _R + "retainKeysMergeItem", "x-kubernetes-patch-strategy": "retainKeys"},
            "retainKeysMergingList": _list(_ITEM, "merge,retainKeys", "name"),
        },
    },
    "retainKeysMergeItem": {
        "type": "object",
        "properties": {
            "name": _STR, "value": _STR, "other": _STR, "simpleMap": _SIMPLE_MAP,
            "mergingIntList": _list(_INT, "merge"),
            "mergingList": _list(_ITEM, "merge", "name"),
            "nonMergingList": _list(_ITEM),
        },
    },
    "RawExtension": {"type": ["object", "null"]},
})


def smp_item(original: dict, patch: dict) -> dict:
    return apply_strategic_merge_patch(original, patch, MERGE_ITEM_SCHEMA, "test", "v1", "MergeItem")


UPSTREAM_SMP_CASES = [
    ("$setElementOrder contains item that is not present in the list to be merged",
     {"mergingList": [{"name": 1}, {"name": 3}]},
     {"$setElementOrder/mergingList": [{"name": 3}, {"name": 2}, {"name": 1}], "mergingList": [{"name": 3, "value": 3}, {"name": 1, "value": 1}]},
     {"mergingList": [{"name": 3, "value": 3}, {"name": 1, "value": 1}]}),
    ("$setElementOrder contains item that is not present in the int list to be merged",
     {"mergingIntList": [1, 3]},
     {"$setElementOrder/mergingIntList": [3, 2, 1]},
     {"mergingIntList": [3, 1]}),
    ("should check if order in $setElementOrder and patch list match",
     {"mergingList": [{"name": 1}, {"name": 3}, {"name": 2}]},
     {"$setElementOrder/mergingList": [{"name": 1}, {"name": 2}, {"name": 3}], "mergingList": [{"name": 3, "value": 3}, {"name": 1, "value": 1}]},
     {"error": "doesn't match"}),
    ("$setElementOrder contains item that is not present in the int list to be merged",
     {"mergingIntList": [1, 3, 2]},
     {"$setElementOrder/mergingIntList": [1, 2, 3], "mergingIntList": [3, 1]},
     {"error": "doesn't match"}),
    ("missing merge key should error out",
     {"mergingList": [{"name": 1, "value": "a"}]},
     {"mergingList": [{"value": "b"}]},
     {"error": "does not contain declared merge key"}),
    ("$deleteFromPrimitiveList of nonexistent item in primitive list should not add the item to the list",
     {"mergingIntList": [1, 2]},
     {"$deleteFromPrimitiveList/mergingIntList": [3]},
     {"mergingIntList": [1, 2]}),
    ("$deleteFromPrimitiveList on empty primitive list should not add the item to the list",
     {"mergingIntList": None},
     {"$deleteFromPrimitiveList/mergingIntList": [3]},
     {"mergingIntList": None}),
    ("$deleteFromPrimitiveList on nonexistent primitive list should not add the primitive list",
     {"foo": ["bar"]},
     {"$deleteFromPrimitiveList/mergingIntList": [3]},
     {"foo": ["bar"]}),
    ("$deleteFromPrimitiveList should delete item from a list with merge patch strategy",
     {"mergingIntList": [1, 2, 3]},
     {"$deleteFromPrimitiveList/mergingIntList": [2]},
     {"mergingIntList": [1, 3]}),
    ("$deleteFromPrimitiveList should delete item from a list without merge patch strategy",
     {"nonMergingIntList": [1, 2, 3]},
     {"$deleteFromPrimitiveList/nonMergingIntList": [2]},
     {"nonMergingIntList": [1, 3]}),
    ("nested patch merge with empty list (three-way)",
     {"name": "hi", "mergingList": [{"name": "hello2"}]},
     {"$setElementOrder/mergingList": [{"name": "hello"}, {"name": "doesntexist"}], "mergingList": [{"name": "hello"}]},
     {"name": "hi", "mergingList": [{"name": "hello"}, {"name": "hello2"}]}),
    ("delete items in lists of scalars (three-way)",
     {"mergingIntList": [1, 2, 3, 4]},
     {"$setElementOrder/mergingIntList": [1, 2], "$deleteFromPrimitiveList/mergingIntList": [3]},
     {"mergingIntList": [1, 2, 4]}),
    ("delete all duplicate items in lists of scalars (three-way)",
     {"mergingIntList": [1, 2, 3, 3, 4]},
     {"$setElementOrder/mergingIntList": [1, 2], "$deleteFromPrimitiveList/mergingIntList": [3]},
     {"mergingIntList": [1, 2, 4]}),
    ("add and delete items in lists of scalars (three-way)",
     {"mergingIntList": [1, 2, 3, 4]},
     {"$setElementOrder/mergingIntList": [1, 2, 4], "$deleteFromPrimitiveList/mergingIntList": [3]},
     {"mergingIntList": [1, 2, 4]}),
    ("merge lists of maps (three-way)",
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]},
     {"$setElementOrder/mergingList": [{"name": 4}, {"name": 1}, {"name": 2}, {"name": 3}], "mergingList": [{"name": 4, "value": 4}, {"name": 3, "value": 3}]},
     {"mergingList": [{"name": 4, "value": 4}, {"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}, {"name": 3, "value": 3}]}),
    ("add field to map in merging list (three-way)",
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]},
     {"$setElementOrder/mergingList": [{"name": 1}, {"name": 2}], "mergingList": [{"name": 1, "value": 1}]},
     {"mergingList": [{"name": 1, "value": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]}),
    ("add duplicate field to map in merging list (three-way)",
     {"mergingList": [{"name": 1, "value": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]},
     {},
     {"mergingList": [{"name": 1, "value": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]}),
    ("add an item that already exists in current object in merging list (three-way)",
     {"mergingList": [{"name": 1, "value": "a", "other": "x"}, {"name": 2}, {"name": 3}]},
     {},
     {"mergingList": [{"name": 1, "value": "a", "other": "x"}, {"name": 2}, {"name": 3}]}),
    ("replace map field value in merging list (three-way)",
     {"mergingList": [{"name": 1, "value": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]},
     {"$setElementOrder/mergingList": [{"name": 1}, {"name": 2}], "mergingList": [{"name": 1, "value": "a"}]},
     {"mergingList": [{"name": 1, "value": "a", "other": "a"}, {"name": 2, "value": 2, "other": "b"}]}),
    ("delete map from merging list (three-way)",
     {"mergingList": [{"name": 1}, {"name": 2, "other": "b"}]},
     {"$setElementOrder/mergingList": [{"name": 2}], "mergingList": [{"name": 1, "$patch": "delete"}]},
     {"mergingList": [{"name": 2, "other": "b"}]}),
    ("delete missing map from merging list (three-way)",
     {"mergingList": [{"name": 2, "other": "b"}]},
     {"$setElementOrder/mergingList": [{"name": 2}], "mergingList": [{"name": 1, "$patch": "delete"}]},
     {"mergingList": [{"name": 2, "other": "b"}]}),
    ("add map and delete map from merging list (three-way)",
     {"mergingList": [{"name": 1}, {"name": 2, "other": "b"}, {"name": 4, "other": "c"}]},
     {"$setElementOrder/mergingList": [{"name": 2}, {"name": 3}], "mergingList": [{"name": 3}, {"name": 1, "$patch": "delete"}]},
     {"mergingList": [{"name": 2, "other": "b"}, {"name": 4, "other": "c"}, {"name": 3}]}),
    ("delete field from map in merging list (three-way)",
     {"mergingList": [{"name": 1, "value": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]},
     {"$setElementOrder/mergingList": [{"name": 1}, {"name": 2}], "mergingList": [{"name": 1, "value": None}]},
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]}),
    ("delete missing field from map in merging list (three-way)",
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]},
     {"$setElementOrder/mergingList": [{"name": 1}, {"name": 2}], "mergingList": [{"name": 1, "value": None}]},
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]}),
    ("replace non merging list nested in merging list (three-way)",
     {"mergingList": [{"name": 1, "other": "a", "nonMergingList": [{"name": 1}, {"name": 2, "value": 2}]}, {"name": 2, "other": "b"}]},
     {"$setElementOrder/mergingList": [{"name": 1}, {"name": 2}], "mergingList": [{"name": 1, "nonMergingList": [{"name": 1, "value": 1}]}]},
     {"mergingList": [{"name": 1, "other": "a", "nonMergingList": [{"name": 1, "value": 1}]}, {"name": 2, "other": "b"}]}),
    ("add field to map in merging list nested in merging list (three-way)",
     {"mergingList": [{"name": 1, "other": "a", "mergingList": [{"name": 1}, {"name": 2, "value": 2}]}, {"name": 2, "other": "b"}]},
     {"$setElementOrder/mergingList": [{"name": 1}, {"name": 2}], "mergingList": [{"$setElementOrder/mergingList": [{"name": 1}, {"name": 2}], "name": 1, "mergingList": [{"name": 1, "value": 1}]}]},
     {"mergingList": [{"name": 1, "other": "a", "mergingList": [{"name": 1, "value": 1}, {"name": 2, "value": 2}]}, {"name": 2, "other": "b"}]}),
    ("add map to merging list by pointer (three-way)",
     {"mergeItemPtr": [{"name": 1, "other": "a"}, {"name": 3}]},
     {"$setElementOrder/mergeItemPtr": [{"name": 1}, {"name": 2}], "mergeItemPtr": [{"name": 2}]},
     {"mergeItemPtr": [{"name": 1, "other": "a"}, {"name": 2}, {"name": 3}]}),
    ("add field to map in merging list by pointer (three-way)",
     {"mergeItemPtr": [{"name": 1, "other": "a", "mergeItemPtr": [{"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]}, {"name": 2, "other": "b"}]},
     {"$setElementOrder/mergeItemPtr": [{"name": 1}, {"name": 2}], "mergeItemPtr": [{"$setElementOrder/mergeItemPtr": [{"name": 1}, {"name": 2}], "name": 1, "mergeItemPtr": [{"name": 1, "value": 1}]}]},
     {"mergeItemPtr": [{"name": 1, "other": "a", "mergeItemPtr": [{"name": 1, "value": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]}, {"name": 2, "other": "b"}]}),
    ("merge lists of scalars (three-way)",
     {"mergingIntList": [1, 2, 4]},
     {"$setElementOrder/mergingIntList": [1, 2, 3], "mergingIntList": [3]},
     {"mergingIntList": [1, 2, 3, 4]}),
    ("add duplicate field to map in merging int list (three-way)",
     {"mergingIntList": [1, 2, 3]},
     {},
     {"mergingIntList": [1, 2, 3]}),
    ("add an item in a list of primitives and preserve order (three-way)",
     {"mergingIntList": [1, 4, 2]},
     {"$setElementOrder/mergingIntList": [3, 1, 2], "mergingIntList": [3]},
     {"mergingIntList": [3, 1, 4, 2]}),
    ("delete an item in a list of primitives and preserve order (three-way)",
     {"mergingIntList": [1, 2, 3]},
     {"$setElementOrder/mergingIntList": [2, 1], "$deleteFromPrimitiveList/mergingIntList": [3]},
     {"mergingIntList": [2, 1]}),
    ("add an item in a list and preserve order (three-way)",
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]},
     {"$setElementOrder/mergingList": [{"name": 3}, {"name": 1}, {"name": 2}], "mergingList": [{"name": 3, "value": 3}]},
     {"mergingList": [{"name": 3, "value": 3}, {"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]}),
    ("add multiple items in a list and preserve order (three-way)",
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}]},
     {"$setElementOrder/mergingList": [{"name": 1}, {"name": 4}, {"name": 2}, {"name": 3}], "mergingList": [{"name": 4, "value": 4}, {"name": 3, "value": 3}]},
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 4, "value": 4}, {"name": 2, "value": 2, "other": "b"}, {"name": 3, "value": 3}]}),
    ("delete an item in a list and preserve order (three-way)",
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}, {"name": 3, "value": 3}]},
     {"$setElementOrder/mergingList": [{"name": 2}, {"name": 1}], "mergingList": [{"name": 3, "$patch": "delete"}]},
     {"mergingList": [{"name": 2, "value": 2, "other": "b"}, {"name": 1, "other": "a"}]}),
    ("change an item in a list and preserve order (three-way)",
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}, {"name": 3, "value": 3}]},
     {"$setElementOrder/mergingList": [{"name": 2}, {"name": 3}, {"name": 1}], "mergingList": [{"name": 3, "value": "x"}]},
     {"mergingList": [{"name": 2, "value": 2, "other": "b"}, {"name": 3, "value": "x"}, {"name": 1, "other": "a"}]}),
    ("add and delete an item in a list and preserve order (three-way)",
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2, "other": "b"}, {"name": 3, "value": 3}]},
     {"$setElementOrder/mergingList": [{"name": 4}, {"name": 2}, {"name": 1}], "mergingList": [{"name": 4, "value": 4}, {"name": 3, "$patch": "delete"}]},
     {"mergingList": [{"name": 4, "value": 4}, {"name": 2, "value": 2, "other": "b"}, {"name": 1, "other": "a"}]}),
    ("set elements order in a list (three-way)",
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 3, "value": 3}, {"name": 4, "value": 4}, {"name": 2, "value": 2}]},
     {"$setElementOrder/mergingList": [{"name": 4}, {"name": 2}, {"name": 3}, {"name": 1}]},
     {"mergingList": [{"name": 4, "value": 4}, {"name": 2, "value": 2}, {"name": 3, "value": 3}, {"name": 1, "other": "a"}]}),
    ("set elements order in a list with server-only items (three-way)",
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 3, "value": 3}, {"name": 4, "value": 4}, {"name": 2, "value": 2}, {"name": 9}]},
     {"$setElementOrder/mergingList": [{"name": 4}, {"name": 2}, {"name": 3}, {"name": 1}]},
     {"mergingList": [{"name": 4, "value": 4}, {"name": 2, "value": 2}, {"name": 3, "value": 3}, {"name": 1, "other": "a"}, {"name": 9}]}),
    ("set elements order in a list with server-only items 2 (three-way)",
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2}, {"name": 9}, {"name": 3, "value": 3}, {"name": 4, "value": 4}]},
     {"$setElementOrder/mergingList": [{"name": 2}, {"name": 1}, {"name": 4}, {"name": 3}]},
     {"mergingList": [{"name": 2, "value": 2}, {"name": 1, "other": "a"}, {"name": 9}, {"name": 4, "value": 4}, {"name": 3, "value": 3}]}),
    ("set elements order in a list with server-only items 3 (three-way)",
     {"mergingList": [{"name": 1, "other": "a"}, {"name": 2, "value": 2}, {"name": 7}, {"name": 9}, {"name": 8}, {"name": 3, "value": 3}, {"name": 4, "value": 4}]},
     {"$setElementOrder/mergingList": [{"name": 2}, {"name": 1}, {"name": 4}, {"name": 3}]},
     {"mergingList": [{"name": 2, "value": 2}, {"name": 1, "other": "a"}, {"name": 7}, {"name": 9}, {"name": 8}, {"name": 4, "value": 4}, {"name": 3, "value": 3}]}),
    ("add an item in a int list and preserve order (three-way)",
     {"mergingIntList": [1, 2]},
     {"$setElementOrder/mergingIntList": [3, 1, 2], "mergingIntList": [3]},
     {"mergingIntList": [3, 1, 2]}),
    ("add multiple items in a int list and preserve order (three-way)",
     {"mergingIntList": [1, 2]},
     {"$setElementOrder/mergingIntList": [1, 4, 2, 3], "mergingIntList": [4, 3]},
     {"mergingIntList": [1, 4, 2, 3]}),
    ("delete an item in a int list and preserve order (three-way)",
     {"mergingIntList": [1, 2, 3]},
     {"$setElementOrder/mergingIntList": [2, 1], "$deleteFromPrimitiveList/mergingIntList": [3]},
     {"mergingIntList": [2, 1]}),
    ("add and delete an item in a int list and preserve order (three-way)",
     {"mergingIntList": [1, 2, 3]},
     {"$setElementOrder/mergingIntList": [4, 2, 1], "mergingIntList": [4], "$deleteFromPrimitiveList/mergingIntList": [3]},
     {"mergingIntList": [4, 2, 1]}),
    ("set elements order in a int list (three-way)",
     {"mergingIntList": [1, 3, 4, 2]},
     {"$setElementOrder/mergingIntList": [4, 2, 3, 1]},
     {"mergingIntList": [4, 2, 3, 1]}),
    ("set elements order in a int list with server-only items (three-way)",
     {"mergingIntList": [1, 3, 4, 2, 9]},
     {"$setElementOrder/mergingIntList": [4, 2, 3, 1]},
     {"mergingIntList": [4, 2, 3, 1, 9]}),
    ("set elements order in a int list with server-only items 2 (three-way)",
     {"mergingIntList": [1, 2, 9, 3, 4]},
     {"$setElementOrder/mergingIntList": [2, 1, 4, 3]},
     {"mergingIntList": [2, 1, 9, 4, 3]}),
    ("set elements order in a int list with server-only items 3 (three-way)",
     {"mergingIntList": [1, 2, 3, 2, 4]},
     {"$setElementOrder/mergingIntList": [2, 1, 4, 3, 2]},
     {"mergingIntList": [2, 2, 1, 4, 3]}),
    ("retainKeys map should clear defaulted field (three-way)",
     {"retainKeysMap": {"value": "foo"}},
     {"retainKeysMap": {"$retainKeys": ["other"], "other": "bar"}},
     {"retainKeysMap": {"other": "bar"}}),
    ("retainKeys map adds a field (three-way)",
     {"retainKeysMap": {"name": "foo"}},
     {"retainKeysMap": {"$retainKeys": ["name", "value"], "value": "bar"}},
     {"retainKeysMap": {"name": "foo", "value": "bar"}}),
    ("retainKeys map adds a field and clear a field (three-way)",
     {"retainKeysMap": {"name": "foo", "other": "a"}},
     {"retainKeysMap": {"$retainKeys": ["name", "value"], "value": "bar"}},
     {"retainKeysMap": {"name": "foo", "value": "bar"}}),
    ("retainKeys map deletes a field (three-way)",
     {"retainKeysMap": {"name": "foo", "value": "bar"}},
     {"retainKeysMap": {"$retainKeys": ["name"], "value": None}},
     {"retainKeysMap": {"name": "foo"}}),
    ("retainKeys map deletes a field and clears a field (three-way)",
     {"retainKeysMap": {"name": "foo", "value": "bar", "other": "a"}},
     {"retainKeysMap": {"$retainKeys": ["name"], "value": None}},
     {"retainKeysMap": {"name": "foo"}}),
    ("retainKeys map clears a field (three-way)",
     {"retainKeysMap": {"name": "foo", "value": "bar", "other": "a"}},
     {"retainKeysMap": {"$retainKeys": ["name", "value"]}},
     {"retainKeysMap": {"name": "foo", "value": "bar"}}),
    ("retainKeys map nested map with no change (three-way)",
     {"retainKeysMap": {"name": "foo", "simpleMap": {"key1": "a"}}},
     {"retainKeysMap": {"$retainKeys": ["name", "simpleMap", "value"], "value": "bar"}},
     {"retainKeysMap": {"name": "foo", "value": "bar", "simpleMap": {"key1": "a"}}}),
    ("retainKeys map adds a field in a nested map (three-way)",
     {"retainKeysMap": {"name": "foo", "value": "bar", "simpleMap": {"key1": "a", "key3": "c"}}},
     {"retainKeysMap": {"$retainKeys": ["name", "simpleMap", "value"], "simpleMap": {"key2": "b"}}},
     {"retainKeysMap": {"name": "foo", "value": "bar", "simpleMap": {"key1": "a", "key2": "b", "key3": "c"}}}),
    ("retainKeys map deletes a field in a nested map (three-way)",
     {"retainKeysMap": {"name": "foo", "value": "bar", "simpleMap": {"key1": "a", "key2": "b", "key3": "c"}}},
     {"retainKeysMap": {"$retainKeys": ["name", "simpleMap", "value"], "simpleMap": {"key2": None}}},
     {"retainKeysMap": {"name": "foo", "value": "bar", "simpleMap": {"key1": "a", "key3": "c"}}}),
    ("retainKeys map changes a field in a nested map (three-way)",
     {"retainKeysMap": {"name": "foo", "value": "bar", "simpleMap": {"key1": "a", "key2": "b", "key3": "c"}}},
     {"retainKeysMap": {"$retainKeys": ["name", "simpleMap", "value"], "simpleMap": {"key1": "x"}}},
     {"retainKeysMap": {"name": "foo", "value": "bar", "simpleMap": {"key1": "x", "key2": "b", "key3": "c"}}}),
    ("retainKeys map replaces non-merging list (three-way)",
     {"retainKeysMap": {"name": "foo", "value": "bar", "nonMergingList": [{"name": "a"}, {"name": "b"}]}},
     {"retainKeysMap": {"$retainKeys": ["name", "nonMergingList", "value"], "nonMergingList": [{"name": "a"}, {"name": "c"}, {"name": "b"}]}},
     {"retainKeysMap": {"name": "foo", "value": "bar", "nonMergingList": [{"name": "a"}, {"name": "c"}, {"name": "b"}]}}),
    ("retainKeys map nested non-merging list with no change (three-way)",
     {"retainKeysMap": {"name": "foo", "nonMergingList": [{"name": "a"}, {"name": "b"}]}},
     {"retainKeysMap": {"$retainKeys": ["name", "nonMergingList", "value"], "value": "bar"}},
     {"retainKeysMap": {"name": "foo", "value": "bar", "nonMergingList": [{"name": "a"}, {"name": "b"}]}}),
    ("retainKeys map deletes nested non-merging list (three-way)",
     {"retainKeysMap": {"name": "foo", "nonMergingList": [{"name": "a"}, {"name": "b"}]}},
     {"retainKeysMap": {"$retainKeys": ["name", "value"], "value": "bar", "nonMergingList": None}},
     {"retainKeysMap": {"name": "foo", "value": "bar"}}),
    ("retainKeys map nested merging int list with no change (three-way)",
     {"retainKeysMap": {"name": "foo", "mergingIntList": [1, 2, 3]}},
     {"retainKeysMap": {"$retainKeys": ["mergingIntList", "name", "value"], "$setElementOrder/mergingIntList": [1, 2], "value": "bar"}},
     {"retainKeysMap": {"name": "foo", "value": "bar", "mergingIntList": [1, 2, 3]}}),
    ("retainKeys map adds an item in nested merging int list (three-way)",
     {"retainKeysMap": {"name": "foo", "mergingIntList": [1, 2, 3]}},
     {"retainKeysMap": {"$setElementOrder/mergingIntList": [1, 2, 4], "$retainKeys": ["mergingIntList", "name"], "mergingIntList": [4]}},
     {"retainKeysMap": {"name": "foo", "mergingIntList": [1, 2, 4, 3]}}),
    ("retainKeys map deletes an item in nested merging int list (three-way)",
     {"retainKeysMap": {"name": "foo", "mergingIntList": [1, 2, 3, 4]}},
     {"retainKeysMap": {"$retainKeys": ["mergingIntList", "name"], "$deleteFromPrimitiveList/mergingIntList": [2], "$setElementOrder/mergingIntList": [1, 3]}},
     {"retainKeysMap": {"name": "foo", "mergingIntList": [1, 3, 4]}}),
    ("retainKeys map adds an item and deletes an item in nested merging int list (three-way)",
     {"retainKeysMap": {"name": "foo", "mergingIntList": [1, 2, 3, 4]}},
     {"retainKeysMap": {"$retainKeys": ["mergingIntList", "name"], "mergingIntList": [5], "$deleteFromPrimitiveList/mergingIntList": [2], "$setElementOrder/mergingIntList": [1, 3, 5]}},
     {"retainKeysMap": {"name": "foo", "mergingIntList": [1, 3, 5, 4]}}),
    ("retainKeys map deletes nested merging int list (three-way)",
     {"retainKeysMap": {"name": "foo", "mergingIntList": [1, 2, 3]}},
     {"retainKeysMap": {"$retainKeys": ["name"], "mergingIntList": None}},
     {"retainKeysMap": {"name": "foo"}}),
    ("retainKeys map nested merging list with no change (three-way)",
     {"retainKeysMap": {"name": "foo", "mergingList": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}},
     {"retainKeysMap": {"$retainKeys": ["mergingList", "name", "value"], "$setElementOrder/mergingList": [{"name": "a"}, {"name": "b"}], "value": "bar"}},
     {"retainKeysMap": {"name": "foo", "value": "bar", "mergingList": [{"name": "a"}, {"name": "b"}, {"name": "c"}]}}),
    ("retainKeys map adds an item in nested merging list (three-way)",
     {"retainKeysMap": {"name": "foo", "mergingList": [{"name": "a"}, {"name": "b"}, {"name": "x"}]}},
     {"retainKeysMap": {"$retainKeys": ["mergingList", "name"], "$setElementOrder/mergingList": [{"name": "a"}, {"name": "b"}, {"name": "c"}], "mergingList": [{"name": "c"}]}},
     {"retainKeysMap": {"name": "foo", "mergingList": [{"name": "a"}, {"name": "b"}, {"name": "c"}, {"name": "x"}]}}),
    ("retainKeys map changes an item in nested merging list (three-way)",
     {"retainKeysMap": {"name": "foo", "mergingList": [{"name": "a"}, {"name": "b", "value": "foo"}, {"name": "x"}]}},
     {"retainKeysMap": {"$retainKeys": ["mergingList", "name"], "$setElementOrder/mergingList": [{"name": "a"}, {"name": "b"}], "mergingList": [{"name": "b", "value": "bar"}]}},
     {"retainKeysMap": {"name": "foo", "mergingList": [{"name": "a"}, {"name": "b", "value": "bar"}, {"name": "x"}]}}),
    ("retainKeys map deletes nested merging list (three-way)",
     {"retainKeysMap": {"name": "foo", "mergingList": [{"name": "a"}, {"name": "b"}]}},
     {"retainKeysMap": {"$retainKeys": ["name", "value"], "value": "bar", "mergingList": None}},
     {"retainKeysMap": {"name": "foo", "value": "bar"}}),
    ("retainKeys map deletes an item in nested merging list (three-way)",
     {"retainKeysMap": {"name": "foo", "mergingList": [{"name": "a"}, {"name": "b"}, {"name": "x"}]}},
     {"retainKeysMap": {"$retainKeys": ["mergingList", "name"], "$setElementOrder/mergingList": [{"name": "a"}], "mergingList": [{"name": "b", "$patch": "delete"}]}},
     {"retainKeysMap": {"name": "foo", "mergingList": [{"name": "a"}, {"name": "x"}]}}),
    ("retainKeys list of maps clears a field (three-way)",
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "value": "a", "other": "x"}]},
     {"$setElementOrder/retainKeysMergingList": [{"name": "bar"}, {"name": "foo"}], "retainKeysMergingList": [{"$retainKeys": ["name", "value"], "name": "foo"}]},
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "value": "a"}]}),
    ("retainKeys list of maps changes a field and clear a field (three-way)",
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "value": "old", "other": "x"}]},
     {"$setElementOrder/retainKeysMergingList": [{"name": "bar"}, {"name": "foo"}], "retainKeysMergingList": [{"$retainKeys": ["name", "value"], "name": "foo", "value": "new"}]},
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "value": "new"}]}),
    ("retainKeys list of maps adds a field (three-way)",
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo"}]},
     {"$setElementOrder/retainKeysMergingList": [{"name": "bar"}, {"name": "foo"}], "retainKeysMergingList": [{"$retainKeys": ["name", "value"], "name": "foo", "value": "a"}]},
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "value": "a"}]}),
    ("retainKeys list of maps adds a field and clear a field (three-way)",
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "other": "x"}]},
     {"$setElementOrder/retainKeysMergingList": [{"name": "bar"}, {"name": "foo"}], "retainKeysMergingList": [{"$retainKeys": ["name", "value"], "name": "foo", "value": "a"}]},
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "value": "a"}]}),
    ("retainKeys list of maps deletes a field (three-way)",
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "value": "a"}]},
     {"$setElementOrder/retainKeysMergingList": [{"name": "bar"}, {"name": "foo"}], "retainKeysMergingList": [{"$retainKeys": ["name"], "name": "foo", "value": None}]},
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo"}]}),
    ("retainKeys list of maps deletes a field and clear a field (three-way)",
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo", "value": "a", "other": "x"}]},
     {"$setElementOrder/retainKeysMergingList": [{"name": "bar"}, {"name": "foo"}], "retainKeysMergingList": [{"$retainKeys": ["name"], "name": "foo", "value": None}]},
     {"retainKeysMergingList": [{"name": "bar"}, {"name": "foo"}]}),
    ("delete and reorder in one list, reorder in another (three-way)",
     {"mergingList": [{"name": "a", "value": "a"}, {"name": "b", "value": "b"}], "mergeItemPtr": [{"name": "c", "value": "c"}, {"name": "d", "value": "d"}]},
     {"$setElementOrder/mergingList": [{"name": "b"}], "$setElementOrder/mergeItemPtr": [{"name": "d"}, {"name": "c"}], "mergingList": [{"$patch": "delete", "name": "a"}]},
     {"mergingList": [{"name": "b", "value": "b"}], "mergeItemPtr": [{"name": "d", "value": "d"}, {"name": "c", "value": "c"}]}),
    ("replace RawExtension field, rest unchanched (three-way)",
     {"name": "my-object", "value": "some-value", "other": "current-other", "mergingList": [{"name": 1}, {"name": 2}, {"name": 3}], "replacingItem": {"Some": "Generic", "Yaml": "Inside", "The": "RawExtension", "Field": "Period"}},
     {"replacingItem": {"Newly": "Modified", "Yaml": "Inside", "The": "RawExtension"}},
     {"name": "my-object", "value": "some-value", "other": "current-other", "mergingList": [{"name": 1}, {"name": 2}, {"name": 3}], "replacingItem": {"Newly": "Modified", "Yaml": "Inside", "The": "RawExtension"}}),
    ("replace RawExtension field and merge list (three-way)",
     {"name": "my-object", "value": "some-value", "other": "current-other", "mergingList": [{"name": 1}, {"name": 3}], "replacingItem": {"Some": "Generic", "Yaml": "Inside", "The": "RawExtension", "Field": "Period"}},
     {"$setElementOrder/mergingList": [{"name": 1}, {"name": 2}], "mergingList": [{"name": 2}], "replacingItem": {"Newly": "Modified", "Yaml": "Inside", "The": "RawExtension"}},
     {"name": "my-object", "value": "some-value", "other": "current-other", "mergingList": [{"name": 1}, {"name": 2}, {"name": 3}], "replacingItem": {"Newly": "Modified", "Yaml": "Inside", "The": "RawExtension"}}),
]

@pytest.mark.parametrize("description,original,patch,expected", UPSTREAM_SMP_CASES,
                         ids=[c[0] for c in UPSTREAM_SMP_CASES])
def test_upstream_strategic_merge_patch_cases(description, original, patch, expected):
    before = copy.deepcopy(original)
    if isinstance(expected, dict) and set(expected) == {"error"}:
        with pytest.raises(ApiError) as info:
            smp_item(original, patch)
        assert expected["error"] in info.value.message
        assert info.value.code == 500
    else:
        assert smp_item(original, patch) == expected
    assert original == before


# --- strategic merge patch on real Kubernetes types ------------------------------------

@pytest.fixture(scope="module")
def k8s() -> SchemaSet:
    return schema.load()


def _pod(**spec) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"app": "a"}},
            "spec": {"containers": [{"name": "web", "image": "nginx:1"}], **spec}}


def test_labels_merge_like_a_map_and_null_deletes(k8s):
    patch = {"metadata": {"labels": {"tier": "fe", "app": None}, "annotations": {"x": "1"}}}
    result = apply_strategic_merge_patch(_pod(), patch, k8s, "", "v1", "Pod")
    assert result["metadata"]["labels"] == {"tier": "fe"}
    assert result["metadata"]["annotations"] == {"x": "1"}


def test_containers_merge_by_name_and_new_ones_go_first(k8s):
    patch = {"spec": {"containers": [{"name": "web", "image": "nginx:2"}, {"name": "side", "image": "busybox"}]}}
    result = apply_strategic_merge_patch(_pod(), patch, k8s, "", "v1", "Pod")
    assert result["spec"]["containers"] == [{"name": "web", "image": "nginx:2"}, {"name": "side", "image": "busybox"}]
    only_new = {"spec": {"containers": [{"name": "side", "image": "busybox"}]}}
    result = apply_strategic_merge_patch(_pod(), only_new, k8s, "", "v1", "Pod")
    assert [c["name"] for c in result["spec"]["containers"]] == ["side", "web"]


def test_container_without_merge_key_is_a_500_with_upstream_text(k8s):
    patch = {"spec": {"containers": [{"image": "nginx"}]}}
    with pytest.raises(ApiError) as info:
        apply_strategic_merge_patch(_pod(), patch, k8s, "", "v1", "Pod")
    assert info.value.code == 500
    assert info.value.message == "map: map[image:nginx] does not contain declared merge key: name"


def test_atomic_list_is_replaced(k8s):
    original = _pod(tolerations=[{"key": "a", "operator": "Exists"}])
    patch = {"spec": {"tolerations": [{"key": "b", "operator": "Exists"}]}}
    result = apply_strategic_merge_patch(original, patch, k8s, "", "v1", "Pod")
    assert result["spec"]["tolerations"] == [{"key": "b", "operator": "Exists"}]


def test_delete_container_directive(k8s):
    original = _pod()
    original["spec"]["containers"].append({"name": "side", "image": "b"})
    patch = {"spec": {"containers": [{"name": "side", "$patch": "delete"}]}}
    result = apply_strategic_merge_patch(original, patch, k8s, "", "v1", "Pod")
    assert result["spec"]["containers"] == [{"name": "web", "image": "nginx:1"}]


def test_finalizers_set_merge_and_delete_from_primitive_list(k8s):
    original = _pod()
    original["metadata"]["finalizers"] = ["a", "b"]
    added = apply_strategic_merge_patch(original, {"metadata": {"finalizers": ["b", "c"]}}, k8s, "", "v1", "Pod")
    assert sorted(added["metadata"]["finalizers"]) == ["a", "b", "c"]
    removed = apply_strategic_merge_patch(original, {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}},
                                          k8s, "", "v1", "Pod")
    assert removed["metadata"]["finalizers"] == ["b"]


def test_rollout_restart_patch_adds_template_annotation(k8s):
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"replicas": 1, "template": {"metadata": {"labels": {"app": "a"}},
                                                       "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    patch = {"spec": {"template": {"metadata": {"annotations": {"kubectl.kubernetes.io/restartedAt": "t"}}}}}
    result = apply_strategic_merge_patch(deployment, patch, k8s, "apps", "v1", "Deployment")
    assert result["spec"]["template"]["metadata"] == {"labels": {"app": "a"},
                                                      "annotations": {"kubectl.kubernetes.io/restartedAt": "t"}}


def test_retain_keys_on_deployment_strategy(k8s):
    deployment = {"spec": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}}
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    result = apply_strategic_merge_patch(deployment, patch, k8s, "apps", "v1", "Deployment")
    assert result["spec"]["strategy"] == {"type": "Recreate"}


def test_retain_keys_not_listing_a_patched_key_is_400(k8s):
    deployment = {"spec": {"strategy": {"type": "RollingUpdate"}}}
    patch = {"spec": {"strategy": {"$retainKeys": ["rollingUpdate"], "type": "Recreate"}}}
    with pytest.raises(ApiError) as info:
        apply_strategic_merge_patch(deployment, patch, k8s, "apps", "v1", "Deployment")
    assert (info.value.code, info.value.reason) == (400, "BadRequest")
    assert info.value.message == "invalid patch format of retainKeys"


def test_set_element_order_reorders_containers(k8s):
    original = _pod()
    original["spec"]["containers"].append({"name": "side", "image": "b"})
    patch = {"spec": {"$setElementOrder/containers": [{"name": "side"}, {"name": "web"}]}}
    result = apply_strategic_merge_patch(original, patch, k8s, "", "v1", "Pod")
    assert [c["name"] for c in result["spec"]["containers"]] == ["side", "web"]


@pytest.mark.parametrize("patch,message", [
    ({"spec": {"$setElementOrder": []}}, "invalid patch format of setElementOrder list"),
    ({"metadata": {"$deleteFromPrimitiveList": ["a"]}}, "invalid patch format of primitive list"),
    ({"spec": {"strategy": {"$retainKeys": "type"}}}, "invalid patch format of retainKeys"),
])
def test_malformed_directives_are_400(k8s, patch, message):
    original = {"metadata": {"finalizers": ["a"]}, "spec": {"strategy": {"type": "Recreate"}}}
    with pytest.raises(ApiError) as info:
        apply_strategic_merge_patch(original, patch, k8s, "apps", "v1", "Deployment")
    assert (info.value.code, info.value.message) == (400, message)


def test_unknown_patch_directive_value_is_500(k8s):
    with pytest.raises(ApiError) as info:
        apply_strategic_merge_patch(_pod(), {"spec": {"$patch": "bogus"}}, k8s, "", "v1", "Pod")
    assert info.value.code == 500
    assert info.value.message.startswith("unknown patch type: bogus in map: map[$patch:bogus]")


def test_patch_replace_and_delete_on_maps(k8s):
    replaced = apply_strategic_merge_patch(_pod(), {"metadata": {"labels": {"$patch": "replace", "x": "y"}}},
                                           k8s, "", "v1", "Pod")
    assert replaced["metadata"]["labels"] == {"x": "y"}
    deleted = apply_strategic_merge_patch(_pod(), {"metadata": {"labels": {"$patch": "delete"}}}, k8s, "", "v1", "Pod")
    assert deleted["metadata"]["labels"] == {}


def test_list_of_lists_is_422(k8s):
    original = {"mergingIntList": [[1]]}
    with pytest.raises(ApiError) as info:
        smp_item(original, {"mergingIntList": [[2]]})
    assert (info.value.code, info.value.reason) == (422, "Invalid")


def test_unknown_fields_merge_like_merge_patch(k8s):
    original = _pod()
    original["spec"]["extra"] = {"a": 1, "b": [1, 2]}
    result = apply_strategic_merge_patch(original, {"spec": {"extra": {"a": None, "c": 3, "b": [3]}}},
                                         k8s, "", "v1", "Pod")
    assert result["spec"]["extra"] == {"b": [3], "c": 3}


def test_unknown_kind_falls_back_to_merge_semantics(k8s):
    result = apply_strategic_merge_patch({"spec": {"a": [1], "m": {"x": 1}}}, {"spec": {"a": [2], "m": {"y": 2}}},
                                         k8s, "example.com", "v1", "Widget")
    assert result == {"spec": {"a": [2], "m": {"x": 1, "y": 2}}}


@pytest.mark.parametrize("body,kind", [([], "array"), ("x", "string"), (3, "number"), (True, "bool")])
def test_strategic_patch_body_must_be_object(k8s, body, kind):
    with pytest.raises(ApiError) as info:
        apply_strategic_merge_patch(_pod(), body, k8s, "", "v1", "Pod")
    assert info.value.code == 400
    assert info.value.message == f"json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"


def test_null_strategic_patch_changes_nothing(k8s):
    assert apply_strategic_merge_patch(_pod(), None, k8s, "", "v1", "Pod") == _pod()


# --- JSON patch ------------------------------------------------------------------------

def test_json_patch_operations_and_no_mutation():
    original = {"metadata": {"name": "a", "labels": {"x": "1"}}, "spec": {"items": [1, 2]}}
    before = copy.deepcopy(original)
    patch = [
        {"op": "test", "path": "/metadata/name", "value": "a"},
        {"op": "add", "path": "/metadata/labels/y", "value": "2"},
        {"op": "replace", "path": "/metadata/labels/x", "value": "3"},
        {"op": "add", "path": "/spec/items/-", "value": 3},
        {"op": "remove", "path": "/spec/items/0"},
        {"op": "copy", "from": "/metadata/name", "path": "/spec/name"},
        {"op": "move", "from": "/spec/name", "path": "/spec/moved"},
        {"op": "add", "path": "/metadata/labels/a~1b", "value": "slash"},
    ]
    result = apply_json_patch(original, patch)
    assert result == {"metadata": {"name": "a", "labels": {"x": "3", "y": "2", "a/b": "slash"}},
                      "spec": {"items": [2, 3], "moved": "a"}}
    assert original == before


def test_json_patch_reads_a_missing_key_as_null():
    """json-patch v4 (the apiserver's) gets a missing key of an object as a nil node: ``copy``
    from it adds null, ``test`` of it against null holds; ``move`` still fails to remove it."""
    doc = {"metadata": {"name": "a", "labels": {"tier": "web"}}}
    patch = [{"op": "copy", "from": "/metadata/labels/app", "path": "/metadata/labels/copied"},
             {"op": "test", "path": "/metadata/labels/missing", "value": None},
             {"op": "move", "from": "/metadata/labels/tier", "path": "/metadata/labels/moved"}]
    assert apply_json_patch(doc, patch) == {"metadata": {"name": "a", "labels": {"copied": None, "moved": "web"}}}
    for failing in ({"op": "move", "from": "/metadata/labels/app", "path": "/metadata/labels/moved"},
                    {"op": "copy", "from": "/metadata/items/3", "path": "/metadata/x"},
                    {"op": "test", "path": "/metadata/labels/missing", "value": "x"}):
        with pytest.raises(ApiError):
            apply_json_patch({"metadata": {"labels": {}, "items": []}}, [failing])


@pytest.mark.parametrize("patch", [
    [{"op": "test", "path": "/metadata/name", "value": "b"}],
    [{"op": "remove", "path": "/metadata/missing"}],
    [{"op": "replace", "path": "/spec/missing", "value": 1}],
    [{"op": "add", "path": "/no/parent", "value": 1}],
    [{"op": "frobnicate", "path": "/metadata"}],
    [{"path": "/metadata"}],
])
def test_json_patch_apply_failures_are_bare_422(patch):
    with pytest.raises(ApiError) as info:
        apply_json_patch({"metadata": {"name": "a"}}, patch)
    assert (info.value.code, info.value.reason) == (422, "Invalid")
    assert info.value.message == "the server rejected our request due to an error in our request"


@pytest.mark.parametrize("body,message", [
    ({"op": "add"}, "json: cannot unmarshal object into Go value of type jsonpatch.Patch"),
    ("x", "json: cannot unmarshal string into Go value of type jsonpatch.Patch"),
    ([1], "json: cannot unmarshal number into Go value of type jsonpatch.Operation"),
])
def test_json_patch_body_not_a_list_of_objects_is_400(body, message):
    with pytest.raises(ApiError) as info:
        apply_json_patch({}, body)
    assert (info.value.code, info.value.message) == (400, message)


def test_json_patch_operation_limit_is_413():
    ops = [{"op": "test", "path": "/a", "value": 1}] * (MAX_JSON_PATCH_OPERATIONS + 1)
    with pytest.raises(ApiError) as info:
        apply_json_patch({"a": 1}, ops)
    assert info.value.code == 413
    assert info.value.message == ("Request entity too large: The allowed maximum operations in a JSON patch "
                                  "is 10000, got 10001")
    assert apply_json_patch({"a": 1}, ops[:MAX_JSON_PATCH_OPERATIONS]) == {"a": 1}


def test_json_patch_that_replaces_the_root_with_a_non_object_is_422():
    with pytest.raises(ApiError) as info:
        apply_json_patch({"a": 1}, [{"op": "replace", "path": "", "value": [1]}])
    assert info.value.code == 422


def test_invalid_json_body_is_400():
    with pytest.raises(ApiError) as info:
        parse_patch_body(b"{not json")
    assert (info.value.code, info.value.message) == (400, "invalid JSON patch")
    assert parse_patch_body(b'[{"op":"add"}]') == [{"op": "add"}]


# --- JSON merge patch -------------------------------------------------------------------

# RFC 7386 appendix A, restricted to object targets and object patches
@pytest.mark.parametrize("target,patch,expected", [
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
])
def test_merge_patch_rfc7386_examples(target, patch, expected):
    before = copy.deepcopy(target)
    assert apply_merge_patch(target, patch) == expected
    assert target == before


def test_merge_patch_keeps_nulls_in_arrays_and_replaced_objects():
    assert apply_merge_patch({}, {"a": [None, {"b": None, "c": 1}]}) == {"a": [None, {"c": 1}]}


@pytest.mark.parametrize("patch", [None, "x", 1, True])
def test_merge_patch_non_object_is_400(patch):
    with pytest.raises(ApiError) as info:
        apply_merge_patch({"a": 1}, patch)
    assert (info.value.code, info.value.message) == (400, "Invalid JSON Patch")


def test_merge_patch_array_body_fails_to_decode_as_object():
    with pytest.raises(ApiError) as info:
        apply_merge_patch({"a": 1}, [1])
    assert info.value.code == 422
