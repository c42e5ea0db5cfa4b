"""The Deployment controller (kube-controller-manager's ``deployment-controller``).

:mod:`.controller` routes changes and runs a sync; :mod:`.sync` holds one sync's state
(ReplicaSets found or created, scaling, clean-up, status); :mod:`.rolling`,
:mod:`.recreate` and :mod:`.rollback` are the strategies; :mod:`.progress` is the
Progressing condition and the progress-deadline timer. Pure rules live in
:mod:`fakekube.objects.deployments` and :mod:`fakekube.objects.deploymentstatus`.
"""

from fakekube.controllers.deployment.controller import DeploymentController

__all__ = ["DeploymentController"]
