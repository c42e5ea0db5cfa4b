"""The admission plugin protocol, and what a plugin is built with.

Upstream's ``admission.Interface`` (``Handles(operation)``), ``MutationInterface``
(``Admit``) and ``ValidationInterface`` (``Validate``) are one protocol here,
:class:`Interface`: a plugin says which operations it handles and implements ``admit``,
``validate`` or both (the other one inherited from :class:`Handler`, which does nothing).
``admit`` runs in the mutating phase and may change ``a.obj``; ``validate`` runs in the
validating phase, after the type's own validation, and may only refuse. Both refuse by
raising an :class:`~fakekube.api.machinery.errors.ApiError`.

A plugin gets what it needs from the cluster when it is built (:class:`PluginContext`,
upstream's plugin initializers and flags), never by importing the parts above the api.
"""

from __future__ import annotations

import contextlib
from typing import Any, Callable, ClassVar, ContextManager, Mapping, NamedTuple, Protocol

from fakekube.api.admission.attributes import Attributes
from fakekube.api.admission.webhook_call import WebhookTransport
from fakekube.api.admission.webhooks import WebhookAdmission
from fakekube.api.registry import Registry, ResourceType
from fakekube.api.wire.schema import SchemaSet
from fakekube.clock import VirtualClock
from fakekube.random import SeededRandom
from fakekube.store import Store

Obj = dict[str, Any]
#: A resource as the chain sees it: ``ResourceType.key``, the (group, plural) storage keeps.
ResourceKey = tuple[str, str]


class Interface(Protocol):
    """An admission plugin, registered by its upstream ``name`` (fakekube/api/admission/plugins.py)."""

    name: ClassVar[str]

    def handles(self, operation: str) -> bool:
        """Whether the plugin acts on this operation (CREATE, UPDATE, DELETE, CONNECT)."""

    def acts_on(self, phase: str, resource: ResourceKey) -> bool:
        """Whether ``phase`` (``admit`` or ``validate``) can do anything for ``resource``:
        the chain does not call a plugin for a resource it declares it leaves alone."""

    def admit(self, a: Attributes) -> None:
        """The mutating phase: set defaults on ``a.obj`` (or replace it), or refuse."""

    def validate(self, a: Attributes) -> None:
        """The validating phase: refuse ``a`` or let it through; ``a.obj`` is final."""


class Handler:
    """Upstream's ``admission.Handler``: the operations a plugin handles, and phases that
    do nothing until a plugin overrides them."""

    name: ClassVar[str] = ""
    operations: ClassVar[frozenset[str]] = frozenset()
    #: Phase (``admit``, ``validate``) → the only resources that phase acts on; a phase not
    #: named acts on every resource. A declaration, kept next to the phase's own check of
    #: ``a.rt.key``, that lets the chain skip the call (a configmap create calls no pod plugin).
    resources: ClassVar[Mapping[str, frozenset[ResourceKey]]] = {}

    def handles(self, operation: str) -> bool:
        return operation in self.operations

    def acts_on(self, phase: str, resource: ResourceKey) -> bool:
        only = self.resources.get(phase)
        return only is None or resource in only

    def admit(self, a: Attributes) -> None:
        return None

    def validate(self, a: Attributes) -> None:
        return None


class AdmissionOptions(NamedTuple):
    """The plugins' settings, from the cluster config (upstream: kube-apiserver's flags)."""

    #: ``--default-not-ready-toleration-seconds`` and ``--default-unreachable-toleration-seconds``.
    default_not_ready_toleration_s: int = 300
    default_unreachable_toleration_s: int = 300
    #: FakekubeBehaviour's check: why a pod's behaviour annotation cannot be used (None: it can).
    #: The kubelet part owns the format, so the cluster hands its parser in.
    behaviour_problem: Callable[[Obj], str | None] | None = None


def _no_unlock() -> ContextManager[None]:
    return contextlib.nullcontext()


class PluginContext(NamedTuple):
    """What a plugin is built with: the apiserver's store (plugins read it under the store
    lock the write holds; ResourceQuota writes quota usage), its clock, the cluster's
    seeded random source (a plugin forks a stream of its own), the registry, and, for
    the plugins that call out (webhooks, policies), how to give up the store lock while
    they do and what follows a webhook's patch."""

    store: Store
    clock: VirtualClock
    rng: SeededRandom
    registry: Callable[[], Registry]
    schemas: Callable[[], SchemaSet]
    options: AdmissionOptions = AdmissionOptions()
    #: The webhook calls' transport (shared with CRD conversion webhooks) and the dispatcher
    #: the webhook and policy plugins share (its AdmissionReview uid stream).
    transport: WebhookTransport | None = None
    webhooks: WebhookAdmission | None = None
    #: A context manager that releases the whole store lock around a call out of the cluster.
    unlocked: Callable[[], ContextManager[None]] = _no_unlock
    #: What upstream does to a webhook's patched object (decode, prune, default again).
    after_patch: Callable[[ResourceType, Obj], None] = lambda rt, obj: None
    #: A write the apiserver makes itself (ResourceQuota's charge: stored, new, subresource)
    #: with its managedFields, recorded for ``kube-apiserver`` as upstream's field manager does.
    apiserver_write: Callable[[ResourceType, Obj, Obj, str], Obj] = lambda rt, old, new, subresource: new
