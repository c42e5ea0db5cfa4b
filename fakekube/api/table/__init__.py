"""Server-side ``meta.k8s.io/v1`` Table output, the way ``kubectl get`` asks for it.

kubectl prints whatever columns the server sends, so ``kubectl get pods`` looks right
only if we compute upstream's columns: the printers of
``pkg/printers/internalversion/printers.go`` (re-expressed here, not copied). Like the
real apiserver we always generate the wide columns; kubectl hides priority-1 columns
unless ``-o wide``.

Ages are ``now - timestamp`` on the cluster's virtual clock, formatted like upstream's
``duration.HumanDuration``. Types without a printer get upstream's default table
convertor (Name + "Created At").

- :mod:`.core`: Table/row assembly (:func:`to_table`) from the spec a type declares.
- :mod:`.columns`: ``Column``, ``TableSpec`` and the shared columns.
- :mod:`.cells`: lookups and label formats every printer uses.
- :mod:`.duration`: ``human_duration`` and ages.
- :mod:`.docs`: columns described by a field's documentation (upstream's ``SwaggerDoc``).
- one module per family of printers: :mod:`.pods`, :mod:`.nodes`, :mod:`.workloads`,
  :mod:`.jobs`, :mod:`.network`, :mod:`.storage`, :mod:`.events`, :mod:`.config`,
  :mod:`.other`, :mod:`.admission`, :mod:`.admin`, :mod:`.metrics`, :mod:`.dra`; each declares its ``*_TABLE`` specs next to its cell functions, and a type's declaration
  (``ResourceType.table``) names the one it prints with.

Everything public is re-exported here; import from ``fakekube.api.table``.
"""

from fakekube.api.table.admin import (
    CERTIFICATE_SIGNING_REQUEST_TABLE,
    COMPONENT_STATUS_TABLE,
    FLOW_SCHEMA_TABLE,
    POD_TEMPLATE_TABLE,
    PRIORITY_LEVEL_CONFIGURATION_TABLE,
    RUNTIME_CLASS_TABLE,
    csr_condition,
)
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
from fakekube.api.table.config import (
    CONFIG_MAP_TABLE,
    LIMIT_RANGE_TABLE,
    NAMESPACE_TABLE,
    RESOURCE_QUOTA_TABLE,
    SECRET_TABLE,
    SERVICE_ACCOUNT_TABLE,
)
from fakekube.api.table.core import (DEFAULT_TABLE, Printable, partial_object_metadata, table_head, table_rows,
                                     table_spec, to_table)
from fakekube.api.table.duration import UNKNOWN, age, human_duration, parse_time
from fakekube.api.table.events import EVENT_TABLE
from fakekube.api.table.jobs import CRON_JOB_TABLE, JOB_TABLE, job_status
from fakekube.api.table.network import (
    ENDPOINT_SLICE_TABLE,
    ENDPOINTS_TABLE,
    INGRESS_CLASS_TABLE,
    INGRESS_TABLE,
    IP_ADDRESS_TABLE,
    NETWORK_POLICY_TABLE,
    SERVICE_CIDR_TABLE,
    SERVICE_TABLE,
    service_external_ip,
    service_ports,
)
from fakekube.api.table.dra import (
    DEVICE_CLASS_TABLE,
    RESOURCE_CLAIM_TABLE,
    RESOURCE_CLAIM_TEMPLATE_TABLE,
    RESOURCE_SLICE_TABLE,
)
from fakekube.api.table.metrics import NODE_METRICS_TABLE, POD_METRICS_TABLE
from fakekube.api.table.nodes import NODE_TABLE, node_cells, node_roles
from fakekube.api.table.other import (
    API_SERVICE_TABLE,
    BINDING_TABLE,
    HORIZONTAL_POD_AUTOSCALER_TABLE,
    LEASE_TABLE,
    POD_DISRUPTION_BUDGET_TABLE,
    PRIORITY_CLASS_TABLE,
    ROLE_TABLE,
    hpa_targets,
)
from fakekube.api.table.pods import NODE_UNREACHABLE_REASON, POD_TABLE, pod_cells, pod_row_conditions
from fakekube.api.table.storage import (
    CSI_DRIVER_TABLE,
    CSI_NODE_TABLE,
    CSI_STORAGE_CAPACITY_TABLE,
    PERSISTENT_VOLUME_CLAIM_TABLE,
    PERSISTENT_VOLUME_TABLE,
    STORAGE_CLASS_TABLE,
    VOLUME_ATTACHMENT_TABLE,
    VOLUME_ATTRIBUTES_CLASS_TABLE,
    access_modes,
)
from fakekube.api.table.workloads import (
    CONTROLLER_REVISION_TABLE,
    DAEMON_SET_TABLE,
    DEPLOYMENT_TABLE,
    REPLICA_SET_TABLE,
    REPLICATION_CONTROLLER_TABLE,
    STATEFUL_SET_TABLE,
)

__all__ = [
    "AGE", "CONTAINERS", "CREATED_AT", "CREATED_DOC", "DEFAULT_TABLE", "IMAGES", "NAME", "NAME_DOC",
    "NODE_UNREACHABLE_REASON", "NONE", "SELECTOR", "UNKNOWN", "UNSET",
    # the printers, one per type (or shared by a pair), named by each type's declaration
    "API_SERVICE_TABLE", "BINDING_TABLE", "CONFIG_MAP_TABLE", "CSI_STORAGE_CAPACITY_TABLE", "CONTROLLER_REVISION_TABLE", "CRON_JOB_TABLE", "DAEMON_SET_TABLE",
    "DEPLOYMENT_TABLE", "ENDPOINTS_TABLE", "ENDPOINT_SLICE_TABLE", "EVENT_TABLE", "HORIZONTAL_POD_AUTOSCALER_TABLE",
    "INGRESS_TABLE", "JOB_TABLE", "LEASE_TABLE", "LIMIT_RANGE_TABLE", "NAMESPACE_TABLE", "NETWORK_POLICY_TABLE",
    "NODE_TABLE", "PERSISTENT_VOLUME_CLAIM_TABLE", "PERSISTENT_VOLUME_TABLE", "POD_DISRUPTION_BUDGET_TABLE",
    "POD_TABLE", "PRIORITY_CLASS_TABLE", "REPLICATION_CONTROLLER_TABLE", "REPLICA_SET_TABLE", "RESOURCE_QUOTA_TABLE",
    "ROLE_TABLE", "SECRET_TABLE", "SERVICE_ACCOUNT_TABLE", "SERVICE_TABLE", "STATEFUL_SET_TABLE",
    "STORAGE_CLASS_TABLE", "CERTIFICATE_SIGNING_REQUEST_TABLE", "COMPONENT_STATUS_TABLE", "CSI_DRIVER_TABLE",
    "CSI_NODE_TABLE", "FLOW_SCHEMA_TABLE", "NODE_METRICS_TABLE", "POD_METRICS_TABLE", "INGRESS_CLASS_TABLE", "IP_ADDRESS_TABLE", "POD_TEMPLATE_TABLE",
    "PRIORITY_LEVEL_CONFIGURATION_TABLE", "RUNTIME_CLASS_TABLE", "DEVICE_CLASS_TABLE", "RESOURCE_CLAIM_TABLE",
    "RESOURCE_CLAIM_TEMPLATE_TABLE", "RESOURCE_SLICE_TABLE", "VOLUME_ATTRIBUTES_CLASS_TABLE",
    "SERVICE_CIDR_TABLE", "VOLUME_ATTACHMENT_TABLE",
    "Cells", "Column", "Obj", "Printable", "Printer", "TableSpec",
    "access_modes", "age", "csr_condition", "format_label_selector", "format_labels", "hpa_targets", "human_duration", "job_status",
    "node_cells", "node_roles", "parse_time", "partial_object_metadata", "pod_cells", "pod_row_conditions",
    "service_external_ip", "service_ports", "table_head", "table_rows", "table_spec", "to_table",
]
