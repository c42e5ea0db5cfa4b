import os

import pytest

from fakekube.store import GUARD_ENV

pytest_plugins = ("pytester",)

# fakekube's own tests run with the immutability guard on (fakekube/store/frozen.py):
# an in-place edit of a stored object raises where it happens. Tests build clusters
# directly all over the suite, so the switch is the process-wide test default that
# ClusterConfig.immutability_guard reads, not a fixture. Subprocesses (the CLI tests'
# servers) inherit it. Set FAKEKUBE_IMMUTABILITY_GUARD=0 to run without it.
os.environ.setdefault(GUARD_ENV, "1")
# `fakekube serve` in subprocesses: no boot cache in the user's home (tests that check the
# cache give it a directory of their own).
os.environ.setdefault("FAKEKUBE_BOOT_CACHE", "0")


@pytest.hookimpl(optionalhook=True)  # without pytest-xdist (`-p no:xdist`) the hook is unknown
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (the README's test command): more workers than cores. Much of this suite
    waits rather than computes — kubectl and helm subprocesses, `fakekube serve` starts, the
    README test's fresh pip install — so one worker per core left them idle: on 2 cores the
    suite took 667 s with 2 workers and 531 s with 4 (docs/performance.md). Capped at 4 more
    than the cores; PYTEST_XDIST_AUTO_NUM_WORKERS still decides when set."""
    chosen = os.environ.get("PYTEST_XDIST_AUTO_NUM_WORKERS", "")
    if chosen.isdigit():
        return int(chosen)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(2 * cores, cores + 4)


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--fakekube-fuzz-examples", default="5000",
                     help="requests the seeded API fuzz (tests/integration/test_fuzz.py) sends (default 5000)")
