"""controllers/job/status.py: completedIndexes as upstream writes and reads it."""

from __future__ import annotations

from fakekube.controllers.job.status import format_indexes, parse_indexes


def test_completed_indexes_are_written_as_sorted_intervals() -> None:
    assert format_indexes([7, 1, 3, 4, 5]) == "1,3-5,7"
    assert format_indexes([0, 1]) == "0-1"
    assert format_indexes([]) == ""


def test_completed_indexes_read_back_below_the_completions_skipping_malformed_parts() -> None:
    assert parse_indexes("1,3-5,7", 10) == {1, 3, 4, 5, 7}
    assert parse_indexes("0-9", 3) == {0, 1, 2}
    assert parse_indexes("x,2,-1,4-a", 10) == {2}
