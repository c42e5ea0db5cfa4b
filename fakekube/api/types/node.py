"""node.k8s.io/v1 RuntimeClasses: a handler name the CRI knows, fixed once set, and the
optional overhead and scheduling constraints pods using the class get."""

from __future__ import annotations

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.registry import ResourceType, Strategy
from fakekube.api.table import RUNTIME_CLASS_TABLE
from fakekube.api.machinery.validation import validate_labels
from fakekube.api.types._util import Obj, dns1123_label_errors, immutable
from fakekube.api.types.core_pods import resource_requirement_errors
from fakekube.api.types.pod_scheduling_validation import toleration_errors


class RuntimeClassStrategy(Strategy):
    """RuntimeClasses (``ValidateRuntimeClass``): ``handler`` is a DNS label and immutable; the
    overhead is a valid resource list, the scheduling constraints valid labels and tolerations."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion

    def validate(self, obj: Obj) -> list[FieldError]:
        handler = obj.get("handler")
        errs = [errors.required("handler")] if not handler else dns1123_label_errors(str(handler), "handler")
        overhead = obj.get("overhead")
        if isinstance(overhead, dict):
            # upstream reuses the container rules on {limits: podFixed}, hence the path
            errs += resource_requirement_errors({"limits": overhead.get("podFixed") or {}}, "overhead")
        scheduling = obj.get("scheduling")
        if isinstance(scheduling, dict):
            if scheduling.get("nodeSelector") is not None:
                errs += validate_labels(scheduling["nodeSelector"], "scheduling.nodeSelector")
            errs += toleration_errors(scheduling.get("tolerations") or [], "scheduling.tolerations")
        return errs

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return immutable(new.get("handler"), old.get("handler"), "handler") + self.validate(new)


RUNTIME_CLASSES = ResourceType(
    "node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", namespaced=False, strategy=RuntimeClassStrategy(),
    table=RUNTIME_CLASS_TABLE,
)
