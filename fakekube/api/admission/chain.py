"""The admission chain: the enabled plugins, in kube-apiserver's order.

Upstream's ``chainAdmissionHandler``: ``admit`` runs every plugin that handles the
operation in order, each seeing what the ones before it made of the object; ``validate``
does the same once the object is final. The first refusal ends the request; it carries
the warnings the request earned so far (upstream records them in the request's context).
"""

from __future__ import annotations

from typing import Sequence

from fakekube.api.admission.attributes import Attributes
from fakekube.api.admission.interfaces import Handler, Interface, ResourceKey
from fakekube.api.machinery.errors import ApiError

#: (phase, operation, resource) → the plugins that act then, in the chain's order.
Plans = dict[tuple[str, str, ResourceKey], tuple[Interface, ...]]
#: Plans kept at most: custom resources come and go (a CRD per test), so the plans of
#: resources no longer served are let go by starting over when this many are kept.
MAX_PLANS = 4096


class Chain:
    """The enabled plugins, in order (fakekube/api/admission/plugins.py builds it)."""

    __slots__ = ("plugins", "_plans")
    #: Derived from ``plugins`` (rebuilt on first use): a snapshot file does not hold it.
    SNAPSHOT_FILE_TRANSIENT = ("_plans",)

    def __init__(self, plugins: Sequence[Interface] = ()) -> None:
        self.plugins: tuple[Interface, ...] = tuple(plugins)
        self._plans: Plans | None = None

    def _plan(self, phase: str, operation: str, resource: ResourceKey) -> tuple[Interface, ...]:
        """The plugins that act in ``phase`` of ``operation`` on ``resource``: those that
        handle the operation, do something in that phase (a phase a plugin inherits from
        :class:`Handler` does nothing) and do not declare the resource out of it
        (``Handler.resources``). A write would call every plugin twice otherwise; the
        chain's plugins and their declarations never change once it is built, so the
        answer is kept, one plan per (phase, operation, resource), at most
        :data:`MAX_PLANS`."""
        plans = self._plans
        if plans is None:
            plans = self._plans = {}
        key = (phase, operation, resource)
        plan = plans.get(key)
        if plan is None:
            if len(plans) >= MAX_PLANS:
                plans.clear()  # rebuilt on use: a plan is derived from the fixed plugins alone
            plan = plans[key] = tuple(
                plugin for plugin in self.plugins
                if plugin.handles(operation) and getattr(type(plugin), phase, None) is not getattr(Handler, phase)
                and plugin.acts_on(phase, resource))
        return plan

    @property
    def names(self) -> list[str]:
        return [plugin.name for plugin in self.plugins]

    def handles(self, operation: str) -> bool:
        """Whether any plugin acts on ``operation`` (a CONNECT nobody handles builds no options)."""
        return any(plugin.handles(operation) for plugin in self.plugins)

    def admit(self, a: Attributes) -> None:
        """The mutating phase: ``a.obj`` is what the plugins made of it."""
        try:
            for plugin in self._plan("admit", a.operation, a.rt.key):
                plugin.admit(a)
        except ApiError as refused:
            refused.warnings = a.warnings + refused.warnings  # a refusal keeps what was earned
            raise

    def validate(self, a: Attributes) -> None:
        """The validating phase, over the final object."""
        try:
            for plugin in self._plan("validate", a.operation, a.rt.key):
                plugin.validate(a)
        except ApiError as refused:
            refused.warnings = a.warnings + refused.warnings
            raise
