"""Server-side ``meta.k8s.io/v1`` Table output, the way ``kubectl get`` asks for it.

kubectl prints whatever columns the server sends, so ``kubectl get pods`` looks right
only if we compute upstream's columns: the printers of
``pkg/printers/internalversion/printers.go`` (re-expressed here, not copied). Like the
real apiserver we always generate the wide columns; kubectl hides priority-1 columns
unless ``-o wide``.

Ages are ``now - timestamp`` on the cluster's virtual clock, formatted like upstream's
``duration.HumanDuration``. Types without a printer get upstream's default table
convertor (Name + "Created At").

- :mod:`.core`: the printer registry and Table/row assembly (:func:`to_table`).
- :mod:`.columns`: ``Column``, ``TableSpec`` and the shared columns.
- :mod:`.cells`: lookups and label formats every printer uses.
- :mod:`.duration`: ``human_duration`` and ages.
- one module per family of printers: :mod:`.pods`, :mod:`.nodes`, :mod:`.workloads`,
  :mod:`.jobs`, :mod:`.network`, :mod:`.storage`, :mod:`.events`, :mod:`.config`,
  :mod:`.other`; each declares its ``TABLES`` fragment next to its cell functions.

Everything public is re-exported here; import from ``fakekube.api.table``.
"""

from fakekube.api.table.cells import NONE, UNSET, format_label_selector, format_labels
from fakekube.api.table.columns import (
    AGE,
    CONTAINERS,
    CREATED_AT,
    CREATED_DOC,
    IMAGES,
    NAME,
    NAME_DOC,
    SELECTOR,
    Cells,
    Column,
    Obj,
    Printer,
    TableSpec,
)
from fakekube.api.table.core import DEFAULT_TABLE, TABLES, partial_object_metadata, table_spec, to_table
from fakekube.api.table.duration import UNKNOWN, age, human_duration, parse_time
from fakekube.api.table.jobs import job_status
from fakekube.api.table.network import service_external_ip, service_ports
from fakekube.api.table.nodes import node_cells, node_roles
from fakekube.api.table.other import hpa_targets
from fakekube.api.table.pods import NODE_UNREACHABLE_REASON, pod_cells, pod_row_conditions
from fakekube.api.table.storage import access_modes

__all__ = [
    "AGE", "CONTAINERS", "CREATED_AT", "CREATED_DOC", "DEFAULT_TABLE", "IMAGES", "NAME", "NAME_DOC",
    "NODE_UNREACHABLE_REASON", "NONE", "SELECTOR", "TABLES", "UNKNOWN", "UNSET",
    "Cells", "Column", "Obj", "Printer", "TableSpec",
    "access_modes", "age", "format_label_selector", "format_labels", "hpa_targets", "human_duration", "job_status",
    "node_cells", "node_roles", "parse_time", "partial_object_metadata", "pod_cells", "pod_row_conditions",
    "service_external_ip", "service_ports", "table_spec", "to_table",
]
