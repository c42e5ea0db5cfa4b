"""Token bucket and rate-limited timed queue on virtual seconds."""

import pytest

from fakekube.controllers.nodelifecycle import QueueFullError, RateLimitedTimedQueue, TokenBucket


def test_token_bucket_burst_one_starts_full() -> None:
    bucket = TokenBucket(0.1)
    assert bucket.try_accept(0.0)
    assert not bucket.try_accept(9.999)
    assert bucket.next_allowed_s() == 10.0
    assert bucket.try_accept(10.0)
    assert bucket.next_allowed_s() == 20.0
    assert bucket.try_accept(35.0)  # idle time does not bank more than one token
    assert not bucket.try_accept(44.0)
    assert bucket.next_allowed_s() == 45.0


def test_token_bucket_burst_and_never() -> None:
    bucket = TokenBucket(1.0, burst=3)
    assert [bucket.try_accept(0.0) for _ in range(4)] == [True, True, True, False]
    assert bucket.next_allowed_s() == 1.0
    never = TokenBucket(0.0)
    assert not never.try_accept(1e9) and never.next_allowed_s() is None


def always_done(_item):
    return True, 0.0


def drive(queue, until_s, step_s=0.1):
    """Run try_process every step (upstream's 100 ms tainting pass); (time, value) pairs."""
    log, tick = [], 0
    while tick * step_s <= until_s:
        now = round(tick * step_s, 6)
        log += [(now, value) for value in queue.try_process(now, always_done)]
        tick += 1
    return log


def test_one_node_every_ten_seconds_in_queue_order() -> None:
    queue = RateLimitedTimedQueue(0.1)
    for name in ["n3", "n1", "n2"]:
        assert queue.add(name, f"uid-{name}", 0.0)
    assert [item.value for item in queue] == ["n3", "n1", "n2"]
    assert drive(queue, 30) == [(0.0, "n3"), (10.0, "n1"), (20.0, "n2")]


def test_processed_value_is_not_added_again_until_removed() -> None:
    queue = RateLimitedTimedQueue(0.1)
    queue.add("n1", "u", 0.0)
    queue.try_process(0.0, always_done)
    assert not queue.add("n1", "u", 5.0)
    assert queue.remove("n1")
    assert queue.add("n1", "u", 5.0)
    assert queue.next_due_s() == 10.0


def test_failed_action_is_retried_after_wait() -> None:
    queue = RateLimitedTimedQueue(1.0)
    queue.add("n1", "u", 0.0)
    attempts = []

    def flaky(item):
        attempts.append(item.process_at_s)
        return len(attempts) > 1, 0.05

    queue.try_process(0.0, flaky)
    assert len(queue) == 1 and queue.head().process_at_s == pytest.approx(0.050001)
    queue.try_process(1.0, flaky)
    assert len(queue) == 0


def test_swap_rate_zero_stops_and_resume_waits_a_period() -> None:
    queue = RateLimitedTimedQueue(0.1)
    for name in ["a", "b"]:
        queue.add(name, name, 0.0)
    queue.swap_rate(0.0, 0.0)
    assert queue.try_process(100.0, always_done) == [] and queue.next_due_s() is None
    queue.swap_rate(0.1, 100.0)  # the never-limiter had no token: the new bucket starts drained
    assert queue.next_due_s() == 110.0
    assert queue.try_process(110.0, always_done) == ["a"]


def test_swap_rate_keeps_a_full_bucket_full() -> None:
    queue = RateLimitedTimedQueue(0.1)
    queue.add("a", "a", 0.0)
    queue.swap_rate(0.01, 0.0)  # old bucket had its token: new one starts full
    assert queue.try_process(0.0, always_done) == ["a"]
    queue.add("b", "b", 1.0)
    assert queue.next_due_s() == 100.0


def test_capacity_is_enforced() -> None:
    queue = RateLimitedTimedQueue(0.1, capacity=2)
    queue.add("a", "a", 0.0)
    queue.add("b", "b", 0.0)
    with pytest.raises(QueueFullError):
        queue.add("c", "c", 0.0)
