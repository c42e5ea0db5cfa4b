"""node.k8s.io/v1 RuntimeClasses: a handler name the CRI knows, fixed once set, and the
optional overhead and scheduling constraints pods using the class get."""

from __future__ import annotations

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.registry import ResourceType, Strategy
from fakekube.api.table import RUNTIME_CLASS_TABLE
from fakekube.api.types._util import Obj, dns1123_label_errors, immutable


class RuntimeClassStrategy(Strategy):
    """RuntimeClasses (``ValidateRuntimeClass``): ``handler`` is a DNS label and immutable."""

    allow_unconditional_update = False  # AllowUnconditionalUpdate: a PUT needs a resourceVersion

    def validate(self, obj: Obj) -> list[FieldError]:
        handler = obj.get("handler")
        if not handler:
            return [errors.required("handler")]
        return dns1123_label_errors(str(handler), "handler")

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return immutable(new.get("handler"), old.get("handler"), "handler") + self.validate(new)


RUNTIME_CLASSES = ResourceType(
    "node.k8s.io", "v1", "RuntimeClass", "runtimeclasses", namespaced=False, strategy=RuntimeClassStrategy(),
    table=RUNTIME_CLASS_TABLE,
)
