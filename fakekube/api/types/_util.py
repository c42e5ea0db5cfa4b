"""Small helpers the per-type strategies share.

They exist so messages match upstream byte for byte: Go renders an invalid value with
``%#v`` (``map[string]string{"app":"x"}``), DNS-label errors have a fixed wording, and
immutability checks all say ``field is immutable``.
"""

from __future__ import annotations

import re
from fractions import Fraction
from typing import Any, Sequence

from fakekube import objects
from fakekube.api.machinery import errors
from fakekube.api.machinery.errors import FieldError

Obj = dict[str, Any]

FIELD_IMMUTABLE = "field is immutable"
IS_NEGATIVE = "must be greater than or equal to 0"

_DNS1123_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS1123_SUBDOMAIN_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS1035_LABEL_RE = re.compile(r"^[a-z]([-a-z0-9]*[a-z0-9])?$")

DNS1123_LABEL_MSG = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
                     "and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', "
                     "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
DNS1123_SUBDOMAIN_MSG = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
                         "and must start and end with an alphanumeric character (e.g. 'example.com', regex used for "
                         "validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
PORT_RANGE_MSG = "must be between 1 and 65535, inclusive"


class GoLiteral(errors.Shown):
    """A value already rendered the way upstream shows it in a field error: Go's ``%#v`` text
    (up to 1.33) and, when it differs, ``json.Marshal``'s (from 1.34; fakekube/objects/versions.py).

    ``FieldError`` renders other values itself; wrapping the text in this class makes the
    message read exactly as upstream's (no quotes added)."""

    __slots__ = ()

    def __init__(self, text: str, json: str | None = None) -> None:
        super().__init__(text, json)


def go_string_map(value: dict[str, str] | None) -> GoLiteral:
    """``map[string]string{"a":"b"}`` with sorted keys, as Go's fmt prints maps (JSON: ``{"a":"b"}``)."""
    if value is None:
        return GoLiteral("map[string]string(nil)", "null")
    items = ", ".join(f'"{k}":"{value[k]}"' for k in sorted(value))
    return GoLiteral("map[string]string{" + items + "}", errors.go_json(value))


def go_string_slice(value: list[str] | None) -> GoLiteral:
    if value is None:
        return GoLiteral("[]string(nil)", "null")
    return GoLiteral("[]string{" + ", ".join(f'"{v}"' for v in value) + "}", errors.go_json(value))


def go_label_selector(selector: Obj | None) -> GoLiteral:
    """A ``metav1.LabelSelector`` the way ``field is immutable`` errors print it (JSON: the
    external type's fields, empty ones omitted)."""
    if selector is None:
        return GoLiteral('"null"', "null")
    labels = go_string_map(selector.get("matchLabels"))
    exprs = selector.get("matchExpressions")
    if not exprs:
        expr_text = "[]v1.LabelSelectorRequirement(nil)"
    else:
        parts = []
        for e in exprs:
            values = go_string_slice(e.get("values"))
            parts.append(f'v1.LabelSelectorRequirement{{Key:"{e.get("key", "")}", '
                         f'Operator:"{e.get("operator", "")}", Values:{values}}}')
        expr_text = "[]v1.LabelSelectorRequirement{" + ", ".join(parts) + "}"
    # json.Marshal writes the struct's fields in declaration order (an expression's key,
    # operator, values happen to sort the same way).
    return GoLiteral(f"v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{expr_text}}}",
                     errors.go_json_struct(list(label_selector_json(selector).items())))


def label_selector_json(selector: Obj) -> Obj:
    """A LabelSelector as its Go type marshals: ``matchLabels``, then ``matchExpressions``
    (key, operator, values), empty fields left out."""
    out: Obj = {}
    if selector.get("matchLabels"):
        out["matchLabels"] = selector["matchLabels"]
    exprs = [{k: e[k] for k in ("key", "operator", "values") if e.get(k)} for e in selector.get("matchExpressions") or []
             if isinstance(e, dict)]
    if exprs:
        out["matchExpressions"] = exprs
    return out


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def key(path: str, k: str) -> str:
    return f"{path}[{k}]"


def dns1123_label_errors(value: str, path: str) -> list[FieldError]:
    errs = []
    if len(value) > 63:
        errs.append(errors.invalid(path, value, "must be no more than 63 characters"))
    if not _DNS1123_LABEL_RE.match(value):
        errs.append(errors.invalid(path, value, DNS1123_LABEL_MSG))
    return errs


def dns1123_subdomain_errors(value: str, path: str) -> list[FieldError]:
    errs = []
    if len(value) > 253:
        errs.append(errors.invalid(path, value, "must be no more than 253 characters"))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(errors.invalid(path, value, DNS1123_SUBDOMAIN_MSG))
    return errs


def is_dns1035_label(value: str) -> bool:
    return len(value) <= 63 and bool(_DNS1035_LABEL_RE.match(value))


def port_errors(value: Any, path: str) -> list[FieldError]:
    """``IsValidPortNum``: 1–65535."""
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 65535:
        return [errors.invalid(path, value, PORT_RANGE_MSG)]
    return []


def non_negative(value: Any, path: str) -> list[FieldError]:
    if isinstance(value, int) and value < 0:
        return [errors.invalid(path, value, IS_NEGATIVE)]
    return []


def required_one_of(value: Any, path: str, allowed: Sequence[str]) -> list[FieldError]:
    """An enum field upstream requires: Required when empty, NotSupported when not allowed.

    Most enum checks in ``ValidatePodSpec``, ``ValidateService`` and friends read this
    way; sharing it keeps their order (Required first) and wording identical.
    """
    if not value:
        return [errors.required(path)]
    if value not in allowed:
        return [errors.not_supported(path, value, list(allowed))]
    return []


def immutable(new: Any, old: Any, path: str, shown: Any = None) -> list[FieldError]:
    """``ValidateImmutableField``: Invalid with the new value and ``field is immutable``."""
    if new == old:
        return []
    return [errors.invalid(path, shown if shown is not None else _plain(new), FIELD_IMMUTABLE)]


def _plain(value: Any) -> Any:
    """Render containers Go-style enough; scalars pass through to FieldError."""
    if value is None:
        return None  # a nil pointer: "null" (1.33, quoted) or null
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        return go_string_map(value)
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return go_string_slice(value)
    if isinstance(value, (dict, list)):
        return GoLiteral(errors.go_sharp(value), errors.go_json(value))
    return value


def selector_matches(selector: Obj | None, labels: dict[str, str] | None) -> bool:
    """``metav1.LabelSelectorAsSelector(sel).Matches(labels)``, by :func:`fakekube.objects.selector_matches`.

    So a nil selector matches nothing and an empty one everything; the strategies check
    ``selector_is_empty`` first, as upstream's ``ValidatePodTemplateSpecForReplicaSet``
    skips its match check for an empty selector. An invalid selector (upstream reports
    "invalid label selector" instead) selects nothing here, so it reads as a mismatch.
    """
    try:
        return objects.selector_matches(selector, labels)
    except ValueError:
        return False


def selector_mismatch(template_path: str, labels: dict[str, str]) -> FieldError:
    """Upstream's error when a controller's selector does not select its own pod template."""
    return errors.invalid(f"{template_path}.metadata.labels", go_string_map(labels),
                          "`selector` does not match template `labels`")


def selector_is_empty(selector: Obj | None) -> bool:
    return not selector or (not selector.get("matchLabels") and not selector.get("matchExpressions"))


def parse_quantity(value: Any) -> Fraction | None:
    """A ``resource.Quantity`` as an exact number (:func:`fakekube.objects.parse_quantity`:
    saturated at 2^63-1 like upstream's cap, rounded to nano-units), or None when it does
    not parse."""
    try:
        return objects.parse_quantity(value.strip() if isinstance(value, str) else value)
    except ValueError:
        return None


def ensure_dict(obj: Obj, name: str) -> Obj:
    """``obj[name]`` as a dict, creating it when missing or null."""
    value = obj.get(name)
    if not isinstance(value, dict):
        value = {}
        obj[name] = value
    return value
