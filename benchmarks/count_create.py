"""Creates N configmaps through the WSGI app (no socket), for instruction counting.

Wall-clock figures on a shared machine move by tens of percent; instruction counts do
not. Per-create instructions = (count(N) - count(0)) / N:

    for n in 0 400; do
      valgrind --tool=callgrind --callgrind-out-file=/dev/null \\
        python benchmarks/count_create.py $n 2>&1 | grep Collected
    done
"""

from __future__ import annotations

import io
import json
import sys

from fakekube import Cluster

WARMUP = 50


def environ(path: str, body: bytes) -> dict:
    return {"REQUEST_METHOD": "POST", "PATH_INFO": path, "QUERY_STRING": "", "CONTENT_TYPE": "application/json",
            "CONTENT_LENGTH": str(len(body)), "SERVER_NAME": "127.0.0.1", "SERVER_PORT": "1",
            "SERVER_PROTOCOL": "HTTP/1.1", "wsgi.input": io.BytesIO(body), "wsgi.url_scheme": "http",
            "wsgi.errors": sys.stderr, "wsgi.multithread": True, "wsgi.multiprocess": False,
            "wsgi.run_once": False, "wsgi.version": (1, 0), "HTTP_ACCEPT": "application/json"}


def create_configmaps(app, count: int, prefix: str) -> None:
    for i in range(count):
        body = json.dumps({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"{prefix}{i}"},
                           "data": {"a": "b"}}).encode()
        b"".join(app(environ("/api/v1/namespaces/default/configmaps", body), lambda *args: None))


if __name__ == "__main__":
    app = Cluster()._rest_app()[0]
    create_configmaps(app, WARMUP, "warm")  # first-use costs (schema load, compiled walk) out of the count
    create_configmaps(app, int(sys.argv[1]), "cm")
