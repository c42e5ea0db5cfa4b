"""Run a kopf operator in-process, in a thread, against a served cluster.

This is how kopf's own docs suggest embedding it: ``kopf.operator(...)`` in an event
loop of its own thread, with a stop flag and a ready flag. Peering is off
(``standalone``), as in a test there is one operator. The operator logs in from the
kubeconfig file that KUBECONFIG names (``kopf.login_with_kubeconfig``; the ``fakekube``
fixture points KUBECONFIG at the test's cluster), the way a user's operator finds one.
"""

from __future__ import annotations

import asyncio
import threading
from types import TracebackType
from typing import Any

import kopf

#: Wall-clock limits of starting and stopping the operator thread.
START_TIMEOUT_S = 20.0
STOP_TIMEOUT_S = 20.0


class KopfThread:
    """A kopf operator over ``registry`` running in a daemon thread while in the ``with``."""

    def __init__(self, registry: kopf.OperatorRegistry, namespaces: tuple[str, ...] = ("default",),
                 initial_streaming: bool = False) -> None:
        kopf.on.login(registry=registry)(kopf.login_with_kubeconfig)
        self._registry = registry
        self._initial_streaming = initial_streaming
        self._namespaces = namespaces
        self._stop = threading.Event()
        self._ready = threading.Event()
        self._errors: list[BaseException] = []
        self._thread = threading.Thread(target=self._run, name="kopf-operator", daemon=True)

    def _run(self) -> None:
        settings = kopf.OperatorSettings()
        settings.peering.standalone = True
        # A watch request ends after this many (wall) seconds and kopf reconnects.
        settings.watching.server_timeout = 30
        # True: the first list comes as a watch stream (sendInitialEvents=true, 1.34's default
        # for client-go; kopf's opt-in), False: a LIST then a watch from its resourceVersion.
        settings.watching.initial_streaming = self._initial_streaming
        try:
            asyncio.run(kopf.operator(registry=self._registry, settings=settings, standalone=True,
                                      namespaces=self._namespaces, stop_flag=self._stop, ready_flag=self._ready))
        except BaseException as error:  # reported to the test by __exit__
            self._errors.append(error)
            self._ready.set()

    def __enter__(self) -> "KopfThread":
        self._thread.start()
        if not self._ready.wait(START_TIMEOUT_S):
            raise TimeoutError(f"kopf did not get ready in {START_TIMEOUT_S} s")
        if self._errors:
            raise self._errors[0]
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 traceback: TracebackType | None) -> None:
        self._stop.set()
        self._thread.join(STOP_TIMEOUT_S)
        if self._thread.is_alive():
            raise TimeoutError(f"kopf did not stop in {STOP_TIMEOUT_S} s")
        if self._errors and exc is None:
            raise self._errors[0]
