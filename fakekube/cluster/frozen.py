"""Letting the code under test see cluster time through freezegun.

Inside :func:`virtual_time`, ``datetime.now()``, ``time.time()`` and friends return the
cluster's virtual time, and move whenever the cluster's clock moves — so an operator's
"has it been 5 minutes?" logic agrees with the cluster's timestamps. fakekube's own
server, engine and watches, werkzeug, the socket server and pytest keep real time: they
are on freezegun's ignore list (their wall-clock waits would hang otherwise).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

from freezegun import freeze_time

if TYPE_CHECKING:
    from fakekube.cluster.cluster import Cluster

#: Modules that keep the real clock while time is frozen for the code under test, on top
#: of freezegun's defaults (threading, queue, pytest's runner and terminal). Not all of
#: ``_pytest``: freezegun looks a few frames up the stack, and a test function's caller is
#: pytest, so the test itself would get real time.
KEEP_REAL_TIME = ["fakekube", "pytest_fakekube", "werkzeug", "socketserver", "selectors", "http.server",
                  "concurrent.futures", "_pytest.timing",
                  # clients' transport: the official client's pydantic models cannot be built
                  # around freezegun's datetime class, and token expiry is wall-clock business
                  "kubernetes", "pydantic", "pydantic_core", "urllib3"]


@contextmanager
def virtual_time(cluster: "Cluster") -> Iterator[Any]:
    """Freeze the process's clock at cluster time and keep it in step with the cluster."""
    with freeze_time(cluster.now, ignore=KEEP_REAL_TIME) as frozen:
        undo = cluster.observe_time(frozen.move_to)
        try:
            yield frozen
        finally:
            undo()
