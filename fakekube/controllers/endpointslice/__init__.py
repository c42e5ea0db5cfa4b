"""The EndpointSlice controller (``endpointslice-controller``): :mod:`.controller` routes
and writes, :mod:`.reconciler` plans what a Service's slices should become."""

from fakekube.controllers.endpointslice.controller import EndpointSliceController

__all__ = ["EndpointSliceController"]
