"""Same seed and calls → byte-identical cluster state, whatever the process or hash seed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_scenario(seed: int, hash_seed: str, *flags: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=hash_seed, PYTHONPATH=str(ROOT))
    result = subprocess.run([sys.executable, "-m", "tests.integration.determinism_scenario", str(seed), *flags],
                            capture_output=True, text=True, env=env, cwd=ROOT, timeout=60, check=True)
    return result.stdout


def test_same_seed_gives_byte_identical_state_across_processes() -> None:
    first = run_scenario(7, "1")
    second = run_scenario(7, "4242")
    assert first == second
    assert '"generateName":"cfg-"' in first.replace(" ", "")
    assert "Marking for deletion Pod team/on-node-1" in first  # the engine's work is in the dump


def test_a_booted_kind_like_cluster_is_byte_identical_too() -> None:
    first = run_scenario(7, "1", "--system-pods")
    assert first == run_scenario(7, "4242", "--system-pods")
    assert '"name":"etcd-fakekube-control-plane"' in first.replace(" ", "")


def test_another_seed_gives_other_names_and_uids() -> None:
    assert run_scenario(7, "1") != run_scenario(8, "1")
