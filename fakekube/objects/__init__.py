"""Kubernetes object rules shared by the scheduler, the controllers and the kubelets.

Pure functions over object dicts: no I/O, no store, no clock reads (time is passed in),
and inputs are never changed (helpers that "modify" return new objects). It imports
nothing above the store and the clock (DESIGN.md part 4), so every part above may use it.

- :mod:`.kinds`: resource names (the store's keys).
- :mod:`.labels`: the one metav1.LabelSelector matcher (nil matches nothing, empty everything).
- :mod:`.taints` and :mod:`.tolerations`: taint identity and edits, toleration matching,
  how long a pod may stay on a tainted node, DefaultTolerationSeconds.
- :mod:`.owners`: controller references, adoption and release.
- :mod:`.pods`: readiness, availability, activity, disruption targets, resource requests.
- :mod:`.events`: when an Event was last seen.
- :mod:`.quantity`: resource quantities as exact numbers.
- :mod:`.constants`: well-known labels, annotations and finalizers.

The names below are the public surface; import them from ``fakekube.objects``.
Constants stay in their modules (``from fakekube.objects import constants``).
"""

from fakekube.objects import constants
from fakekube.objects.kinds import Resource
from fakekube.objects.labels import (
    MATCH_EVERYTHING,
    MATCH_NOTHING,
    LabelMatcher,
    Requirement,
    compile_selector,
    selector_matches,
)
from fakekube.objects.owners import (
    adopted,
    controller_of,
    is_controlled_by,
    orphaned,
    owner_reference,
    owner_references,
    owner_uids,
)
from fakekube.objects.pods import (
    is_pod_active,
    is_pod_available,
    is_pod_ready,
    is_pod_terminal,
    pod_condition,
    pod_requests,
    sum_requests,
    with_disruption_target,
)
from fakekube.objects.quantity import canonical_quantity, int_value, milli_value, parse_quantity
from fakekube.objects.taints import (
    NO_EXECUTE,
    NO_SCHEDULE,
    PREFER_NO_SCHEDULE,
    TAINT_NODE_NOT_READY,
    TAINT_NODE_UNREACHABLE,
    TAINT_NODE_UNSCHEDULABLE,
    add_or_update_taint,
    match_taint,
    node_taints,
    noexecute_taints,
    remove_taint,
    taint_diff,
    taint_exists,
    taint_to_string,
    taints_with_effect,
)
from fakekube.objects.tolerations import (
    DEFAULT_TOLERATION_SECONDS,
    default_tolerations,
    eviction_time,
    first_untolerated_taint,
    matching_tolerations,
    min_toleration_s,
    tolerates_all,
    tolerates_taint,
    tolerations_tolerate_taint,
)

__all__ = [
    # kinds
    "Resource",
    # labels
    "LabelMatcher", "MATCH_EVERYTHING", "MATCH_NOTHING", "Requirement", "compile_selector", "selector_matches",
    # owners
    "adopted", "controller_of", "is_controlled_by", "orphaned", "owner_reference", "owner_references",
    "owner_uids",
    # pods
    "is_pod_active", "is_pod_available", "is_pod_ready", "is_pod_terminal", "pod_condition", "pod_requests",
    "sum_requests", "with_disruption_target",
    # quantity
    "canonical_quantity", "int_value", "milli_value", "parse_quantity",
    # taints
    "NO_EXECUTE", "NO_SCHEDULE", "PREFER_NO_SCHEDULE", "TAINT_NODE_NOT_READY", "TAINT_NODE_UNREACHABLE",
    "TAINT_NODE_UNSCHEDULABLE", "add_or_update_taint", "match_taint", "node_taints", "noexecute_taints",
    "remove_taint", "taint_diff", "taint_exists", "taint_to_string", "taints_with_effect",
    # tolerations
    "DEFAULT_TOLERATION_SECONDS", "default_tolerations", "eviction_time", "first_untolerated_taint",
    "matching_tolerations", "min_toleration_s", "tolerates_all", "tolerates_taint",
    "tolerations_tolerate_taint",
    # constants (a module)
    "constants",
]
