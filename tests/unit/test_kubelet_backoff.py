"""CrashLoopBackOff and ImagePullBackOff follow client-go flowcontrol.Backoff as the kubelet configures it."""

import pytest

from fakekube.kubelet import Backoff, ImagePullBackoff, RestartBackoff, format_go_duration

KEY = ("uid-1", "app")


def crash_loop(backoff: RestartBackoff, run_s: float, crashes: int) -> list[float]:
    """A container that always runs ``run_s`` then crashes, restarted as soon as allowed: the waits."""
    now_s, waits = 0.0, []
    for _ in range(crashes):
        finished_s = now_s + run_s
        restart_s = backoff.restart_at_s(KEY, finished_s)
        waits.append(restart_s - finished_s)
        backoff.record_restart(KEY, finished_s, restart_s)
        now_s = restart_s
    return waits


def test_first_crash_restarts_at_once_then_waits_double_up_to_five_minutes() -> None:
    # doBackOff: no entry yet -> not in back-off -> Next() creates 10 s; the 10 s applies to crash two.
    assert crash_loop(RestartBackoff(), run_s=1, crashes=9) == [0, 10, 20, 40, 80, 160, 300, 300, 300]


def test_running_more_than_ten_minutes_resets_the_curve() -> None:
    backoff = RestartBackoff()
    assert crash_loop(backoff, run_s=1, crashes=4) == [0, 10, 20, 40]
    # Crashes at 1, 2, 13, 34; restarts at 1, 12, 33, 74 (lastUpdate). It now runs for 601 s.
    last_restart_s = 1 + 0 + 1 + 10 + 1 + 20 + 1 + 40
    finished_s = last_restart_s + 601
    assert backoff.restart_at_s(KEY, finished_s) == finished_s  # expired: restart at once
    assert backoff.record_restart(KEY, finished_s, finished_s) == 10  # and the curve starts again


def test_exactly_ten_minutes_of_running_does_not_reset() -> None:
    # hasExpired is a strict ">": 600 s is still the same crash loop.
    backoff = RestartBackoff()
    backoff.record_restart(KEY, 0, 0)                      # first crash at 0, restarted at once (10 s)
    assert backoff.restart_at_s(KEY, 600) == 610
    assert backoff.restart_at_s(KEY, 600.5) == 600.5


def test_in_backoff_is_strict_and_restarting_early_is_refused() -> None:
    backoff = RestartBackoff()
    backoff.record_restart(KEY, 0, 0)
    assert backoff.in_backoff(KEY, finished_s=5, now_s=14.9)
    assert not backoff.in_backoff(KEY, finished_s=5, now_s=15)  # now - finishedAt < backoff
    with pytest.raises(ValueError, match="back-off"):
        backoff.record_restart(KEY, 5, 10)
    assert backoff.delay_s(KEY) == 10
    assert backoff.record_restart(KEY, 5, 15) == 20


def test_keys_are_independent_and_forget_drops_one() -> None:
    backoff = RestartBackoff()
    backoff.record_restart(("uid-1", "a"), 0, 0)
    backoff.record_restart(("uid-1", "a"), 1, 11)
    backoff.record_restart(("uid-1", "b"), 1, 1)
    assert backoff.delay_s(("uid-1", "a")) == 20
    assert backoff.delay_s(("uid-1", "b")) == 10
    backoff.forget(("uid-1", "a"))
    assert backoff.delay_s(("uid-1", "a")) == 0
    assert len(backoff) == 1


def test_gc_drops_entries_idle_for_more_than_ten_minutes() -> None:
    backoff = RestartBackoff()
    backoff.record_restart(("u", "old"), 0, 0)
    backoff.record_restart(("u", "new"), 100, 100)
    assert backoff.gc(600) == 0
    assert backoff.gc(600.5) == 1
    assert backoff.delay_s(("u", "old")) == 0 and backoff.delay_s(("u", "new")) == 10


def test_at_the_entry_limit_expired_then_least_recently_updated_entries_go() -> None:
    backoff = Backoff(max_entries=2)
    backoff.next("a", 0, 0)
    backoff.next("b", 5, 5)
    backoff.next("a", 6, 6)          # a: 20 s, updated at 6; b updated at 5 is now the oldest
    backoff.next("c", 7, 7)
    assert len(backoff) == 2
    assert backoff.delay_s("b") == 0 and backoff.delay_s("a") == 20 and backoff.delay_s("c") == 10
    backoff.next("d", 700, 700)      # a and c expired: GC'd first, nothing live is evicted
    assert len(backoff) == 1 and backoff.delay_s("d") == 10


def test_image_pull_retries_back_off_from_each_failure() -> None:
    pulls = ImagePullBackoff()
    key = ("uid-1", "nginx:nope")
    assert not pulls.in_backoff(key, 0)
    assert pulls.record_failure(key, 0) == 10        # ErrImagePull at 0; ImagePullBackOff until 10
    assert pulls.in_backoff(key, 9.9)
    assert not pulls.in_backoff(key, 10)
    assert pulls.record_failure(key, 10) == 30
    assert pulls.record_failure(key, 30) == 70
    assert pulls.delay_s(key) == 40


def test_configurable_curve_and_validation() -> None:
    backoff = RestartBackoff(initial_s=1, max_s=60)
    assert crash_loop(backoff, run_s=1, crashes=9) == [0, 1, 2, 4, 8, 16, 32, 60, 60]
    with pytest.raises(ValueError):
        Backoff(initial_s=0)
    with pytest.raises(ValueError):
        Backoff(initial_s=20, max_s=10)


@pytest.mark.parametrize(("seconds", "text"), [(10, "10s"), (80, "1m20s"), (160, "2m40s"), (300, "5m0s"),
                                               (3600, "1h0m0s")])
def test_go_duration_format_matches_upstream_messages(seconds: float, text: str) -> None:
    assert format_go_duration(seconds) == text


def test_fractional_instants_restart_exactly_when_the_back_off_ends() -> None:
    """Scaled time makes instants like 54.165455 s: 54.165455 + 10 is 64.16545500000001 as a
    float, and the restart at the microsecond 64.165455 must not count as inside the back-off."""
    from fakekube.kubelet.backoff import RestartBackoff

    backoff = RestartBackoff()
    backoff.record_restart("c", 44.165455, 44.165455)
    restart_s = backoff.restart_at_s("c", 54.165455)
    assert round(restart_s, 6) == 64.165455
    assert not backoff.in_backoff("c", 54.165455, 64.165455)
    assert backoff.in_backoff("c", 54.165455, 64.165454)
    backoff.record_restart("c", 54.165455, 64.165455)  # no "cannot restart" error
