"""Resource names and quantities as core validation checks them (``validateResourceName``
and its container, quota and LimitRange variants; ``ValidateNonnegativeQuantity``), shared by
nodes, quotas, LimitRanges, RuntimeClasses and containers."""

from __future__ import annotations

from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.validation import is_qualified_name
from fakekube.api.types._util import IS_NEGATIVE, parse_quantity
from fakekube.objects.resourcelist import canonical

#: ``helper.standardResources``: the unqualified names any resource list may use.
STANDARD_RESOURCES = frozenset((
    "cpu", "memory", "ephemeral-storage", "requests.cpu", "requests.memory", "requests.ephemeral-storage",
    "limits.cpu", "limits.memory", "limits.ephemeral-storage", "pods", "resourcequotas", "services",
    "replicationcontrollers", "secrets", "configmaps", "persistentvolumeclaims", "storage",
    "requests.storage", "services.nodeports", "services.loadbalancers",
))
#: ``helper.standardQuotaResources``.
STANDARD_QUOTA_RESOURCES = STANDARD_RESOURCES - {"storage"}
#: ``helper.standardContainerResources``.
STANDARD_CONTAINER_RESOURCES = frozenset(("cpu", "memory", "ephemeral-storage"))
HUGE_PAGES_PREFIX = "hugepages-"


def _quota_huge_pages(name: str) -> bool:
    return name.startswith((HUGE_PAGES_PREFIX, "requests." + HUGE_PAGES_PREFIX))


def resource_name_errors(name: str, path: str) -> list[FieldError]:
    """``validateResourceName``: a qualified name; without a domain, a standard one."""
    problems = [errors.invalid(path, name, m) for m in is_qualified_name(name)]
    if problems:
        return problems
    if "/" not in name and name not in STANDARD_RESOURCES and not _quota_huge_pages(name):
        return [errors.invalid(path, name, "must be a standard resource type or fully qualified")]
    return []


def _is_native(name: str) -> bool:
    return "/" not in name or "kubernetes.io/" in name


def _is_extended(name: str) -> bool:
    return not _is_native(name) and not name.startswith("requests.") and not is_qualified_name("requests." + name)


def container_resource_name_errors(name: str, path: str) -> list[FieldError]:
    """``validateContainerResourceName``."""
    problems = resource_name_errors(name, path)
    if "/" not in name:
        if name not in STANDARD_CONTAINER_RESOURCES and not name.startswith(HUGE_PAGES_PREFIX):
            return problems + [errors.invalid(path, name, "must be a standard resource for containers")]
    elif not _is_native(name) and not _is_extended(name):
        return problems + [errors.invalid(path, name, "doesn't follow extended resource name standard")]
    return problems


def quota_resource_name_errors(name: str, path: str) -> list[FieldError]:
    """``ValidateResourceQuotaResourceName``: the generic errors, then the quota rule."""
    problems = resource_name_errors(name, path)
    if "/" not in name and name not in STANDARD_QUOTA_RESOURCES and not _quota_huge_pages(name):
        return problems + [errors.invalid(path, name, "must be a standard resource for quota")]
    return problems


def nonnegative_quantity(value: Any, path: str) -> list[FieldError]:
    """``ValidateNonnegativeQuantity``: a negative quantity, shown in its canonical text."""
    quantity = parse_quantity(value)
    if quantity is not None and quantity < 0:
        return [errors.invalid(path, canonical(value), IS_NEGATIVE)]
    return []
