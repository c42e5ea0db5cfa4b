"""DefaultTolerationSeconds (plugin/pkg/admission/defaulttolerationseconds).

Every pod written (created or updated, not through a subresource) tolerates the
``not-ready`` and ``unreachable`` NoExecute taints for 300 s (kube-apiserver's
``--default-not-ready-toleration-seconds``/``--default-unreachable-toleration-seconds``;
fakekube's ``node_lifecycle`` config) unless it already has a toleration covering them.
Upstream admits updates too, so a ``kubectl replace`` whose manifest has no tolerations
gets the same two back and is not refused for removing them.
"""

from __future__ import annotations

from fakekube.api.admission.attributes import CREATE, UPDATE, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.objects.kinds import PODS
from fakekube.objects.tolerations import default_tolerations


class DefaultTolerationSeconds(Handler):
    name = "DefaultTolerationSeconds"
    operations = frozenset((CREATE, UPDATE))
    resources = {"admit": frozenset((PODS,))}

    def __init__(self, not_ready_s: int, unreachable_s: int) -> None:
        self.not_ready_s = not_ready_s
        self.unreachable_s = unreachable_s

    def admit(self, a: Attributes) -> None:
        if a.rt.key != PODS or a.subresource or a.obj is None:
            return
        added = default_tolerations(a.obj, self.not_ready_s, self.unreachable_s)
        if added:
            spec = a.obj.setdefault("spec", {})
            spec["tolerations"] = list(spec.get("tolerations") or []) + added


def new(context: PluginContext) -> DefaultTolerationSeconds:
    options = context.options
    return DefaultTolerationSeconds(options.default_not_ready_toleration_s, options.default_unreachable_toleration_s)
