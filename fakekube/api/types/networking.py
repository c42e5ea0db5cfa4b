"""networking.k8s.io/v1 IngressClasses, ServiceCIDRs and IPAddresses.

(Ingresses and NetworkPolicies are declared in :mod:`.other`.) ServiceCIDR and IPAddress are
GA in 1.33 and served by default. Every cluster starts with the ServiceCIDR ``kubernetes``
holding the cluster's service range and its Ready condition, as the apiserver's default
ServiceCIDR controller writes it. Simplified: Services still allocate from the configured
range alone (an added ServiceCIDR widens nothing), no IPAddress objects are written for
allocated ClusterIPs, and ServiceCIDRs carry no finalizer.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError
from fakekube.api.machinery.validation import is_dns1123_label
from fakekube.api.registry import STATUS, ResourceType, Strategy, WriteContext
from fakekube.api.table import INGRESS_CLASS_TABLE, IP_ADDRESS_TABLE, SERVICE_CIDR_TABLE
from fakekube.api.types._util import GoLiteral, Obj, dns1123_subdomain_errors, go_string_slice, immutable

DEFAULT_SERVICE_CIDR_NAME = "kubernetes"
PARAMETER_SCOPES = ["Cluster", "Namespace"]
MAX_CONTROLLER_LENGTH = 250
_CONTROLLER_FORMAT = "must be a domain-prefixed path (such as \"acme.io/foo\")"


class IngressClassStrategy(Strategy):
    """IngressClasses: a domain-prefixed controller that never changes; parameters scoped."""

    tracks_generation = True

    def default(self, obj: Obj, ctx: WriteContext) -> None:
        parameters = (obj.get("spec") or {}).get("parameters")
        if isinstance(parameters, dict) and not parameters.get("scope"):
            parameters["scope"] = "Cluster"

    def validate(self, obj: Obj) -> list[FieldError]:
        spec = obj.get("spec") or {}
        return _controller_problems(spec.get("controller") or "") + _parameter_problems(spec.get("parameters"))

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        return (immutable((new.get("spec") or {}).get("controller"), (old.get("spec") or {}).get("controller"),
                          "spec.controller") + self.validate(new))


def _controller_problems(controller: str) -> list[FieldError]:
    if not controller:
        return [errors.required("spec.controller")]
    if len(controller) > MAX_CONTROLLER_LENGTH:
        return [errors.too_long("spec.controller", "", MAX_CONTROLLER_LENGTH)]
    domain, slash, _ = controller.partition("/")
    if not slash or dns1123_subdomain_errors(domain, "spec.controller"):
        return [errors.invalid("spec.controller", controller, _CONTROLLER_FORMAT)]
    return []


def _parameter_problems(parameters: Any) -> list[FieldError]:
    if parameters is None:
        return []
    path = "spec.parameters"
    problems: list[FieldError] = []
    for name in ("kind", "name"):
        if not parameters.get(name):
            problems.append(errors.required(f"{path}.{name}"))
    scope = parameters.get("scope") or ""
    if scope not in PARAMETER_SCOPES:
        problems.append(errors.not_supported(f"{path}.scope", scope, PARAMETER_SCOPES))
    elif scope == "Namespace" and not parameters.get("namespace"):
        problems.append(errors.required(f"{path}.namespace", "`parameters.scope` is set to 'Namespace'"))
    elif scope == "Cluster" and parameters.get("namespace"):
        problems.append(errors.forbidden(f"{path}.namespace", "`parameters.scope` is set to 'Cluster'"))
    return problems


INGRESS_CLASSES = ResourceType(
    "networking.k8s.io", "v1", "IngressClass", "ingressclasses", namespaced=False,
    strategy=IngressClassStrategy(), table=INGRESS_CLASS_TABLE,
)


# -- ServiceCIDR -------------------------------------------------------------------------

def _cidr_problems(cidrs: Any) -> list[FieldError]:
    if not cidrs:
        return [errors.required("spec.cidrs")]
    if len(cidrs) > 2:
        return [errors.invalid("spec.cidrs", go_string_slice([str(c) for c in cidrs]), "may only hold up to 2 values")]
    problems: list[FieldError] = []
    families = []
    for i, cidr in enumerate(cidrs):
        try:
            network = ipaddress.ip_network(str(cidr), strict=True)
        except ValueError:
            problems.append(errors.invalid(f"spec.cidrs[{i}]", cidr, "must be a valid CIDR value, "
                                                                     "(e.g. 10.9.8.0/24 or 2001:db8::/64)"))
            continue
        if str(network) != cidr:
            problems.append(errors.invalid(f"spec.cidrs[{i}]", cidr, f"must be in canonical form (\"{network}\")"))
        families.append(network.version)
    if len(families) == 2 and families[0] == families[1]:
        problems.append(errors.invalid("spec.cidrs", go_string_slice(list(cidrs)),
                                       "may specify no more than one IP for each IP family, i.e 192.168.0.0/24 "
                                       "and 2001:db8::/64"))
    return problems


class ServiceCIDRStrategy(Strategy):
    """ServiceCIDRs: one or two canonical CIDRs, one per family; a single-stack range may
    only gain the other family (1.33), never change."""

    def prepare_for_create(self, obj: Obj, ctx: WriteContext) -> None:
        obj["status"] = {}

    def validate(self, obj: Obj) -> list[FieldError]:
        return _cidr_problems((obj.get("spec") or {}).get("cidrs"))

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        new_cidrs = (new.get("spec") or {}).get("cidrs") or []
        old_cidrs = (old.get("spec") or {}).get("cidrs") or []
        if new_cidrs != old_cidrs and not (len(old_cidrs) == 1 and new_cidrs[:1] == old_cidrs):
            return [errors.invalid("spec.cidrs", go_string_slice(list(new_cidrs)), "field is immutable")]
        return self.validate(new)


SERVICE_CIDRS = ResourceType(
    "networking.k8s.io", "v1", "ServiceCIDR", "servicecidrs", namespaced=False, subresources=(STATUS,),
    strategy=ServiceCIDRStrategy(), table=SERVICE_CIDR_TABLE,
)


def default_service_cidr(cidr: str, now: str) -> Obj:
    """The ServiceCIDR ``kubernetes`` the apiserver's default-ServiceCIDR controller keeps."""
    return {"metadata": {"name": DEFAULT_SERVICE_CIDR_NAME}, "spec": {"cidrs": [cidr]},
            "status": {"conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": now, "reason": "",
                                       "message": "Kubernetes default Service CIDR is ready"}]}}


# -- IPAddress ---------------------------------------------------------------------------

def ip_address_name_problems(name: str, prefix: bool = False) -> list[str]:
    """``ValidateIPAddressName``: the name is an IP address in canonical form."""
    if prefix:
        return ["generateName is not supported for IPAddress"] if name else []
    try:
        canonical = str(ipaddress.ip_address(name))
    except ValueError:
        return ["must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"]
    if canonical != name:
        return [f"must be in canonical form (\"{canonical}\")"]
    return []


class IPAddressStrategy(Strategy):
    """IPAddresses: a parent reference (resource and name required) that never changes."""

    def validate(self, obj: Obj) -> list[FieldError]:
        ref = (obj.get("spec") or {}).get("parentRef")
        if ref is None:
            return [errors.required("spec.parentRef")]
        problems = [errors.required(f"spec.parentRef.{name}") for name in ("resource", "name") if not ref.get(name)]
        if ref.get("namespace"):
            problems += [errors.invalid("spec.parentRef.namespace", ref["namespace"], m)
                         for m in _dns_label_messages(ref["namespace"])]
        return problems

    def validate_update(self, new: Obj, old: Obj) -> list[FieldError]:
        new_ref, old_ref = (new.get("spec") or {}).get("parentRef"), (old.get("spec") or {}).get("parentRef")
        if new_ref != old_ref:
            return [errors.invalid("spec.parentRef", GoLiteral("&networking.ParentReference{...}"), "field is immutable")]
        return self.validate(new)


def _dns_label_messages(value: str) -> list[str]:
    return is_dns1123_label(value)


IP_ADDRESSES = ResourceType(
    "networking.k8s.io", "v1", "IPAddress", "ipaddresses", namespaced=False, short_names=("ip",),
    strategy=IPAddressStrategy(), table=IP_ADDRESS_TABLE, name_rule=ip_address_name_problems,
)
