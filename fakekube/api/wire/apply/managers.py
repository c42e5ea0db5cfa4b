"""managedFields: who owns which fields, kept on every write (upstream's fieldmanager).

A :class:`Managers` maps a manager *identifier* — (name, operation, apiVersion for an
Update, subresource), as ``BuildManagerIdentifier`` — to that manager's field set, its
time and whether it applied. :func:`decode` reads ``metadata.managedFields`` (None when
they are invalid), :func:`encode` writes them back in upstream's order (operation, time,
manager, apiVersion, subresource).

The two operations follow structured-merge-diff's ``Updater`` wrapped in the apiserver's
managers (strip metadata fields, merge consecutive updates of one manager, stamp the
time only when the manager's fields changed, cap update managers at 10 with the oldest
merged into ``ancient-changes``).
"""

from __future__ import annotations

from typing import Any, NamedTuple

from fakekube.api.wire.apply import fieldsets as fs
from fakekube.api.wire.apply.created import Fallback, created_fields
from fakekube.api.wire.apply.fieldsets import FieldSet
from fakekube.api.wire.apply.typed import MISSING, Comparison, compare, field_set, merge, remove_items
from fakekube.api.wire.apply.typed import ensure_named_fields_are_members as named_members
from fakekube.api.wire.apply.types import TypeNode

APPLY = "Apply"
UPDATE = "Update"
MAX_UPDATE_MANAGERS = 10
ANCIENT_CHANGES = "ancient-changes"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

#: Never owned (``stripMetaManager``): the server sets them.
STRIPPED: FieldSet = {
    "f:apiVersion": {}, "f:kind": {},
    "f:metadata": {".": {}, "f:name": {}, "f:namespace": {}, "f:creationTimestamp": {}, "f:selfLink": {},
                   "f:uid": {}, "f:clusterName": {}, "f:generation": {}, "f:managedFields": {},
                   "f:resourceVersion": {}},
}

Identifier = tuple[str, str, str, str]  # (manager, operation, apiVersion or "", subresource)


class Entry(NamedTuple):
    """One manager's managedFields entry, decoded: what it owns and when it last wrote."""

    fields: FieldSet
    api_version: str
    applied: bool
    time: str | None


Managers = dict[Identifier, Entry]


def identifier(manager: str, operation: str, api_version: str, subresource: str) -> Identifier:
    return (manager, operation, "" if operation == APPLY else api_version, subresource)


def decode(entries: Any) -> Managers | None:
    """``DecodeManagedFields``: None if any entry is malformed."""
    managers: Managers = {}
    if not isinstance(entries, list):
        return None if entries is not None else managers
    for entry in entries:
        if not isinstance(entry, dict):
            return None
        operation = entry.get("operation")
        api_version = entry.get("apiVersion")
        if operation not in (APPLY, UPDATE) or not isinstance(api_version, str) or not api_version:
            return None
        if entry.get("fieldsType") != "FieldsV1":
            return None
        fields = entry.get("fieldsV1", {})
        if fields is None:
            fields = {}
        if not fs.validate(fields):
            return None
        name, subresource, time = entry.get("manager") or "", entry.get("subresource") or "", entry.get("time")
        if not isinstance(name, str) or not isinstance(subresource, str) or not (time is None or isinstance(time, str)):
            return None
        key = identifier(name, operation, api_version, subresource)
        managers[key] = Entry(fields, api_version, operation == APPLY, time)
    return managers


def is_reset(entries: Any) -> bool:
    """``[]`` or ``[{}]``: the client asks to drop all managedFields."""
    return isinstance(entries, list) and (not entries or (len(entries) == 1 and entries[0] == {}))


def created_entry(manager: str, api_version: str, fields: FieldSet, now: str) -> list[dict[str, Any]]:
    """The managedFields of a new object: one Update entry (``fields`` from
    :func:`create_fields`, already in canonical order)."""
    return [{"manager": manager, "operation": UPDATE, "apiVersion": api_version, "time": now,
             "fieldsType": "FieldsV1", "fieldsV1": fields}]


def encode(managers: Managers) -> list[dict[str, Any]]:
    out = []
    for (name, operation, _, subresource), entry in managers.items():
        item: dict[str, Any] = {"manager": name, "operation": APPLY if entry.applied else operation,
                                "apiVersion": entry.api_version}
        if entry.time is not None:
            item["time"] = entry.time
        item["fieldsType"] = "FieldsV1"
        item["fieldsV1"] = fs.canonical(entry.fields)
        if subresource:
            item["subresource"] = subresource
        out.append(item)
    out.sort(key=lambda e: (e["operation"], _seconds(e.get("time")), e["manager"], e["apiVersion"],
                            e.get("subresource", "")))
    return out


def _seconds(time: str | None) -> str:
    return time or ""


def strip(fields: FieldSet) -> FieldSet:
    return fs.difference(fields, STRIPPED)


def without_ignored(fields: FieldSet, ignored: FieldSet | None) -> FieldSet:
    return fs.recursive_difference(fields, ignored) if ignored else fields


def _exclude(comparison: Comparison, ignored: FieldSet | None) -> Comparison:
    if ignored:
        comparison.added = fs.recursive_difference(comparison.added, ignored)
        comparison.modified = fs.recursive_difference(comparison.modified, ignored)
        comparison.removed = fs.recursive_difference(comparison.removed, ignored)
    return comparison


def _without_meta_fields(obj: Any) -> Any:
    meta = obj.get("metadata") if isinstance(obj, dict) else None
    if isinstance(meta, dict) and "managedFields" in meta:
        meta = {k: v for k, v in meta.items() if k != "managedFields"}
        return {**obj, "metadata": meta}
    return obj


class Conflicts(Exception):
    """Fields another manager owns that an apply would change: ``(identifier, path)``s."""

    def __init__(self, conflicts: list[tuple[Identifier, tuple[str, ...]]]) -> None:
        super().__init__(f"{len(conflicts)} conflicts")
        self.conflicts = conflicts


def _take_over(live: Any, new: Any, node: TypeNode, managers: Managers, acting: Identifier | None,
               force: bool, ignored: FieldSet | None) -> tuple[Managers, Comparison]:
    """``Updater.update``: other managers lose what this write changed or removed; without
    ``force`` a change to a field someone else owns is a conflict."""
    comparison = _exclude(compare(_without_meta_fields(live), _without_meta_fields(new), node), ignored)
    changed = fs.union(comparison.modified, comparison.added)
    conflicts: list[tuple[Identifier, tuple[str, ...]]] = []
    result: Managers = {}
    for ident, entry in managers.items():
        if ident == acting:
            result[ident] = entry
            continue
        clash = fs.intersection(entry.fields, changed)
        if clash and not force:
            conflicts.extend((ident, path) for path in members_sorted(clash))
            continue
        fields = fs.difference(entry.fields, clash) if clash else entry.fields
        if comparison.removed:
            fields = fs.difference(fields, comparison.removed)
        if fields:
            result[ident] = entry._replace(fields=fields) if fields is not entry.fields else entry
    if conflicts:
        raise Conflicts(sorted(conflicts, key=lambda c: c[0]))
    return result, comparison


def members_sorted(fields: FieldSet) -> list[tuple[str, ...]]:
    """Member paths in ``Set.Iterate`` order: a level's members (sorted), then each child's."""
    out: list[tuple[str, ...]] = []

    def walk(node: FieldSet, prefix: tuple[str, ...]) -> None:
        keys = sorted((k for k in node if k != fs.SELF), key=fs._order)
        for key in keys:
            if fs.is_member(node[key]):
                out.append(prefix + (key,))
        for key in keys:
            if node[key]:
                walk(node[key], prefix + (key,))

    walk(fields, ())
    return out


# -- Update (create, PUT, non-apply patches, subresources) --------------------
def update(live: Any, new: Any, node: TypeNode, managers: Managers, manager: str, api_version: str,
           subresource: str, now: str, ignored: FieldSet | None) -> Managers:
    """The managers after a non-apply write of ``new`` over ``live`` by ``manager``."""
    managers, comparison = _take_over(live, new, node, managers, None, True, ignored)
    changed = fs.union(comparison.modified, comparison.added)
    mine = strip(without_ignored(changed, ignored))
    if not mine:
        return cap(managers)
    key = identifier(manager, UPDATE, api_version, subresource)
    previous = managers.get(key)
    fields = fs.union(previous.fields, mine) if previous is not None else mine
    managers = dict(managers)
    managers[key] = Entry(fields, api_version, False, now)
    return cap(managers)


def create_fields(new: Any, node: TypeNode, ignored: FieldSet | None) -> FieldSet:
    """What a create's manager owns: the comparison with the type's empty object (in one
    pass when the ignored fields are top-level ones, as every strategy's are)."""
    if isinstance(new, dict) and (not ignored or all(v == {} for v in ignored.values())):
        try:
            return created_fields(new, node, frozenset(k[2:] for k in (ignored or {})))
        except Fallback:
            pass
    return compared_create_fields(new, node, ignored)


def compared_create_fields(new: Any, node: TypeNode, ignored: FieldSet | None) -> FieldSet:
    """:func:`create_fields` by the general comparison (the reference the fast walk keeps to)."""
    comparison = compare({}, _without_meta_fields(new), node)
    changed = fs.union(comparison.modified, comparison.added)
    return strip(without_ignored(changed, ignored))


def cap(managers: Managers, limit: int = MAX_UPDATE_MANAGERS) -> Managers:
    """``capManagersManager``: the oldest update entries merge into one
    ``ancient-changes`` entry per apiVersion until at most ``limit`` remain."""
    updaters = [ident for ident, entry in managers.items() if not entry.applied]
    if len(updaters) <= limit:
        return managers
    updaters.sort(key=lambda ident: (_unix(managers[ident].time), ident[0]))
    managers = dict(managers)
    first_of_version: dict[str, Identifier] = {}
    length = len(updaters)
    for ident in updaters:
        if length <= limit:
            break
        entry = managers[ident]
        bucket = identifier(ANCIENT_CHANGES, UPDATE, entry.api_version, "")
        first = first_of_version.get(entry.api_version)
        if first is None:
            first_of_version[entry.api_version] = ident
            continue
        if bucket not in managers:
            managers[bucket] = managers.pop(first)
        merged = fs.union(entry.fields, managers[bucket].fields)
        managers[bucket] = Entry(merged, entry.api_version, entry.applied, entry.time)
        del managers[ident]
        length -= 1
    return managers


def _unix(time: str | None) -> str:
    return time or ""


# -- Apply --------------------------------------------------------------------
def apply(live: Any, config: dict[str, Any], node: TypeNode, managers: Managers, manager: str,
          api_version: str, subresource: str, force: bool, now: str,
          ignored: FieldSet | None) -> tuple[Any, Managers, bool]:
    """Merge ``config`` into ``live`` for ``manager``: (new object, managers, changed).

    Raises :class:`Conflicts` (unless ``force``); kubectl's own manager (``kubectl``)
    may take over fields the client-side-apply annotation shows it set before.
    """
    try:
        return _apply(live, config, node, managers, manager, api_version, subresource, force, now, ignored)
    except Conflicts as conflicts:
        if manager != "kubectl":
            raise
        allowed = _allowed_by_last_applied(live, api_version, node)
        if allowed is None:
            raise
        left = [c for c in conflicts.conflicts if not fs.has(allowed, c[1])]
        if left:
            raise Conflicts(left) from None
        return _apply(live, config, node, managers, manager, api_version, subresource, True, now, ignored)


def _apply(live: Any, config: dict[str, Any], node: TypeNode, managers: Managers, manager: str,
           api_version: str, subresource: str, force: bool, now: str,
           ignored: FieldSet | None) -> tuple[Any, Managers, bool]:
    key = identifier(manager, APPLY, api_version, subresource)
    live_plain = _without_meta_fields(live)
    merged = merge(live_plain, config, node)
    last = managers.get(key)
    applied = without_ignored(field_set(config, node), ignored)
    managers = dict(managers)
    managers[key] = Entry(applied, api_version, True, last.time if last else None)
    merged = _prune(merged, managers, last, node)
    managers, _ = _take_over(live_plain, merged, node, managers, key, force, ignored)
    changed = merged != live_plain
    stripped = strip(managers[key].fields)
    if stripped:
        managers[key] = Entry(stripped, api_version, True, now if changed else managers[key].time)
    else:
        del managers[key]
    if manager == "kubectl" and _has_last_applied(live):
        merged = _with_last_applied(merged, config)
        changed = changed or merged != live_plain
    return merged, managers, changed


def _prune(merged: Any, managers: Managers, last: Entry | None, node: TypeNode) -> Any:
    """Remove what the manager applied last time and not now, unless someone owns it."""
    if last is None or not last.fields:
        return merged
    last_set = named_members(last.fields, node)
    pruned = remove_items(merged, last_set, node)
    owned: FieldSet = {}
    for entry in managers.values():
        owned = fs.union(owned, entry.fields)
    merged_set = named_members(field_set(merged, node), node)
    pruned_set = named_members(field_set(pruned, node), node)
    keep = fs.union(pruned_set, named_members(owned, node))
    pruned = remove_items(merged, fs.difference(merged_set, keep), node)
    pruned_set = named_members(field_set(pruned, node), node)
    dangling = fs.intersection(fs.difference(merged_set, pruned_set), last_set)
    return remove_items(merged, dangling, node)


def _has_last_applied(obj: Any) -> bool:
    annotations = ((obj or {}).get("metadata") or {}).get("annotations") or {}
    return bool(annotations.get(LAST_APPLIED))


def _with_last_applied(merged: dict[str, Any], config: dict[str, Any]) -> dict[str, Any]:
    """``lastAppliedUpdater``: kubectl's annotation follows what kubectl applies."""
    import json

    meta = dict(config.get("metadata") or {})
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != LAST_APPLIED}
    if annotations:
        meta["annotations"] = annotations
    else:
        meta.pop("annotations", None)
    text = go_json({**config, "metadata": meta}) + "\n"
    merged_meta = dict(merged.get("metadata") or {})
    merged_meta["annotations"] = {**(merged_meta.get("annotations") or {}), LAST_APPLIED: text}
    return {**merged, "metadata": merged_meta}


def go_json(value: Any) -> str:
    """``json.NewEncoder(w).Encode`` of a map: sorted keys, no spaces, HTML characters and
    U+2028/U+2029 escaped (the caller adds Encode's newline)."""
    import json

    text = json.dumps(value, separators=(",", ":"), sort_keys=True, ensure_ascii=False)
    for char, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"),
                          ("\u2028", "\\u2028"), ("\u2029", "\\u2029")):
        text = text.replace(char, escaped)
    return text


def _allowed_by_last_applied(live: Any, api_version: str, node: TypeNode) -> FieldSet | None:
    """``lastAppliedManager``: fields the annotation set that still hold its values."""
    import json

    annotations = ((live or {}).get("metadata") or {}).get("annotations") or {}
    text = annotations.get(LAST_APPLIED)
    if not text:
        return None
    try:
        last_applied = json.loads(text)
    except ValueError:
        return None
    if not isinstance(last_applied, dict) or last_applied.get("apiVersion") != api_version:
        return None
    try:
        last_set = field_set(last_applied, node)
        comparison = compare(last_applied, _without_meta_fields(live), node)
    except ValueError:
        return None
    allowed = fs.difference(last_set, comparison.modified)
    allowed = fs.difference(allowed, comparison.added)
    return fs.difference(allowed, comparison.removed)


__all__ = ["APPLY", "ANCIENT_CHANGES", "Conflicts", "created_entry", "Entry", "Identifier", "LAST_APPLIED", "MAX_UPDATE_MANAGERS",
           "Managers", "UPDATE", "apply", "cap", "create_fields", "decode", "encode", "identifier", "is_reset",
           "members_sorted", "update", "MISSING"]
