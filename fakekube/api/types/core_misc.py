"""The rest of core/v1: ``bindings``, ``componentstatuses`` and ``podtemplates``.

``bindings`` is the old way to bind a pod (``POST /api/v1/namespaces/{ns}/bindings`` with a
Binding named as the pod): the REST layer runs the same rule as ``pods/binding``
(:mod:`fakekube.api.verbs.binding`); nothing is stored. ComponentStatuses (deprecated since
1.19, still served) are computed on each read, as upstream's storage probes its components:
the scheduler, the controller manager and etcd-0 answer healthy, as on a kind cluster.
"""

from __future__ import annotations

from fakekube.api.machinery.errors import FieldError
from fakekube.api.registry import CREATE_ONLY, GET_LIST, ResourceType, Strategy, WriteContext
from fakekube.api.table import COMPONENT_STATUS_TABLE, POD_TEMPLATE_TABLE
from fakekube.api.types._util import Obj
from fakekube.api.types.core_pods import default_pod_template, validate_pod_template

#: The components upstream's ComponentStatus storage probes, in the order it lists them here.
COMPONENTS = ("scheduler", "controller-manager", "etcd-0")

BINDINGS = ResourceType(
    "", "v1", "Binding", "bindings", namespaced=True, verbs=CREATE_ONLY, persisted=False,
)


class ComponentStatusStrategy(Strategy):
    """Every component healthy, with the probe's ``ok``."""

    def computed(self, ctx: WriteContext) -> list[Obj]:
        return [{"metadata": {"name": name, **({"creationTimestamp": None} if ctx.release.null_creation_timestamp else {})},
                 "conditions": [{"type": "Healthy", "status": "True", "message": "ok"}]} for name in COMPONENTS]


COMPONENT_STATUSES = ResourceType(
    "", "v1", "ComponentStatus", "componentstatuses", namespaced=False, short_names=("cs",), verbs=GET_LIST,
    persisted=False, strategy=ComponentStatusStrategy(), table=COMPONENT_STATUS_TABLE,
    deprecation=("1.19", ""),
)


class PodTemplateStrategy(Strategy):
    """PodTemplates: a pod template, defaulted and validated as a workload's; its generation
    starts at 1 and grows with each change of the template."""

    tracks_generation = True

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        default_pod_template(obj.get("template"), ctx.release)

    def validate(self, obj: Obj) -> list[FieldError]:
        return validate_pod_template(obj.get("template"), "template")


POD_TEMPLATES = ResourceType(
    "", "v1", "PodTemplate", "podtemplates", returns_deleted_object=True, namespaced=True, strategy=PodTemplateStrategy(), table=POD_TEMPLATE_TABLE,
)
