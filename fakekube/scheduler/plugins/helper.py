"""Score normalization shared by plugins (upstream's plugins/helper/normalize_score.go)."""

from __future__ import annotations

from fakekube.scheduler.framework import MAX_NODE_SCORE


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
