"""managedFields on every write and server-side apply: the apiserver's field manager.

The pure rules live in :mod:`fakekube.api.wire.apply`; this module decides what they are
given — the manager's name (``fieldManager``, else the User-Agent's product, as upstream's
``managerOrUserAgent``), the type of the object, the fields a subresource write may not own
(upstream's strategies' reset fields) — and turns conflicts into upstream's 409.
"""

from __future__ import annotations

import json
from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.registry import SCALE, STATUS, ResourceType
from fakekube.api.wire import apply as ssa
from fakekube.api.wire.apply.fieldsets import path_string
from fakekube.api.wire.schema import SchemaSet

Obj = dict[str, Any]

APPLY_PATCH = "application/apply-patch+yaml"
APPLY_PATCH_CBOR = "application/apply-patch+cbor"
MAX_MANAGER_LENGTH = 128
BEFORE_FIRST_APPLY = "before-first-apply"  # skipNonAppliedManager's beforeApplyManagerName
#: The manager of what kube-apiserver writes itself (its bootstrap objects, its controllers'
#: status writes, ResourceQuota admission's charges): its binary's User-Agent product.
APISERVER_MANAGER = "kube-apiserver"

_MAIN_IGNORED: dict[str, Any] = {"f:status": {}}
_STATUS_ONLY: dict[str, Any] = {"f:spec": {}, "f:metadata": {"f:labels": {}}}


def manager_name(field_manager: str, user_agent: str) -> str:
    """``managerOrUserAgent``: the fieldManager (already validated), else the User-Agent's
    product made a valid manager name (``prefixFromUserAgent``); with neither, ``unknown``
    (``buildManagerInfo``)."""
    return field_manager or _prefix_from_user_agent(user_agent) or "unknown"


def _prefix_from_user_agent(user_agent: str) -> str:
    """The User-Agent up to its first ``/``, non-printable characters dropped, cut before the
    character that would pass 128 bytes (so a long or odd User-Agent never fails a write)."""
    product = user_agent.split("/", 1)[0]
    if product.isascii() and product.isprintable() and len(product) <= MAX_MANAGER_LENGTH:
        return product  # every client's own: nothing to drop or cut
    kept, size_b = [], 0
    for char in product:
        if not char.isprintable():
            continue
        char_b = len(char.encode("utf-8"))
        if size_b + char_b > MAX_MANAGER_LENGTH:
            break
        kept.append(char)
        size_b += char_b
    return "".join(kept)


def type_of(rt: ResourceType, schemas: SchemaSet) -> ssa.TypeNode:
    if rt.schema is not None:
        return ssa.custom_root(rt.schema, schemas)
    return ssa.builtin_root(schemas, rt.group, rt.version, rt.kind)


def ignored_fields(rt: ResourceType, subresource: str) -> dict[str, Any] | None:
    """What the write cannot own: a main-resource write of a type with a status subresource
    never owns status; a status write never owns spec or labels (as 1.33's strategies); a
    type's own reset fields where its strategies say otherwise (a CSR's main resource)."""
    own = rt.strategy.reset_fields.get(subresource)
    if own is not None:
        return dict(own)
    if subresource == STATUS:
        reset = rt.strategy.status_reset_fields
        return reset if reset is not None else _STATUS_ONLY
    if subresource == SCALE:
        return None
    return _MAIN_IGNORED if rt.has_status() else None


def track_create(rt: ResourceType, obj: Obj, schemas: SchemaSet, manager: str, now: str) -> list[Obj] | None:
    """Set a new object's managedFields: the creating manager owns what it set.

    Returns the entries when this built them (not a client's): they are written as Go's
    storage writes them already (every string set, the time canonical), so the create's
    storage shaping need not walk them again (``tests/integration/test_go_json.py``)."""
    meta = obj["metadata"]
    sent = meta.pop("managedFields", None)
    if sent is not None and not ssa.is_reset(sent):
        decoded = ssa.decode(sent)
        if decoded:  # a client may hand over valid managedFields on create
            meta["managedFields"] = ssa.encode(decoded)
            return None
    try:
        fields = ssa.create_fields(obj, type_of(rt, schemas), ignored_fields(rt, ""))
    except ssa.TypedError:
        return None
    if not fields:
        return None
    entries = meta["managedFields"] = ssa.managers.created_entry(manager, rt.api_version, fields, now)
    return entries


def track_update(rt: ResourceType, old: Obj, new: Obj, schemas: SchemaSet, manager: str, subresource: str,
                 now: str) -> None:
    """Set ``new``'s managedFields after a non-apply write over ``old``.

    With no managedFields to start from (an object created with none, a client's reset) the
    write is not tracked: upstream's field manager skips non-applied updates until an apply."""
    meta = new["metadata"]
    old_entries = (old.get("metadata") or {}).get("managedFields")
    sent = meta.pop("managedFields", None)
    managers: ssa.Managers | None
    if subresource:
        managers = ssa.decode(old_entries)
    elif ssa.is_reset(sent):
        managers = {}
    else:
        managers = ssa.decode(sent) if sent else None
        if not managers:
            managers = ssa.decode(old_entries)
    if not managers:
        return  # skipNonAppliedManager: an untracked object stays untracked until an apply
    try:
        result = ssa.update(old, new, type_of(rt, schemas), managers, manager, rt.api_version, subresource, now,
                            ignored_fields(rt, subresource))
    except ssa.TypedError:
        if old_entries:
            meta["managedFields"] = old_entries  # UpdateNoErrors keeps the live managedFields
        return
    if result:
        if subresource == SCALE:  # the ScaleHandler's ToParent finds no time for a scale manager
            result = {key: entry._replace(time=None) if key[3] == SCALE else entry for key, entry in result.items()}
        meta["managedFields"] = ssa.encode(result)


def created_entry(manager: str, api_version: str, fields: dict[str, Any], now: str) -> list[Obj]:
    """The managedFields of a create by ``manager`` that owns ``fields``."""
    return ssa.managers.created_entry(manager, api_version, fields, now)


def keep_managed_fields(old: Obj, new: Obj) -> None:
    """An internal write (a controller, a kubelet) records no manager of its own (a
    simplification: upstream names kube-controller-manager, kubelet...), but keeps the
    object's managedFields when its body left them out."""
    entries = (old.get("metadata") or {}).get("managedFields")
    if entries and "managedFields" not in new["metadata"]:
        new["metadata"]["managedFields"] = entries


def apply_config(rt: ResourceType, live: Obj, config: Any, schemas: SchemaSet, manager: str, force: bool,
                 now: str, subresource: str = "") -> tuple[Obj, bool]:
    """Server-side apply of ``config`` over ``live`` (an empty object on create): the merged
    object with its managedFields, and whether anything changed."""
    if not isinstance(config, dict):
        raise errors.bad_request("error decoding YAML: object is not a map")  # never reached by kubectl
    _check_config(rt, config)
    node = type_of(rt, schemas)
    problems = ssa.typed.undeclared(config, node)
    if problems:
        why = problems[0] if len(problems) == 1 else "errors:\n  " + "\n  ".join(problems)
        raise errors.unknown_error(500, _typed_failure("patch", rt, config, why))
    managers = ssa.decode((live.get("metadata") or {}).get("managedFields"))
    if managers is None:
        raise errors.unknown_error(500, "failed to decode managed fields")
    if not managers:
        managers = _before_first_apply(rt, live, node, subresource, now)
    try:
        merged, result, changed = ssa.apply(live, config, node, managers, manager, rt.api_version,
                                            subresource, force, now, ignored_fields(rt, subresource))
    except ssa.Conflicts as conflicts:
        raise conflict_error(_as_scale_sees_it(conflicts) if subresource == SCALE else conflicts) from None
    except ssa.TypedError as exc:
        raise errors.unknown_error(500, _typed_failure("patch", rt, config, str(exc))) from None
    merged = dict(merged)
    merged["metadata"] = dict(merged.get("metadata") or {})
    if result and subresource == SCALE:  # as track_update: the ScaleHandler's ToParent finds no time
        result = {key: entry._replace(time=None) if key[3] == SCALE else entry for key, entry in result.items()}
    if result:
        merged["metadata"]["managedFields"] = ssa.encode(result)
    else:
        merged["metadata"].pop("managedFields", None)
    return merged, changed


def _before_first_apply(rt: ResourceType, live: Obj, node: ssa.TypeNode, subresource: str,
                        now: str) -> ssa.Managers:
    """``skipNonAppliedManager.Apply``: the first apply over an untracked object first gives
    everything the object holds to ``before-first-apply`` (an Update from the empty object),
    so that the applier conflicts with it instead of silently owning fields others set."""
    ignored = ignored_fields(rt, subresource)
    try:
        fields = ssa.create_fields(live, node, ignored)
    except ssa.TypedError:
        return {}
    if not fields:
        return {}
    key = ssa.identifier(BEFORE_FIRST_APPLY, ssa.UPDATE, rt.api_version, subresource)
    return {key: ssa.managers.Entry(fields, rt.api_version, False, now)}


#: The Scale's replicas field, as the ScaleHandler's view of the parent's managers names it.
_SCALE_REPLICAS = ("f:spec", "f:replicas")


def _as_scale_sees_it(conflicts: ssa.Conflicts) -> ssa.Conflicts:
    """A scale apply only sets replicas: its conflicts are with the owners of the parent's
    replicas field, which the ScaleHandler presents as owners of the Scale's ``.spec.replicas``
    through ``autoscaling/v1``."""
    seen: list[tuple[ssa.managers.Identifier, tuple[str, ...]]] = []
    for (name, operation, _, subresource), _path in conflicts.conflicts:
        item = ((name, operation, "autoscaling/v1", subresource), _SCALE_REPLICAS)
        if item not in seen:
            seen.append(item)
    return ssa.Conflicts(seen)


def _check_config(rt: ResourceType, config: Obj) -> None:
    api_version, kind = config.get("apiVersion"), config.get("kind")
    if api_version != rt.api_version or kind != rt.kind:
        group, _, version = (api_version or "").rpartition("/") if isinstance(api_version, str) else ("", "", "")
        raise errors.bad_request(f"invalid object type: {group}/{version}, Kind={kind if isinstance(kind, str) else ''}")
    meta = config.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise errors.bad_request("metadata.managedFields must be nil")


def _typed_failure(what: str, rt: ResourceType, obj: Obj, why: str) -> str:
    meta = obj.get("metadata") or {}
    return (f"failed to create typed {what} object ({meta.get('namespace') or ''}/{meta.get('name') or ''}; "
            f"{rt.group}/{rt.version}, Kind={rt.kind}): {why}")


def conflict_error(conflicts: ssa.Conflicts) -> errors.ApiError:
    """409 as ``NewConflictError``: one cause per conflicting field, managers in order."""
    items = conflicts.conflicts
    causes = [{"reason": "FieldManagerConflict", "message": f"conflict with {_print_manager(ident)}",
               "field": path_string(path)} for ident, path in items]
    if len(items) == 1:
        ident, path = items[0]
        message = f"Apply failed with 1 conflict: conflict with {_print_manager(ident)}: {path_string(path)}"
    else:
        by_manager: dict[str, list[str]] = {}
        for ident, path in items:
            by_manager.setdefault(_print_manager(ident), []).append(path_string(path))
        lines = []
        for printed in sorted(by_manager, key=lambda p: p):
            lines.append(f"conflicts with {printed}:")
            lines.extend(f"- {path}" for path in by_manager[printed])
        message = f"Apply failed with {len(items)} conflicts: " + "\n".join(lines)
    return errors.ApiError(409, "Conflict", message, {"causes": causes})


def _print_manager(ident: ssa.managers.Identifier) -> str:
    name, operation, api_version, subresource = ident
    printed = json.dumps(name, ensure_ascii=False)
    if subresource:
        printed += f" with subresource {json.dumps(subresource)}"
    if operation == ssa.UPDATE:
        printed += f" using {api_version}"
    return printed


def check_patch_options(patch_type: str, field_manager: str, force: bool | None) -> None:
    """``ValidatePatchOptions``: force only for apply; apply needs a fieldManager."""
    problems = []
    if patch_type not in (APPLY_PATCH, APPLY_PATCH_CBOR):
        if force is not None:
            problems.append(errors.forbidden("force", "may not be specified for non-apply patch"))
    elif not field_manager:
        problems.append(errors.required("fieldManager", "is required for apply patch"))
    if problems:
        raise errors.invalid_options("PatchOptions", problems)


def check_field_manager(field_manager: str) -> list[errors.FieldError]:
    """``ValidateFieldManager``: at most 128 characters, all printable."""
    problems = []
    if len(field_manager) > MAX_MANAGER_LENGTH:
        problems.append(errors.too_long("fieldManager", field_manager, MAX_MANAGER_LENGTH))
    for position, char in enumerate(field_manager):
        if not char.isprintable():
            problems.append(errors.invalid("fieldManager", field_manager,
                                           f"invalid character U+{ord(char):04X} (at position {position})"))
    return problems
