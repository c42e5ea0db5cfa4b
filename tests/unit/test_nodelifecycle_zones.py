"""Zone keys, zone states and disruption handling, per upstream's node lifecycle controller."""

import pytest

from fakekube.controllers.nodelifecycle import (
    NodeLifecycleConfig, ZoneState, compute_zone_state, handle_disruption, zone_eviction_rate_per_s, zone_key,
)

CONFIG = NodeLifecycleConfig()


def labelled(**labels):
    return {"metadata": {"labels": labels}}


def test_zone_key() -> None:
    assert zone_key({"metadata": {}}) == ""
    assert zone_key(labelled(**{"topology.kubernetes.io/region": "r1", "topology.kubernetes.io/zone": "a"})) == "r1:\x00:a"
    beta = labelled(**{"failure-domain.beta.kubernetes.io/zone": "old", "topology.kubernetes.io/zone": "new"})
    assert zone_key(beta) == ":\x00:old"


@pytest.mark.parametrize(("statuses", "expected"), [
    (["True", "False", "Unknown"], (2, ZoneState.NORMAL)),  # 2 of 3 not ready: under the "more than 2" rule
    (["False", "Unknown", "Unknown"], (3, ZoneState.FULL_DISRUPTION)),
    (["True", "False", "False", "Unknown"], (3, ZoneState.PARTIAL_DISRUPTION)),  # 3/4 = 0.75 >= 0.55
    (["True", "True", "False", "False", None], (3, ZoneState.PARTIAL_DISRUPTION)),  # 3/5 = 0.6
    (["True", "True", "True", "False", "False", "False"], (3, ZoneState.NORMAL)),  # 3/6 = 0.5 < 0.55
    ([None], (1, ZoneState.FULL_DISRUPTION)),
    ([], (0, ZoneState.NORMAL)),
])
def test_compute_zone_state(statuses, expected) -> None:
    assert compute_zone_state(statuses, CONFIG) == expected


def test_rate_per_state() -> None:
    assert zone_eviction_rate_per_s(ZoneState.NORMAL, 3, CONFIG) == 0.1
    assert zone_eviction_rate_per_s(ZoneState.PARTIAL_DISRUPTION, 50, CONFIG) == 0.0
    assert zone_eviction_rate_per_s(ZoneState.PARTIAL_DISRUPTION, 51, CONFIG) == 0.01
    assert zone_eviction_rate_per_s(ZoneState.FULL_DISRUPTION, 3, CONFIG) == 0.1
    assert zone_eviction_rate_per_s(ZoneState.INITIAL, 3, CONFIG) is None


def test_first_pass_sets_every_zone_from_initial() -> None:
    decision = handle_disruption({}, {"b": ["True"], "a": ["True", "False"]}, CONFIG)
    assert list(decision.zone_states) == ["a", "b"]
    assert decision.zone_states == {"a": ZoneState.NORMAL, "b": ZoneState.NORMAL}
    assert decision.rates_per_s == {"a": 0.1, "b": 0.1}
    assert not decision.mark_all_nodes_reachable and not decision.reset_probe_timestamps


def test_one_zone_fully_disrupted_keeps_normal_rate() -> None:
    previous = {"a": ZoneState.NORMAL, "b": ZoneState.NORMAL}
    decision = handle_disruption(previous, {"a": ["Unknown", "Unknown"], "b": ["True"]}, CONFIG)
    assert decision.zone_states == {"a": ZoneState.FULL_DISRUPTION, "b": ZoneState.NORMAL}
    assert decision.rates_per_s == {"a": 0.1}


def test_all_zones_fully_disrupted_stops_evictions_and_untaints() -> None:
    previous = {"a": ZoneState.NORMAL, "b": ZoneState.NORMAL}
    decision = handle_disruption(previous, {"a": ["Unknown"], "b": ["False"]}, CONFIG)
    assert decision.zone_states == {"a": ZoneState.FULL_DISRUPTION, "b": ZoneState.FULL_DISRUPTION}
    assert decision.rates_per_s == {"a": 0.0, "b": 0.0}
    assert decision.mark_all_nodes_reachable
    # Still all down next pass: nothing changes.
    again = handle_disruption(decision.zone_states, {"a": ["Unknown"], "b": ["False"]}, CONFIG)
    assert again.rates_per_s == {} and not again.mark_all_nodes_reachable


def test_leaving_cluster_wide_disruption_resets_probes_and_all_rates() -> None:
    previous = {"a": ZoneState.FULL_DISRUPTION, "b": ZoneState.FULL_DISRUPTION}
    decision = handle_disruption(previous, {"a": ["True"], "b": ["Unknown"]}, CONFIG)
    assert decision.reset_probe_timestamps
    assert decision.zone_states == {"a": ZoneState.NORMAL, "b": ZoneState.FULL_DISRUPTION}
    assert decision.rates_per_s == {"a": 0.1, "b": 0.1}


def test_partial_disruption_in_small_and_large_zones() -> None:
    small = ["True"] + ["Unknown"] * 3
    large = ["True"] * 20 + ["Unknown"] * 31
    decision = handle_disruption({"s": ZoneState.NORMAL, "l": ZoneState.NORMAL}, {"s": small, "l": large}, CONFIG)
    assert decision.zone_states == {"l": ZoneState.PARTIAL_DISRUPTION, "s": ZoneState.PARTIAL_DISRUPTION}
    assert decision.rates_per_s == {"l": 0.01, "s": 0.0}


def test_zones_without_nodes_are_forgotten() -> None:
    decision = handle_disruption({"gone": ZoneState.NORMAL, "a": ZoneState.NORMAL}, {"a": ["True"]}, CONFIG)
    assert decision.zone_states == {"a": ZoneState.NORMAL} and decision.rates_per_s == {}
