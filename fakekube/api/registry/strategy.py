"""What a type does on a write: its :class:`Strategy`, and the :class:`WriteContext` it gets.

A strategy is the analogue of upstream's ``rest.RESTCreateStrategy``/``RESTUpdateStrategy``:
defaulting, preparation and validation of one type. It sees time, randomness and the
store only through the context it is handed, so a write is a pure function of its inputs.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable, Mapping, Protocol

from fakekube.api.machinery.errors import FieldError
from fakekube.objects import versions
from fakekube.objects.versions import Release

Obj = dict[str, Any]


class StoreReader(Protocol):
    """The read-only view of the store a strategy may consult (e.g. to allocate IPs)."""

    def get_object(self, group: str, resource: str, namespace: str, name: str) -> Obj | None: ...

    def list_objects(self, group: str, resource: str, namespace: str = "") -> list[Obj]: ...


class Rng(Protocol):
    """The seeded random source (see fakekube.random) as strategies see it."""

    def randrange(self, start: int, stop: int) -> int: ...

    def choice(self, seq: Any) -> Any: ...

    def uid(self) -> str: ...

    def name_suffix(self, length: int = 5) -> str: ...

    def secret(self, label: str, length: int = 32) -> bytes: ...


class WriteContext:
    """What a strategy may use while preparing a write: time, randomness, a store view.

    Passed in rather than read from globals, so writes are a pure function of
    (seed, calls) — the determinism contract in DESIGN.md. One per write.
    """

    __slots__ = ("now", "rng", "store", "user", "authorization_mode", "static_tokens", "release", "token_cache")

    def __init__(self, now: datetime, rng: Rng, store: StoreReader, user: Any = None,
                 authorization_mode: str = "AlwaysAllow", static_tokens: Mapping[str, Any] | None = None,
                 release: Release | None = None, token_cache: Any = None) -> None:
        self.now = now
        self.rng = rng
        self.store = store
        #: Who asks (a ``fakekube.api.auth.UserInfo``; None: the admin) and the cluster's
        #: ``--authorization-mode``: what the review APIs answer about (types/reviews.py).
        self.user = user
        self.authorization_mode = authorization_mode
        #: The static bearer tokens (token → ``UserInfo``) a TokenReview also accepts.
        self.static_tokens: Mapping[str, Any] = {} if static_tokens is None else static_tokens
        #: The Kubernetes release the apiserver emulates (its defaults and gates differ).
        self.release = release if release is not None else versions.release(versions.DEFAULT_VERSION)
        #: The apiserver's cache of successful token authentications (a
        #: ``fakekube.api.auth.tokencache.TokenCache``; None: check every token afresh).
        self.token_cache = token_cache


class Strategy:
    """Type-specific create/update behaviour. The base class does nothing special.

    Order of calls on create: ``default`` → ``prepare_for_create`` → ``validate``.
    On update (PUT or patch of the main resource): ``default`` → ``prepare_for_update``
    → ``validate_update``. Generic metadata rules (names, labels, uid, generation,
    status-vs-spec separation) are applied by the REST layer, not here.
    """

    #: Bump ``metadata.generation`` when anything outside metadata/status changes. Without
    #: it the generation is whatever the client set on create, kept as it was on update
    #: (upstream's generic BeforeCreate/BeforeUpdate touch only what strategies set).
    tracks_generation: bool = False
    #: With ``tracks_generation``: a create starts the generation at 1 (False: it stays as the
    #: client sent it, or absent: a CSIDriver's strategy only bumps it on update).
    starts_generation: bool = True
    #: With ``tracks_generation``: metadata fields whose change also bumps the generation (a
    #: Deployment's annotations, which it copies to its ReplicaSets; an EndpointSlice's labels).
    generation_metadata: tuple[str, ...] = ()
    #: An update without a resourceVersion (or ``"0"``) writes over whatever is stored;
    #: False: it is a 422 (``AllowUnconditionalUpdate``).
    allow_unconditional_update: bool = True
    #: A /status write also sets ``metadata.annotations`` (status strategies that reset only
    #: spec and labels, as upstream's Deployment one); others keep metadata as stored.
    status_writes_annotations: bool = False
    #: A /status write sets the whole of metadata as sent (upstream's CRD status strategy
    #: resets nothing: its controllers drop the cleanup finalizer with a status write).
    status_writes_metadata: bool = False
    #: A client's /status write sets metadata as sent but ``ownerReferences`` (upstream's pod
    #: status strategy); the cluster's own status writes (a kubelet's, built from a copy it
    #: read earlier) keep the stored metadata.
    status_writes_client_metadata: bool = False
    #: The fields a /status write cannot own in managedFields (the status strategy's
    #: ``GetResetFields``, as a FieldsV1 set); None: spec and labels.
    status_reset_fields: dict[str, Any] | None = None

    #: What a write to the main resource ("") or to a subresource never owns in managedFields,
    #: where the type's strategies differ from the common rule (upstream's ``GetResetFields``):
    #: field sets in their ``FieldsV1`` form, by subresource.
    reset_fields: Mapping[str, Mapping[str, Any]] = {}
    #: Top-level ``RawExtension`` fields that never change once created: an update's
    #: validation compares their bytes after ``validate_update``'s checks, as upstream's
    #: ``ValidateImmutableField`` does (fakekube/api/verbs/rawextension.py).
    immutable_raw_fields: tuple[str, ...] = ()

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        """Fill upstream's defaults in place (SetDefaults_* functions)."""

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        """Adjust a new object before validation (e.g. reset status, allocate an IP)."""

    def add_converted_fields(self, obj: Obj) -> None:
        """Add in place what converting a request's object to the internal type and back
        always writes, before the field manager reads it (upstream's field manager sees the
        object its converter gives back). The base class adds nothing."""

    def prepare_for_update(self, new: Obj, old: Obj, ctx: WriteContext) -> None:
        """Adjust an updated object before validation (e.g. keep allocated fields)."""

    def validate(self, obj: Obj) -> list[FieldError]:
        """Type-specific validation of a new object (not metadata)."""
        return []

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """Validation of an update, including immutable fields. Defaults to ``validate``."""
        return self.validate(new)

    def warnings_on_create(self, obj: Obj) -> list[str]:
        """``WarningsOnCreate``: texts for ``Warning`` headers about a valid new object."""
        return []

    def warnings_on_update(self, new: Obj, old: Obj) -> list[str]:
        """``WarningsOnUpdate``: texts for ``Warning`` headers about a valid update."""
        return []

    def validate_status_update(self, new: Obj, old: Obj) -> list[FieldError]:
        """Validation of a ``/status`` write (upstream's status strategy ValidateUpdate);
        the base class checks nothing beyond object metadata."""
        return []

    def prepare_for_delete(self, obj: Obj, ctx: WriteContext) -> Obj:
        """The stored object as a DELETE should treat it: the same one, or a changed copy
        (a CRD's first delete adds its cleanup finalizer). Never edits ``obj``."""
        return obj

    def prepare_subresource(self, subresource: str, new: Obj, old: Obj, ctx: WriteContext) -> Obj:
        """The object a write to one of this type's own subresources stores: ``new`` as the
        client sent it (for ``status``, already merged: spec and metadata as stored), and
        ``old`` as stored. Types with ``approval``, ``ephemeralcontainers`` or ``resize`` take
        the part that subresource owns from ``new`` and the rest from ``old`` (upstream's
        per-subresource update strategies). Returns a new object; the base class keeps ``new``."""
        return new

    def validate_subresource(self, subresource: str, new: Obj, old: Obj) -> list[FieldError]:
        """Validation of a write to one of this type's subresources (after
        ``prepare_subresource``). The base class checks nothing."""
        return []

    def to_storage(self, obj: Obj) -> Obj:
        """A decoded request body in the storage type's shape (only for a type declared with
        ``stored_as``; upstream's conversion through the internal type). Returns a new object."""
        return obj

    def from_storage(self, obj: Obj) -> Obj:
        """A stored object in this type's shape, as clients of this API see it (the inverse
        of ``to_storage``). Returns a new object; the stored one is never edited."""
        return obj

    def from_storage_all(self, objs: list[Obj]) -> list[Obj]:
        """A list's stored objects in this type's shape (one by one unless a type batches:
        a CRD's conversion webhook converts a list in one call)."""
        return [self.from_storage(obj) for obj in objs]

    def field_selectors(self) -> dict[str, Callable[[Obj], str]]:
        """Extra fieldSelector fields beyond metadata.name/metadata.namespace."""
        return {}

    def review(self, obj: Obj, ctx: WriteContext) -> Obj:
        """The answer to a create of a type that is never stored (``ResourceType.persisted``
        is False): upstream's review REST storages compute a status and return the object,
        e.g. a SelfSubjectAccessReview answered ``allowed``. Runs after ``validate``; may
        raise an ``ApiError``. The base class returns the object unchanged."""
        return obj

    def computed(self, ctx: WriteContext) -> list[Obj]:
        """The objects of a read-only type that is never stored (``ResourceType.persisted``
        False with get/list), computed on each read, e.g. ComponentStatuses. Base: none."""
        return []

    def invalid_kind(self, kind: str) -> str:
        """The kind a 422 of a never-stored type names. Upstream's review storages pass the
        decoded object's (internal, hence empty) kind, so some say ``.authorization.k8s.io``."""
        return kind


DEFAULT_STRATEGY = Strategy()
