"""pytest plugin for fakekube: a clean fake cluster per test. See :mod:`pytest_fakekube.plugin`."""
