"""The Job controller (kube-controller-manager's ``job-controller``): fakekube/controllers/job/controller.py."""

from fakekube.controllers.job.controller import JobController

__all__ = ["JobController"]
