"""AlwaysDeny (plugin/pkg/admission/deny; deprecated upstream, off by default): every write
and connect is refused, ``admission control is denying all modifications``."""

from __future__ import annotations

from fakekube.api.admission.attributes import OPERATIONS, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext

MESSAGE = "admission control is denying all modifications"


class AlwaysDeny(Handler):
    name = "AlwaysDeny"
    operations = frozenset(OPERATIONS)

    def admit(self, a: Attributes) -> None:
        raise a.forbidden(MESSAGE)

    def validate(self, a: Attributes) -> None:
        raise a.forbidden(MESSAGE)


def new(context: PluginContext) -> AlwaysDeny:
    return AlwaysDeny()
