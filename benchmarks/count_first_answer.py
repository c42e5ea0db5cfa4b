"""Serves until the first answered ``GET /version``, then exits: for instruction counting of
a start (``fakekube serve`` against werkzeug's hello server, issue 22's cold-start target).

``python benchmarks/count_first_answer.py serve|hello PORT [serve flags...]`` runs the
server in its main thread (``fakekube.cli.main.main(["serve", ...])``, or werkzeug's
``make_server(...).serve_forever()`` with a hello app) and a client thread that polls
``GET /version`` every millisecond and ends the process at the first 200. The client
thread stands for a client in another process, so leave its count out: run under callgrind
with one output file per thread; the client is the second thread (``-02``)::

    export PYTHONHASHSEED=0 FAKEKUBE_CACHE_DIR=/tmp/fk-cache FAKEKUBE_BOOT_CACHE=1
    unset PYTHONDONTWRITEBYTECODE            # bytecode cached, as after an install
    T="--start-time 2025-01-01T00:00:00Z --time-scale 0"
    python benchmarks/count_first_answer.py serve 27500 $T      # fills the boot cache
    for mode in hello serve; do
      valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file=/tmp/cg-$mode \\
        python benchmarks/count_first_answer.py $mode 27500 $T 2>&1 | grep Collected
      grep -H '^summary:' /tmp/cg-$mode-*                        # all threads but -02
    done

Nothing is asserted; figures: docs/performance.md "Phased boot".
"""

from __future__ import annotations

import http.client
import os
import sys
import threading
import time
from typing import Any

#: How long the client waits before trying again while the server does not listen yet.
RETRY_S = 0.001


def exit_at_first_answer(port: int) -> None:
    """Poll ``GET /version`` until it answers 200, then end the process at once."""
    while True:
        try:
            connection = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            connection.request("GET", "/version")
            response = connection.getresponse()
            response.read()
            if response.status == 200:
                os._exit(0)
        except OSError:
            time.sleep(RETRY_S)


def hello_server(port: int) -> None:
    from werkzeug.serving import make_server
    from werkzeug.wrappers import Request, Response

    @Request.application
    def hello(request: Any) -> Response:
        return Response("hello")
    make_server("127.0.0.1", port, hello, threaded=True).serve_forever()


def main(argv: list[str]) -> None:
    mode, port = argv[0], int(argv[1])
    threading.Thread(target=exit_at_first_answer, args=(port,), daemon=True).start()
    if mode == "hello":
        hello_server(port)
        return
    from fakekube.cli.main import main as fakekube_main
    fakekube_main(["serve", "--port", str(port), *argv[2:]])


if __name__ == "__main__":
    main(sys.argv[1:])
