"""README.md's control API calls (tests/examples/control_api.sh), every line run with curl
against ``fakekube serve`` as a reader would, with PORT replaced by the port it printed."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.examples.docs_blocks import region
from tests.examples.shell import environment, run, serving


@pytest.mark.parametrize("name", ["control-api-clock", "control-api-nodes", "control-api-snapshots"])
def test_control_api_lines_answer_json(name: str, tmp_path: Path) -> None:
    assert shutil.which("curl"), "the README's control API examples use curl"
    env = environment()
    with serving(f"fakekube serve --nodes 1 --kubeconfig {tmp_path / 'kubeconfig'}", tmp_path, env) as url:
        port = str(urlsplit(url).port)
        for line in (line for line in region("README.md", name).text.splitlines() if not line.startswith("#")):
            done = run(line.replace("localhost:PORT", f"localhost:{port}"), tmp_path, env)
            assert done.returncode == 0, (line, done.stderr)
            answer = json.loads(done.stdout)
            assert answer.get("status") != "Failure", (line, answer)
