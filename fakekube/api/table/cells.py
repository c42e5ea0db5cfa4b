"""Helpers the printers share: safe lookups, upstream's label formats, common cells.

Objects reach the printers as stored, possibly sparse (``kubectl get`` of a half-filled
object must still print), so every lookup here tolerates missing or null fields.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Callable

from fakekube.api.table.columns import Cells, Obj, Printer
from fakekube.api.table.duration import age

NONE = "<none>"
UNSET = "<unset>"


def get(obj: Any, *path: str, default: Any = None) -> Any:
    """``obj[path[0]][path[1]]…``, or ``default`` where a step is missing, null or not a dict."""
    for key in path:
        if not isinstance(obj, dict) or key not in obj or obj[key] is None:
            return default
        obj = obj[key]
    return obj


def meta(obj: Obj, key: str, default: Any = None) -> Any:
    """A ``metadata`` field of ``obj``."""
    return get(obj, "metadata", key, default=default)


def format_labels(labels: dict[str, str] | None) -> str:
    """``labels.FormatLabels``: sorted ``k=v`` pairs, "<none>" when empty."""
    if not labels:
        return NONE
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def format_label_selector(selector: Obj | None) -> str:
    """``metav1.FormatLabelSelector``: matchLabels then expressions; "<none>" if empty."""
    if selector is None:
        return NONE
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        if op == "In":
            parts.append(f"{key} in ({','.join(values)})")
        elif op == "NotIn":
            parts.append(f"{key} notin ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
        else:
            parts.append(f"{key} {op} ({','.join(values)})")
    text = ",".join(parts)
    return text if text else NONE


def container_cells(pod_spec: Obj | None) -> tuple[str, str]:
    """CONTAINERS and IMAGES of a pod template: names and images, comma-joined."""
    containers = get(pod_spec, "containers", default=[]) or []
    return (",".join(c.get("name", "") for c in containers), ",".join(c.get("image", "") for c in containers))


def workload_wide(obj: Obj, selector: str) -> Cells:
    """The wide columns of a controller with a pod template: CONTAINERS, IMAGES, SELECTOR."""
    names, images = container_cells(get(obj, "spec", "template", "spec"))
    return [names, images, selector]


def condition_true(status: Obj | None, ctype: str) -> bool:
    """Whether ``status.conditions`` has ``ctype`` with status "True"."""
    return any(c.get("type") == ctype and c.get("status") == "True" for c in get(status, "conditions", default=[]))


def has_condition(obj: Obj, ctype: str) -> bool:
    """:func:`condition_true` on the object's own ``status``."""
    return condition_true(get(obj, "status"), ctype)


def simple(*getters: Callable[[Obj, datetime], Any]) -> Printer:
    """A printer whose cells are the getters' values, in order."""
    return lambda obj, now: [g(obj, now) for g in getters]


def name_cell(obj: Obj, now: datetime) -> str:
    """NAME, as a getter for :func:`simple`."""
    return meta(obj, "name", "")


def age_cell(obj: Obj, now: datetime) -> str:
    """AGE, as a getter for :func:`simple`."""
    return age(meta(obj, "creationTimestamp"), now)


def created_at_cell(obj: Obj, now: datetime) -> Any:
    """Created At (the default convertor's raw timestamp), as a getter for :func:`simple`."""
    return meta(obj, "creationTimestamp")

