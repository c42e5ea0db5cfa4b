"""Score normalization shared by plugins (upstream's plugins/helper/normalize_score.go)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Hashable

from fakekube.scheduler.framework import MAX_NODE_SCORE, NodeInfo


def default_normalize_score(scores: list[int], reverse: bool, max_priority: int = MAX_NODE_SCORE) -> None:
    """Scale ``scores`` in place so the highest becomes ``max_priority`` (integer division,
    as upstream); ``reverse`` flips them (fewest is best). All zero: 0, or max when reversed."""
    highest = max(scores, default=0)
    if highest == 0:
        if reverse:
            scores[:] = [max_priority] * len(scores)
        return
    for index, score in enumerate(scores):
        scaled = max_priority * score // highest
        scores[index] = max_priority - scaled if reverse else scaled


class NodeMemo:
    """Per-node results of a plugin step that depends only on the node's state and a pod
    signature (its requests, say): valid while the node's generation is unchanged.

    A burst of alike pods evaluates each node again and again, and a node changes only
    when a pod lands on or leaves it, so most evaluations become one dict lookup. Bounded:
    at most ``max_signatures`` pod signatures (least recently used dropped), each with at
    most one entry per node.
    """

    def __init__(self, max_signatures: int = 32) -> None:
        self.max_signatures = max_signatures
        self._tables: OrderedDict[Hashable, dict[str, tuple[int, Any]]] = OrderedDict()

    def table(self, signature: Hashable) -> dict[str, tuple[int, Any]]:
        """The node name -> (generation, result) table of one pod signature."""
        table = self._tables.get(signature)
        if table is None:
            table = self._tables[signature] = {}
            if len(self._tables) > self.max_signatures:
                self._tables.popitem(last=False)
        else:
            self._tables.move_to_end(signature)
        return table


class LoggedTable:
    """Per-node results of one pod signature, valid until the cache's change log names the
    node again (see :class:`LoggedMemo`): ``values`` maps node name → result; ``blocked``
    holds the entries whose result is not None (a filter chain's rejections)."""

    __slots__ = ("values", "blocked", "position")

    def __init__(self, position: int) -> None:
        self.values: dict[str, Any] = {}
        self.blocked: dict[str, Any] = {}
        self.position = position

    def put(self, name: str, value: Any) -> None:
        self.values[name] = value
        if value is not None:
            self.blocked[name] = value


class LoggedMemo:
    """Like :class:`NodeMemo`, but a table is kept valid by the cache's
    :class:`~fakekube.scheduler.cache.NodeChangeLog` instead of per-node generations: on
    each use the nodes logged since the table's last use are dropped from it (and returned,
    so a caller may recompute them at once), so looking up a node costs no generation
    check and a whole cycle's nodes can be looked up at C speed (``map``), and a table
    that holds every node answers "which nodes does this signature reject" without a scan.

    Its one invariant: a NodeInfo of the cache changes only through the cache, which logs
    the node's name (``Cache.set_node/remove_node/add_pod/remove_pod``). Bounded as
    NodeMemo: ``max_signatures`` tables (least recently used dropped), at most one entry
    per node each; a table whose log position was dropped from the log starts empty."""

    def __init__(self, max_signatures: int = 32) -> None:
        self.max_signatures = max_signatures
        self._tables: OrderedDict[Hashable, LoggedTable] = OrderedDict()

    def table(self, signature: Hashable, log: Any) -> tuple[LoggedTable, list[str]]:
        """The table of ``signature`` brought up to ``log`` (a NodeChangeLog), and the names
        dropped from it because they changed since its last use."""
        position = log.position
        table = self._tables.get(signature)
        if table is None:
            table = self._tables[signature] = LoggedTable(position)
            if len(self._tables) > self.max_signatures:
                self._tables.popitem(last=False)
            return table, []
        self._tables.move_to_end(signature)
        if table.position == position:
            return table, []
        changed = log.since(table.position)
        table.position = position
        if changed is None:
            dropped = list(table.values)
            table.values.clear()
            table.blocked.clear()
            return table, dropped
        dropped = []
        values, blocked = table.values, table.blocked
        for name in changed:
            if values.pop(name, _MISSING) is not _MISSING:
                blocked.pop(name, None)
                dropped.append(name)
        return table, dropped


_MISSING = object()
