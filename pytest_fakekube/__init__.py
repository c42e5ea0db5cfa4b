"""pytest plugin for fakekube: a clean fake cluster per test. See :mod:`pytest_fakekube.plugin`."""

from pytest_fakekube.plugin import template

__all__ = ["template"]
