"""What each function call costs, in cel-go's units: cel-go's own ``functionCost`` (and
its sets extension), with Kubernetes' ``library.CostEstimator`` asked first, as upstream
asks it (k8s.io/apiserver 1.33, cel-go 0.23). Also the saturating arithmetic and the
per-expression estimate record the walk in :mod:`.cost` builds.
"""

from __future__ import annotations

import math
from typing import NamedTuple

#: cel-go's ``math.MaxUint64``: an unknown size or a cost past counting.
UNBOUNDED = 2**64 - 1
#: common.StringTraversalCostFactor and RegexStringLengthCostFactor.
TRAVERSAL = 0.1
REGEX_LENGTH = 0.25
LIST_CREATE, MAP_CREATE, STRUCT_CREATE = 10, 30, 40
#: library.CostEstimator: an authorization check, and cel.MaxNameFormatRegexSize.
AUTHZ_CHECK = 350_000
MAX_NAME_FORMAT_REGEX = 128

#: Kinds of fixed size (cel-go's isScalar): their size is 1.
SCALARS = frozenset(("bool", "int", "uint", "double", "timestamp", "duration"))
#: The operators whose result has their operands' kind.
ARITHMETIC = frozenset(("_+_", "_-_", "_*_", "_/_", "_%_", "-_"))


def add(a: int, b: int) -> int:
    return min(UNBOUNDED, a + b)


def mul(a: int, b: int) -> int:
    return min(UNBOUNDED, a * b)


def factor(size: int, per_unit: float) -> int:
    """cel-go's multiplyByCostFactor: ``ceil(size * per_unit)`` in float64, saturating."""
    value = float(size)
    if value > 0 and per_unit > 0 and value > UNBOUNDED / per_unit:
        return UNBOUNDED
    product = math.ceil(value * per_unit)
    return UNBOUNDED if product >= 2.0**64 else int(product)


class Estimate(NamedTuple):
    """One expression's estimate: its cost, the size of its value (None: unknown), its
    kind, the field path it reads (None: not a path), the size of its elements (for list
    and map values built in the expression), and the kind of those elements."""

    cost: int
    size: int | None
    kind: str
    path: tuple[str, ...] | None = None
    entry: int | None = None
    elem: str = "dyn"


def known(size: int | None) -> int:
    """A size, unknown read as unbounded."""
    return UNBOUNDED if size is None else size


def union(a: int | None, b: int | None) -> int | None:
    """Two entry sizes as one (unknown if either is)."""
    return None if a is None or b is None else max(a, b)


def _size(e: Estimate | None) -> int:
    return UNBOUNDED if e is None or e.size is None else e.size


def _string_like(e: Estimate) -> bool:
    return e.kind in ("string", "bytes")


_RESULT_KINDS: dict[str, str] = {
    "size": "int", "int": "int", "uint": "uint", "double": "double", "bool": "bool", "string": "string",
    "bytes": "bytes", "type": "type", "timestamp": "timestamp", "duration": "duration", "matches": "bool",
    "contains": "bool", "startsWith": "bool", "endsWith": "bool", "@in": "bool", "!_": "bool",
    "@not_strictly_false": "bool", "_==_": "bool", "_!=_": "bool", "_<_": "bool", "_<=_": "bool", "_>_": "bool",
    "_>=_": "bool", "lowerAscii": "string", "upperAscii": "string", "trim": "string", "substring": "string",
    "replace": "string", "join": "string", "format": "string", "strings.quote": "string", "charAt": "string",
    "find": "string", "split": "list", "findAll": "list", "indexOf": "int", "lastIndexOf": "int",
    "isSorted": "bool", "url": "url", "isURL": "bool", "quantity": "quantity", "isQuantity": "bool",
    "ip": "ip", "cidr": "cidr", "isIP": "bool", "isCIDR": "bool", "semver": "semver", "isSemver": "bool",
    "sets.contains": "bool", "sets.equivalent": "bool", "sets.intersects": "bool", "getScheme": "string",
    "getHost": "string", "getHostname": "string", "getPort": "string", "getEscapedPath": "string",
    "getQuery": "map", "masked": "cidr", "prefixLength": "int", "family": "int", "containsIP": "bool",
    "containsCIDR": "bool", "isInteger": "bool", "asInteger": "int", "asApproximateFloat": "double",
    "sign": "int", "compareTo": "int", "isGreaterThan": "bool", "isLessThan": "bool", "add": "quantity",
    "sub": "quantity", "format.named": "opaque", "validate": "opaque", "check": "opaque", "allowed": "bool",
    "reason": "string", "errored": "bool", "error": "string", "base64.encode": "string", "base64.decode": "bytes",
    "lists.range": "list", "reverse": "list", "sort": "list", "distinct": "list", "flatten": "list", "slice": "list",
}


def price(name: str, target: Estimate | None, args: list[Estimate]) -> tuple[int, Estimate]:
    """(the call's own cost, the estimate of its result, without cost) — cel-go's
    functionCost with Kubernetes' EstimateCallCost consulted first."""
    kind = _RESULT_KINDS.get(name, "dyn")
    found = _kubernetes(name, target, args) or _core(name, target, args)
    if found is not None:
        own, size = found
        return own, Estimate(0, size, kind, None, None, "string" if name in ("split", "findAll") else "dyn")
    return 1, Estimate(0, 1 if kind in SCALARS else None, kind)


def _kubernetes(name: str, target: Estimate | None, args: list[Estimate]) -> tuple[int, int | None] | None:
    """library.CostEstimator.EstimateCallCost (apiserver 1.33): cost, result size."""
    if name == "check":
        return AUTHZ_CHECK, None
    if name in ("serviceAccount", "path", "group", "resource", "subresource", "namespace", "name", "allowed",
                "reason", "error", "errored", "format.named", "sign", "asInteger", "isInteger", "asApproximateFloat",
                "isGreaterThan", "isLessThan", "compareTo", "add", "sub", "major", "minor", "patch", "getScheme",
                "getHostname", "getHost", "getPort", "getEscapedPath", "getQuery", "masked", "prefixLength",
                "family", "isUnspecified", "isLoopback", "isLinkLocalMulticast", "isLinkLocalUnicast",
                "isGlobalUnicast"):
        return 1, None
    if name in ("fieldSelector", "labelSelector") and len(args) == 1:
        size = _size(args[0])
        return add(add(LIST_CREATE, factor(size, TRAVERSAL)), factor(factor(size, 0.5), LIST_CREATE + STRUCT_CREATE)), None
    if name in ("isSorted", "sum", "max", "min", "indexOf", "lastIndexOf") and target is not None:
        if target.kind == "string":
            return factor(_size(target), TRAVERSAL), None
        if target.kind != "list":
            return None
        per_element = 1 + (factor(known(target.entry), TRAVERSAL) if target.elem in ("string", "bytes") else 0)
        return mul(_size(target), per_element), None
    if name in ("url", "jsonpatch.escapeKey") and len(args) == 1:
        return factor(_size(args[0]), TRAVERSAL), args[0].size
    if name in ("lowerAscii", "upperAscii", "substring", "trim") and target is not None:
        return factor(_size(target), TRAVERSAL), target.size
    if name == "replace" and target is not None and len(args) >= 2:
        return factor(_size(target), 2 * TRAVERSAL), _replaced_size(target, args[0], args[1])
    if name == "split" and target is not None:
        limit = args[1].size if len(args) > 1 and args[1].kind == "int" else None
        return factor(_size(target), 2 * TRAVERSAL), _size(target) if limit is None else limit
    if name == "join" and target is not None:
        size = mul(_size(target), known(target.entry)) if target.elem in ("string", "dyn") else 0
        if args:
            size = add(size, mul(_size(args[0]), max(_size(target) - 1, 0)))
        return factor(size, TRAVERSAL), size
    if name in ("find", "findAll") and target is not None and args:
        return mul(factor(add(_size(target), 1), TRAVERSAL), factor(_size(args[0]), REGEX_LENGTH)), _size(target)
    if name in ("cidr", "isIP", "isCIDR", "quantity", "isQuantity", "semver", "isSemver") and args:
        return factor(_size(args[0]), TRAVERSAL), None
    if name == "ip":
        return (factor(_size(args[0]), TRAVERSAL) if args and args[0].kind == "string" else 1), None
    if name in ("containsIP", "containsCIDR") and args:
        own = factor(32, TRAVERSAL) + (factor(16, TRAVERSAL) + 1 if name == "containsCIDR" else 0)
        return own + (factor(_size(args[0]), TRAVERSAL) if args[0].kind == "string" else 0), None
    if name == "validate" and args:
        return factor(factor(_size(args[0]), TRAVERSAL), MAX_NAME_FORMAT_REGEX * REGEX_LENGTH), None
    if name == "_==_" and len(args) == 2 and args[0].kind == args[1].kind:
        if args[0].kind in ("ip", "cidr", "quantity", "semver", "opaque"):
            return 1, None
        if args[0].kind == "url":
            return factor(max(1, _size(args[1])), TRAVERSAL), None
    return None


def _replaced_size(target: Estimate, old: Estimate, new: Estimate) -> int:
    """``replace``'s longest result (the search string's minimum known only for a literal)."""
    size, new_size = _size(target), _size(new)
    old_min = old.size if old.path is None and old.size is not None and old.kind == "string" else 0
    if old_min == 0:
        return add(mul(add(size, 1) if size < UNBOUNDED else size, new_size), size)
    if new_size <= old_min:
        return size
    return mul(math.ceil(size / old_min), new_size)


def _core(name: str, target: Estimate | None, args: list[Estimate]) -> tuple[int, int | None] | None:
    """cel-go's own function costs (checker/cost.go functionCost, ext sets)."""
    if name in ("_&&_", "_||_") and len(args) == 2:
        return add(args[0].cost, args[1].cost), 1
    if name == "_?_:_" and len(args) == 3:
        return add(args[0].cost, max(args[1].cost, args[2].cost)), max(_size(args[1]), _size(args[2]))
    if name == "_+_" and len(args) == 2:
        return _plus(args[0], args[1])
    if name in ("_==_", "_!=_") or (name in ("_<_", "_<=_", "_>_", "_>=_") and _compares_text(args)):
        smallest = min(_size(args[0]), _size(args[1])) if len(args) == 2 else 0
        return factor(smallest, TRAVERSAL), 1
    if name == "@in" and len(args) == 2 and args[1].kind != "map":
        return _size(args[1]), 1
    if name == "matches" and target is not None and len(args) == 1:
        return mul(factor(add(_size(target), 1), TRAVERSAL), factor(_size(args[0]), REGEX_LENGTH)), 1
    if name == "contains" and target is not None and len(args) == 1 and target.kind in ("string", "dyn"):
        return mul(factor(_size(target), TRAVERSAL), factor(_size(args[0]), TRAVERSAL)), 1
    if name in ("startsWith", "endsWith") and target is not None and len(args) == 1:
        return factor(_size(args[0]), TRAVERSAL), 1
    if name == "format" and target is not None:
        return factor(_size(target), TRAVERSAL), None
    if name == "strings.quote" and len(args) == 1:
        return factor(_size(args[0]), TRAVERSAL), add(mul(_size(args[0]), 2), 2)
    if name == "string" and len(args) == 1 and args[0].kind == "bytes":
        return factor(_size(args[0]), TRAVERSAL), args[0].size
    if name == "bytes" and len(args) == 1 and args[0].kind == "string":
        return factor(_size(args[0]), TRAVERSAL), mul(_size(args[0]), 4)
    if name in ("sets.contains", "sets.intersects", "sets.equivalent") and len(args) == 2:
        pairs = mul(_size(args[0]), _size(args[1]))
        return add(factor(pairs, 2.0 if name == "sets.equivalent" else 1.0), 1), 1
    return None


def _compares_text(args: list[Estimate]) -> bool:
    """An ordering whose overloads include the string/bytes ones."""
    return len(args) == 2 and (any(_string_like(a) for a in args) or all(a.kind == "dyn" for a in args))


def _plus(left: Estimate, right: Estimate) -> tuple[int, int | None]:
    size = add(_size(left), _size(right))
    kinds = {left.kind, right.kind}
    if kinds & {"string", "bytes"} or kinds == {"dyn"}:
        return factor(size, TRAVERSAL), size
    if "list" in kinds:
        return 1, size
    return 1, None


__all__ = ["ARITHMETIC", "Estimate", "SCALARS", "UNBOUNDED", "add", "factor", "known", "mul", "price", "union"]
