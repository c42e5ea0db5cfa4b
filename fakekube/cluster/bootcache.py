"""The boot cache: ``fakekube serve``'s kind-like boot computed once, restored on later starts.

Building a cluster simulates its boot (static pods, add-ons, controllers settling: tens of
milliseconds of work, the same every time for one config). The first ``serve`` of a config
saves the booted cluster as a snapshot file (cluster/snapfile.py) under the user's cache
directory; every later start of the same config loads it instead (docs/snapshots.md, "The
boot cache").

* **Key**: the snapshot file format, the fakekube version, the Kubernetes version, the
  config (but for where the cluster listens and how its time flows: ``Cluster.load``'s
  ``LOAD_OVERRIDES``) and a fingerprint of fakekube's own source files (their names, sizes
  and modification times), so an edited checkout never loads a boot an older code made.
* **Only a fixed start**: a config whose ``start_time`` is "now" differs at every start
  (timestamps are state), so ``serve`` asks for the cache only when the start time is given
  (``--start-time``, a config file's ``startTime``).
* **Safe to delete**, whole or file by file; a file that fails to load (garbled, another
  version) is ignored and written again. At most :data:`MAX_ENTRIES` files are kept: the
  least recently used go first.
* **Where**: ``$FAKEKUBE_CACHE_DIR`` if set, else ``$XDG_CACHE_HOME/fakekube`` or
  ``~/.cache/fakekube``, subdirectory ``boot``.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path
from typing import TYPE_CHECKING

from fakekube.cluster.snapfile import FORMAT_VERSION, SnapshotFileError

if TYPE_CHECKING:
    from fakekube.cluster.cluster import Cluster
    from fakekube.cluster.config import ClusterConfig

#: Boot files kept at once (each is one config's booted cluster, ~0.3 MB).
MAX_ENTRIES = 16
#: Overrides the cache directory (tests, CI caches).
CACHE_DIR_ENV = "FAKEKUBE_CACHE_DIR"


def cache_dir() -> Path:
    """Where boot files live (not created here)."""
    explicit = os.environ.get(CACHE_DIR_ENV)
    if explicit:
        return Path(explicit) / "boot"
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "fakekube" / "boot"


def cluster(config: "ClusterConfig") -> tuple["Cluster", str]:
    """The cluster ``config`` makes: loaded from its boot file when there is a good one, else
    built and its boot file written (a file that cannot be written leaves the cluster as is);
    and what happened, in words for ``serve``'s banner."""
    from fakekube.cluster.cluster import LOAD_OVERRIDES, Cluster
    path = cache_dir() / f"{key(config)}.snap"
    runtime = {name: getattr(config, name) for name in LOAD_OVERRIDES}
    if path.exists():
        try:
            loaded = Cluster.load(path, kubernetes_version=config.kubernetes_version, phased=True, **runtime)
            if loaded.config == config:
                _touch(path)
                return loaded, f"restored from the boot cache ({path})"
        except (SnapshotFileError, TypeError, ValueError):
            pass  # ignored, and written again below
    built = Cluster(config)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        built.save(path)
        _prune(path.parent)
    except (OSError, TypeError) as exc:  # a read-only home, state that cannot be saved: same cluster
        return built, f"built; not cached ({exc})"
    return built, f"built; cached in {path} for the next start"


def key(config: "ClusterConfig") -> str:
    """The boot file's name for ``config`` (see the module docstring)."""
    from fakekube import __version__
    from fakekube.cluster.cluster import LOAD_OVERRIDES
    neutral = config.replace(**{name: getattr(type(config)(), name) for name in LOAD_OVERRIDES})
    digest = hashlib.sha256()
    for part in (str(FORMAT_VERSION), __version__, config.kubernetes_version, repr(neutral), source_fingerprint()):
        digest.update(part.encode())
        digest.update(b"\0")
    return digest.hexdigest()[:32]


def source_fingerprint() -> str:
    """fakekube's source files by name, size and modification time (an edit changes it)."""
    root = Path(__file__).resolve().parent.parent
    digest = hashlib.sha256()
    for directory, subdirectories, files in os.walk(root):
        subdirectories[:] = sorted(d for d in subdirectories if d != "__pycache__")
        for name in sorted(files):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(directory, name))
                digest.update(f"{directory}/{name}:{stat.st_size}:{stat.st_mtime_ns}\n".encode())
    return digest.hexdigest()


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass


def _prune(directory: Path) -> None:
    """Keep the :data:`MAX_ENTRIES` most recently used boot files."""
    files = sorted(directory.glob("*.snap"), key=lambda p: p.stat().st_mtime_ns, reverse=True)
    for old in files[MAX_ENTRIES:]:
        try:
            old.unlink()
        except OSError:
            pass
