"""Generic ObjectMeta handling shared by every write verb.

What upstream does in ``rest.BeforeCreate``/``BeforeUpdate`` and the generic registry:
assign uid and creationTimestamp, resolve generateName, keep server-owned fields on
update, bump generation when the spec changes, and spot no-op updates (which upstream
never writes, so the resourceVersion stays the same).
"""

from __future__ import annotations

from typing import Any

from fakekube.api import errors
from fakekube.api.registry import ResourceType, WriteContext
from fakekube.clock import format_rfc3339

Obj = dict[str, Any]

#: Fields the server owns: an update cannot change them, so they are carried over.
SERVER_OWNED = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")

#: Metadata and status are not part of "the spec" for generation tracking.
NON_SPEC_FIELDS = ("metadata", "status", "apiVersion", "kind")

#: How many generateName suffixes to try before giving up (upstream retries too).
GENERATE_NAME_ATTEMPTS = 8


def stamp_new(rt: ResourceType, obj: Obj, ctx: WriteContext) -> None:
    """Set the fields the server owns on a new object."""
    meta = obj.setdefault("metadata", {})
    if meta.get("resourceVersion"):
        raise errors.bad_request("resourceVersion should not be set on objects to be created")
    meta.pop("resourceVersion", None)
    meta["uid"] = ctx.rng.uid()
    meta["creationTimestamp"] = format_rfc3339(ctx.now)
    for field in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
        meta.pop(field, None)
    if rt.strategy.tracks_generation:
        meta["generation"] = 1
    else:
        meta.pop("generation", None)


def generated_name(meta: Obj, ctx: WriteContext) -> str:
    """``generateName`` plus a 5-character suffix, the prefix cut to fit 63 characters."""
    prefix = meta.get("generateName") or ""
    if len(prefix) > 58:
        prefix = prefix[:58]
    return prefix + ctx.rng.name_suffix(5)


def carry_over(new: Obj, old: Obj) -> None:
    """Keep server-owned metadata from the stored object in an update."""
    new_meta = new.setdefault("metadata", {})
    old_meta = old.get("metadata") or {}
    for field in SERVER_OWNED:
        if field in old_meta:
            new_meta[field] = old_meta[field]
        else:
            new_meta.pop(field, None)
    new_meta.pop("selfLink", None)


def spec_changed(new: Obj, old: Obj) -> bool:
    """True when anything but metadata and status differs."""
    keys = (set(new) | set(old)) - set(NON_SPEC_FIELDS)
    return any(new.get(k) != old.get(k) for k in sorted(keys))


def bump_generation(rt: ResourceType, new: Obj, old: Obj) -> None:
    if not rt.strategy.tracks_generation:
        return
    generation = int((old.get("metadata") or {}).get("generation") or 1)
    if spec_changed(new, old):
        generation += 1
    new["metadata"]["generation"] = generation


def is_noop(new: Obj, old: Obj) -> bool:
    """An update that changes nothing is not written (same resourceVersion), as upstream."""
    new_meta = dict(new.get("metadata") or {})
    old_meta = dict(old.get("metadata") or {})
    new_meta.pop("resourceVersion", None)
    old_meta.pop("resourceVersion", None)
    if new_meta != old_meta:
        return False
    rest_keys = (set(new) | set(old)) - {"metadata", "apiVersion", "kind"}
    return all(new.get(k) == old.get(k) for k in rest_keys)


def with_type_meta(rt: ResourceType, obj: Obj) -> Obj:
    """The object with apiVersion/kind first, as a single GET or watch event shows it."""
    return {"apiVersion": rt.api_version, "kind": rt.kind, **obj}


def strip_type_meta(obj: Obj) -> Obj:
    """Stored objects carry no TypeMeta: list items upstream carry none either."""
    obj.pop("apiVersion", None)
    obj.pop("kind", None)
    return obj


def check_type_meta(rt: ResourceType, body: Obj) -> None:
    """A body may omit apiVersion/kind (the URL decides) but may not contradict them."""
    api_version = body.get("apiVersion")
    kind = body.get("kind")
    if api_version and api_version != rt.api_version:
        raise errors.bad_request(
            f"the API version in the data ({api_version}) does not match the expected API version ({rt.api_version})")
    if kind and kind != rt.kind:
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})")
    if not isinstance(body.get("metadata", {}), dict):
        raise errors.bad_request("metadata must be an object")


def check_namespace(rt: ResourceType, body: Obj, namespace: str) -> None:
    """Fill metadata.namespace from the URL, refusing a body that names another one."""
    meta = body.setdefault("metadata", {})
    if not rt.namespaced:
        return
    body_ns = meta.get("namespace") or ""
    if body_ns and body_ns != namespace:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
    meta["namespace"] = namespace


def check_name(body: Obj, name: str) -> None:
    body_name = (body.get("metadata") or {}).get("name") or ""
    if body_name != name:
        raise errors.bad_request(f"the name of the object ({body_name}) does not match the name on the URL ({name})")
