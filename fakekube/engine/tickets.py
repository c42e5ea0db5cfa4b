"""Write tickets: what a client's write waits for before it is answered.

The apiserver answers a write only once the cluster has reacted to it at that instant
(the Deployment controller made its ReplicaSet, the ReplicaSet controller its pods, the
scheduler bound them...), so a client making sequential calls sees each call's effects
before its next one, the same on every run. What a write waits for is exactly its own
consequences: the write takes a :class:`Ticket`; every work item its store changes
queue carries the ticket, and so does every item a reconcile of such an item queues (its
own writes and ``enqueue``), transitively. Timers do not carry tickets: a write never
waits for cluster time to pass. The write is answered when no item carries its ticket —
so a write nobody reacts to (a ConfigMap) is answered at once, whatever else the engine
is doing (a long clock advance, another client's work).

Bounds, so that no write waits without end and nobody is stalled by someone else:

* a ticket's **budget** (:data:`MAX_RECONCILES_PER_WRITE` reconciles; a write that finds
  the engine busy with other work, :data:`MAX_RECONCILES_PER_BUSY_WRITE`, since its
  reactions then mix with that work's — the scheduler's queue is shared): past it the
  write is answered and the rest of its consequences go on in the engine without it (a
  Deployment of 2,147,483,647 replicas is answered after the first bursts of pods);
* an **external wait**: while the engine waits on an admission webhook called by a
  controller, a waiting write waits for it at most :data:`EXTERNAL_WAIT_PATIENCE_S` of
  wall time (transport time), then is answered;
* the engine stopping ends every wait.

Past a bound, what a client sees next depends on timing: the only case where a single
client's sequential calls are not reproducible, and only for writes whose reactions are
that large or that slow (docs/reliability.md).
"""

from __future__ import annotations

#: The most reconciles a write's answer waits for (its own consequences at its instant):
#: a Deployment of about 450 replicas settles within it.
MAX_RECONCILES_PER_WRITE = 5_000
#: The same for a write that came while the engine was busy with other work (its items go
#: first, but shared work such as the scheduler's queue is behind that work's).
MAX_RECONCILES_PER_BUSY_WRITE = 1_000
#: How long (wall seconds) a waiting write bears one admission webhook call made by a
#: controller before it is answered without the rest of its consequences.
EXTERNAL_WAIT_PATIENCE_S = 1.0


class Ticket:
    """One client write's claim on its consequences. ``pending`` and ``reconciles`` change
    only under the work queue's lock (fakekube/engine/workqueue.py)."""

    __slots__ = ("pending", "reconciles", "budget", "closed", "error", "urgent")

    def __init__(self, budget: int = MAX_RECONCILES_PER_WRITE, urgent: bool = False) -> None:
        #: Queued or running work items that carry this ticket.
        self.pending = 0
        #: Reconciles of such items so far.
        self.reconciles = 0
        self.budget = budget
        #: The write has been answered: its ticket no longer spreads to new work.
        self.closed = False
        #: What stopped the engine in this write's work (an ``EngineStuck``), raised to the writer.
        self.error: BaseException | None = None
        #: The write came while the engine was busy with other work: its items go first
        #: (fakekube/engine/workqueue.py). A write to an idle engine keeps plain FIFO order.
        self.urgent = urgent

    @property
    def live(self) -> bool:
        """Still waited for: not answered and within its budget."""
        return not self.closed and self.reconciles < self.budget

    @property
    def settled(self) -> bool:
        """Nothing more to wait for: every item done, or the budget spent."""
        return self.pending <= 0 or self.reconciles >= self.budget

    def __repr__(self) -> str:
        return f"Ticket(pending={self.pending}, reconciles={self.reconciles}, closed={self.closed})"


def live_tickets(tickets: tuple[Ticket, ...]) -> tuple[Ticket, ...]:
    """The tickets work should still carry on (an answered write's ticket stops spreading)."""
    if not tickets:
        return tickets
    return tuple(ticket for ticket in tickets if ticket.live)
