"""AlwaysAdmit (plugin/pkg/admission/admit; deprecated upstream, off by default): admits
everything, changes nothing."""

from __future__ import annotations

from fakekube.api.admission.attributes import OPERATIONS
from fakekube.api.admission.interfaces import Handler, PluginContext


class AlwaysAdmit(Handler):
    name = "AlwaysAdmit"
    operations = frozenset(OPERATIONS)


def new(context: PluginContext) -> AlwaysAdmit:
    return AlwaysAdmit()
