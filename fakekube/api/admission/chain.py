"""The admission chain: the enabled plugins, in kube-apiserver's order.

Upstream's ``chainAdmissionHandler``: ``admit`` runs every plugin that handles the
operation in order, each seeing what the ones before it made of the object; ``validate``
does the same once the object is final. The first refusal ends the request; it carries
the warnings the request earned so far (upstream records them in the request's context).
"""

from __future__ import annotations

from typing import Sequence

from fakekube.api.admission.attributes import Attributes
from fakekube.api.admission.interfaces import Handler, Interface
from fakekube.api.machinery.errors import ApiError

#: (phase, operation) → the plugins that act then, in the chain's order.
Plans = dict[tuple[str, str], tuple[Interface, ...]]


class Chain:
    """The enabled plugins, in order (fakekube/api/admission/plugins.py builds it)."""

    __slots__ = ("plugins", "_plans")
    #: Derived from ``plugins`` (rebuilt on first use): a snapshot file does not hold it.
    SNAPSHOT_FILE_TRANSIENT = ("_plans",)

    def __init__(self, plugins: Sequence[Interface] = ()) -> None:
        self.plugins: tuple[Interface, ...] = tuple(plugins)
        self._plans: Plans | None = None

    def _plan(self, phase: str, operation: str) -> tuple[Interface, ...]:
        """The plugins that act in ``phase`` of ``operation``: those that handle it and do
        something then (a phase a plugin inherits from :class:`Handler` does nothing). A
        write asks every plugin's ``handles`` twice otherwise; the chain's plugins and their
        operations never change once it is built, so the answer is kept."""
        plans = self._plans
        if plans is None:
            plans = self._plans = {}
        plan = plans.get((phase, operation))
        if plan is None:
            plan = plans[phase, operation] = tuple(
                plugin for plugin in self.plugins
                if plugin.handles(operation) and getattr(type(plugin), phase, None) is not getattr(Handler, phase))
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
            for plugin in self._plan("admit", a.operation):
                plugin.admit(a)
        except ApiError as refused:
            refused.warnings = a.warnings + refused.warnings  # a refusal keeps what was earned
            raise

    def validate(self, a: Attributes) -> None:
        """The validating phase, over the final object."""
        try:
            for plugin in self._plan("validate", a.operation):
                plugin.validate(a)
        except ApiError as refused:
            refused.warnings = a.warnings + refused.warnings
            raise
