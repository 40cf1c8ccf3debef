"""The local collectors, in precedence order (the first whose path test accepts wins)."""

from __future__ import annotations

from . import Collector
from .ci import GITHUB_ACTIONS, GITLAB_CI
from .compose import COMPOSE
from .dockerfile import DOCKERFILE, DOCKERFILE_VARIANT
from .kubernetes import HELM, HELM_CHART, KUBERNETES
from .terraform import TERRAFORM, TERRAFORM_STATE

COLLECTORS: tuple[Collector, ...] = (
    # infrastructure (collect-infra): specific YAML paths before the generic manifest reader
    TERRAFORM,
    TERRAFORM_STATE,
    DOCKERFILE,
    GITHUB_ACTIONS,
    GITLAB_CI,
    COMPOSE,
    HELM_CHART,
    HELM,
    KUBERNETES,
    DOCKERFILE_VARIANT,
)
