"""The admission chain: the enabled plugins, in kube-apiserver's order.

Upstream's ``chainAdmissionHandler``: ``admit`` runs every plugin that handles the
operation in order, each seeing what the ones before it made of the object; ``validate``
does the same once the object is final. The first refusal ends the request; it carries
the warnings the request earned so far (upstream records them in the request's context).
"""

from __future__ import annotations

from typing import Sequence

from fakekube.api.admission.attributes import Attributes
from fakekube.api.admission.interfaces import Interface
from fakekube.api.machinery.errors import ApiError


class Chain:
    """The enabled plugins, in order (fakekube/api/admission/plugins.py builds it)."""

    __slots__ = ("plugins",)

    def __init__(self, plugins: Sequence[Interface] = ()) -> None:
        self.plugins: tuple[Interface, ...] = tuple(plugins)

    @property
    def names(self) -> list[str]:
        return [plugin.name for plugin in self.plugins]

    def handles(self, operation: str) -> bool:
        """Whether any plugin acts on ``operation`` (a CONNECT nobody handles builds no options)."""
        return any(plugin.handles(operation) for plugin in self.plugins)

    def admit(self, a: Attributes) -> None:
        """The mutating phase: ``a.obj`` is what the plugins made of it."""
        try:
            for plugin in self.plugins:
                if plugin.handles(a.operation):
                    plugin.admit(a)
        except ApiError as refused:
            refused.warnings = a.warnings + refused.warnings  # a refusal keeps what was earned
            raise

    def validate(self, a: Attributes) -> None:
        """The validating phase, over the final object."""
        try:
            for plugin in self.plugins:
                if plugin.handles(a.operation):
                    plugin.validate(a)
        except ApiError as refused:
            refused.warnings = a.warnings + refused.warnings
            raise
