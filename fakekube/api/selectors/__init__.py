"""Label and field selectors, parsed and matched exactly as apimachinery does.

Clients send ``labelSelector`` and ``fieldSelector`` as strings; kubectl, client-go and
the Python client all rely on the server accepting the same grammar, rejecting the same
strings with the same ``400 BadRequest`` messages, and matching the same objects.

- :mod:`.selection`: the operators and :class:`SelectorError` both kinds share.
- :mod:`.labels`: requirements, label selectors, ``metav1.LabelSelector`` objects.
- :mod:`.label_parser`: the ``labelSelector`` string grammar (``labels.Parse``).
- :mod:`.fields`: the ``fieldSelector`` string grammar and matching (``fields.ParseSelector``).
- :mod:`.fieldsets`: which fields each type can be selected on (the ``*_FIELD_SET`` a
  type's declaration names).

Everything public is re-exported here; import from ``fakekube.api.selectors``.
"""

from fakekube.api.selectors.fields import (
    FieldRequirement,
    FieldSelector,
    escape_field_value,
    parse_field_selector,
    unescape_field_value,
)
from fakekube.api.selectors.fieldsets import (
    CORE_EVENT_FIELD_SET,
    DEFAULT_FIELD_SET,
    EVENTS_V1_FIELD_SET,
    JOB_FIELD_SET,
    NAMESPACE_FIELD_SET,
    NODE_FIELD_SET,
    POD_FIELD_SET,
    REPLICATION_CONTROLLER_FIELD_SET,
    SECRET_FIELD_SET,
    SERVICE_FIELD_SET,
    FieldGetter,
    FieldSet,
    Selectable,
    convert_field_selector,
    object_fields,
    supported_fields,
    unsupported_field_error,
)
from fakekube.api.selectors.label_parser import parse_label_selector
from fakekube.api.selectors.labels import (
    EVERYTHING,
    NOTHING,
    LabelSelector,
    Requirement,
    label_selector_from_object,
    new_requirement,
    selector_from_set,
    selector_to_string,
)
from fakekube.api.selectors.selection import (
    DOES_NOT_EXIST,
    DOUBLE_EQUALS,
    EQUALS,
    EXISTS,
    GREATER_THAN,
    IN,
    LESS_THAN,
    NOT_EQUALS,
    NOT_IN,
    SelectorError,
)

__all__ = [
    "CORE_EVENT_FIELD_SET", "DEFAULT_FIELD_SET", "DOES_NOT_EXIST", "DOUBLE_EQUALS", "EQUALS", "EVENTS_V1_FIELD_SET",
    "EVERYTHING", "EXISTS", "GREATER_THAN", "IN", "JOB_FIELD_SET", "LESS_THAN", "NAMESPACE_FIELD_SET", "NODE_FIELD_SET",
    "NOTHING", "NOT_EQUALS", "NOT_IN", "POD_FIELD_SET", "REPLICATION_CONTROLLER_FIELD_SET", "SECRET_FIELD_SET",
    "SERVICE_FIELD_SET",
    "FieldGetter", "FieldRequirement", "FieldSelector", "FieldSet", "LabelSelector", "Requirement", "Selectable",
    "SelectorError",
    "convert_field_selector", "escape_field_value", "label_selector_from_object", "new_requirement",
    "object_fields", "parse_field_selector", "parse_label_selector", "selector_from_set", "selector_to_string",
    "supported_fields", "unescape_field_value", "unsupported_field_error",
]
