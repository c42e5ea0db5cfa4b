"""apiextensions-apiserver's controllers for CustomResourceDefinitions: names accepted and
established (:mod:`.establishing`), and a deleted CRD's objects cleaned up (:mod:`.finalizer`)."""

from fakekube.controllers.apiextensions.establishing import CRDEstablishingController
from fakekube.controllers.apiextensions.finalizer import CRDFinalizerController

__all__ = ["CRDEstablishingController", "CRDFinalizerController"]
