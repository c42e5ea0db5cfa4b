"""Usage timelines (behaviour data), the scrape grid, metrics-server's window rules and the
quantity strings it prints."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from fakekube.kubelet.behaviour import (
    DEFAULT_BEHAVIOUR,
    BehaviourCatalog,
    ContainerBehaviour,
    behaviour_from_dict,
    parse_annotation,
)
from fakekube.kubelet.containers import ContainerRun, Instance
from fakekube.kubelet.probes import plan_probes
from fakekube.kubelet.resourcemetrics import ResourceMetrics, running_at
from fakekube.kubelet.usage import UsageTimeline, parse_usage
from fakekube.objects.metrics import last_scrape
from fakekube.objects.quantity import format_binary_si, format_decimal_si

T0 = datetime(2025, 1, 1, tzinfo=timezone.utc)


def test_a_timeline_steps_and_averages() -> None:
    timeline = UsageTimeline(((0.0, 10.0), (60.0, 100.0), (120.0, 0.0)))
    assert [timeline.value_at(t) for t in (0, 59.9, 60, 119, 500)] == [10.0, 10.0, 100.0, 100.0, 0.0]
    assert timeline.average(45, 60) == 10.0
    assert timeline.average(50, 70) == pytest.approx(55.0)
    assert timeline.average(110, 130) == pytest.approx(50.0)
    assert UsageTimeline(((30.0, 4.0),)).value_at(0) == 4.0  # before the first segment: its value
    assert timeline.average(60, 60) == 100.0


def test_the_default_usage_is_an_idle_nginx() -> None:
    assert DEFAULT_BEHAVIOUR.cpu_usage_m.value_at(0) == 1.0
    assert DEFAULT_BEHAVIOUR.memory_usage_bytes.value_at(0) == 4 * 1024 * 1024


@pytest.mark.parametrize("raw,unit,expected", [
    (250, "m", ((0.0, 250.0),)),
    ("250m", "m", ((0.0, 250.0),)),
    ("0.5", "m", ((0.0, 500.0),)),
    ("64Mi", "bytes", ((0.0, 67108864.0),)),
    ([[0, "10Mi"], [30, 2048]], "bytes", ((0.0, 10485760.0), (30.0, 2048.0))),
    ([{"from_s": 0, "value": 1}, {"from_s": 5, "value": 2}], "m", ((0.0, 1.0), (5.0, 2.0))),
])
def test_parse_usage(raw: object, unit: str, expected: tuple[tuple[float, float], ...]) -> None:
    assert parse_usage(raw, unit).segments == expected


@pytest.mark.parametrize("raw,problem", [
    (-1, "must be between 0"),
    ("lots", "quantities must match"),
    (True, "must be a figure"),
    ({"a": 1}, "must be a figure"),
    ([[5, 1], [5, 2]], "strictly increasing"),
    ([[0, 1, 2]], "must be [from_s, figure]"),
    ([[-1, 1]], "seconds >= 0"),
    (float("inf"), "must be a number"),
    ([[t, 1] for t in range(1001)], "at most 1000 segments"),
])
def test_bad_usage_is_refused(raw: object, problem: str) -> None:
    with pytest.raises(ValueError, match=problem.replace("[", r"\[").replace("]", r"\]")):
        parse_usage(raw, "m")


def test_usage_fields_come_from_config_rules_and_annotations() -> None:
    catalog = BehaviourCatalog.from_config({"images": [{"image": "redis*", "memory_usage_bytes": "50Mi"}]})
    redis = catalog.for_image("redis:7")
    assert (redis.cpu_usage_m.value_at(0), redis.memory_usage_bytes.value_at(0)) == (1.0, 50 * 2**20)
    shared, per_container = parse_annotation('{"cpu_usage_m": 300, "side": {"cpu_usage_m": [[0, 1], [10, 9]]}}')
    assert dict(shared)["cpu_usage_m"] == UsageTimeline.constant(300)
    assert dict(dict(per_container)["side"])["cpu_usage_m"].value_at(11) == 9
    with pytest.raises(ValueError, match="behaviours.default.memory_usage_bytes: must be between 0"):
        BehaviourCatalog.from_config({"default": {"memory_usage_bytes": -5}})


def test_scrapes_fall_on_a_fixed_grid() -> None:
    assert last_scrape(T0) == T0
    assert last_scrape(T0 + timedelta(seconds=14.999)) == T0
    assert last_scrape(T0 + timedelta(seconds=15)) == T0 + timedelta(seconds=15)
    assert last_scrape(T0 + timedelta(seconds=61)) == T0 + timedelta(seconds=60)


class _OnePod:
    """A pod runner holding one pod with one container instance (enough for the window rules)."""

    def __init__(self, run: ContainerRun) -> None:
        self.state = type("State", (), {"node": "n", "all_runs": [run]})()

    def state_of(self, key: str) -> object:
        return self.state

    def states(self) -> list[object]:
        return [self.state]


def _container(started_s: float, finished_s: float | None = None,
               behaviour: ContainerBehaviour = DEFAULT_BEHAVIOUR) -> ContainerRun:
    spec = {"name": "c", "image": "nginx"}
    run = ContainerRun(spec, behaviour, init=False, restart_policy="Always")
    finished = T0 + timedelta(seconds=finished_s) if finished_s is not None else None
    run.current = Instance("containerd://1", T0 + timedelta(seconds=started_s), plan_probes(spec, behaviour), finished)
    return run


@pytest.mark.parametrize("started_s,window", [
    (1.0, "14s"),     # fresh: 14 s before the scrape at 15 s
    (5.0, "10s"),     # fresh at the rule's lower bound
    (5.5, None),      # up 9.5 s: too fresh, one point only
    (0.0, "15s"),     # started on the scrape at 0 s: reported by it (stats are read after a start)
    (-0.5, "15s"),    # ran before the previous scrape at 0 s: two points, a whole window
])
def test_the_window_rules_are_metrics_servers(started_s: float, window: str | None) -> None:
    metrics = ResourceMetrics(_OnePod(_container(started_s)), node_is_up=lambda node: True)  # type: ignore[arg-type]
    found = metrics.pod_usage([("ns", "p")], T0 + timedelta(seconds=15))
    if window is None:
        assert found == {}
    else:
        assert f"{found[('ns', 'p')].window_s:g}s" == window


def test_a_container_reports_only_while_running() -> None:
    run = _container(0.0, finished_s=20.0)
    assert running_at(run, T0 + timedelta(seconds=19.9)) is run.current
    assert running_at(run, T0 + timedelta(seconds=20)) is None
    metrics = ResourceMetrics(_OnePod(run), node_is_up=lambda node: True)  # type: ignore[arg-type]
    assert metrics.pod_usage([("ns", "p")], T0 + timedelta(seconds=30)) == {}
    assert metrics.node_usage([("n", T0)], T0 + timedelta(seconds=30))["n"].cpu_nanocores == 25_000_000


@pytest.mark.parametrize("value,power,text", [
    (0, -9, "0"), (1_000_000, -9, "1m"), (1_500_000, -9, "1500u"), (123_456_789, -9, "123456789n"),
    (1_000_000_000, -9, "1"), (2_000, 0, "2k"), (250_000_000, -9, "250m"),
])
def test_decimal_si_strings(value: int, power: int, text: str) -> None:
    assert format_decimal_si(value, power) == text


@pytest.mark.parametrize("value,text", [
    (4 * 2**20, "4Mi"), (2860 * 1024, "2860Ki"), (1000, "1k"), (512, "512"), (1234567, "1234567"), (1024, "1Ki"),
    (3 * 2**30, "3Gi"),
])
def test_binary_si_strings(value: int, text: str) -> None:
    assert format_binary_si(value) == text


def test_a_behaviour_from_dict_keeps_usage_of_the_base() -> None:
    base = behaviour_from_dict({"cpu_usage_m": 40})
    assert behaviour_from_dict({"exit_code": 1}, base).cpu_usage_m.value_at(0) == 40
