"""Auto-advance steps to the next timer only across a tick in which a client waited and none spoke."""

from __future__ import annotations

from fakekube import Cluster
from fakekube.api.http.activity import ActivityMeter
from fakekube.engine.autoadvance import REPLY_WINDOW_S, AutoAdvance


def seconds(cluster: Cluster) -> float:
    return (cluster.now - cluster.config.start_time).total_seconds()


def test_idle_ticks_step_from_timer_to_timer() -> None:
    cluster = Cluster(nodes=1)
    auto = AutoAdvance(cluster.engine, lambda: (7, 0, 1, 0))
    moved = [auto.tick() for _ in range(3)]
    assert moved == [True, True, True]
    assert seconds(cluster) == 10.0  # one instant per tick: 0 (the first monitor pass), 5, 10


def test_a_tick_with_a_request_started_or_in_flight_does_not_move_time() -> None:
    cluster = Cluster(nodes=1)
    state = [(1, 0, 1, 0)]
    auto = AutoAdvance(cluster.engine, lambda: state[0])
    state[0] = (2, 1, 1, 0)   # a request arrived and is being served
    assert auto.tick() is False
    assert auto.tick() is False  # still in flight
    state[0] = (2, 0, 1, 0)   # it finished during this tick
    assert auto.tick() is False
    assert seconds(cluster) == 0.0 and cluster.engine.step() == cluster.now  # (the first monitor pass, at 0)
    assert auto.tick() is True  # a whole quiet tick
    assert seconds(cluster) == 5.0


def test_a_cluster_without_timers_does_not_move() -> None:
    cluster = Cluster(nodes=0, controllers=())  # no controller loops, no kubelets: nothing is ever due
    auto = AutoAdvance(cluster.engine, lambda: (0, 0, 1, 0))
    assert auto.tick() is False
    assert seconds(cluster) == 0.0


def test_with_nobody_waiting_quiet_ticks_leave_time_where_it_is() -> None:
    cluster = Cluster(nodes=1)
    state = [(3, 0, 0, 0)]
    auto = AutoAdvance(cluster.engine, lambda: state[0])
    assert [auto.tick() for _ in range(3)] == [False, False, False]
    assert seconds(cluster) == 0.0
    state[0] = (3, 0, 1, 0)  # a watch opened (it is not a request that talks)
    assert auto.tick() is True


def test_after_something_reached_a_waiter_time_holds_for_its_reply_window() -> None:
    cluster = Cluster(nodes=1)
    state = [(0, 0, 1, 0)]
    auto = AutoAdvance(cluster.engine, lambda: state[0], tick_s=0.01)
    assert auto.tick() is True  # the first monitor pass, at 0
    state[0] = (0, 0, 1, 1)    # a watch event went out
    held = [auto.tick() for _ in range(round(REPLY_WINDOW_S / 0.01))]
    assert held == [False] * len(held) and seconds(cluster) == 0.0  # the client's turn to answer
    assert auto.tick() is True and seconds(cluster) == 5.0


def test_the_meter_counts_requests_apart_from_watches_and_followed_logs() -> None:
    def app(environ, start_response):
        start_response("200 OK", [])
        return [b"ok"]

    meter = ActivityMeter(app)
    for path, query in (("/api/v1/pods", "watch=true"), ("/api/v1/watch/pods", ""),
                        ("/api/v1/namespaces/d/pods/p/log", "follow=true")):
        stream = meter({"PATH_INFO": path, "QUERY_STRING": query}, lambda *a: None)
        assert meter.snapshot()[:3] == (0, 0, 1)  # a waiter until its stream ends
        assert list(stream) == [b"ok"]
        assert meter.snapshot()[:3] == (0, 0, 0)
    body = meter({"PATH_INFO": "/api/v1/pods", "QUERY_STRING": "limit=1"}, lambda *a: None)
    assert meter.snapshot() == (1, 1, 0, 3)  # counted until its response has been sent
    assert list(body) == [b"ok"]
    assert meter.snapshot() == (1, 0, 0, 3)  # b"ok" reached each of the 3 waiters


def test_a_waiter_whose_client_hung_up_stops_counting_before_its_stream_ends() -> None:
    seen_gone = []

    def app(environ, start_response):
        seen_gone.append(environ["fakekube.disconnected"]())
        start_response("200 OK", [])
        return [b"{}"]

    meter = ActivityMeter(app)
    stream = meter({"PATH_INFO": "/api/v1/pods", "QUERY_STRING": "watch=1", "fakekube.disconnected": lambda: True},
                   lambda *a: None)
    assert seen_gone == [True] and meter.snapshot().waiting == 0  # gone as soon as the stream saw it
    assert list(stream) == [b"{}"]
    assert meter.snapshot().waiting == 0  # and not given up twice


def test_advance_until_stops_at_the_first_instant_the_condition_holds() -> None:
    cluster = Cluster(nodes=2)
    cluster.fail_node("node-1")

    def unknown(c: Cluster) -> bool:
        conditions = c.get("v1", "Node", "node-1", "")["status"]["conditions"]
        return next(x["status"] for x in conditions if x["type"] == "Ready") == "Unknown"

    assert (cluster.advance_until(unknown, timeout_s=300) - cluster.config.start_time).total_seconds() == 55.0


def test_advance_until_times_out_in_virtual_seconds() -> None:
    cluster = Cluster(nodes=1)
    try:
        cluster.advance_until(lambda c: False, timeout_s=30)
    except TimeoutError as exc:
        assert "30" in str(exc)
    else:
        raise AssertionError("expected a timeout")
    assert seconds(cluster) == 30.0
