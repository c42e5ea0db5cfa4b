"""A pod's ``ephemeralcontainers`` and ``resize`` subresources.

``ephemeralcontainers`` (``kubectl debug``): a write may only add ephemeral containers; the
rest of the pod stays as stored. Each new one is defaulted like a container and validated as
upstream's ``validateEphemeralContainers`` (a unique name, an image, none of the fields an
ephemeral container may not have, a target that is one of the pod's containers).

``resize`` (in-place pod resize, beta and on in 1.33): a write takes only the containers'
``resources`` and ``resizePolicy`` from the body (upstream's ``dropNonResizeUpdates``); the
pod's QoS class may not change. Simplified: the simulated kubelet does not act on a resize
(no PodResizePending/InProgress conditions, no ``status.containerStatuses[].resources``).
"""

from __future__ import annotations

import json
from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FIELD_NOT_FOUND, FieldError
from fakekube.api.machinery.jsonutil import deep_copy

Obj = dict[str, Any]

#: Container fields an ephemeral container may not set (``validateEphemeralContainers``).
EPHEMERAL_FORBIDDEN = ("ports", "livenessProbe", "readinessProbe", "startupProbe", "lifecycle", "resources",
                       "resizePolicy", "restartPolicy")
CANNOT_SET = "cannot be set for an Ephemeral Container"


def ephemeral_update(new: Obj, old: Obj) -> Obj:
    """The pod as stored with ``new``'s ephemeral containers (nothing else of ``new``)."""
    merged = deep_copy(old)
    containers = (new.get("spec") or {}).get("ephemeralContainers")
    if containers:
        merged["spec"]["ephemeralContainers"] = containers
    else:
        merged["spec"].pop("ephemeralContainers", None)
    return merged


def ephemeral_problems(new: Obj, old: Obj) -> list[FieldError]:
    """New ephemeral containers valid; existing ones neither changed nor removed."""
    spec, old_spec = new.get("spec") or {}, old.get("spec") or {}
    new_list = spec.get("ephemeralContainers") or []
    old_by_name = {c.get("name"): c for c in old_spec.get("ephemeralContainers") or []}
    problems: list[FieldError] = []
    names = {c.get("name") for key in ("containers", "initContainers") for c in spec.get(key) or []}
    targets = set(names)
    for i, container in enumerate(new_list):
        path = f"spec.ephemeralContainers[{i}]"
        name = container.get("name") or ""
        if name in old_by_name:
            if container != old_by_name[name]:
                problems.append(errors.forbidden(path, f'existing ephemeral containers "{name}" may not be changed'))
            names.add(name)
            continue
        problems += _new_container_problems(container, path, names, targets)
        names.add(name)
    present = {c.get("name") for c in new_list}
    for name in sorted(n for n in old_by_name if n not in present):
        problems.append(errors.forbidden("spec.ephemeralContainers",
                                         f'existing ephemeral containers "{name}" may not be removed'))
    return problems


def _new_container_problems(container: Obj, path: str, names: set[Any], targets: set[Any]) -> list[FieldError]:
    problems: list[FieldError] = []
    name = container.get("name") or ""
    if not name:
        problems.append(errors.required(f"{path}.name"))
    elif name in names:
        problems.append(errors.duplicate(f"{path}.name", name))
    if not container.get("image"):
        problems.append(errors.required(f"{path}.image"))
    for field in EPHEMERAL_FORBIDDEN:
        value = container.get(field)
        if value and not (field == "resources" and not any(value.values())):
            problems.append(errors.forbidden(f"{path}.{field}", CANNOT_SET))
    target = container.get("targetContainerName")
    if target and target not in targets:
        problems.append(FieldError(FIELD_NOT_FOUND, f"{path}.targetContainerName", json.dumps(target)))
    return problems


def resize_update(new: Obj, old: Obj) -> Obj:
    """The pod as stored with ``new``'s container resources and resize policies."""
    merged = deep_copy(old)
    for key in ("containers", "initContainers"):
        wanted = {c.get("name"): c for c in (new.get("spec") or {}).get(key) or []}
        for container in merged["spec"].get(key) or []:
            source = wanted.get(container.get("name"))
            if source is None:
                continue
            for field in ("resources", "resizePolicy"):
                if source.get(field) is not None:
                    container[field] = deep_copy(source[field])
                else:
                    container.pop(field, None)
    return merged


def resize_problems(new_qos: str, old_qos: str, status_qos: str) -> list[FieldError]:
    """Upstream compares the QoS class the resized spec computes with the old pod's, and
    reports at ``spec`` the class the pod's status holds (a resize does not change it)."""
    if new_qos != old_qos:
        return [errors.invalid("spec", status_qos, "Pod QOS Class may not change as a result of resizing")]
    return []
