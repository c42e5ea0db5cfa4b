"""Pod affinity terms' ``matchLabelKeys`` / ``mismatchLabelKeys`` (KEP-3633, on by default
since 1.31, GA in 1.33).

Upstream the API server resolves them once, when a pod is created
(``pkg/registry/core/pod/strategy.go``, ``applyMatchLabelKeysAndMismatchLabelKeys``): for
each key the pod has as a label, ``key In (value)`` (matchLabelKeys) or ``key NotIn
(value)`` (mismatchLabelKeys) is appended to the term's ``labelSelector``; a term with a
nil labelSelector (which selects nothing) is left alone. The scheduler then only reads
``labelSelector``.
"""

from __future__ import annotations

from typing import Any, Mapping

Obj = Mapping[str, Any]


def merged_label_selector(term: Obj, pod_labels: Mapping[str, str], *, once: bool = True) -> Obj | None:
    """``term``'s labelSelector with its label keys merged in for a pod with ``pod_labels``.

    Idempotent by default: an expression already present (the API server merged it at
    create) is not added again, so a selector that was merged once gives the same matcher.
    The API server's own merge passes ``once=False``: upstream appends every expression, so
    a key also written in the selector is then seen twice and refused by validation.
    """
    selector = term.get("labelSelector")
    match_keys = term.get("matchLabelKeys") or ()
    mismatch_keys = term.get("mismatchLabelKeys") or ()
    if selector is None or not (match_keys or mismatch_keys):
        return selector
    expressions = list(selector.get("matchExpressions") or ())
    for keys, operator in ((match_keys, "In"), (mismatch_keys, "NotIn")):
        for key in keys:
            if key not in pod_labels:
                continue
            expression = {"key": key, "operator": operator, "values": [pod_labels[key]]}
            if not once or expression not in expressions:
                expressions.append(expression)
    return dict(selector, matchExpressions=expressions)
