"""A background thread that ticks on the wall clock: what scaled time and auto-advance share.

Both clock modes are transport-driven: a daemon thread wakes every ``tick_s`` wall
seconds and calls :meth:`Ticker.tick`, which hands its work to the engine thread. Tests
call ``tick()`` by hand instead of starting the thread.
"""

from __future__ import annotations

import threading


class Ticker:
    """Calls :meth:`tick` every ``tick_s`` wall seconds on a daemon thread, until stopped."""

    thread_name = "fakekube-ticker"

    def __init__(self, tick_s: float) -> None:
        self._tick_s = tick_s
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def tick(self) -> object:
        raise NotImplementedError

    def start(self) -> None:
        self._on_start()
        self._thread = threading.Thread(target=self._run, name=self.thread_name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self.request_stop()
        self.join()

    def request_stop(self) -> None:
        """No more ticks after the one running (if any); :meth:`join` waits for it."""
        self._stop.set()

    def join(self) -> None:
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def _on_start(self) -> None:
        """Reset whatever ``tick`` measures from (called just before the thread starts)."""

    def _run(self) -> None:
        from fakekube.engine.engine import EngineStopped  # the engine imports nothing of this module
        while not self._stop.wait(self._tick_s):
            try:
                self.tick()
            except EngineStopped:  # the cluster is stopping: its tick's work was dropped
                return
