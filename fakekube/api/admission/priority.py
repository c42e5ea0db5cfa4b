"""Priority (plugin/pkg/admission/priority), over the rules in :mod:`fakekube.objects.priority`.

A new pod's ``spec.priority`` and ``preemptionPolicy`` come from its PriorityClass (or the
``globalDefault`` one, else 0); a missing class, or a value the client set that differs,
is refused with upstream's 403. On update a pod keeps what the plugin set at create when a
client leaves it out. A PriorityClass may not be made ``globalDefault`` while another is,
and the two system classes may not be deleted (upstream refuses that in the PriorityClass
storage's ``Delete``, which fakekube's generic delete has no hook for: here it is this
plugin's, so a collection delete is refused too — docs/api.md).
"""

from __future__ import annotations

from fakekube.api.admission.attributes import CREATE, DELETE, UPDATE, Attributes
from fakekube.api.admission.interfaces import Handler, PluginContext
from fakekube.objects import priority as pod_priority
from fakekube.objects.kinds import PODS, PRIORITY_CLASSES
from fakekube.store import Store

SYSTEM_CLASS_NAMES = frozenset(c["metadata"]["name"] for c in pod_priority.SYSTEM_PRIORITY_CLASSES)


class Priority(Handler):
    name = "Priority"
    operations = frozenset((CREATE, UPDATE, DELETE))
    resources = {"admit": frozenset((PODS,)), "validate": frozenset((PRIORITY_CLASSES,))}

    def __init__(self, store: Store) -> None:
        self.store = store

    def admit(self, a: Attributes) -> None:
        if a.rt.key != PODS or a.subresource or a.obj is None or a.operation == DELETE:
            return
        spec = a.obj.setdefault("spec", {})
        if a.operation == UPDATE:
            pod_priority.keep_on_update(spec, (a.old or {}).get("spec") or {})
            return
        name = spec.get("priorityClassName") or ""
        named = self.store.get(PRIORITY_CLASSES, ("", name)) if name else None
        classes = [] if name else self.store.list(PRIORITY_CLASSES, "")[0]
        try:
            pod_priority.admit(spec, pod_priority.resolve(name, named, classes))
        except pod_priority.PriorityRefused as refused:
            raise a.forbidden(str(refused)) from None

    def validate(self, a: Attributes) -> None:
        """``validatePriorityClass``: only one class may be the global default; a system
        class stays."""
        if a.rt.key != PRIORITY_CLASSES or a.subresource:
            return
        if a.operation == DELETE:
            if a.object_name() in SYSTEM_CLASS_NAMES:
                raise a.forbidden("this is a system priority class and cannot be deleted")
            return
        if a.obj is None:
            return
        if not a.obj.get("globalDefault"):
            return
        current = pod_priority.default_class(self.store.list(PRIORITY_CLASSES, "")[0])
        if current is None:
            return
        if a.operation == CREATE or current["metadata"]["name"] != a.object_name():
            raise a.forbidden(f"PriorityClass {current['metadata']['name']} is already marked as default. "
                              "Only one default can exist")


def new(context: PluginContext) -> Priority:
    return Priority(context.store)
