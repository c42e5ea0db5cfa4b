"""TaintNodesByCondition (plugin/pkg/admission/nodetaint).

A new Node (created through the main resource) gets the ``node.kubernetes.io/not-ready``
NoSchedule taint unless it has one with that key and effect already: nothing schedules on
a node before its kubelet reports Ready and the node lifecycle controller's tainting pass
takes the taint away (that controller owns the key; fakekube's does the same).
Simplification: the nodes fakekube's simulated kubelets register (internal writes) are
Ready from the start, as after that pass, and are not tainted: a cluster starts settled,
without one more write per node.
"""

from __future__ import annotations

from fakekube.api.admission.attributes import CREATE, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.objects.kinds import NODES
from fakekube.objects.taints import NO_SCHEDULE, TAINT_NODE_NOT_READY


class TaintNodesByCondition(Handler):
    name = "TaintNodesByCondition"
    operations = frozenset((CREATE,))
    resources = {"admit": frozenset((NODES,))}

    def admit(self, a: Attributes) -> None:
        if a.rt.key != NODES or a.subresource or a.internal or not isinstance(a.obj, dict):
            return
        spec = a.obj.get("spec")
        if not isinstance(spec, dict):
            spec = a.obj["spec"] = {}
        taints = spec.get("taints") or []
        if any(isinstance(t, dict) and t.get("key") == TAINT_NODE_NOT_READY and t.get("effect") == NO_SCHEDULE
               for t in taints):
            return
        spec["taints"] = [*taints, {"key": TAINT_NODE_NOT_READY, "effect": NO_SCHEDULE}]


def new(context: PluginContext) -> TaintNodesByCondition:
    return TaintNodesByCondition()
