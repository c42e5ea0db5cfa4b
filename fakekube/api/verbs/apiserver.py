"""The apiserver's verbs over the registry and the store, without HTTP.

:class:`APIServer` is what the REST layer (``fakekube.api.http``) and the Python API
both call: get, list, create, update, patch, delete, deletecollection, and the
status/scale subresources. Every write runs under the store lock as one
read-modify-write, so optimistic concurrency is exact and a failed request changes
nothing: objects are built on private copies and only a finished, validated object
reaches the store.
"""

from __future__ import annotations

import builtins
import contextlib
import functools
from typing import Any, Callable, Iterator, NamedTuple, TypeVar, cast

from fakekube.api import admission
from fakekube.api.admission import CONNECT, CREATE, DELETE, UPDATE, AdmissionOptions, Attributes, namespace_of
from fakekube.api.admission.policies import BINDINGS
from fakekube.api.admission.webhooks import MUTATING, VALIDATING, WebhookAdmission, decode_patched
from fakekube.api.auth import escalation
from fakekube.api.auth.identity import UserInfo
from fakekube.api.auth.tokencache import TokenCache
from fakekube.api.machinery import errors, validation
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.jsonutil import deep_copy, go_marshal
from fakekube.api.machinery.validation import go_strings
from fakekube.api.registry import FINALIZE, STATUS, Registry, ResourceType, WriteContext
from fakekube.api.verbs import customresources, deletion, fieldmanager, objectmeta, rawextension
from fakekube.api.verbs.customresources import CustomTypes
from fakekube.api.verbs.conversion import WebhookConversion
from fakekube.api.verbs.deletion import DeleteOptions
from fakekube.api.verbs.encoding import EncodedObjects
from fakekube.api.verbs.listing import ListOptions, Matcher, list_page
from fakekube.api.verbs.metrics import MetricsReads
from fakekube.api.types.metrics import METRICS_GROUP
from fakekube.api.wire import decoding, fieldvalidation, gojson, gostructs, patch
from fakekube.api.wire import schema as schema_module
from fakekube.clock import VirtualClock, format_rfc3339
from fakekube.objects import versions
from fakekube.random import SeededRandom
from fakekube.store import Change, Store

Obj = dict[str, Any]

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC_MERGE_PATCH = "application/strategic-merge-patch+json"
APPLY_PATCH = fieldmanager.APPLY_PATCH
PATCH_TYPES = (JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH, APPLY_PATCH)

#: How often an update is recomputed when the object changed while its admission webhooks
#: were called (upstream's GuaranteedUpdate retries; past this the write is a 409).
MAX_ADMISSION_RETRIES = 10

#: The resources whose objects turn admission webhooks and policies on.
_ADMISSION_RESOURCES = frozenset((MUTATING, VALIDATING, BINDINGS))

#: What a trusted Event create checks (see ``APIServer.create_recorded_event``).
_RESOURCE_QUOTAS = ("", "resourcequotas")
_NAMESPACES = ("", "namespaces")

#: A cache's "not looked up yet".
_UNKNOWN = object()

STRICT = "Strict"
WARN = "Warn"
IGNORE = "Ignore"


class WriteOptions(NamedTuple):
    """Query parameters every write verb takes (shared: callers keep module-level ones)."""

    dry_run: bool = False
    field_validation: str = WARN
    raw_body: bytes | None = None
    #: How many object keys the JSON parse of ``raw_body`` kept, counted before anything
    #: edited it (None: not counted): lets the duplicate-field check skip a second parse.
    body_keys: int | None = None
    #: A write from inside the cluster (bootstrap, later controllers): its objects are built
    #: well-typed, so the wire checks (typed decoding, unknown fields) are skipped. It records
    #: managedFields only when it names its manager (``field_manager``: ``kube-apiserver``
    #: for the apiserver's own objects and controllers); otherwise it keeps the object's.
    internal: bool = False
    #: An internal caller hands over a body it built afresh and shares with nothing stored
    #: (the event recorder's Events, bootstrap objects): the write may edit it as it is.
    fresh: bool = False
    #: Who asks (authentication's answer); None: the cluster admin (internal writes, and every
    #: request while authorization is off). Admission webhooks and managedFields read it.
    user: UserInfo | None = None
    #: ``fieldManager``; empty: the manager is named after the User-Agent (``user_agent``).
    field_manager: str = ""
    user_agent: str = ""
    #: ``force`` (apply only; None when not given).
    force: bool | None = None
    #: The subresource a main-resource write stands for in managedFields (``scale``).
    managed_subresource: str = ""

    @classmethod
    def from_query(cls, query: dict[str, str], raw: bytes | None = None,
                   options_kind: str = "CreateOptions", user_agent: str = "",
                   user: UserInfo | None = None) -> "WriteOptions":
        """Parse and validate as upstream's ``Validate{Create,Update,Patch}Options``: a bad
        value is a 422 on ``<options_kind>.meta.k8s.io``."""
        return cls(raw_body=raw, user_agent=user_agent, user=user, **cls.query_fields(query, options_kind))

    @staticmethod
    def query_fields(query: dict[str, str], options_kind: str = "CreateOptions") -> dict[str, Any]:
        """The fields a write's query sets, validated as :meth:`from_query` validates them."""
        dry_run = query.get("dryRun")
        validation = query.get("fieldValidation") or ""
        field_manager = query.get("fieldManager") or ""
        force = _parse_bool(query["force"]) if "force" in query else None
        problems = fieldmanager.check_field_manager(field_manager)
        if dry_run is not None and dry_run != "All":
            problems.append(errors.not_supported("dryRun", go_strings([dry_run]), ["All"]))
        if validation not in ("", STRICT, WARN, IGNORE):
            problems.append(errors.not_supported("fieldValidation", validation, ["", IGNORE, STRICT, WARN]))
        if problems:
            raise errors.invalid_options(options_kind, problems)
        return {"dry_run": dry_run == "All", "field_validation": validation or WARN, "field_manager": field_manager,
                "force": force}

    def manager(self) -> str:
        return fieldmanager.manager_name(self.field_manager, self.user_agent)


def _parse_bool(text: str) -> bool:
    """The parameter codec's bool: ``strconv.ParseBool``; anything else is a 400."""
    if text in ("1", "t", "T", "TRUE", "true", "True"):
        return True
    if text in ("0", "f", "F", "FALSE", "false", "False"):
        return False
    raise errors.bad_request(f'strconv.ParseBool: parsing "{text}": invalid syntax')


class WriteResult:
    """What a write verb answers: the object as stored (or as it would be, for a dry run),
    whether it was created, and the warning texts it earned, in order (the HTTP layer's
    recorder turns them into bounded ``Warning`` headers)."""

    __slots__ = ("obj", "created", "warnings", "stored")

    def __init__(self, obj: Obj, created: bool = False, warnings: list[str] | None = None,
                 stored: bool = True) -> None:
        self.obj = obj
        self.created = created
        self.warnings: list[str] = [] if warnings is None else warnings
        #: False: ``obj`` is not a stored version though it carries a resourceVersion (an
        #: update that emptied the finalizers of a deleting object answers what it made).
        self.stored = stored


class StoreView:
    """The read-only store view strategies get (see registry.StoreReader)."""

    def __init__(self, store: Store) -> None:
        self._store = store

    def get_object(self, group: str, resource: str, namespace: str, name: str) -> Obj | None:
        return self._store.get((group, resource), (namespace, name))

    def list_objects(self, group: str, resource: str, namespace: str = "") -> list[Obj]:
        return self._store.list((group, resource), namespace)[0]


_Verb = TypeVar("_Verb", bound=Callable[..., Any])


def _in_release_style(verb: _Verb) -> _Verb:
    """Field errors raised inside ``verb`` show their values as the emulated release does
    (``errors.emulating``): the apiserver's verbs are where in-process callers (the
    controllers, ``Cluster``'s API) come in; the HTTP app sets the same around each request."""
    @functools.wraps(verb)
    def styled(self: "APIServer", *args: Any, **kwargs: Any) -> Any:
        with errors.emulating(self.release):
            return verb(self, *args, **kwargs)
    return cast(_Verb, styled)


class APIServer:
    """Kubernetes API semantics over a :class:`Store`."""

    def __init__(self, registry: Registry, store: Store, clock: VirtualClock, rng: SeededRandom,
                 kubernetes_version: str = schema_module.DEFAULT_KUBERNETES_VERSION, patch_version: int = 0) -> None:
        self.registry = registry
        self.store = store
        self.clock = clock
        self.rng = rng
        #: The release emulated (fakekube/objects/versions.py: what differs by version) and
        #: the patch ``/version`` reports (``v1.36.<patch>``).
        self.release = versions.release(kubernetes_version)
        self.kubernetes_version = self.release.version
        self.patch_version = patch_version
        self._view = StoreView(store)
        #: Where ``pods/log`` content comes from: ``(namespace, pod, container | None, query)
        #: -> bytes`` (or an iterable of chunks to stream, for ``follow``) — the simulated
        #: kubelets, wired by the cluster. None: empty logs.
        self.pod_logs: Callable[[str, str, str | None, dict[str, str]], Any] | None = None
        #: Where ``pods/exec`` outcomes come from: ``(pod, container, argv) -> outcome``
        #: (fakekube.api.verbs.connect.ExecOutcome; LookupError: the container is not
        #: running) — the simulated kubelets, wired by the cluster. None: never running.
        self.pod_exec: Callable[[dict[str, Any], str, list[str]], Any] | None = None
        #: Where ``proxy`` and port-forward answers come from: ``(namespace, pod, port,
        #: request) -> answer`` (fakekube.api.verbs.connect's ProxiedRequest/ProxiedAnswer;
        #: None: nothing listens on the port; LookupError: no kubelet runs the pod) — the
        #: simulated kubelets, wired by the cluster. None: nothing ever listens.
        self.pod_http: Callable[[str, str, int, Any], Any] | None = None
        #: ``pods/attach`` and ``pods/portforward`` reach the pod's kubelet through this
        #: (kubelet-side sessions, fakekube.api.http.attach / portforward): the cluster wires it.
        self.pod_streams: Any = None
        #: Why the apiserver cannot reach a node's kubelet: ``node name -> (host:port, Go's
        #: dial error)``, or None when it answers. pods/exec and pods/log dial it first.
        self.kubelet_unreachable: Callable[[str], tuple[str, str] | None] = lambda node: None
        #: metrics.k8s.io reads (when the registry serves it); the cluster plugs in their source.
        self.metrics = MetricsReads(store, clock)
        #: Where admission webhooks (and CRD conversion webhooks) are reached.
        self.webhook_transport = admission.WebhookTransport()
        #: The admission webhooks' dispatcher (fakekube.api.admission.webhooks), shared by the
        #: webhook and policy plugins: called with the store lock released.
        self.webhooks = WebhookAdmission(store, rng.fork("admission"), self.webhook_transport)
        #: Told ``True`` before and ``False`` after every admission webhook call (made with the
        #: store lock released): the engine uses it to not keep writes waiting on one.
        self.external_wait_listeners: builtins.list[Callable[[bool], None]] = []
        #: Whether any webhook configuration or policy binding exists: kept by a store listener,
        #: so a write without them skips the copy a retry after a webhook call needs.
        self._admission_on = False
        store.add_listener(self._note_admission_change, self._admission_quiet)
        self._note_admission_change(None)
        #: The admission chain (fakekube.api.admission): kube-apiserver's default plugins until
        #: the cluster configures its own (``configure_admission``).
        self.admission = admission.Chain()
        self.configure_admission(admission.DEFAULT_PLUGINS)
        #: Whether the cluster's recorders create their Events through the trusted path
        #: (``create_recorded_event``); False: every Event takes the full create path.
        self.trusted_events = True
        #: The chain last checked against ``EVENT_QUIET_PLUGINS``, and the answer.
        self._quiet_chain: admission.Chain | None = None
        self._quiet_chain_ok = False
        #: Encoded JSON of stored versions, shared by lists, GETs and every watcher.
        self.encoded = EncodedObjects()
        #: The registry's custom types, kept equal to what this store's CRDs serve.
        #: CRD webhook conversion, over the admission webhooks' transport (and its addresses).
        self.conversion = WebhookConversion(self.webhook_transport, rng.fork("conversion"))
        self.custom_types = CustomTypes(registry, self._unlocked_converter)
        store.add_listener(self.custom_types.on_change, self.custom_types.quiet_for)
        #: kube-apiserver's ``--authorization-mode`` (``AlwaysAllow`` or ``RBAC``); the HTTP
        #: layer enforces it, the review APIs answer from it.
        self.authorization_mode = "AlwaysAllow"
        #: Static bearer tokens (token → UserInfo): TokenReview accepts them too.
        self.static_tokens: dict[str, UserInfo] = {}
        #: Successful bearer-token authentications, 10 s of cluster time (upstream's token cache).
        self.token_cache = TokenCache()
        #: The Go JSON rules of the served release, and each built-in type's proto message
        #: (one entry per served type and version; custom resources have none).
        self._go_json = gojson.for_version(kubernetes_version)
        self._go_messages: dict[tuple[str, str, str], str | None] = {}
        #: The bytes clients sent for immutable RawExtension fields (a ControllerRevision's data).
        self.sent_texts = rawextension.SentTexts()

    def configure_admission(self, plugins: builtins.list[str] | tuple[str, ...],
                            options: AdmissionOptions = AdmissionOptions()) -> None:
        """Run the named admission plugins (kube-apiserver's ``--enable-admission-plugins``
        result, fakekube.api.admission.enabled_plugins), built with this apiserver's store,
        clock, random source and webhook dispatcher and the cluster's ``options``."""
        # getters as a function and arguments, not closures: a snapshot's state is data
        context = admission.PluginContext(self.store, self.clock, self.rng, functools.partial(getattr, self, "registry"),
                                          functools.partial(getattr, self, "schemas"), options, self.webhook_transport,
                                          self.webhooks, self._unlocked, self._after_webhook_patch, self._apiserver_write)
        self.admission = admission.build_chain(plugins, context)

    def _apiserver_write(self, rt: ResourceType, old: Obj, new: Obj, subresource: str) -> Obj:
        """``new`` (sharing what it did not change with the stored ``old``) with the
        managedFields kube-apiserver's own write records, as its loopback client's would."""
        new = dict(new, metadata=dict(new.get("metadata") or {}))
        fieldmanager.track_update(rt, old, new, self.schemas, fieldmanager.APISERVER_MANAGER, subresource,
                                  self.now_rfc3339())
        return new

    @property
    def view(self) -> StoreView:
        """The read-only store view (authorization reads roles and bindings through it)."""
        return self._view

    @property
    def schemas(self) -> schema_module.SchemaSet:
        return schema_module.load(self.kubernetes_version)

    def now_rfc3339(self) -> str:
        return format_rfc3339(self.clock.now())

    def write_internal(self, rt: ResourceType, obj: Obj) -> Obj:
        """A server-side write that skips update validation (e.g. a pod's binding).

        The caller holds the store lock and built ``obj`` from the current object, changing a
        few scalar fields (the history counts it at the previous version's size). Returns the
        object as stored (no TypeMeta: this is the hot path of every Lease renewal).
        """
        return self.store.replace(rt.key, objectmeta.strip_type_meta(obj), same_size=True)

    def write_heartbeat_status(self, rt: ResourceType, obj: Obj) -> Obj | None:
        """A status write of the cluster's own kubelet that moves only heartbeat times (a
        node's periodic report), stored as the update path would store it but without its
        merge rules, checks and copies: every string that changes keeps its length, so the
        history counts it at the previous version's size. None when admission configured in
        the cluster (webhooks, policies) could act on it: the caller takes the update path."""
        if self._admission_on:
            return None
        return self.store.replace(rt.key, objectmeta.strip_type_meta(obj), same_size=True)

    def expire(self, rt: ResourceType, namespace: str, name: str, resource_version: str) -> Obj | None:
        """Remove an object whose storage lease ran out (etcd deletes the key: no admission,
        finalizers or grace period), if it is still at ``resource_version``; returns the
        removed object (stamped with the deletion's resourceVersion), else None."""
        key = (namespace if rt.namespaced else "", name)
        with self.store.lock:
            existing = self.store.get(rt.key, key)
            if existing is None or existing["metadata"].get("resourceVersion") != resource_version:
                return None
            return self.store.remove(rt.key, key)

    def _context(self, user: UserInfo | None = None) -> WriteContext:
        return WriteContext(self.clock.now(), self.rng, self._view, user, release=self.release)

    def write_context(self, rng: SeededRandom | None = None) -> WriteContext:
        """Time, randomness and a store view for server-side work outside the verbs
        (e.g. issuing a service-account token); take the store lock around its use.
        ``rng``: a stream of the caller's own (a fork), so its draws move no other identifier."""
        return WriteContext(self.clock.now(), rng or self.rng, self._view, release=self.release)

    # -- reads ---------------------------------------------------------------
    @_in_release_style
    def get(self, rt: ResourceType, namespace: str, name: str) -> Obj:
        if rt.group == METRICS_GROUP:  # metrics-server's figures
            return self.metrics.get(rt, namespace, name)
        if not rt.persisted:  # computed on each read (ComponentStatuses)
            found = [o for o in rt.strategy.computed(self._context()) if o["metadata"]["name"] == name]
            if not found:
                raise errors.not_found(rt.group, rt.plural, name)
            return objectmeta.with_type_meta(rt, found[0])
        obj = self.store.get(rt.key, (namespace if rt.namespaced else "", name))
        if obj is None:
            raise errors.not_found(rt.group, rt.plural, name)
        return objectmeta.with_type_meta(rt, rt.view(obj))

    @_in_release_style
    def list(self, rt: ResourceType, namespace: str, options: ListOptions) -> Obj:
        """A ``<Kind>List``; items carry no apiVersion/kind, as upstream's."""
        if rt.group == METRICS_GROUP:  # metrics-server's figures and selector rules
            return self.metrics.list(rt, namespace, options)
        matcher = Matcher(rt, options.label_selector, options.field_selector)
        if not rt.persisted:  # computed on each read: every match, no paging (upstream's List)
            computed = [o for o in rt.strategy.computed(self._context()) if matcher(o)]
            return {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": {}, "items": computed}
        page = list_page(self.store, rt, namespace if rt.namespaced else "", options, matcher, matcher.filters)
        metadata: Obj = {"resourceVersion": str(page.resource_version)}
        if page.continue_token or rt.custom is not None:  # an unstructured list sets it, "" or not
            metadata["continue"] = page.continue_token
        if page.remaining is not None:
            metadata["remainingItemCount"] = page.remaining
        items = rt.view_all(page.items)
        if rt.custom is not None:  # unstructured lists carry each item's apiVersion and kind
            items = [objectmeta.with_type_meta(rt, item) for item in items]
        return {"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": metadata, "items": items}

    # -- create --------------------------------------------------------------
    @_in_release_style
    def create(self, rt: ResourceType, namespace: str, body: Obj, options: WriteOptions = WriteOptions()) -> WriteResult:
        customresources.check_create_allowed(rt, body)
        obj, unknown = self._decode(rt, body, namespace, typed=not options.internal, options=options)
        warnings = self._check_fields(rt, obj, options, unknown=unknown)
        obj = rt.storable(obj)
        with self.store.lock:
            if not rt.persisted:
                return self._review(rt, obj, warnings, options)
            return self._create_locked(rt, obj, options, warnings)

    @_in_release_style
    def create_recorded_event(self, rt: ResourceType, body: Obj) -> Obj | None:
        """Create an Event that the cluster's own recorder built afresh (a kubelet's Pulled, the
        scheduler's Scheduled: four writes per pod started) as :meth:`create` with internal,
        fresh options would, without the steps that cannot change or refuse it there: no
        decoding or field checks (built well-typed, namespace set, no type meta), no
        admission. The same defaults, uid and timestamp draws, validation (a 422 raised as
        the full path raises it), Go shaping and store write; returns the stored Event as
        :meth:`create` answers it.

        None — nothing drawn or written; the caller takes :meth:`create` — when admission
        could act on it: a plugin outside ``EVENT_QUIET_PLUGINS``, any webhook
        configuration or policy binding, a ResourceQuota in its namespace, or a namespace that is
        missing or terminating. ``trusted_events`` False turns the fast path off (the
        differential test, tests/integration/test_recorded_events.py, compares both)."""
        meta = body["metadata"]
        namespace = meta.get("namespace") or ""
        if not self._events_quiet(rt, namespace) or meta.get("generateName") or "apiVersion" in body:
            return None
        obj = rt.storable(dict(body, metadata=dict(meta)))
        ctx = self._context()
        rt.strategy.default(obj, ctx)
        meta = obj["metadata"]
        self._prepare_and_validate_new(rt, obj, ctx)
        objectmeta.check_no_resource_version(obj)
        if self.store.get(rt.key, (namespace, meta["name"])) is not None:
            raise errors.already_exists(rt.group, rt.plural, meta["name"])
        stored = self.store.create(rt.key, self._go_stored(rt, obj))
        return objectmeta.with_type_meta(rt, rt.view(stored))

    def _prepare_and_validate_new(self, rt: ResourceType, obj: Obj, ctx: WriteContext) -> None:
        """The storage's BeforeCreate on a named object: uid, creationTimestamp and the
        system fields, the strategy's PrepareForCreate, then validation (a 422). One sequence
        for every create, the recorders' trusted Event creates included."""
        meta = obj["metadata"]
        objectmeta.stamp_new(rt, obj, ctx)
        objectmeta.omit_empty(meta)
        rt.strategy.prepare_for_create(obj, ctx)
        self._validate(rt, obj, validation.validate_object_meta(meta, rt.namespaced, rt.name_rule)
                       + _kube_finalizer_names(rt, meta) + rt.strategy.validate(obj))

    def _events_quiet(self, rt: ResourceType, namespace: str) -> bool:
        """Whether nothing in admission could change or refuse an Event create in ``namespace``
        (see :meth:`create_recorded_event`); the caller holds the store lock."""
        if not self.trusted_events or self._admission_on or not rt.persisted or rt.custom is not None \
                or rt.strategy.immutable_raw_fields:
            return False
        if self.store.count(_RESOURCE_QUOTAS) and self.store.list(_RESOURCE_QUOTAS, namespace)[0]:
            return False  # ResourceQuota charges it (or refuses)
        if self._quiet_chain is not self.admission:
            self._quiet_chain_ok = set(self.admission.names) <= admission.EVENT_QUIET_PLUGINS
            self._quiet_chain = self.admission
        if not self._quiet_chain_ok:
            return False
        found = self.store.get(_NAMESPACES, ("", namespace))
        return found is not None and not (found.get("metadata") or {}).get("deletionTimestamp") \
            and (found.get("status") or {}).get("phase") != "Terminating"

    def _review(self, rt: ResourceType, obj: Obj, warnings: builtins.list[str], options: WriteOptions) -> WriteResult:
        """Answer a create of a never-stored type (an access or token review).

        Upstream's review storages validate, compute and return; they skip the generic
        create path (no uid, name, admission or storage), so a dry run answers the same
        and no resourceVersion is consumed. The create handler's field manager still runs
        first, so a review that echoes the request carries its managedFields; the answer is
        the typed object, written by Go's rules. Runs under the store lock so a TokenReview
        reads one consistent snapshot.
        """
        obj = self._go_typed(rt, obj)
        if not options.internal:
            fieldmanager.track_create(rt, obj, self.schemas, options.manager(), self.now_rfc3339())
        problems = rt.strategy.validate(obj)
        if problems:
            raise errors.invalid_object(rt.group, rt.strategy.invalid_kind(rt.kind), "", problems)
        ctx = WriteContext(self.clock.now(), self.rng, self._view, options.user, self.authorization_mode,
                           self.static_tokens, self.release, self.token_cache)
        answer = self._go_typed(rt, rt.strategy.review(obj, ctx))
        return WriteResult(objectmeta.with_type_meta(rt, answer), True, warnings)

    def _create_locked(self, rt: ResourceType, obj: Obj, options: WriteOptions, warnings: builtins.list[str],
                       tracked: bool = False) -> WriteResult:
        """``tracked``: the object's managedFields are already set (an apply that creates)."""
        ctx = self._context(options.user)  # who asks (a CSR records its requester)
        obj = _owned(obj, options)
        rt.strategy.default(obj, ctx)  # upstream defaults as it decodes
        shaped = None  # the managedFields entry built here: Go's stored form already
        if not tracked and not options.internal:
            objectmeta.wipe_system_fields(obj.setdefault("metadata", {}))
            obj = self._go_typed(rt, obj)
            shaped = self._track_create(rt, obj, options)
        elif not tracked and options.field_manager:  # an internal writer that names itself
            obj = self._go_typed(rt, obj)
            shaped = self._track_create(rt, obj, options)
        # Mutating admission (upstream's create handler), then the storage's BeforeCreate: the
        # plugins see the object before its generated name, uid and creationTimestamp exist.
        attrs = self._attributes(CREATE, rt, obj, options)
        obj = self._admitted(attrs)
        meta = obj["metadata"]
        # The RBAC types' storage refuses escalation after mutating admission (policybased storage).
        escalation.check_write(self.authorization_mode, self._view, rt.group, rt.plural, obj, None, options.user)
        if not meta.get("name") and meta.get("generateName"):
            meta["name"] = self._free_generated_name(rt, meta, ctx)
        self._prepare_and_validate_new(rt, obj, ctx)
        attrs.warnings += rt.strategy.warnings_on_create(obj)  # BeforeCreate, before validating admission
        attrs.name = meta["name"]  # validating admission knows the generated name
        self.admission.validate(attrs)
        warnings += attrs.warnings
        if not options.dry_run:  # upstream's dry-run storage never looks at it
            objectmeta.check_no_resource_version(obj)
        key = (meta.get("namespace") or "", meta["name"])
        if self.store.get(rt.key, key) is not None:
            raise errors.already_exists(rt.group, rt.plural, meta["name"])
        # The entry is skipped only while it is the very list built (identity): one a
        # webhook's patch replaced is walked.
        obj = self._go_stored(rt, obj, shaped)
        if options.dry_run:
            return WriteResult(objectmeta.with_type_meta(rt, rt.view(obj)), True, warnings)
        stored = self.store.create(rt.key, obj)
        if rt.strategy.immutable_raw_fields:
            how = rawextension.REENCODED if tracked else _raw_source(options, rawextension.AS_SENT)
            self.sent_texts.remember(rt.key, stored, rawextension.sent_texts(
                rt.strategy.immutable_raw_fields, stored, {}, {}, how, options.raw_body, options.body_keys is not None))
        return WriteResult(objectmeta.with_type_meta(rt, rt.view(stored)), True, warnings)

    def _free_generated_name(self, rt: ResourceType, meta: Obj, ctx: WriteContext) -> str:
        namespace = meta.get("namespace") or ""
        name = objectmeta.generated_name(meta, ctx)
        for _ in range(objectmeta.GENERATE_NAME_ATTEMPTS - 1):
            if self.store.get(rt.key, (namespace, name)) is None:
                break
            name = objectmeta.generated_name(meta, ctx)
        return name

    # -- update --------------------------------------------------------------
    @_in_release_style
    def update(self, rt: ResourceType, namespace: str, name: str, body: Obj,
               options: WriteOptions = WriteOptions(), subresource: str = "") -> WriteResult:
        obj, unknown = self._decode(rt, body, namespace, typed=not options.internal, options=options)
        objectmeta.check_name(obj, name)
        warnings = self._check_fields(rt, obj, options, unknown=unknown)
        obj = rt.storable(obj)
        with self.store.lock:
            for _ in range(MAX_ADMISSION_RETRIES):
                existing = self.store.get(rt.key, (namespace if rt.namespaced else "", name))
                if existing is None:
                    if rt.create_on_update and not subresource and not _resource_version_number(obj):
                        return self._create_locked(rt, obj, options, warnings)
                    raise errors.not_found(rt.group, rt.plural, name)
                self._check_resource_version(rt, obj, existing, options)
                new = deep_copy(obj) if self._admission_active() else obj  # a retry starts again from the body
                result = self._finish_update(rt, existing, new, options, subresource)
                if result is not None:
                    result.warnings = warnings + result.warnings
                    return result
            raise _changed_during_admission(rt, name)

    def _check_resource_version(self, rt: ResourceType, new: Obj, existing: Obj, options: WriteOptions) -> None:
        """The store's precondition (``Store.Update``): a resourceVersion must be the stored
        one; none (or ``"0"``) is an unconditional update where the type allows it, else a
        422 (Leases, CRDs, custom resources, webhook configurations...: the strategies whose
        ``AllowUnconditionalUpdate`` is false). Internal writes are never refused for it."""
        wanted = _resource_version_number(new)
        name = existing["metadata"]["name"]
        if wanted == 0:
            if not rt.strategy.allow_unconditional_update and not options.internal:
                raise errors.invalid_object(rt.group, rt.plural, name, [
                    errors.invalid("metadata.resourceVersion", 0, "must be specified for an update")])
        elif wanted != int(existing["metadata"]["resourceVersion"]):
            raise errors.conflict(rt.group, rt.plural, name, errors.STALE_OBJECT)

    def _finish_update(self, rt: ResourceType, existing: Obj, new: Obj, options: WriteOptions,
                       subresource: str, tracked: bool = False, how: str = rawextension.AS_SENT) -> WriteResult | None:
        """The shared tail of PUT and PATCH: merge rules, admission, validation, no-op check,
        write. None: the object changed while the lock was released for admission webhooks
        (the caller starts again from the new version, as upstream's GuaranteedUpdate).
        ``tracked``: the new object's managedFields are already set (an apply). ``how``: how
        the new object's RawExtension bytes came (fakekube/api/verbs/rawextension.py)."""
        ctx = self._context()
        old = existing
        sent = (new.get("metadata") or {}).get("managedFields")  # an apply's, kept through the merge rules
        sent_identity = {key: value for key, value in (new.get("metadata") or {}).items() if key in _BEFORE_UPDATE_FIELDS}
        if subresource == STATUS:
            if not options.internal:  # upstream defaults the decoded body (a load balancer's ipMode);
                new = deep_copy(new)  # the cluster's own writes send defaulted objects, which may share parts
                rt.strategy.default(new, ctx)  # with the stored one
            new = rt.strategy.prepare_subresource(STATUS, _status_update(rt, old, new, not options.internal), old, ctx)
        elif subresource == FINALIZE:
            new = _finalize_update(old, new)
            rt.strategy.default(new, ctx)  # the decoded body's defaults (the name label)
        elif subresource:  # the type's own: approval, ephemeralcontainers, resize
            new = rt.strategy.prepare_subresource(subresource, new, old, ctx)
        else:
            new = _owned(new, options)
            objectmeta.carry_over(new, old)
            objectmeta.omit_empty(new["metadata"])
            if rt.has_status():
                _keep_status(new, old)
            rt.strategy.default(new, ctx)
        if tracked:
            new["metadata"] = {**new["metadata"], "managedFields": sent}
        elif options.internal and not options.field_manager:
            fieldmanager.keep_managed_fields(old, new)
        else:
            new = self._go_typed(rt, new, old)
            self._track_update(rt, old, new, options, subresource or options.managed_subresource)
        if not subresource:  # the storage's BeforeUpdate, after the handler's field manager
            rt.strategy.prepare_for_update(new, old, ctx)
        objectmeta.omit_empty(new["metadata"])
        objectmeta.bump_generation(rt, new, old, subresource)
        new["metadata"]["resourceVersion"] = old["metadata"]["resourceVersion"]  # checked: equal, or unconditional
        if not subresource:
            new = _as_sent(new, sent_identity)
        # A scale write is admitted as the ``scale`` subresource (a rule for ``deployments``
        # does not match it), with the workload as its object (upstream's is a Scale).
        attrs = self._attributes(UPDATE, rt, new, options, old, subresource or options.managed_subresource)
        new = self._admitted(attrs)
        if self._changed(rt, old):
            return None
        if not subresource:
            new = attrs.obj = _before_update(new, old)
        if not subresource:  # the RBAC types' storage, after mutating admission (policybased storage)
            escalation.check_write(self.authorization_mode, self._view, rt.group, rt.plural, new, old, options.user)
        objectmeta.bump_generation(rt, new, old, subresource)
        problems = validation.validate_object_meta_update(new["metadata"], old.get("metadata") or {})
        problems += validation.validate_object_meta(new["metadata"], rt.namespaced, rt.name_rule)
        problems += _kube_finalizer_names(rt, new["metadata"])
        problems += _finalizer_rules(new, old)
        if subresource == STATUS:
            problems += rt.strategy.validate_status_update(new, old) + rt.strategy.validate_subresource(STATUS, new, old)
        elif subresource:  # approval, ephemeralcontainers, resize, finalize
            problems += rt.strategy.validate_subresource(subresource, new, old)
        else:
            problems += rt.strategy.validate_update(new, old)
        texts = self._raw_texts(rt, new, old, options, how) if rt.strategy.immutable_raw_fields and not subresource \
            else None
        if texts is not None:
            problems += rawextension.immutable(rt.strategy.immutable_raw_fields, texts[0], texts[1])
        self._validate(rt, new, problems)
        if not subresource:  # BeforeUpdate's WarningsOnUpdate (the main resource's strategy)
            attrs.warnings += rt.strategy.warnings_on_update(new, old)
        self.admission.validate(attrs)
        if self._changed(rt, old):
            return None
        warnings = attrs.warnings
        new = self._go_stored(rt, new, old)
        if objectmeta.is_noop(new, old):
            return WriteResult(objectmeta.with_type_meta(rt, rt.view(old)), warnings=warnings)
        if options.dry_run:
            return WriteResult(objectmeta.with_type_meta(rt, rt.view(new)), warnings=warnings)
        written, stored = self._write_update(rt, new)
        if texts is not None and stored:
            self.sent_texts.remember(rt.key, written, texts[0])
        return WriteResult(objectmeta.with_type_meta(rt, rt.view(written)), warnings=warnings, stored=stored)

    def _raw_texts(self, rt: ResourceType, new: Obj, old: Obj, options: WriteOptions,
                   how: str) -> tuple[rawextension.Texts, rawextension.Texts]:
        """The bytes of ``rt``'s immutable RawExtension fields: (the update's, the stored)."""
        fields = rt.strategy.immutable_raw_fields
        old_texts = self.sent_texts.texts(rt.key, old, fields)
        new_texts = rawextension.sent_texts(fields, new, old, old_texts, _raw_source(options, how), options.raw_body,
                                            options.body_keys is not None)
        return new_texts, old_texts

    def _write_update(self, rt: ResourceType, new: Obj) -> tuple[Obj, bool]:
        """Replace the object, or remove it when its last finalizer went while it was deleting.

        As upstream's Store.Update (errEmptiedFinalizers → deleteWithoutFinalizers): the
        emptied version is never written, so a watch sees one DELETED event carrying the
        last stored state; the request gets back the object it made (no finalizers, its
        managedFields, the resourceVersion it replaced)."""
        meta = new["metadata"]
        if meta.get("deletionTimestamp") and not meta.get("finalizers") and not _lingers(rt, new):
            self.store.remove(rt.key, (meta.get("namespace") or "", meta["name"]))
            return new, False
        return self.store.replace(rt.key, new), True

    # -- patch ---------------------------------------------------------------
    @_in_release_style
    def patch(self, rt: ResourceType, namespace: str, name: str, patch_type: str, patch_body: bytes,
              options: WriteOptions = WriteOptions(), subresource: str = "") -> WriteResult:
        if rt.custom is not None:  # the crdHandler's own list (no strategic merge patch)
            customresources.check_patch_type(rt, patch_type)
        if patch_type not in PATCH_TYPES:
            raise errors.unsupported_media_type(patch_type)
        fieldmanager.check_patch_options(patch_type, options.field_manager, options.force)
        if patch_type == APPLY_PATCH:
            return self._apply(rt, namespace, name, patch_body, options, subresource)
        if options.field_validation != IGNORE:
            _decode_patch_strictly(patch_type, patch_body)
        document = patch.parse_patch_body(patch_body)
        with self.store.lock:
            for _ in range(MAX_ADMISSION_RETRIES):
                result = self._patch_once(rt, namespace, name, patch_type, document, options, subresource)
                if result is not None:
                    return result
            raise _changed_during_admission(rt, name)

    def _patch_once(self, rt: ResourceType, namespace: str, name: str, patch_type: str, document: Any,
                    options: WriteOptions, subresource: str) -> WriteResult | None:
        """One attempt of a patch under the store lock (None: retry, see ``_finish_update``)."""
        existing = self.store.get(rt.key, (namespace if rt.namespaced else "", name))
        if existing is None:
            raise errors.not_found(rt.group, rt.plural, name)
        patched = self._apply_patch(rt, existing, patch_type, document)
        if not isinstance(patched, dict):
            raise errors.bad_request("the patched object is not a JSON object")
        # Upstream's "patch: Invalid value:" shows the patched object for JSON and merge
        # patches (json.Marshal of the map: keys sorted), but the patch itself (Go's %+v of
        # the map) for a strategic merge patch.
        def patch_text(patched: Obj = patched) -> str:  # made only for an error that shows it (as patched now)
            if patch_type == STRATEGIC_MERGE_PATCH:
                return patch.go_value(document)
            if patch_type == MERGE_PATCH:
                return self._merge_patch_text(rt, existing, document)
            return go_marshal(patched)
        unknown: builtins.list[str] | None
        if rt.custom is not None:
            customresources.check_type_meta(rt, patched, None, self.registry)
            patched, unknown = customresources.prune(rt, patched, copy=False)
        else:
            type_problem = None
            if patch_type == STRATEGIC_MERGE_PATCH:  # converted, not decoded: the converter's words
                type_problem = decoding.converter_error(patched, self.schemas, rt.group, rt.version, rt.kind)
            if type_problem is None:
                type_problem, unknown = decoding.decode_and_find_unknown(patched, self.schemas, rt.group, rt.version,
                                                                         rt.kind)
            if type_problem:
                raise errors.invalid_object("", "", "", [errors.invalid("patch", patch_text(), type_problem)])
        raw_options = WriteOptions(options.dry_run, options.field_validation, None)
        warnings = self._check_fields(rt, patched, raw_options, patch_text=patch_text, unknown=unknown)
        if rt.custom is None:
            objectmeta.check_type_meta(rt, patched, self.registry.served_kinds())
        objectmeta.strip_type_meta(patched)
        objectmeta.check_name(patched, name)
        objectmeta.check_namespace(rt, patched, namespace)
        patched = rt.storable(patched)
        if rt.stored_as is not None and self._changed(rt, existing):
            return None  # written meanwhile, while a conversion webhook ran unlocked: again
        self._check_resource_version(rt, patched, existing, options)
        how = rawextension.SORTED if patch_type == STRATEGIC_MERGE_PATCH else rawextension.REENCODED
        result = self._finish_update(rt, existing, patched, options, subresource, how=how)
        if result is not None:
            result.warnings = warnings + result.warnings
        return result

    def _apply(self, rt: ResourceType, namespace: str, name: str, body: bytes, options: WriteOptions,
               subresource: str) -> WriteResult:
        """Server-side apply: merge the configuration for its manager; create if missing."""
        config = decoding_apply_body(body)
        warnings = self._apply_field_warnings(options, body)
        with self.store.lock:
            for _ in range(MAX_ADMISSION_RETRIES):
                result = self._apply_once(rt, namespace, name, config, options, subresource)
                if result is not None:
                    result.warnings = warnings + result.warnings
                    return result
            raise _changed_during_admission(rt, name)

    def _apply_once(self, rt: ResourceType, namespace: str, name: str, config: Obj, options: WriteOptions,
                    subresource: str) -> WriteResult | None:
        """One attempt of an apply under the store lock (None: retry, see ``_finish_update``)."""
        existing = self.store.get(rt.key, (namespace if rt.namespaced else "", name))
        # A private copy: the merge shares the live object's untouched levels with its result,
        # which defaulting and the write then edit.
        live = deep_copy(objectmeta.with_type_meta(rt, rt.view(existing))) if existing is not None else _empty(rt)
        merged, _ = fieldmanager.apply_config(rt, live, config, self.schemas, options.field_manager,
                                              bool(options.force), self.now_rfc3339(),
                                              subresource or options.managed_subresource)
        if rt.custom is not None:
            customresources.check_type_meta(rt, merged, None, self.registry)
            merged, _ = customresources.prune(rt, merged, copy=False)
        objectmeta.check_name(merged, name)
        objectmeta.check_namespace(rt, merged, namespace)
        objectmeta.strip_type_meta(merged)
        merged = rt.storable(merged)
        if existing is not None and rt.stored_as is not None and self._changed(rt, existing):
            return None  # written meanwhile, while a conversion webhook ran unlocked: again
        if existing is None:
            if subresource:
                raise errors.not_found(rt.group, rt.plural, name)
            merged["metadata"].pop("resourceVersion", None)
            customresources.check_create_allowed(rt, merged)
            return self._create_locked(rt, merged, options, [], tracked=True)
        self._check_resource_version(rt, merged, existing, options)
        return self._finish_update(rt, existing, merged, options, subresource, tracked=True, how=rawextension.REENCODED)

    def _apply_field_warnings(self, options: WriteOptions, body: bytes) -> builtins.list[str]:
        """Duplicate fields of a JSON apply body (Strict: 400 ``error strict decoding
        YAML``, Warn: warnings). Unknown fields are the typed conversion's 500 instead:
        upstream decodes an applied configuration into a map, which has no unknown fields."""
        if options.field_validation == IGNORE or not body.lstrip().startswith(b"{"):
            return []
        duplicates = fieldvalidation.duplicate_fields(body)
        if not duplicates:
            return []
        if options.field_validation == STRICT:
            raise errors.bad_request("error strict decoding YAML: " + "; ".join(duplicates))
        return fieldvalidation.warnings([], duplicates)

    @staticmethod
    def _merge_patch_text(rt: ResourceType, existing: Obj, document: Any) -> str:
        """The merge-patched object as upstream's error shows it: the patch library's text
        over the object's JSON as its Go type writes it (struct order, map keys sorted)."""
        current = objectmeta.with_type_meta(rt, rt.view(existing))
        message_type = gojson.message_name(rt.group, rt.version, rt.kind) if rt.custom is None else None
        if message_type is not None:
            current = gostructs.go_order(message_type, current)
        return patch.merge_patch_text(current, document)

    def _apply_patch(self, rt: ResourceType, existing: Obj, patch_type: str, document: Any) -> Obj:
        current = deep_copy(objectmeta.with_type_meta(rt, rt.view(existing)))
        if patch_type == JSON_PATCH:
            return patch.apply_json_patch(current, document)
        if patch_type == MERGE_PATCH:
            return patch.apply_merge_patch(current, document)
        return patch.apply_strategic_merge_patch(current, document, self.schemas, rt.group, rt.version, rt.kind)

    # -- delete --------------------------------------------------------------
    @_in_release_style
    def delete(self, rt: ResourceType, namespace: str, name: str, options: DeleteOptions) -> tuple[Obj, int]:
        """Delete or mark for deletion; returns (response body, HTTP status)."""
        with self.store.lock:
            for _ in range(MAX_ADMISSION_RETRIES):
                existing = self.store.get(rt.key, (namespace if rt.namespaced else "", name))
                if existing is None:
                    raise errors.not_found(rt.group, rt.plural, name)
                deletion.check_preconditions(rt, existing, options)
                if self._admit_delete(rt, existing, options):
                    if deletion.is_namespace_being_emptied(rt, existing):
                        return objectmeta.with_type_meta(rt, rt.view(existing)), 200
                    return self._delete_locked(rt, existing, options)
            raise _changed_during_admission(rt, name)

    def _delete_locked(self, rt: ResourceType, existing: Obj, options: DeleteOptions) -> tuple[Obj, int]:
        prepared = rt.strategy.prepare_for_delete(existing, self._context())
        marked, remove = deletion.mark_for_deletion(rt, prepared, options, self.clock.now())
        if marked is not None:
            if options.dry_run:  # upstream's dry run answers the marked version, removed or not
                return objectmeta.with_type_meta(rt, rt.view(marked)), 200
            if not objectmeta.is_noop(marked, existing):
                existing = self.store.replace(rt.key, marked)  # a pod's grace 0 too: MODIFIED, then DELETED
            if not remove:
                return objectmeta.with_type_meta(rt, rt.view(existing)), 200
        meta = existing["metadata"]
        gone = existing if options.dry_run else self.store.remove(rt.key, (meta.get("namespace") or "", meta["name"]))
        if rt.returns_deleted_object:
            return objectmeta.with_type_meta(rt, rt.view(gone)), 200
        return deletion.success_status(rt, gone), 200

    @_in_release_style
    def delete_collection(self, rt: ResourceType, namespace: str, list_options: ListOptions,
                          options: DeleteOptions) -> Obj:
        """Delete every matching object; answers with the list of what was deleted."""
        matcher = Matcher(rt, list_options.label_selector, list_options.field_selector)
        deleted = []
        with self.store.lock:
            objects, rv = self.store.list(rt.key, namespace if rt.namespaced else "")
            for obj in [o for o in objects if matcher(o)]:
                if not self._admit_delete(rt, obj, options):
                    continue  # changed while its webhooks were called: left for the next request
                body, _ = self._delete_locked(rt, obj, options)
                deleted.append(body if body.get("kind") == rt.kind else rt.view(obj))
        items = [{k: v for k, v in o.items() if k not in ("apiVersion", "kind")} for o in deleted]
        return {"kind": rt.list_kind, "apiVersion": rt.api_version,
                "metadata": {"resourceVersion": str(self.store.resource_version)}, "items": items}

    # -- managedFields, in the request's version ------------------------------
    def _track_create(self, rt: ResourceType, obj: Obj, options: WriteOptions) -> Obj | None:
        """A new object's managedFields, computed on the version the client wrote (an
        events.k8s.io Event, an autoscaling/v1 HPA), not on the shape storage keeps. A custom
        resource's stay on the stored version: its conversion may be a webhook, not called
        under the store lock for this.

        Returns what :meth:`_go_stored` may take as already shaped (``like``): the entry
        this built, when ``obj`` carries it as it is (None otherwise)."""
        rt.strategy.add_converted_fields(obj)
        if rt.stored_as is None or rt.custom is not None:
            built = fieldmanager.track_create(rt, obj, self.schemas, options.manager(), self.now_rfc3339())
            return None if built is None else {"metadata": {"managedFields": built}}
        shown = _own_metadata(rt.view(obj))
        fieldmanager.track_create(rt, shown, self.schemas, options.manager(), self.now_rfc3339())
        _carry_managed_fields(shown, obj)
        return None

    def _track_update(self, rt: ResourceType, old: Obj, new: Obj, options: WriteOptions, subresource: str) -> None:
        """:meth:`_track_create` for a write over ``old``."""
        rt.strategy.add_converted_fields(new)
        if rt.stored_as is None or rt.custom is not None:
            fieldmanager.track_update(rt, old, new, self.schemas, options.manager(), subresource, self.now_rfc3339())
            return
        shown = _own_metadata(rt.view(new))
        fieldmanager.track_update(rt, rt.view(old), shown, self.schemas, options.manager(), subresource,
                                  self.now_rfc3339())
        _carry_managed_fields(shown, new)

    # -- Go's JSON rules (fakekube.api.wire.gojson) ---------------------------
    def _go_typed(self, rt: ResourceType, obj: Obj, old: Obj | None = None) -> Obj:
        """``obj`` as the type's decoded Go struct writes it: what upstream's field manager
        reads (omitempty zero values gone, non-omitempty ones and structs present). ``old``:
        the stored version an update replaces (what it did not change is not walked)."""
        message = self._go_message(rt)
        return obj if message is None else self._go_json.typed(message, obj, old)

    def _go_stored(self, rt: ResourceType, obj: Obj, old: Obj | None = None) -> Obj:
        """``obj`` as upstream's storage holds and answers it (the typed form, and what
        protobuf cannot keep: an empty list where Go writes ``null``)."""
        message = self._go_message(rt)
        return obj if message is None else self._go_json.stored(message, obj, old)

    def _go_message(self, rt: ResourceType) -> str | None:
        """The proto message of ``rt``'s stored form (a custom resource: none)."""
        key = (rt.group, rt.version, rt.kind)
        found = self._go_messages.get(key, _UNKNOWN)
        if found is _UNKNOWN:
            stored = self.registry.by_group_resource(*rt.stored_as) if rt.stored_as is not None else rt
            found = None if rt.custom is not None or stored is None else \
                gojson.message_name(stored.group, stored.version, stored.kind)
            self._go_messages[key] = found
        return found  # type: ignore[return-value]

    # -- shared --------------------------------------------------------------
    def _decode(self, rt: ResourceType, body: Any, namespace: str, typed: bool = True,
                options: WriteOptions | None = None) -> tuple[Obj, builtins.list[str] | None]:
        """The body as a stored-form object, and the unknown-field paths the same schema
        walk found (None when it could not tell: ``_check_fields`` then walks itself)."""
        if not isinstance(body, dict):
            raise errors.bad_request(f"Object '{rt.kind}' is not a JSON object")
        if rt.custom is not None:
            return self._decode_custom(rt, body, namespace, options or WriteOptions())
        objectmeta.check_type_meta(rt, body, self.registry.served_kinds())
        type_problem, unknown = None, None
        if typed:
            type_problem, unknown = decoding.decode_and_find_unknown(body, self.schemas, rt.group, rt.version, rt.kind)
        if type_problem:
            raise errors.bad_request(f'{rt.kind} in version "{rt.version}" cannot be handled as a {rt.kind}: {type_problem}')
        # The write path edits the top level and metadata: of a new dict, never the caller's.
        # Internal callers pass stored objects' shallow copies (``dict(pod, status=...)``),
        # whose metadata is the stored one, and stored objects are immutable.
        obj = dict(body)
        if isinstance(obj.get("metadata"), dict):
            obj["metadata"] = dict(obj["metadata"])
        objectmeta.strip_type_meta(obj)
        objectmeta.check_namespace(rt, obj, namespace)
        return obj, unknown

    def _decode_custom(self, rt: ResourceType, body: Obj, namespace: str,
                       options: WriteOptions) -> tuple[Obj, builtins.list[str] | None]:
        """A custom resource's body: unstructured type checks, then pruned by its schema."""
        if not options.internal:
            customresources.check_type_meta(rt, body, options.raw_body, self.registry)
        obj, unknown = customresources.prune(rt, body, copy=True)
        objectmeta.strip_type_meta(obj)
        objectmeta.check_namespace(rt, obj, namespace)
        return obj, unknown

    def _check_fields(self, rt: ResourceType, obj: Obj, options: WriteOptions,
                      patch_text: Callable[[], str] | None = None,
                      unknown: builtins.list[str] | None = None) -> builtins.list[str]:
        """Server-side field validation: Strict rejects unknown/duplicate fields, Warn warns.

        Returns the warning texts. A patch's strict failure is a 422 on the
        ``patch`` field (upstream; ``patch_text`` makes the value it shows), a
        create/update's a 400 decoding error. ``unknown`` is the unknown-field paths if
        decoding already found them.
        """
        if options.field_validation == IGNORE or options.internal:
            return []
        if unknown is None:
            typed = objectmeta.with_type_meta(rt, obj)
            unknown = fieldvalidation.unknown_fields(typed, self.schemas, rt.group, rt.version, rt.kind)
        duplicates = fieldvalidation.duplicate_fields(options.raw_body, options.body_keys) if options.raw_body else []
        if not unknown and not duplicates:
            return []
        if options.field_validation == STRICT and (unknown or duplicates):
            if patch_text is not None:
                raise fieldvalidation.patch_strict_error(unknown, duplicates, patch_text())
            raise fieldvalidation.strict_error(unknown, duplicates, kind=rt.kind, version=rt.version)
        return fieldvalidation.warnings(unknown, duplicates)

    # -- admission (fakekube.api.admission) -----------------------------------
    def _attributes(self, operation: str, rt: ResourceType, obj: Obj, options: WriteOptions,
                    old: Obj | None = None, subresource: str = "") -> Attributes:
        meta = obj.get("metadata") or {}
        sent = {"fieldManager": options.field_manager} if options.field_manager else {}
        return Attributes(operation, rt, namespace_of(rt, obj, meta.get("namespace") or ""), meta.get("name") or "",
                          subresource, obj, old, options.user, options.dry_run, sent, internal=options.internal)

    def _unlocked_converter(self, webhook: Obj) -> Callable[[builtins.list[Obj], str, str], builtins.list[Obj]]:
        """A CRD's conversion webhook, called with the store lock released (a write re-checks
        its object after converting it; see ``_patch_once``)."""
        convert = self.conversion.converter(webhook)

        def unlocked(objects: builtins.list[Obj], desired: str, shown: str) -> builtins.list[Obj]:
            with self._unlocked():
                return convert(objects, desired, shown)
        return unlocked

    @contextlib.contextmanager
    def _unlocked(self) -> Iterator[None]:
        """Give up this thread's whole hold on the store lock while webhooks are called — a
        batch's outer holds too — so a webhook may read (or write) the apiserver and no other
        writer waits on it; the caller checks afterwards whether the object changed
        meanwhile (``_changed``). ``external_wait_listeners`` hear of the wait (the engine:
        writes waiting on a controller's work do not wait on a hanging webhook for long)."""
        if not self.store.lock._is_owned():  # type: ignore[attr-defined]  # a read: nothing to give up
            yield
            return
        held = self.store.lock._release_save()  # type: ignore[attr-defined]  # RLock: every level held
        for listener in self.external_wait_listeners:
            listener(True)
        try:
            yield
        finally:
            for listener in self.external_wait_listeners:
                listener(False)
            self.store.lock._acquire_restore(held)  # type: ignore[attr-defined]

    def _changed(self, rt: ResourceType, old: Obj) -> bool:
        """Did another write replace ``old`` while the lock was released?"""
        meta = old["metadata"]
        current = self.store.get(rt.key, (meta.get("namespace") or "", meta["name"]))
        return current is None or current["metadata"]["resourceVersion"] != meta["resourceVersion"]

    def _admitted(self, attrs: Attributes) -> Obj:
        """The mutating phase of a create or update: the object as the plugins left it."""
        self.admission.admit(attrs)
        assert attrs.obj is not None, "a mutating plugin dropped the object"
        return attrs.obj

    def _after_webhook_patch(self, rt: ResourceType, obj: Obj) -> None:
        """What follows a mutating webhook's patch (the webhook plugin calls it)."""
        _after_webhook_patch(rt, obj, self._context(), self.schemas)

    def _admission_active(self) -> bool:
        """Any webhook configuration or policy binding at all: else no admission plugin gives
        up the store lock, and a write need not keep its body for a retry."""
        return self._admission_on

    @staticmethod
    def _admission_quiet(resource: tuple[str, str]) -> bool:
        """The admission recount does nothing for a write of another resource."""
        return (resource[0], resource[1]) not in _ADMISSION_RESOURCES

    def _note_admission_change(self, change: Change | None) -> None:
        """Store listener (under the store lock): recount when an admission object changed."""
        if change is None or (change.group, change.resource) in _ADMISSION_RESOURCES:
            self._admission_on = any(self.store.count(resource) for resource in sorted(_ADMISSION_RESOURCES))

    def _admit_delete(self, rt: ResourceType, existing: Obj, options: DeleteOptions) -> bool:
        """DELETE through the admission chain (mutating then validating; plugins see only the
        stored object, ``old``); False when the object changed while a webhook was called
        (the caller reads it again)."""
        meta = existing["metadata"]
        attrs = Attributes(DELETE, rt, namespace_of(rt, existing, meta.get("namespace") or ""), meta["name"],
                           old=existing, user=options.user, dry_run=options.dry_run,
                           options=deletion.options_object(options))
        self.admission.admit(attrs)
        self.admission.validate(attrs)
        return not self._changed(rt, existing)

    def admit_connect(self, rt: ResourceType, namespace: str, name: str, subresource: str, options: Obj,
                      user: UserInfo | None) -> None:
        """A CONNECT (exec, attach, port-forward, proxy) through the admission chain, before the
        object is looked up, as upstream's connect handler: ``options`` is the request's
        options object (``PodExecOptions``...), which webhooks and policies see as the object."""
        if not self.admission.handles(CONNECT):
            return
        attrs = Attributes(CONNECT, rt, namespace if rt.namespaced else "", name, subresource, obj=options,
                           user=user, kind=str(options.get("kind") or rt.kind))
        with self.store.lock:  # plugins read under it; webhook calls give it up
            self.admission.admit(attrs)
            self.admission.validate(attrs)

    def _validate(self, rt: ResourceType, obj: Obj, problems: builtins.list[FieldError]) -> None:
        if problems:
            name = (obj.get("metadata") or {}).get("name") or ""
            # A type kept in another group's storage is validated there (an events.k8s.io
            # Event is a core Event: 'Event "x" is invalid').
            group = rt.stored_as[0] if rt.stored_as is not None else rt.group
            raise errors.invalid_object(group, rt.kind, name, problems)


def _after_webhook_patch(rt: ResourceType, obj: Obj, ctx: WriteContext, schemas: schema_module.SchemaSet) -> None:
    """What upstream does to a webhook's patched object: decoded into its type (a mistyped
    value is a 500), a custom resource pruned to its schema, the type's defaults run again."""
    decode_patched(rt, obj, schemas)
    customresources.prune(rt, obj, copy=False)
    rt.strategy.default(obj, ctx)


def _raw_source(options: WriteOptions, how: str) -> str:
    """How a write's RawExtension bytes came: ``how``, unless the cluster itself writes."""
    return rawextension.INTERNAL if options.internal else how


def _own_metadata(obj: Obj) -> Obj:
    """A shallow copy of ``obj`` with a metadata dict of its own (the field manager edits it)."""
    return dict(obj, metadata=dict(obj.get("metadata") or {}))


def _carry_managed_fields(source: Obj, target: Obj) -> None:
    """``source``'s managedFields (or their absence) onto ``target``'s private metadata."""
    entries = source["metadata"].get("managedFields")
    if entries:
        target["metadata"]["managedFields"] = entries
    else:
        target["metadata"].pop("managedFields", None)


def _resource_version_number(obj: Obj) -> int:
    """``APIObjectVersioner.ObjectResourceVersion``: 0 for none, ``""`` or ``"0"``; a
    resourceVersion that is not a decimal uint64 is a plain Go error, a 500."""
    text = (obj.get("metadata") or {}).get("resourceVersion") or ""
    if not isinstance(text, str):
        text = str(text)
    if text in ("", "0"):
        return 0
    if not (text.isascii() and text.isdigit()):
        raise errors.unknown_error(500, f'strconv.ParseUint: parsing "{text}": invalid syntax')
    if int(text) >= 2**64:
        raise errors.unknown_error(500, f'strconv.ParseUint: parsing "{text}": value out of range')
    return int(text)


#: What the storage's ``BeforeUpdate`` fills in after mutating admission: an update's
#: mutating webhooks see these as the client sent them (a PUT without them: absent), its
#: validating webhooks as stored.
_BEFORE_UPDATE_FIELDS = ("uid", "creationTimestamp", "resourceVersion")


def _as_sent(new: Obj, sent: Obj) -> Obj:
    """``new`` with the :data:`_BEFORE_UPDATE_FIELDS` the client sent, for mutating admission."""
    meta = {key: value for key, value in new["metadata"].items() if key not in _BEFORE_UPDATE_FIELDS}
    return {**new, "metadata": {**meta, **sent}}


def _before_update(new: Obj, old: Obj) -> Obj:
    """``rest.BeforeUpdate``'s identity fields: the stored uid unless one was given, the stored
    creationTimestamp, and the stored resourceVersion (a given one was checked equal)."""
    old_meta, meta = old["metadata"], dict(new["metadata"])
    for key in _BEFORE_UPDATE_FIELDS:
        if key in old_meta and not (key == "uid" and meta.get("uid")):
            meta[key] = old_meta[key]
    ordered = {key: meta[key] for key in _meta_order(meta)}
    return {**new, "metadata": ordered}


def _meta_order(meta: Obj) -> list[str]:
    """ObjectMeta's keys in Go's field order where known (name, namespace, uid, resourceVersion,
    generation, creationTimestamp first), the rest after as they were."""
    first = [key for key in ("name", "generateName", "namespace", "selfLink", "uid", "resourceVersion", "generation",
                             "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds") if key in meta]
    return first + [key for key in meta if key not in first]


def _changed_during_admission(rt: ResourceType, name: str) -> errors.ApiError:
    return errors.conflict(rt.group, rt.plural, name, errors.STALE_OBJECT)


def decoding_apply_body(body: bytes) -> Any:
    """An apply body: YAML (JSON is YAML), as ``yaml.Unmarshal`` reads it; 400 if malformed."""
    try:
        config = decoding.parse_yaml(body)
    except decoding.SyntaxFailure as exc:  # sigs.k8s.io/yaml.Unmarshal's YAMLToJSON step
        raise errors.bad_request(f"error decoding YAML: error converting YAML to JSON: {exc}") from None
    if config is None:
        return {}
    if not isinstance(config, dict):
        why = f"json: cannot unmarshal {decoding.json_kind(config)} into Go value of type map[string]interface {{}}"
        raise errors.bad_request(f"error decoding YAML: error unmarshaling JSON: while decoding JSON: {why}")
    return config


def _empty(rt: ResourceType) -> Obj:
    """The object an apply creates from: the type's empty value."""
    return {"apiVersion": rt.api_version, "kind": rt.kind, "metadata": {}}


def _owned(obj: Obj, options: WriteOptions) -> Obj:
    """The object a write may edit at any depth (defaulting, prepare, admission do).

    A wire body is the request's own. An internal caller builds its object from stored
    ones (``dict(node, spec=...)``), sharing their immutable levels: it is copied first —
    unless it says it built the body afresh (an Event per kubelet step: copying those was a
    fifth of starting pods).
    """
    return deep_copy(obj) if options.internal and not options.fresh else obj


def _status_update(rt: ResourceType, old: Obj, new: Obj, client: bool) -> Obj:
    """A /status write changes only status; metadata and spec stay as stored — except the
    annotations of a type whose status strategy keeps them (Deployments: the controller
    writes its revision annotation with the status), and the metadata a client sends for a
    type whose status strategy lets it through (Pods: all but ownerReferences).

    The new version shares the stored one's spec (and every other part a status write does
    not change: nothing after this edits them, and the immutability guard checks it under
    test); only metadata, which the later steps edit in place, is copied — copying a pod's
    whole spec was a seventh of starting it."""
    merged = dict(old, metadata=deep_copy(old["metadata"]))
    strategy = rt.strategy
    if (strategy.status_writes_metadata or client and strategy.status_writes_client_metadata) \
            and isinstance(new.get("metadata"), dict):
        merged["metadata"] = dict(new["metadata"])
        objectmeta.carry_over(merged, old)
        if strategy.status_writes_client_metadata:
            owners = (old.get("metadata") or {}).get("ownerReferences")
            if owners is None:
                merged["metadata"].pop("ownerReferences", None)
            else:
                merged["metadata"]["ownerReferences"] = deep_copy(owners)
        objectmeta.omit_empty(merged["metadata"])
    elif rt.strategy.status_writes_annotations:
        annotations = (new.get("metadata") or {}).get("annotations")
        if annotations:
            merged["metadata"]["annotations"] = deep_copy(annotations)
        else:
            merged["metadata"].pop("annotations", None)
    if "status" in new:
        merged["status"] = new["status"]
    else:
        merged.pop("status", None)
    return merged


def _finalize_update(old: Obj, new: Obj) -> Obj:
    """A ``namespaces/finalize`` write is an update of the whole Namespace whose status stays
    (upstream's finalize strategy): the body's labels, annotations and ``spec.finalizers``
    replace the stored ones; the server's metadata fields stay."""
    merged = deep_copy(new)
    objectmeta.carry_over(merged, old)
    finalizers = (new.get("spec") or {}).get("finalizers")
    merged["spec"] = {"finalizers": list(finalizers)} if finalizers else {}
    if "status" in old:
        merged["status"] = deep_copy(old["status"])
    else:
        merged.pop("status", None)
    return merged


def _keep_status(new: Obj, old: Obj) -> None:
    """A main-resource write of a type with a status subresource cannot change status."""
    if "status" in old:
        new["status"] = deep_copy(old["status"])
    else:
        new.pop("status", None)


def _kube_finalizer_names(rt: ResourceType, meta: Obj) -> list[FieldError]:
    """The finalizer check k8s.io/kubernetes' types add to apimachinery's ObjectMeta rules."""
    if rt.custom is not None or rt.group in validation.GENERIC_META_GROUPS:
        return []
    return validation.validate_kube_finalizer_names(meta.get("finalizers"), "metadata.finalizers")


def _finalizer_rules(new: Obj, old: Obj) -> list[FieldError]:
    """No new finalizers once deletion started (upstream ValidateObjectMetaUpdate)."""
    old_meta = old.get("metadata") or {}
    if not old_meta.get("deletionTimestamp"):
        return []
    added = sorted(set(new["metadata"].get("finalizers") or []) - set(old_meta.get("finalizers") or []))
    if added:  # the same text as ValidateObjectMetaUpdate's: the message shows it once, the causes twice
        return [errors.forbidden("metadata.finalizers", "no new finalizers can be added if the object is being "
                                 f"deleted, found new finalizers {go_strings(added).go}")]
    return []


def _lingers(rt: ResourceType, obj: Obj) -> bool:
    """Deleting, without metadata finalizers, yet kept: a pod in graceful deletion until its
    kubelet finishes (grace > 0), a namespace until ``spec.finalizers`` is empty (upstream's
    ``ShouldDeleteNamespaceDuringUpdate``)."""
    if rt.key == ("", "namespaces"):
        return bool((obj.get("spec") or {}).get("finalizers"))
    return rt.key == ("", "pods") and (obj["metadata"].get("deletionGracePeriodSeconds") or 0) > 0


def _decode_patch_strictly(patch_type: str, body: bytes) -> None:
    """What upstream's patch handler does first under Warn/Strict (the default): decode the
    body strictly into the patch's Go type, so a malformed or mis-shaped patch is a 400."""
    try:
        document = decoding.parse_json(body)
    except decoding.SyntaxFailure as exc:
        raise errors.bad_request(_patch_decode_message(patch_type, str(exc))) from None
    if patch_type == JSON_PATCH:
        if document is not None and not isinstance(document, list):
            raise _undecodable_patch(patch_type, document, "[]handlers.jsonPatchOp")
        for op in document or []:
            if op is not None and not isinstance(op, dict):
                raise _undecodable_patch(patch_type, op, "handlers.jsonPatchOp")
    elif document is not None and not isinstance(document, dict):
        raise _undecodable_patch(patch_type, document, "map[string]interface {}")


def _undecodable_patch(patch_type: str, value: Any, go_type: str) -> errors.ApiError:
    why = f"json: cannot unmarshal {decoding.json_kind(value)} into Go value of type {go_type}"
    return errors.bad_request(_patch_decode_message(patch_type, why))


def _patch_decode_message(patch_type: str, why: str) -> str:
    """JSON and merge patches say ``error decoding patch: ...``; a strategic one, just why."""
    return why if patch_type == STRATEGIC_MERGE_PATCH else f"error decoding patch: {why}"


def parse_json(body: bytes) -> Any:
    """A patch body as Go decodes it (bounded nesting, U+FFFD for bad text); 400 if malformed."""
    try:
        return decoding.parse_json(body)
    except decoding.SyntaxFailure as exc:
        raise errors.bad_request(f"error decoding patch: {exc}") from None
