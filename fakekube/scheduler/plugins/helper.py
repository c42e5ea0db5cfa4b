"""Score normalization shared by plugins (upstream's plugins/helper/normalize_score.go)."""

from __future__ import annotations

from collections import OrderedDict
from typing import Any, Callable, Hashable

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


def memoized(table: dict[str, tuple[int, Any]], nodes: list[NodeInfo], compute: Callable[[NodeInfo], Any]) -> list[Any]:
    """``compute(node)`` for every node, from ``table`` (a NodeMemo table) where the node's
    generation still matches, computed and remembered otherwise."""
    out: list[Any] = []
    append = out.append
    get = table.get
    for node in nodes:
        hit = get(node.name)
        if hit is not None and hit[0] == node.generation:
            append(hit[1])
        else:
            value = compute(node)
            table[node.name] = (node.generation, value)
            append(value)
    return out
