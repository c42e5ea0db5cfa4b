"""Upstream's slow-start batches: create many objects without flooding a failing API.

A controller that must create ``count`` pods (ReplicaSets, Jobs, DaemonSets) tries one,
then two, four, … doubling while every call of a batch succeeds, and stops after the
first batch with a failure: a namespace whose quota or admission refuses pods costs one
request and one event per sync, not hundreds. Source (Kubernetes 1.33):
``pkg/controller/replicaset/replica_set.go`` ``slowStartBatch`` and
``controller.SlowStartInitialBatchSize`` (1). Upstream runs a batch's calls concurrently;
here they run one after another in order, and every call of the failing batch is still
made, as upstream's goroutines all are.
"""

from __future__ import annotations

from typing import Callable, TypeVar

#: ``controller.SlowStartInitialBatchSize``.
SLOW_START_INITIAL_BATCH_SIZE = 1

E = TypeVar("E")


def slow_start_batch(count: int, initial_batch_size: int, call: Callable[[], E | None]) -> tuple[int, E | None]:
    """Make up to ``count`` calls in doubling batches; ``call`` returns None on success or
    an error. Returns (how many succeeded, the batch's first error or None)."""
    successes = 0
    remaining = count
    batch = min(remaining, initial_batch_size)
    while batch > 0:
        errors = [error for error in (call() for _ in range(batch)) if error is not None]
        successes += batch - len(errors)
        if errors:
            return successes, errors[0]
        remaining -= batch
        batch = min(2 * batch, remaining)
    return successes, None
