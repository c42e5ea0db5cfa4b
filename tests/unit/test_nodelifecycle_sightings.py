"""The monitor's deadline heap: which entries past their deadline still hold.

A quiet monitor pass is skipped only when no heap entry before now would give the pass
anything; stale entries (the node renewed since, or its quiet check moved) are dropped on
the way, as the pass's own ``expired`` drops them.
"""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from fakekube.controllers.nodelifecycle.sightings import Sightings

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def never_due(name: str, deadline: datetime) -> bool:
    return False


def test_an_entry_renewed_since_is_stale_and_dropped() -> None:
    sightings = Sightings()
    sightings.see(["a", "b"], at(0), at(0), 40, lambda name: None)  # deadline 40
    sightings.see(["a", "b"], at(10), at(10), 40, lambda name: None)  # deadline 50: both renewed
    assert not sightings.live_expired(at(45), never_due)
    assert [entry[0] for entry in sightings.heap] == [at(50)]  # the stale one went, as expired() drops it
    assert sightings.live_expired(at(51), never_due)  # nobody renewed after 10: it holds
    assert [entry[0] for entry in sightings.heap] == [at(50)]  # a holding entry stays for the pass


def test_an_entry_holds_while_one_of_its_nodes_has_not_renewed() -> None:
    sightings = Sightings()
    sightings.see(["a", "b"], at(0), at(0), 40, lambda name: None)
    sightings.see(["a"], at(10), at(10), 40, lambda name: None)  # b stopped renewing
    assert sightings.live_expired(at(41), never_due)


def test_a_full_checks_entry_holds_as_the_controller_says() -> None:
    sightings = Sightings()
    sightings.push(at(40), ("a",), None)
    asked: list[tuple[str, datetime]] = []

    def due(name: str, deadline: datetime) -> bool:
        asked.append((name, deadline))
        return True

    assert not sightings.live_expired(at(40), due)  # not before now yet
    assert sightings.live_expired(at(41), due)
    assert asked == [("a", at(40))]
    assert not sightings.live_expired(at(41), never_due)  # stale: dropped
    assert sightings.heap == []
