"""The REST layer: routing, negotiation, watch streams and the threaded server."""

from fakekube.api.http.app import RestApp
from fakekube.api.http.server import BackgroundServer

__all__ = ["BackgroundServer", "RestApp"]
