"""Deletion: preconditions, finalizers, propagation policy and graceful deletion.

An object with finalizers (or a delete whose propagation policy — given, or the type's
default — asks for the garbage collector's ``orphan`` or ``foregroundDeletion`` finalizer)
is only marked: ``deletionTimestamp`` is set (grace 0, ``generation`` one more) and it stays
until an update removes its last finalizer. A pod is deleted gracefully: marked with
``deletionTimestamp = now + grace`` for its kubelet to finish (an unscheduled or finished
pod's grace is 0: marked, then removed). A namespace stays Terminating until its
``spec.finalizers`` are emptied through ``namespaces/finalize``. Everything else is removed
at once.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from typing import Any, NamedTuple

from fakekube.api.auth.identity import UserInfo
from fakekube.api.machinery import errors
from fakekube.api.machinery.validation import go_quote, go_strings
from fakekube.api.registry import ResourceType
from fakekube.api.wire import decoding
from fakekube.clock import format_rfc3339, parse_time

Obj = dict[str, Any]

FOREGROUND = "Foreground"
BACKGROUND = "Background"
ORPHAN = "Orphan"
FOREGROUND_FINALIZER = "foregroundDeletion"
ORPHAN_FINALIZER = "orphan"

#: Resources whose default propagation (a delete naming none) orphans dependents, for
#: backwards compatibility: upstream's ``DefaultGarbageCollectionPolicy`` of core/v1
#: ReplicationControllers and batch/v1 Jobs (the versions fakekube serves); every other
#: type deletes dependents in the background.
ORPHAN_BY_DEFAULT = (("", "replicationcontrollers"), ("batch", "jobs"))

#: The job storage's warning for a delete naming no propagation (a Job orphans its pods by default).
JOB_DELETE_WARNING = ("child pods are preserved by default when jobs are deleted; set propagationPolicy=Background "
                      "to remove them or set propagationPolicy=Orphan to suppress this warning")


def delete_warnings(rt: ResourceType, options: "DeleteOptions") -> list[str]:
    """What the type's REST storage warns on a delete before it tries it (so a failed delete
    warns too): batch/v1 Jobs when the request names neither propagationPolicy nor
    orphanDependents."""
    if rt.key == ("batch", "jobs") and options.propagation_policy is None and options.orphan_dependents is None:
        return [JOB_DELETE_WARNING]
    return []


#: Kubelet-less default grace for pods whose spec has none.
DEFAULT_POD_GRACE_S = 30

#: Go's int64: grace periods are int64 seconds upstream; past it a value does not decode.
INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
_NS_PER_S = 10 ** 9

#: The scheme delete.go decodes a DELETE body with (apimachinery's meta internal version
#: scheme), as its "not registered" errors name it.
META_SCHEME = "k8s.io/apimachinery/pkg/apis/meta/internalversion/scheme/register.go:27"
META_V1 = "meta.k8s.io/v1"
#: Kinds that scheme decodes in any version (unversioned): DeleteOptions itself, and two
#: more that then fail to convert to DeleteOptions.
_UNVERSIONED_KINDS = ("DeleteOptions", "CreateOptions", "UpdateOptions")
#: Other kinds it knows, by apiVersion: they decode, then do not convert to DeleteOptions.
_META_KINDS = {
    "v1": ("Status", "APIVersions", "APIGroupList", "APIGroup", "APIResourceList"),
    META_V1: ("WatchEvent", "ListOptions", "GetOptions", "PatchOptions", "Table", "TableOptions",
              "PartialObjectMetadata", "PartialObjectMetadataList"),
    "meta.k8s.io/v1beta1": ("Table", "TableOptions", "PartialObjectMetadata", "PartialObjectMetadataList"),
}


class DeleteOptions(NamedTuple):
    """A delete's ``metav1.DeleteOptions``, parsed and validated."""

    grace_period_s: int | None = None
    propagation_policy: str | None = None
    orphan_dependents: bool | None = None
    precondition_uid: str | None = None
    precondition_rv: str | None = None
    dry_run: bool = False
    #: Who asks (None: the admin); admission webhooks see it.
    user: UserInfo | None = None

    @classmethod
    def parse(cls, body: Obj | None, query: dict[str, str]) -> "DeleteOptions":
        """From the body if there is one, else from the query (upstream reads one or the other).

        A negative grace period means 1 s, as upstream's ``BeforeDelete`` treats it.
        """
        if body is not None and not isinstance(body, dict):
            raise errors.bad_request("DeleteOptions must be an object")
        if body is not None:
            check_body_kind(body)
            _check_body_types(body)
        source: Obj = body if body is not None else {
            "gracePeriodSeconds": _int_or_none(query.get("gracePeriodSeconds")),
            "propagationPolicy": query.get("propagationPolicy"),
            "orphanDependents": _bool_or_none(query.get("orphanDependents")),
            "dryRun": [query["dryRun"]] if "dryRun" in query else [],
        }
        preconditions = source.get("preconditions") or {}
        grace = _int_or_none(source.get("gracePeriodSeconds"))
        options = cls(
            grace_period_s=1 if grace is not None and grace < 0 else grace,
            propagation_policy=source.get("propagationPolicy"),
            orphan_dependents=_bool_or_none(source.get("orphanDependents")),
            precondition_uid=preconditions.get("uid"),
            precondition_rv=preconditions.get("resourceVersion"),
            dry_run=_dry_run(source.get("dryRun") or []),
        )
        options.validate(source.get("dryRun") or [])
        return options

    def validate(self, dry_run: list[str] | None = None) -> None:
        """``ValidateDeleteOptions``, in its order; a 422 on ``DeleteOptions.meta.k8s.io``."""
        problems = []
        if self.propagation_policy is not None and self.orphan_dependents is not None:
            problems.append(errors.invalid("propagationPolicy", self.propagation_policy,
                                           "orphanDependents and deletionPropagation cannot be both set"))
        if self.propagation_policy is not None and self.propagation_policy not in (FOREGROUND, BACKGROUND, ORPHAN):
            problems.append(errors.not_supported("propagationPolicy", self.propagation_policy,
                                                 [FOREGROUND, BACKGROUND, ORPHAN, "nil"]))
        bad_dry_run = [v for v in (dry_run or []) if v != "All"]
        if bad_dry_run:
            problems.append(errors.not_supported("dryRun", go_strings(list(dry_run or [])), ["All"]))
        if problems:
            raise errors.invalid_options("DeleteOptions", problems)

    def gc_finalizers(self, current: list[str], orphan_by_default: bool) -> list[str]:
        """``current`` with the garbage collector's finalizers as this delete decides them
        (upstream's ``deletionFinalizersForGarbageCollection``): ``orphan`` and
        ``foregroundDeletion`` are taken out and put back, in that order, when the options, else
        the finalizer already there, else the type's default policy ask for them."""
        kept = [f for f in current if f not in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)]
        orphan = self._should_orphan(current, orphan_by_default)
        foreground = self._should_delete_in_foreground(current)
        return kept + ([ORPHAN_FINALIZER] if orphan else []) + ([FOREGROUND_FINALIZER] if foreground else [])

    def _should_orphan(self, current: list[str], orphan_by_default: bool) -> bool:
        if self.orphan_dependents is not None:
            return self.orphan_dependents
        if self.propagation_policy is not None:
            return self.propagation_policy == ORPHAN
        for finalizer in current:
            if finalizer in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER):
                return finalizer == ORPHAN_FINALIZER
        return orphan_by_default

    def _should_delete_in_foreground(self, current: list[str]) -> bool:
        if self.orphan_dependents is not None:
            return False
        if self.propagation_policy is not None:
            return self.propagation_policy == FOREGROUND
        for finalizer in current:
            if finalizer in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER):
                return finalizer == FOREGROUND_FINALIZER
        return False


#: DeleteOptions fields and their Go types, for the decode errors of a mistyped body.
_BODY_FIELDS: dict[str, tuple[type | tuple[type, ...], str]] = {
    "gracePeriodSeconds": (int, "int64"),
    "preconditions": (dict, "v1.Preconditions"),
    "orphanDependents": (bool, "bool"),
    "propagationPolicy": (str, "v1.DeletionPropagation"),
    "dryRun": (list, "[]string"),
}
_PRECONDITION_FIELDS = ("uid", "resourceVersion")


def options_object(options: DeleteOptions) -> Obj:
    """The fields of a ``meta.k8s.io/v1`` DeleteOptions the request set (an AdmissionReview's
    ``request.options``; ``dryRun`` is added by the review)."""
    body: Obj = {}
    if options.grace_period_s is not None:
        body["gracePeriodSeconds"] = options.grace_period_s
    preconditions = {k: v for k, v in (("uid", options.precondition_uid),
                                       ("resourceVersion", options.precondition_rv)) if v is not None}
    if preconditions:
        body["preconditions"] = preconditions
    if options.orphan_dependents is not None:
        body["orphanDependents"] = options.orphan_dependents
    if options.propagation_policy is not None:
        body["propagationPolicy"] = options.propagation_policy
    return body


def check_body_kind(body: Obj) -> None:
    """A DELETE body must decode as DeleteOptions, in any apiVersion (delete.go: "for backwards
    compatibility ... per group DeleteOptions"); a missing kind or version defaults to
    meta.k8s.io/v1 DeleteOptions. Anything else is the decoder's or converter's error
    (:func:`_undecodable_body`).
    """
    kind = body.get("kind") or "DeleteOptions"
    api_version = body.get("apiVersion") or META_V1
    if not isinstance(kind, str) or not isinstance(api_version, str) or kind == "DeleteOptions":
        return  # a mistyped kind/apiVersion is reported by the field checks
    if kind in _UNVERSIONED_KINDS or kind in _META_KINDS.get(api_version, ()):
        raise _undecodable_body(f"converting (v1.{kind}) to (v1.DeleteOptions): unknown conversion")
    raise _undecodable_body(
        f"no kind {go_quote(kind)} is registered for version {go_quote(api_version)} in scheme \"{META_SCHEME}\"")


def _check_body_types(body: Obj) -> None:
    """A DeleteOptions body that does not decode: the decoder's error (:func:`_undecodable_body`)."""
    for name, (python_type, go_type) in _BODY_FIELDS.items():
        value = body.get(name)
        wrong_int = python_type is int and (isinstance(value, bool) or
                                            (isinstance(value, int) and not INT64_MIN <= value <= INT64_MAX))
        if value is not None and (wrong_int or not isinstance(value, python_type)):
            raise _undecodable(value, f"DeleteOptions.{name}", go_type)
    for item in body.get("dryRun") or []:
        if not isinstance(item, str):
            raise _undecodable(item, "DeleteOptions.dryRun", "string")
    for name in _PRECONDITION_FIELDS:
        value = (body.get("preconditions") or {}).get(name)
        if value is not None and not isinstance(value, str):
            go_type = "types.UID" if name == "uid" else "string"
            raise _undecodable(value, f"Preconditions.preconditions.{name}", go_type)


def _undecodable(value: Any, field_path: str, go_type: str) -> errors.ApiError:
    # encoding/json names the literal of a number that overflows its Go type.
    what = f"number {value}" if type(value) is int else decoding.json_kind(value)
    return _undecodable_body(f"json: cannot unmarshal {what} into Go struct field {field_path} of type {go_type}")


def _undecodable_body(message: str) -> errors.ApiError:
    """A 400 BadRequest from 1.35; before, delete.go handed the decoder's plain error on
    unconverted: a 500 without reason (the release table's ``delete_options_bad_request``)."""
    if errors.emulated().delete_options_bad_request:
        return errors.bad_request(message)
    return errors.unknown_error(500, message)


def _int_or_none(value: Any) -> int | None:
    """An int64 query parameter or body field; a bad one is the 400 upstream's conversion gives."""
    if value is None or value == "":
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    return parse_int64(str(value))


def parse_int64(text: str) -> int:
    """Go's ``strconv.ParseInt(text, 10, 64)``; its error is a 400 (upstream's parameter conversion)."""
    try:
        value = int(text, 10) if text.strip() == text and "_" not in text else None
    except ValueError:
        value = None
    if value is None:
        raise errors.bad_request(f"strconv.ParseInt: parsing {go_quote(text)}: invalid syntax")
    if not INT64_MIN <= value <= INT64_MAX:
        raise errors.bad_request(f"strconv.ParseInt: parsing {go_quote(text)}: value out of range")
    return value


def _bool_or_none(value: Any) -> bool | None:
    if value is None or isinstance(value, bool):
        return value
    return str(value).lower() == "true"


def _dry_run(values: Any) -> bool:
    """True for ``["All"]``; anything else is reported by :meth:`DeleteOptions.validate`."""
    values = values if isinstance(values, list) else [values]
    return bool(values) and all(v == "All" for v in values)


def check_preconditions(rt: ResourceType, obj: Obj, options: DeleteOptions) -> None:
    """409 Conflict when a precondition fails, worded as upstream's ``rest.BeforeDelete``
    (which names the Kind, not the resource) — or, for namespaces, as their own REST Delete."""
    meta = obj.get("metadata") or {}
    name = meta.get("name", "")
    uid, rv = meta.get("uid"), meta.get("resourceVersion")
    if rt.key == ("", "namespaces"):
        if options.precondition_uid is not None and options.precondition_uid != uid:
            why = f"Precondition failed: UID in precondition: {options.precondition_uid}, UID in object meta: {uid}"
            raise errors.conflict(rt.group, rt.plural, name, why)
        if options.precondition_rv is not None and options.precondition_rv != rv:
            why = (f"Precondition failed: ResourceVersion in precondition: {options.precondition_rv}, "
                   f"ResourceVersion in object meta: {rv}")
            raise errors.conflict(rt.group, rt.plural, name, why)
        return
    if options.precondition_uid is not None and options.precondition_uid != uid:
        why = (f"the UID in the precondition ({options.precondition_uid}) does not match the UID in record ({uid}). "
               "The object might have been deleted and then recreated")
        raise errors.conflict(rt.group, rt.kind, name, why)
    if options.precondition_rv is not None and options.precondition_rv != rv:
        why = (f"the ResourceVersion in the precondition ({options.precondition_rv}) does not match the "
               f"ResourceVersion in record ({rv}). The object might have been modified")
        raise errors.conflict(rt.group, rt.kind, name, why)


def pod_grace_period_s(pod: Obj, options: DeleteOptions) -> int:
    """How long a pod may take to stop; 0 means delete now (unscheduled or finished pods)."""
    spec = pod.get("spec") or {}
    phase = (pod.get("status") or {}).get("phase")
    if not spec.get("nodeName") or phase in ("Succeeded", "Failed"):
        return 0
    if options.grace_period_s is not None:
        return options.grace_period_s
    grace = spec.get("terminationGracePeriodSeconds")
    return DEFAULT_POD_GRACE_S if grace is None else int(grace)


def is_namespace_being_emptied(rt: ResourceType, obj: Obj) -> bool:
    """A namespace already terminating that still has ``spec.finalizers``: deleting it again
    changes nothing and answers it as it is, 200 (upstream's namespace REST Delete: the
    namespace controller is emptying it; the old 409 "The system is ensuring all content is
    removed" went long before 1.33)."""
    return rt.key == ("", "namespaces") and bool((obj.get("metadata") or {}).get("deletionTimestamp")) \
        and bool((obj.get("spec") or {}).get("finalizers"))


class Deletion(NamedTuple):
    """What a delete does: ``marked`` is the version to write first (None: nothing to
    write), and ``remove`` whether the object then goes (its last state is ``marked``)."""

    marked: Obj | None
    remove: bool


PODS = ("", "pods")
NAMESPACES = ("", "namespaces")
CUSTOM_RESOURCE_DEFINITIONS = ("apiextensions.k8s.io", "customresourcedefinitions")


def mark_for_deletion(rt: ResourceType, obj: Obj, options: DeleteOptions, now: datetime) -> Deletion:
    """The delete of ``obj`` as upstream's ``Store.Delete`` decides it.

    A pod (the one kind with graceful deletion) is marked with ``deletionTimestamp = now +
    grace`` and written first even when its grace is 0 (a watch sees MODIFIED, then DELETED);
    a second delete may only shorten a pending grace period. Another kind that keeps
    finalizers (its own, or the garbage collector's the propagation policy asks for) is
    marked as deleting (grace 0) and lingers; without any it is removed at once. Either
    marking bumps a ``generation`` the first time. A namespace lingers while
    ``spec.finalizers`` has entries, and a CRD's first delete sets only the timestamp (their
    REST's own Delete)."""
    meta = dict(obj.get("metadata") or {})
    if rt.key == NAMESPACES:
        return _namespace_deletion(obj, meta, options, now)
    if rt.key == CUSTOM_RESOURCE_DEFINITIONS and not meta.get("deletionTimestamp"):
        meta["deletionTimestamp"] = format_rfc3339(now)
        return Deletion(dict(obj, metadata=meta), False)
    if rt.key == PODS:
        graceful = _before_delete_pod(obj, meta, options, now)
        if graceful is False:  # pending: the delete changes nothing, not even finalizers
            return Deletion(obj, False)
        if graceful:
            finalizers = options.gc_finalizers(list(meta.get("finalizers") or []), False)
            _set_finalizers(meta, finalizers)
            return Deletion(dict(obj, metadata=meta), not finalizers and meta["deletionGracePeriodSeconds"] == 0)
    finalizers = options.gc_finalizers(list(meta.get("finalizers") or []), rt.key in ORPHAN_BY_DEFAULT)
    if not finalizers:
        return Deletion(None, True)
    _mark_as_deleting(meta, now)
    _set_finalizers(meta, finalizers)
    return Deletion(dict(obj, metadata=meta), False)


def _before_delete_pod(pod: Obj, meta: Obj, options: DeleteOptions, now: datetime) -> bool | None:
    """``rest.BeforeDelete`` for a pod: True when graceful (``meta`` marked), False when a
    graceful deletion is pending and this delete changes nothing, None when not graceful (an
    earlier delete left grace 0: the finalizers decide)."""
    current = meta.get("deletionGracePeriodSeconds")
    if meta.get("deletionTimestamp"):
        if not current:
            return None
        period = options.grace_period_s
        if period is None or period >= current:
            return False
        started = parse_time(meta["deletionTimestamp"]) or now
        moment = go_add_seconds(go_add_seconds(started, -current), period)
        if moment < now:  # past already: now, and a grace that was not 0 is at least 1 s
            moment, period = now, (1 if period else 0)
        meta["deletionTimestamp"] = format_rfc3339(moment)
        meta["deletionGracePeriodSeconds"] = period
        return True
    period = pod_grace_period_s(pod, options)
    meta["deletionTimestamp"] = format_rfc3339(go_add_seconds(now, period))
    meta["deletionGracePeriodSeconds"] = period
    _bump_generation(meta)
    return True


def _mark_as_deleting(meta: Obj, now: datetime) -> None:
    """``markAsDeleting``: a kind without graceful deletion that keeps finalizers."""
    if not meta.get("deletionTimestamp"):
        _bump_generation(meta)
        meta["deletionTimestamp"] = format_rfc3339(now)
    elif (parse_time(meta["deletionTimestamp"]) or now) > now:
        meta["deletionTimestamp"] = format_rfc3339(now)
    meta["deletionGracePeriodSeconds"] = 0


def _bump_generation(meta: Obj) -> None:
    """The first marking tells the object's controllers: its generation (if it has one) grows."""
    generation = meta.get("generation")
    if isinstance(generation, int) and generation > 0:
        meta["generation"] = generation + 1


def _namespace_deletion(obj: Obj, meta: Obj, options: DeleteOptions, now: datetime) -> Deletion:
    """The namespace REST's own Delete: Terminating, a timestamp and no grace period, while
    ``spec.finalizers`` (or finalizers) hold it."""
    finalizers = options.gc_finalizers(list(meta.get("finalizers") or []), False)
    if not finalizers and not (obj.get("spec") or {}).get("finalizers"):
        return Deletion(None, True)
    if not meta.get("deletionTimestamp"):
        meta["deletionTimestamp"] = format_rfc3339(now)
    _set_finalizers(meta, finalizers)
    return Deletion(dict(obj, metadata=meta, status=dict(obj.get("status") or {}, phase="Terminating")), False)


def _set_finalizers(meta: Obj, finalizers: list[str]) -> None:
    if finalizers:
        meta["finalizers"] = finalizers
    else:
        meta.pop("finalizers", None)


def go_add_seconds(moment: datetime, seconds: int) -> datetime:
    """``moment.Add(time.Second * time.Duration(seconds))`` as Go computes it.

    Upstream's ``rest.BeforeDelete`` sets ``deletionTimestamp = now + grace`` this way: the
    product is int64 nanoseconds and wraps silently past ~292 years, so a grace period of
    2^63-1 s lands somewhere within ±292 years of now — never an error. The result is in
    whole seconds, as metav1.Time keeps it.
    """
    wrapped_ns = (seconds * _NS_PER_S - INT64_MIN) % 2 ** 64 + INT64_MIN
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    moment_ns = ((moment - epoch) // timedelta(microseconds=1)) * 1000
    return epoch + timedelta(seconds=(moment_ns + wrapped_ns) // _NS_PER_S)


def success_status(rt: ResourceType, obj: Obj) -> Obj:
    """The Status a DELETE returns for types that do not return the object."""
    meta = obj.get("metadata") or {}
    details: Obj = {"name": meta.get("name", "")}
    if rt.group:
        details["group"] = rt.group
    details["kind"] = rt.plural
    details["uid"] = meta.get("uid", "")
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
