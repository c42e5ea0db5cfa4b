"""The CronJob controller (kube-controller-manager's ``cronjob-controller``): fakekube/controllers/cronjob/controller.py."""

from fakekube.controllers.cronjob.controller import CronJobController

__all__ = ["CronJobController"]
