"""The cluster's one seeded random source. See :mod:`fakekube.random.seeded`."""

from fakekube.random.seeded import SeededRandom

__all__ = ["SeededRandom"]
