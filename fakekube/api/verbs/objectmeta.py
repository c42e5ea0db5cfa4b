"""Generic ObjectMeta handling shared by every write verb.

What upstream does in ``rest.BeforeCreate``/``BeforeUpdate`` and the generic registry:
assign uid and creationTimestamp, resolve generateName, keep server-owned fields on
update, bump generation when the spec changes, and spot no-op updates (which upstream
never writes, so the resourceVersion stays the same).
"""

from __future__ import annotations

from typing import AbstractSet, Any

from fakekube.api.machinery import errors
from fakekube.api.registry import ResourceType, WriteContext
from fakekube.clock import format_rfc3339

Obj = dict[str, Any]

#: Fields the server owns: an update cannot change them, so they are carried over.
SERVER_OWNED = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")

#: Metadata and status are not part of "the spec" for generation tracking.
NON_SPEC_FIELDS = ("metadata", "status", "apiVersion", "kind")

#: How many generateName suffixes to try before giving up (upstream retries too).
GENERATE_NAME_ATTEMPTS = 8


def wipe_system_fields(meta: Obj) -> None:
    """Erase what the system sets, before the field manager sees a new object.

    Upstream's create handler does this (``rest.WipeObjectMetaSystemFields``) ahead of
    managedFields tracking, so a client's deletionTimestamp is never recorded as owned.
    """
    for field in ("creationTimestamp", "uid", "deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
        meta.pop(field, None)


def stamp_new(rt: ResourceType, obj: Obj, ctx: WriteContext) -> None:
    """Set the fields the server owns on a new object (the resourceVersion is checked by
    :func:`check_no_resource_version` after validation, as upstream's storage does)."""
    meta = obj.setdefault("metadata", {})
    meta["uid"] = ctx.rng.uid()
    meta["creationTimestamp"] = format_rfc3339(ctx.now)
    for field in ("deletionTimestamp", "deletionGracePeriodSeconds", "selfLink"):
        meta.pop(field, None)
    if rt.strategy.tracks_generation and rt.strategy.starts_generation:
        meta["generation"] = 1


def check_no_resource_version(obj: Obj) -> None:
    """Refuse a create that carries a resourceVersion, then drop it.

    Upstream's etcd storage refuses one that parses as a non-zero number with a plain Go
    error — a 500 with no reason — after validation and admission; anything that does not
    parse ("-1", "abc") is silently ignored.
    """
    meta = obj.setdefault("metadata", {})
    text = str(meta.pop("resourceVersion", None) or "")
    if text.isascii() and text.isdigit() and int(text) != 0 and int(text) < 2**64:
        raise errors.unknown_error(500, "resourceVersion should not be set on objects to be created")


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


#: ObjectMeta's collections Go drops when empty (``omitempty``): a write leaving one empty
#: (a patch deleting the last owner reference, ``finalizers: []``) stores it absent, as the
#: apiserver's typed round trip does.
OMITTED_WHEN_EMPTY = ("labels", "annotations", "ownerReferences", "finalizers", "managedFields")


def omit_empty(meta: Obj) -> None:
    """Drop the empty (or null) ``OMITTED_WHEN_EMPTY`` fields of ``meta`` (a private copy)."""
    for field in OMITTED_WHEN_EMPTY:
        if field in meta and not meta[field]:
            del meta[field]


def spec_changed(new: Obj, old: Obj) -> bool:
    """True when anything but metadata and status differs."""
    keys = (set(new) | set(old)) - set(NON_SPEC_FIELDS)
    return any(new.get(k) != old.get(k) for k in sorted(keys))


def bump_generation(rt: ResourceType, new: Obj, old: Obj, subresource: str = "") -> None:
    """The generation after an update: the stored one, one more when the spec changed (or,
    for a main-resource write, the strategy's ``generation_metadata``: a status write that
    keeps a Deployment's revision annotation is not a new generation)."""
    if not rt.strategy.tracks_generation:
        return
    old_meta, new_meta = old.get("metadata") or {}, new["metadata"]
    generation = int(old_meta.get("generation") or 0)
    # A custom resource without the status subresource counts status as spec (upstream's
    # customResourceStrategy compares everything but metadata).
    status_counts = rt.custom is not None and not rt.has_status() and new.get("status") != old.get("status")
    meta_counts = not subresource and any(new_meta.get(field) != old_meta.get(field)
                                          for field in rt.strategy.generation_metadata)
    if spec_changed(new, old) or status_counts or meta_counts:
        generation += 1
    if generation:
        new_meta["generation"] = generation


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


#: The scheme upstream's built-in types are registered in, as its errors name it.
LEGACY_SCHEME = "k8s.io/kubernetes/pkg/api/legacyscheme/scheme.go:30"

#: meta/v1 kinds upstream's scheme decodes in any version (``AddUnversionedTypes``): a body
#: of one sent to a resource is a conversion error, not an unknown kind (a Status echoed back).
UNVERSIONED_KINDS = ("Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList")
#: meta/v1 kinds ``metav1.AddToGroupVersion`` registers in every group-version the scheme knows.
GROUP_VERSION_META_KINDS = ("WatchEvent", "ListOptions", "GetOptions", "DeleteOptions", "CreateOptions",
                            "UpdateOptions", "PatchOptions")

#: Kinds upstream's scheme still decodes in versions it no longer serves (so a body in one
#: of them fails as "the API version in the data ... does not match", not as unknown).
DECODABLE_UNSERVED: dict[str, tuple[str, ...]] = {
    "apps/v1beta1": ("ControllerRevision", "Deployment", "StatefulSet"),
    "apps/v1beta2": ("ControllerRevision", "DaemonSet", "Deployment", "ReplicaSet", "StatefulSet"),
    "extensions/v1beta1": ("DaemonSet", "Deployment", "Ingress", "NetworkPolicy", "ReplicaSet"),
    "batch/v1beta1": ("CronJob",),
    "policy/v1beta1": ("PodDisruptionBudget",),
    "networking.k8s.io/v1beta1": ("Ingress", "IngressClass"),
    "autoscaling/v1": ("HorizontalPodAutoscaler", "Scale"),
    "autoscaling/v2beta1": ("HorizontalPodAutoscaler",),
    "autoscaling/v2beta2": ("HorizontalPodAutoscaler",),
    "rbac.authorization.k8s.io/v1beta1": ("ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding"),
    "storage.k8s.io/v1beta1": ("StorageClass",),
    "scheduling.k8s.io/v1beta1": ("PriorityClass",),
    "coordination.k8s.io/v1beta1": ("Lease",),
    "discovery.k8s.io/v1beta1": ("EndpointSlice",),
    "events.k8s.io/v1beta1": ("Event",),
}


def check_type_meta(rt: ResourceType, body: Obj, served: AbstractSet[tuple[str, str]] | None = None) -> None:
    """A body may omit apiVersion/kind (the URL decides) but may not contradict them.

    The three ways upstream's decoder refuses a body of another type, in its words:
    a kind it does not know in that version, a known kind that is not this resource's
    (no conversion between them), and this kind in a version this endpoint does not serve.
    ``served`` is every (apiVersion, kind) the registry serves.
    """
    api_version = body.get("apiVersion") or ""
    kind = body.get("kind") or rt.kind
    group, _, version = api_version.rpartition("/")
    if not api_version or (not version and group == rt.group):
        api_version, group, version = rt.api_version, rt.group, rt.version
    if (api_version, kind) == (rt.api_version, rt.kind):
        return
    served = served or set()
    registered = api_version in DECODABLE_UNSERVED or any(served_version == api_version for served_version, _ in served)
    meta_kind = kind in UNVERSIONED_KINDS or (kind in GROUP_VERSION_META_KINDS and registered)
    known = meta_kind or (api_version, kind) in served or kind in DECODABLE_UNSERVED.get(api_version, ())
    cannot = f'{kind} in version "{version}" cannot be handled as a {rt.kind}'
    if not known:
        raise errors.bad_request(
            f'{cannot}: no kind "{kind}" is registered for version "{api_version}" in scheme "{LEGACY_SCHEME}"')
    if kind != rt.kind:
        package = "v1" if meta_kind else version  # meta/v1's Go package, whatever version the body names
        raise errors.bad_request(
            f"{cannot}: converting ({package}.{kind}) to ({_internal_package(rt.group)}.{rt.kind}): unknown conversion")
    raise errors.bad_request(
        f"the API version in the data ({api_version}) does not match the expected API version ({rt.api_version})")


def _internal_package(group: str) -> str:
    """The Go package of a group's internal types (``core.Pod``, ``apps.Deployment``)."""
    if group in ("", "events.k8s.io"):
        return "core"
    return group.split(".")[0]


def check_namespace(rt: ResourceType, body: Obj, namespace: str) -> None:
    """Fill metadata.namespace from the URL, refusing a body that names another one; a
    cluster-scoped object's namespace is cleared (``EnsureObjectNamespaceMatchesRequestNamespace``
    in BeforeCreate/BeforeUpdate: Ansible's module_defaults send one with every object)."""
    meta = body.setdefault("metadata", {})
    if not rt.namespaced:
        if isinstance(meta, dict) and "namespace" in meta:
            del meta["namespace"]
        return
    body_ns = meta.get("namespace") or ""
    if body_ns and body_ns != namespace:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
    meta["namespace"] = namespace


def check_name(body: Obj, name: str) -> None:
    body_name = (body.get("metadata") or {}).get("name") or ""
    if body_name != name:
        raise errors.bad_request(f"the name of the object ({body_name}) does not match the name on the URL ({name})")
