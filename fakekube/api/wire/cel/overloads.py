"""The functions a Kubernetes CEL environment declares, with every overload's types.

What the type checker (:mod:`.checker`) matches calls against: CEL's standard library
(cel-go's ``common/stdlib``, with Kubernetes' cross-type numeric comparisons), optional
values, cel-go's extensions that Kubernetes' base environment adds (strings v2, sets,
two-variable comprehensions, lists v3) and Kubernetes' own libraries (lists, regex, url,
quantity, ip, cidr, format, semver), each from the Kubernetes minor version whose
environment first has it (k8s.io/apiserver/pkg/cel/environment/base.go). A signature
reads ``receiver.name(args) -> result`` for a member function, ``name(args) -> result``
for a global one; single capital letters are type parameters.
"""

from __future__ import annotations

from typing import NamedTuple

from fakekube.api.wire.cel import types as t


class Overload(NamedTuple):
    """One overload: ``args`` include the receiver of a member function (first)."""

    member: bool
    args: tuple[t.Type, ...]
    result: t.Type
    #: The type parameters it mentions, replaced by fresh variables at each use.
    params: frozenset[str]


_COMPARABLE = ("int", "uint", "double", "bool", "duration", "timestamp", "string", "bytes")
_ORDERED = [("bool", "bool"), ("int", "int"), ("int", "double"), ("int", "uint"), ("uint", "uint"),
            ("uint", "double"), ("uint", "int"), ("double", "double"), ("double", "int"), ("double", "uint"),
            ("string", "string"), ("bytes", "bytes"), ("timestamp", "timestamp"), ("duration", "duration")]
_TIME_PARTS = ("getFullYear", "getMonth", "getDayOfYear", "getDayOfMonth", "getDate", "getDayOfWeek")
_CLOCK_PARTS = ("getHours", "getMinutes", "getSeconds", "getMilliseconds")
#: format.<name>() constants (k8s.io/apiserver/pkg/cel/library/format.go).
NAMED_FORMATS = ("dns1123Label", "dns1123Subdomain", "dns1035Label", "qualifiedName", "dns1123LabelPrefix",
                 "dns1123SubdomainPrefix", "dns1035LabelPrefix", "labelValue", "uri", "uuid", "byte", "date",
                 "datetime")

_STANDARD: dict[str, list[str]] = {
    "_?_:_": ["_?_:_(bool, A, A) -> A"],
    "_&&_": ["_&&_(bool, bool) -> bool"],
    "_||_": ["_||_(bool, bool) -> bool"],
    "!_": ["!_(bool) -> bool"],
    "@not_strictly_false": ["@not_strictly_false(bool) -> bool"],
    "_==_": ["_==_(A, A) -> bool"],
    "_!=_": ["_!=_(A, A) -> bool"],
    "_+_": ["_+_(bytes, bytes) -> bytes", "_+_(double, double) -> double", "_+_(duration, duration) -> duration",
            "_+_(duration, timestamp) -> timestamp", "_+_(timestamp, duration) -> timestamp", "_+_(int, int) -> int",
            "_+_(list(A), list(A)) -> list(A)", "_+_(string, string) -> string", "_+_(uint, uint) -> uint"],
    "_/_": ["_/_(double, double) -> double", "_/_(int, int) -> int", "_/_(uint, uint) -> uint"],
    "_%_": ["_%_(int, int) -> int", "_%_(uint, uint) -> uint"],
    "_*_": ["_*_(double, double) -> double", "_*_(int, int) -> int", "_*_(uint, uint) -> uint"],
    "-_": ["-_(double) -> double", "-_(int) -> int"],
    "_-_": ["_-_(double, double) -> double", "_-_(duration, duration) -> duration", "_-_(int, int) -> int",
            "_-_(timestamp, duration) -> timestamp", "_-_(timestamp, timestamp) -> duration",
            "_-_(uint, uint) -> uint"],
    **{op: [f"{op}({a}, {b}) -> bool" for a, b in _ORDERED] for op in ("_<_", "_<=_", "_>_", "_>=_")},
    "_[_]": ["_[_](list(A), int) -> A", "_[_](map(A, B), A) -> B"],
    "@in": ["@in(A, list(A)) -> bool", "@in(A, map(A, B)) -> bool"],
    "size": [f"{form}" for kind in ("bytes", "list(A)", "map(A, B)", "string")
             for form in (f"size({kind}) -> int", f"{kind}.size() -> int")],
    "type": ["type(A) -> type(A)"],
    "bool": ["bool(bool) -> bool", "bool(string) -> bool"],
    "bytes": ["bytes(bytes) -> bytes", "bytes(string) -> bytes"],
    "double": [f"double({k}) -> double" for k in ("double", "int", "string", "uint")],
    "duration": [f"duration({k}) -> duration" for k in ("duration", "int", "string")],
    "dyn": ["dyn(A) -> dyn"],
    "int": [f"int({k}) -> int" for k in ("int", "double", "duration", "string", "timestamp", "uint")],
    "string": [f"string({k}) -> string" for k in ("string", "bool", "bytes", "double", "duration", "int",
                                                   "timestamp", "uint")],
    "timestamp": [f"timestamp({k}) -> timestamp" for k in ("timestamp", "int", "string")],
    "uint": [f"uint({k}) -> uint" for k in ("uint", "double", "int", "string")],
    "contains": ["string.contains(string) -> bool"],
    "endsWith": ["string.endsWith(string) -> bool"],
    "startsWith": ["string.startsWith(string) -> bool"],
    "matches": ["matches(string, string) -> bool", "string.matches(string) -> bool"],
    **{part: [f"timestamp.{part}() -> int", f"timestamp.{part}(string) -> int"] for part in _TIME_PARTS},
    **{part: [f"timestamp.{part}() -> int", f"timestamp.{part}(string) -> int", f"duration.{part}() -> int"]
       for part in _CLOCK_PARTS},
}

_OPTIONAL: dict[str, list[str]] = {
    "optional.of": ["optional.of(V) -> optional(V)"],
    "optional.ofNonZeroValue": ["optional.ofNonZeroValue(V) -> optional(V)"],
    "optional.none": ["optional.none() -> optional(V)"],
    "value": ["optional(V).value() -> V"],
    "hasValue": ["optional(V).hasValue() -> bool"],
    "or": ["optional(V).or(optional(V)) -> optional(V)"],
    "orValue": ["optional(V).orValue(V) -> V"],
    "_[?_]": ["_[?_](list(V), int) -> optional(V)", "_[?_](optional(list(V)), int) -> optional(V)",
              "_[?_](map(K, V), K) -> optional(V)", "_[?_](optional(map(K, V)), K) -> optional(V)"],
    "_[_]": ["_[_](optional(list(V)), int) -> optional(V)", "_[_](optional(map(K, V)), K) -> optional(V)"],
    "last": ["list(V).last() -> optional(V)"],
    "first": ["list(V).first() -> optional(V)"],
    "optional.unwrap": ["optional.unwrap(list(optional(V))) -> list(V)"],
    "unwrapOpt": ["list(optional(V)).unwrapOpt() -> list(V)"],
}

_KUBERNETES_BASE: dict[str, list[str]] = {  # URLs, Regex, Lists: every version
    "url": ["url(string) -> kubernetes.URL"],
    "isURL": ["isURL(string) -> bool"],
    **{f: [f"kubernetes.URL.{f}() -> string"] for f in ("getScheme", "getHost", "getHostname", "getPort",
                                                        "getEscapedPath")},
    "getQuery": ["kubernetes.URL.getQuery() -> map(string, list(string))"],
    "find": ["string.find(string) -> string"],
    "findAll": ["string.findAll(string) -> list(string)", "string.findAll(string, int) -> list(string)"],
    "isSorted": [f"list({k}).isSorted() -> bool" for k in _COMPARABLE],
    "sum": [f"list({k}).sum() -> {k}" for k in ("int", "uint", "double", "duration")],
    "max": [f"list({k}).max() -> {k}" for k in _COMPARABLE],
    "min": [f"list({k}).min() -> {k}" for k in _COMPARABLE],
    "indexOf": ["list(A).indexOf(A) -> int"],
    "lastIndexOf": ["list(A).lastIndexOf(A) -> int"],
}

_QUANTITY: dict[str, list[str]] = {  # 1.28, with optionals and cross-type numeric comparisons
    "quantity": ["quantity(string) -> kubernetes.Quantity"],
    "isQuantity": ["isQuantity(string) -> bool"],
    "sign": ["sign(kubernetes.Quantity) -> int"],
    "isGreaterThan": ["kubernetes.Quantity.isGreaterThan(kubernetes.Quantity) -> bool"],
    "isLessThan": ["kubernetes.Quantity.isLessThan(kubernetes.Quantity) -> bool"],
    "compareTo": ["kubernetes.Quantity.compareTo(kubernetes.Quantity) -> int"],
    "asApproximateFloat": ["kubernetes.Quantity.asApproximateFloat() -> double"],
    "asInteger": ["kubernetes.Quantity.asInteger() -> int"],
    "isInteger": ["kubernetes.Quantity.isInteger() -> bool"],
    "add": ["kubernetes.Quantity.add(kubernetes.Quantity) -> kubernetes.Quantity",
            "kubernetes.Quantity.add(int) -> kubernetes.Quantity"],
    "sub": ["kubernetes.Quantity.sub(kubernetes.Quantity) -> kubernetes.Quantity",
            "kubernetes.Quantity.sub(int) -> kubernetes.Quantity"],
}

_STRINGS_V2: dict[str, list[str]] = {  # 1.29
    "charAt": ["string.charAt(int) -> string"],
    "indexOf": ["string.indexOf(string) -> int", "string.indexOf(string, int) -> int"],
    "lastIndexOf": ["string.lastIndexOf(string) -> int", "string.lastIndexOf(string, int) -> int"],
    "lowerAscii": ["string.lowerAscii() -> string"],
    "upperAscii": ["string.upperAscii() -> string"],
    "replace": ["string.replace(string, string) -> string", "string.replace(string, string, int) -> string"],
    "split": ["string.split(string) -> list(string)", "string.split(string, int) -> list(string)"],
    "substring": ["string.substring(int) -> string", "string.substring(int, int) -> string"],
    "trim": ["string.trim() -> string"],
    "format": ["string.format(list(dyn)) -> string"],
    "strings.quote": ["strings.quote(string) -> string"],
    "join": ["list(string).join() -> string", "list(string).join(string) -> string"],
}

_SETS: dict[str, list[str]] = {  # 1.29
    f"sets.{name}": [f"sets.{name}(list(T), list(T)) -> bool"] for name in ("contains", "equivalent", "intersects")}

_IP_CIDR: dict[str, list[str]] = {  # 1.30
    "ip": ["ip(string) -> net.IP", "net.CIDR.ip() -> net.IP"],
    "family": ["net.IP.family() -> int"],
    "ip.isCanonical": ["ip.isCanonical(string) -> bool"],
    **{f: [f"net.IP.{f}() -> bool"] for f in ("isUnspecified", "isLoopback", "isLinkLocalMulticast",
                                               "isLinkLocalUnicast", "isGlobalUnicast")},
    "isIP": ["isIP(string) -> bool"],
    "string": ["string(net.IP) -> string", "string(net.CIDR) -> string"],
    "cidr": ["cidr(string) -> net.CIDR"],
    "containsIP": ["net.CIDR.containsIP(string) -> bool", "net.CIDR.containsIP(net.IP) -> bool"],
    "containsCIDR": ["net.CIDR.containsCIDR(string) -> bool", "net.CIDR.containsCIDR(net.CIDR) -> bool"],
    "prefixLength": ["net.CIDR.prefixLength() -> int"],
    "masked": ["net.CIDR.masked() -> net.CIDR"],
    "isCIDR": ["isCIDR(string) -> bool"],
}

_FORMAT: dict[str, list[str]] = {  # 1.31
    "validate": ["kubernetes.NamedFormat.validate(string) -> optional(list(string))"],
    "format.named": ["format.named(string) -> optional(kubernetes.NamedFormat)"],
    **{f"format.{name}": [f"format.{name}() -> kubernetes.NamedFormat"] for name in NAMED_FORMATS},
}

_TWO_VARIABLE: dict[str, list[str]] = {  # 1.32
    "cel.@mapInsert": ["cel.@mapInsert(map(K, V), K, V) -> map(K, V)", "cel.@mapInsert(map(K, V), map(K, V)) -> map(K, V)"],
}

_SEMVER: dict[str, list[str]] = {  # 1.33
    "semver": ["semver(string) -> kubernetes.Semver", "semver(string, bool) -> kubernetes.Semver"],
    "isSemver": ["isSemver(string) -> bool", "isSemver(string, bool) -> bool"],
    "isGreaterThan": ["kubernetes.Semver.isGreaterThan(kubernetes.Semver) -> bool"],
    "isLessThan": ["kubernetes.Semver.isLessThan(kubernetes.Semver) -> bool"],
    "compareTo": ["kubernetes.Semver.compareTo(kubernetes.Semver) -> int"],
    **{f: [f"kubernetes.Semver.{f}() -> int"] for f in ("major", "minor", "patch")},
}

_LISTS_V3: dict[str, list[str]] = {  # 1.34
    "slice": ["list(T).slice(int, int) -> list(T)"],
    "flatten": ["list(list(T)).flatten() -> list(T)", "list(dyn).flatten(int) -> list(dyn)"],
    "sort": [f"list({k}).sort() -> list({k})" for k in _COMPARABLE],
    "@sortByAssociatedKeys": [f"list(T).@sortByAssociatedKeys(list({k})) -> list(T)" for k in _COMPARABLE],
    "lists.range": ["lists.range(int) -> list(int)"],
    "reverse": ["list(T).reverse() -> list(T)"],
    "distinct": ["list(T).distinct() -> list(T)"],
}

#: (the first minor version whose environment has them, the declarations).
LIBRARIES: tuple[tuple[int, dict[str, list[str]]], ...] = (
    (0, _STANDARD), (0, _KUBERNETES_BASE), (28, _OPTIONAL), (28, _QUANTITY), (29, _STRINGS_V2), (29, _SETS),
    (30, _IP_CIDR), (31, _FORMAT), (32, _TWO_VARIABLE), (33, _SEMVER), (34, _LISTS_V3),
)

_OBJECTS = frozenset(("kubernetes.URL", "kubernetes.Quantity", "kubernetes.NamedFormat", "kubernetes.Semver"))
_OPAQUES = frozenset(("net.IP", "net.CIDR"))
_SIMPLE = {"int": t.INT_T, "uint": t.UINT_T, "double": t.DOUBLE_T, "bool": t.BOOL_T, "string": t.STRING_T,
           "bytes": t.BYTES_T, "null": t.NULL_T, "dyn": t.DYN_T, "any": t.ANY_T, "type": t.TYPE_T,
           "duration": t.DURATION_T, "timestamp": t.TIMESTAMP_T}


def _split_arguments(text: str) -> list[str]:
    """Top-level comma-separated parts of ``text``."""
    parts: list[str] = []
    depth = 0
    current = ""
    for char in text:
        if char == "," and depth == 0:
            parts.append(current.strip())
            current = ""
            continue
        depth += {"(": 1, ")": -1}.get(char, 0)
        current += char
    if current.strip():
        parts.append(current.strip())
    return parts


def parse_type(text: str) -> t.Type:
    """A type as the tables spell it."""
    text = text.strip()
    if text in _SIMPLE:
        return _SIMPLE[text]
    if len(text) == 1 and text.isupper():
        return t.param(text)
    if text in _OBJECTS:
        return t.struct(text)
    if text in _OPAQUES:
        return t.opaque(text)
    head, _, rest = text.partition("(")
    inner = [parse_type(part) for part in _split_arguments(rest[:-1])]
    constructors = {"list": lambda: t.list_of(inner[0]), "map": lambda: t.map_of(inner[0], inner[1]),
                    "optional": lambda: t.optional_of(inner[0]), "type": lambda: t.type_of(inner[0])}
    return constructors[head]()


def parse_overload(name: str, signature: str) -> Overload:
    """One signature of function ``name`` in the tables: ``name(...)`` is global,
    ``<receiver>.name(...)`` a member."""
    if signature.startswith(name + "("):
        receiver, rest = None, signature[len(name):]
    else:
        cut = signature.index(f".{name}(")
        receiver, rest = signature[:cut], signature[cut + 1 + len(name):]
    arguments_text, _, result_text = rest.partition(") -> ")
    arguments = [parse_type(a) for a in _split_arguments(arguments_text[1:])]
    if receiver is not None:
        arguments.insert(0, parse_type(receiver))
    result = parse_type(result_text)
    names: set[str] = set()
    for part in [*arguments, result]:
        names |= t.parameters_in(part)
    return Overload(receiver is not None, tuple(arguments), result, frozenset(names))


def declarations(minor: int) -> dict[str, tuple[Overload, ...]]:
    """Every function of the environment of Kubernetes 1.``minor``, by name."""
    found: dict[str, list[Overload]] = {}
    for since, table in LIBRARIES:
        if minor < since:
            continue
        for name, signatures in table.items():
            found.setdefault(name, []).extend(parse_overload(name, s) for s in signatures)
    return {name: tuple(overloads) for name, overloads in found.items()}


#: Every function any version declares (one missing from a version's environment is an
#: undeclared reference there).
EVERY_NAME = frozenset(name for _, table in LIBRARIES for name in table)
