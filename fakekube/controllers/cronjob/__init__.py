"""The CronJob controller (kube-controller-manager's ``cronjob-controller``): see controller.py."""

from fakekube.controllers.cronjob.controller import CronJobController

__all__ = ["CronJobController"]
