"""tolerationSeconds as upstream's taint manager turns it into a time.Duration (1.33
pkg/controller/tainteviction getMinTolerationTime: ``time.Duration(s) * time.Second``)."""

import pytest

from fakekube.objects.tolerations import MAX_INT64, eviction_time, go_duration_s, min_toleration_s
from fakekube.clock import DEFAULT_EPOCH

TAINTS = [{"key": "node.kubernetes.io/unreachable", "effect": "NoExecute"}]


def tolerating(*seconds: int | None) -> list[dict]:
    return [{"operator": "Exists", "effect": "NoExecute", **({} if s is None else {"tolerationSeconds": s})}
            for s in seconds]


@pytest.mark.parametrize("seconds, expected", [
    (300, 300.0),
    (2**31 - 1, 2**31 - 1),
    (9_223_372_036, 9_223_372_036.0),      # the last whole second a Duration holds
    (9_223_372_037, None),                 # wraps negative: "tolerate forever"
    (2**55, 0.0),                          # wraps to exactly 0: evict now
    (MAX_INT64, None),                     # upstream's "not set" sentinel
])
def test_min_toleration_matches_gos_duration_arithmetic(seconds: int, expected: float | None) -> None:
    assert min_toleration_s(tolerating(seconds), TAINTS) == expected


def test_the_least_seconds_wins_before_the_conversion() -> None:
    taints = TAINTS + [{"key": "node.kubernetes.io/not-ready", "effect": "NoExecute"}]
    tolerations = [{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "tolerationSeconds": MAX_INT64},
                   {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "tolerationSeconds": 60}]
    assert min_toleration_s(tolerations, taints) == 60.0


def test_go_duration_wraps_like_int64() -> None:
    assert go_duration_s(1) == 1.0
    assert go_duration_s(18_446_744_074) == pytest.approx(0.290448384)  # 2^64 ns + a bit


def test_an_eviction_past_datetimes_range_is_never_due() -> None:
    assert eviction_time(DEFAULT_EPOCH, 9_223_372_036.0) is not None
    assert eviction_time(DEFAULT_EPOCH.replace(year=9990), 9_223_372_036.0) is None
