"""Immutable value records built on ``__slots__``. See :mod:`fakekube.record.frozen`."""

from fakekube.record.frozen import FrozenRecord

__all__ = ["FrozenRecord"]
