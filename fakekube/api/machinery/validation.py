"""Generic name and ObjectMeta validation, worded exactly as apimachinery words it.

Clients and tests match on these messages (``metadata.name: Invalid value: "Foo": a
lowercase RFC 1123 subdomain must ...``), so the string checks mirror
``k8s.io/apimachinery/pkg/util/validation`` and the metadata rules mirror
``pkg/api/validation/objectmeta.go`` of Kubernetes 1.33 (apimachinery v0.33).

Go iterates label and annotation maps in random order; we iterate keys sorted, so the
order of several errors is stable from run to run.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Any, Callable, Mapping

from fakekube.api.machinery.errors import (
    FIELD_TOO_LONG,
    FieldError,
    Shown,
    emulated,
    forbidden,
    go_json,
    invalid,
    required,
)
from fakekube.objects.syntax import (
    go_quote, is_plain_label, is_plain_qualified_name, label_value_errors, qualified_name_errors,
)

# ---------------------------------------------------------------------------
# Go-style rendering used inside messages (``go_quote`` is the objects layer's: one %q)


class GoText(Shown):
    """A value that a :class:`FieldError` prints verbatim: Go's ``%#v`` of a non-string (up
    to 1.33) and, when it differs, its ``json.Marshal`` (from 1.34)."""

    __slots__ = ()


def go_strings(values: list[str]) -> GoText:
    """A ``[]string`` as ``%#v`` prints it: ``[]string{"a", "b"}`` (JSON: ``["a","b"]``)."""
    return GoText("[]string{" + ", ".join(go_quote(v) for v in values) + "}", go_json(list(values)))


# ---------------------------------------------------------------------------
# String checks (pkg/util/validation)

DNS1123_LABEL_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253
DNS1035_LABEL_MAX_LENGTH = 63

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_LABEL_ERR = ("a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
                      "or '-', and must start and end with an alphanumeric character")
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN_ERR = ("a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
                          "characters, '-' or '.', and must start and end with an alphanumeric character")
_DNS1035_LABEL_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_LABEL_ERR = ("a DNS-1035 label must consist of lower case alphanumeric characters or '-', "
                      "start with an alphabetic character, and end with an alphanumeric character")


def _full(pattern: str) -> re.Pattern[str]:
    # \Z, not $: Go's $ without (?m) does not match before a trailing newline.
    return re.compile("(?:" + pattern + r")\Z")


_DNS1123_LABEL_RE = _full(_DNS1123_LABEL_FMT)
_DNS1123_SUBDOMAIN_RE = _full(_DNS1123_SUBDOMAIN_FMT)
_DNS1035_LABEL_RE = _full(_DNS1035_LABEL_FMT)


def max_len_error(length: int) -> str:
    return f"must be no more than {length} characters"


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """``validation.RegexError``: the message, examples, and the regex itself."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def empty_error() -> str:
    return "must be non-empty"


def _byte_len(text: str) -> int:
    """Go's ``len`` of a string counts UTF-8 bytes, not characters."""
    return len(text.encode("utf-8"))


def is_dns1123_subdomain(value: str) -> list[str]:
    errors = []
    if _byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errors.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errors.append(regex_error(_DNS1123_SUBDOMAIN_ERR, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errors


_WILDCARD_DNS1123_SUBDOMAIN_FMT = "\\*\\." + _DNS1123_SUBDOMAIN_FMT
_WILDCARD_DNS1123_SUBDOMAIN_RE = _full(_WILDCARD_DNS1123_SUBDOMAIN_FMT)
_WILDCARD_DNS1123_SUBDOMAIN_ERR = ("a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS "
                                   "subdomain, which must consist of lower case alphanumeric characters, '-' or '.' "
                                   "and end with an alphanumeric character")


def is_wildcard_dns1123_subdomain(value: str) -> list[str]:
    """``IsWildcardDNS1123Subdomain``: ``*.`` and a DNS-1123 subdomain (an Ingress host)."""
    errors = []
    if _byte_len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errors.append(max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _WILDCARD_DNS1123_SUBDOMAIN_RE.match(value):
        errors.append(regex_error(_WILDCARD_DNS1123_SUBDOMAIN_ERR, _WILDCARD_DNS1123_SUBDOMAIN_FMT, "*.example.com"))
    return errors


def is_dns1123_label(value: str) -> list[str]:
    errors = []
    if _byte_len(value) > DNS1123_LABEL_MAX_LENGTH:
        errors.append(max_len_error(DNS1123_LABEL_MAX_LENGTH))
    if not _DNS1123_LABEL_RE.match(value):
        if _DNS1123_SUBDOMAIN_RE.match(value):
            errors.append("must not contain dots")
        else:
            errors.append(regex_error(_DNS1123_LABEL_ERR, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errors


def is_dns1035_label(value: str) -> list[str]:
    errors = []
    if _byte_len(value) > DNS1035_LABEL_MAX_LENGTH:
        errors.append(max_len_error(DNS1035_LABEL_MAX_LENGTH))
    if not _DNS1035_LABEL_RE.match(value):
        errors.append(regex_error(_DNS1035_LABEL_ERR, _DNS1035_LABEL_FMT, "my-name", "abc-123"))
    return errors


def is_qualified_name(value: str) -> list[str]:
    """A label/annotation key: ``[prefix/]name``, prefix a DNS subdomain, name ≤ 63 (the
    objects layer's check, which selectors use too: one wording)."""
    release = emulated()
    return qualified_name_errors(value, release.message("label_key_noun"), release.message("label_length_unit"))


def is_valid_label_value(value: str) -> list[str]:
    """Empty, or a name of at most 63 bytes (the objects layer's check)."""
    return label_value_errors(value, emulated().message("label_length_unit"))


def is_valid_path_segment_name(value: str) -> list[str]:
    """``path.IsValidPathSegmentName``: the name must be usable as one URL path segment."""
    if value in (".", ".."):
        return [f"may not be '{value}'"]
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in value]


def is_valid_path_segment_prefix(value: str) -> list[str]:
    return [f"may not contain '{bad}'" for bad in ("/", "%") if bad in value]


# ---------------------------------------------------------------------------
# Name rules (ValidateNameFunc): (name, prefix) -> messages

#: A type's metadata.name rule (``ResourceType.name_rule``), from its Validate* function
#: in Kubernetes 1.33; most types use :func:`name_is_dns_subdomain`.
NameRule = Callable[..., list[str]]


def _mask_trailing_dash(name: str) -> str:
    """Upstream's maskTrailingDash: a generateName may end in '-'.

    It replaces the last *two* characters with "a" (so "ab-" checks as "aa"); we keep
    that so the same prefixes pass and fail.
    """
    if len(name) > 1 and name.endswith("-"):
        return name[:-2] + "a"
    return name


def name_is_dns_subdomain(name: str, prefix: bool = False) -> list[str]:
    return is_dns1123_subdomain(_mask_trailing_dash(name) if prefix else name)


def name_is_dns_label(name: str, prefix: bool = False) -> list[str]:
    return is_dns1123_label(_mask_trailing_dash(name) if prefix else name)


def name_is_dns1035_label(name: str, prefix: bool = False) -> list[str]:
    return is_dns1035_label(_mask_trailing_dash(name) if prefix else name)


def name_is_path_segment(name: str, prefix: bool = False) -> list[str]:
    """``path.ValidatePathSegmentName``: RBAC names may be almost anything (``system:foo``)."""
    return is_valid_path_segment_prefix(name) if prefix else is_valid_path_segment_name(name)


# ---------------------------------------------------------------------------
# ObjectMeta on create

TOTAL_ANNOTATION_SIZE_LIMIT_B = 256 * 1024
FIELD_MANAGER_MAX_LENGTH = 128
MAX_SUBRESOURCE_NAME_LENGTH = 256
FIELD_IMMUTABLE = "field is immutable"
FINALIZER_ORPHAN = "orphan"
FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion"

Meta = Mapping[str, Any]


def _too_long(path: str, max_length: int) -> FieldError:
    # Upstream omits the value from TooLong messages.
    return FieldError(FIELD_TOO_LONG, path, f"may not be more than {max_length} bytes")


def validate_label_name(key: str, path: str) -> list[FieldError]:
    """``ValidateLabelName``: one Invalid per ``IsQualifiedName`` message, at ``path``."""
    return [invalid(path, key, m) for m in is_qualified_name(key)]


def validate_labels(labels: Mapping[str, str] | None, path: str) -> list[FieldError]:
    if not labels or all(map(is_plain_label, labels.keys(), labels.values())):
        return []  # the common case, without the release's messages (objects/syntax.py)
    errors = []
    for key in sorted(labels or {}):
        errors += validate_label_name(key, path)
        value = (labels or {})[key]
        errors += [invalid(path, value, m) for m in is_valid_label_value(value)]
    return errors


_SELECTOR_SET_OPERATORS = ("In", "NotIn")
_SELECTOR_EXISTS_OPERATORS = ("Exists", "DoesNotExist")


def validate_label_selector(selector: Meta | None, path: str, *,
                            allow_invalid_values: bool = False) -> list[FieldError]:
    """``ValidateLabelSelector`` (apimachinery meta/v1 validation, 1.33): matchLabels as
    labels, then each expression's operator/values rule, key, and (unless the caller allows
    old invalid data) each value. A missing selector is valid."""
    if not isinstance(selector, Mapping):
        return []
    errors = validate_labels(selector.get("matchLabels"), f"{path}.matchLabels")
    for i, expression in enumerate(selector.get("matchExpressions") or []):
        errors += _label_selector_requirement_errors(expression if isinstance(expression, Mapping) else {},
                                                     f"{path}.matchExpressions[{i}]", allow_invalid_values)
    return errors


def _label_selector_requirement_errors(expression: Meta, path: str, allow_invalid_values: bool) -> list[FieldError]:
    operator = expression.get("operator") or ""
    values = [str(v) for v in expression.get("values") or []]
    errors = []
    if operator in _SELECTOR_SET_OPERATORS:
        if not values:
            errors.append(required(f"{path}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
    elif operator in _SELECTOR_EXISTS_OPERATORS:
        if values:
            errors.append(forbidden(f"{path}.values",
                                    "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
    else:
        errors.append(invalid(f"{path}.operator", operator, "not a valid selector operator"))
    errors += validate_label_name(str(expression.get("key") or ""), f"{path}.key")
    if not allow_invalid_values:
        for i, value in enumerate(values):
            errors += [invalid(f"{path}.values[{i}]", value, m) for m in is_valid_label_value(value)]
    return errors


def validate_annotations(annotations: Mapping[str, str] | None, path: str) -> list[FieldError]:
    """Keys are qualified names (checked lower-cased); keys+values total ≤ 256 KiB."""
    if not annotations:
        return []
    errors = []
    if not all(is_plain_qualified_name(key.lower()) for key in annotations):  # else none to word
        for key in sorted(annotations):
            errors += [invalid(path, key, m) for m in is_qualified_name(key.lower())]
    total_b = sum(_byte_len(k) + _byte_len(v or "") for k, v in annotations.items())
    if total_b > TOTAL_ANNOTATION_SIZE_LIMIT_B:
        errors.append(_too_long(path, TOTAL_ANNOTATION_SIZE_LIMIT_B))
    return errors


def _group_version(api_version: str) -> tuple[str, str]:
    """``schema.ParseGroupVersion``; ("", "") when it cannot parse, as upstream then uses."""
    if not api_version or api_version == "/":
        return "", ""
    slashes = api_version.count("/")
    if slashes == 0:
        return "", api_version
    if slashes > 1:
        return "", ""
    group, version = api_version.split("/", 1)
    return group, version


def _validate_owner_reference(ref: Meta, path: str) -> list[FieldError]:
    errors = []
    api_version = str(ref.get("apiVersion") or "")
    kind = str(ref.get("kind") or "")
    group, version = _group_version(api_version)
    if not version:
        errors.append(invalid(f"{path}.apiVersion", api_version, "version must not be empty"))
    empty = emulated().message("owner_reference_empty")  # "kind must not be empty" up to 1.33
    if not kind:
        errors.append(invalid(f"{path}.kind", kind, empty.format(field="kind")))
    for key in ("name", "uid"):
        if not ref.get(key):
            errors.append(invalid(f"{path}.{key}", str(ref.get(key) or ""), empty.format(field=key)))
    if (group, version, kind) == ("", "v1", "Event"):
        errors.append(invalid(path, GoText(str(dict(ref))), "/v1, Kind=Event is disallowed from being an owner"))
    return errors


#: OwnerReference's fields in struct order: (JSON name, Go name, is a *bool).
_OWNER_REFERENCE_FIELDS = (("apiVersion", "APIVersion", False), ("kind", "Kind", False), ("name", "Name", False),
                           ("uid", "UID", False), ("controller", "Controller", True),
                           ("blockOwnerDeletion", "BlockOwnerDeletion", True))


def _owner_references_shown(refs: list[Meta]) -> GoText:
    """``[]metav1.OwnerReference`` as a field error shows it: ``%#v`` up to 1.33 (a set
    ``*bool`` as a pointer: fakekube writes a fixed stand-in address), ``json.Marshal`` from
    1.34 (struct order, the two pointers omitted when unset)."""
    go_items, json_items = [], []
    for ref in refs:
        go_fields, json_fields = [], []
        for key, go_name, pointer in _OWNER_REFERENCE_FIELDS:
            value = ref.get(key)
            if pointer:
                go_fields.append(f"{go_name}:(*bool)({'0xc000010000' if value is not None else 'nil'})")
                if value is not None:
                    json_fields.append(f"{go_json(key)}:{go_json(bool(value))}")
            else:
                go_fields.append(f"{go_name}:{go_quote(str(value or ''))}")
                json_fields.append(f"{go_json(key)}:{go_json(str(value or ''))}")
        go_items.append("v1.OwnerReference{" + ", ".join(go_fields) + "}")
        json_items.append("{" + ",".join(json_fields) + "}")
    return GoText("[]v1.OwnerReference{" + ", ".join(go_items) + "}", "[" + ",".join(json_items) + "]")


def validate_owner_references(refs: list[Meta] | None, path: str) -> list[FieldError]:
    errors = []
    first_controller = ""
    for ref in refs or []:
        errors += _validate_owner_reference(ref, path)
        if ref.get("controller") is True:
            current = f"{ref.get('kind', '')}/{ref.get('name', '')}"
            if first_controller:
                errors.append(invalid(path, _owner_references_shown(refs or []),
                                      "Only one reference can have Controller set to true. "
                                      f'Found "true" in references for {first_controller} and {current}'))
            else:
                first_controller = current
    return errors


def validate_finalizers(finalizers: list[str] | None, path: str) -> list[FieldError]:
    finalizers = list(finalizers or [])
    errors = []
    for name in finalizers:
        errors += [invalid(path, name, m) for m in is_qualified_name(name)]
    if FINALIZER_ORPHAN in finalizers and FINALIZER_DELETE_DEPENDENTS in finalizers:
        errors.append(invalid(path, go_strings(finalizers),
                              f"finalizer {FINALIZER_ORPHAN} and {FINALIZER_DELETE_DEPENDENTS} cannot be both set"))
    return errors


#: The finalizer names without a domain that k8s.io/kubernetes' own ObjectMeta validation allows.
STANDARD_FINALIZERS = ("kubernetes", FINALIZER_ORPHAN, FINALIZER_DELETE_DEPENDENTS)
#: Built-in groups whose validation calls apimachinery's ObjectMeta validation directly, not
#: k8s.io/kubernetes' core wrapper (pkg/apis/<group>/validation, 1.36): their finalizers may
#: lack a domain. Custom resources (and CRDs, APIServices) are validated the same way.
GENERIC_META_GROUPS = frozenset(("admissionregistration.k8s.io", "coordination.k8s.io", "node.k8s.io",
                                 "apiextensions.k8s.io", "apiregistration.k8s.io"))


def validate_kube_finalizer_names(finalizers: list[str] | None, path: str) -> list[FieldError]:
    """``validateKubeFinalizerName`` (k8s.io/kubernetes' ObjectMeta wrapper, after the generic
    checks): a finalizer without a ``/`` must be a standard one; each by its index."""
    return [invalid(f"{path}[{index}]", name, "name is neither a standard finalizer name nor is it fully qualified")
            for index, name in enumerate(finalizers or [])
            if isinstance(name, str) and "/" not in name and name not in STANDARD_FINALIZERS]


def validate_field_manager(manager: str, path: str) -> list[FieldError]:
    errors = []
    if len(manager) > FIELD_MANAGER_MAX_LENGTH:
        errors.append(_too_long(path, FIELD_MANAGER_MAX_LENGTH))
    if manager.isprintable():  # every character passes (the space too): no need to find which
        return errors
    position_b = 0
    for c in manager:
        if not (c == " " or c.isprintable()):
            errors.append(invalid(path, manager, f"invalid character U+{ord(c):04X} (at position {position_b})"))
        position_b += _byte_len(c)
    return errors


def validate_managed_fields(entries: list[Meta] | None, path: str) -> list[FieldError]:
    errors = []
    for i, entry in enumerate(entries or []):
        entry_path = f"{path}[{i}]"
        operation = entry.get("operation") or ""
        if operation not in ("Apply", "Update"):
            errors.append(invalid(f"{entry_path}.operation", operation, "must be `Apply` or `Update`"))
        fields_type = entry.get("fieldsType") or ""
        if fields_type and fields_type != "FieldsV1":
            errors.append(invalid(f"{entry_path}.fieldsType", fields_type, "must be `FieldsV1`"))
        errors += validate_field_manager(entry.get("manager") or "", f"{entry_path}.manager")
        if len(entry.get("subresource") or "") > MAX_SUBRESOURCE_NAME_LENGTH:
            errors.append(_too_long(f"{entry_path}.subresource", MAX_SUBRESOURCE_NAME_LENGTH))
    return errors


def _validate_names(meta: Meta, name_rule: NameRule) -> list[FieldError]:
    errors = []
    generate_name = meta.get("generateName") or ""
    if generate_name:
        errors += [invalid("metadata.generateName", generate_name, m) for m in name_rule(generate_name, True)]
    name = meta.get("name") or ""
    if not name:
        errors.append(required("metadata.name", "name or generateName is required"))
    else:
        errors += [invalid("metadata.name", name, m) for m in name_rule(name, False)]
    return errors


def _validate_namespace(meta: Meta, namespaced: bool) -> list[FieldError]:
    namespace = meta.get("namespace") or ""
    if not namespaced:
        return [forbidden("metadata.namespace", "not allowed on this type")] if namespace else []
    if not namespace:
        return [required("metadata.namespace")]
    return [invalid("metadata.namespace", namespace, m) for m in name_is_dns_label(namespace)]


def _validate_generation(meta: Meta) -> list[FieldError]:
    generation = meta.get("generation") or 0
    if isinstance(generation, int) and generation < 0:
        return [invalid("metadata.generation", generation, "must be greater than or equal to 0")]
    return []


def validate_object_meta(meta: Meta, namespaced: bool, name_rule: NameRule) -> list[FieldError]:
    """``ValidateObjectMeta`` for a create, in upstream's order of checks.

    Run it after the REST layer has filled ``name`` from ``generateName`` and set the
    namespace from the URL (upstream's BeforeCreate does both first). ``uid``,
    ``resourceVersion`` and timestamps are the server's and are not checked here.
    """
    return (_validate_names(meta, name_rule)
            + _validate_namespace(meta, namespaced)
            + _validate_generation(meta)
            + _validate_common(meta))


def _validate_common(meta: Meta) -> list[FieldError]:
    return (validate_labels(meta.get("labels"), "metadata.labels")
            + validate_annotations(meta.get("annotations"), "metadata.annotations")
            + validate_owner_references(meta.get("ownerReferences"), "metadata.ownerReferences")
            + validate_finalizers(meta.get("finalizers"), "metadata.finalizers")
            + validate_managed_fields(meta.get("managedFields"), "metadata.managedFields"))


# ---------------------------------------------------------------------------
# ObjectMeta on update


def _go_time(value: Any) -> Any:
    """A metav1.Time as Go's ``time.Time.String()`` prints it; None as null."""
    if not value:
        return None
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00")).astimezone(timezone.utc)
    except ValueError:
        return str(value)
    return GoText(parsed.strftime("%Y-%m-%d %H:%M:%S +0000 UTC"))


def _immutable(new: Meta, old: Meta, key: str, render: Callable[[Any], Any]) -> list[FieldError]:
    new_value, old_value = new.get(key), old.get(key)
    # An absent string field and "" are the same Go zero value; 0 and nil are not.
    if (None if new_value == "" else new_value) == (None if old_value == "" else old_value):
        return []
    return [invalid(f"metadata.{key}", render(new_value), FIELD_IMMUTABLE)]


def _no_new_finalizers(new: Meta, old: Meta) -> list[FieldError]:
    extra = sorted(set(new.get("finalizers") or []) - set(old.get("finalizers") or []))
    if not extra:
        return []
    return [forbidden("metadata.finalizers",
                      f"no new finalizers can be added if the object is being deleted, found new finalizers "
                      f"{go_strings(extra).go}")]


def validate_object_meta_update(new_meta: Meta, old_meta: Meta) -> list[FieldError]:
    """``ValidateObjectMetaUpdate``: immutable identity, no new finalizers while deleting.

    Call it after :func:`reset_server_fields_for_update`; an unconditional update must
    have had its ``resourceVersion`` filled from the stored object first (as upstream's
    store does), or it fails here with "must be specified for an update".
    """
    errors: list[FieldError] = []
    if old_meta.get("deletionTimestamp"):
        errors += _no_new_finalizers(new_meta, old_meta)
    if not new_meta.get("resourceVersion"):
        errors.append(invalid("metadata.resourceVersion", "", "must be specified for an update"))
    if (new_meta.get("generation") or 0) < (old_meta.get("generation") or 0):
        errors.append(invalid("metadata.generation", new_meta.get("generation") or 0, "must not be decremented"))
    as_string: Callable[[Any], Any] = lambda v: str(v or "")
    errors += _immutable(new_meta, old_meta, "name", as_string)
    errors += _immutable(new_meta, old_meta, "namespace", as_string)
    errors += _immutable(new_meta, old_meta, "uid", as_string)
    errors += _immutable(new_meta, old_meta, "creationTimestamp", _go_time)
    errors += _immutable(new_meta, old_meta, "deletionTimestamp", _go_time)
    errors += _immutable(new_meta, old_meta, "deletionGracePeriodSeconds", lambda v: v)
    return errors + (validate_labels(new_meta.get("labels"), "metadata.labels")
                     + validate_annotations(new_meta.get("annotations"), "metadata.annotations")
                     + validate_owner_references(new_meta.get("ownerReferences"), "metadata.ownerReferences")
                     + validate_managed_fields(new_meta.get("managedFields"), "metadata.managedFields"))


def reset_server_fields_for_update(new_meta: dict[str, Any], old_meta: Meta) -> None:
    """What upstream's ``rest.BeforeUpdate`` copies from the stored object, in place.

    Clients may not change generation (the strategy bumps it), may omit the uid, and
    cannot move creation or deletion timestamps; so these are restored before
    validation, which then only reports changes that are real mistakes (a new uid).
    """
    if "generation" in old_meta:
        new_meta["generation"] = old_meta["generation"]
    else:
        new_meta.pop("generation", None)
    if not new_meta.get("uid") and old_meta.get("uid"):
        new_meta["uid"] = old_meta["uid"]
    if old_meta.get("creationTimestamp"):
        new_meta["creationTimestamp"] = old_meta["creationTimestamp"]
    if old_meta.get("deletionTimestamp"):
        new_meta["deletionTimestamp"] = old_meta["deletionTimestamp"]
    if old_meta.get("deletionGracePeriodSeconds") is not None and new_meta.get("deletionGracePeriodSeconds") is None:
        new_meta["deletionGracePeriodSeconds"] = old_meta["deletionGracePeriodSeconds"]
