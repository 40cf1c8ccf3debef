"""The local collectors, in precedence order (the first whose path test accepts wins)."""

from __future__ import annotations

from eshu_mcp.query.local.index.parse.collectors import Collector
from eshu_mcp.query.local.index.parse.collectors.ci import GITHUB_ACTIONS, GITLAB_CI
from eshu_mcp.query.local.index.parse.collectors.codeowners import CODEOWNERS_COLLECTOR
from eshu_mcp.query.local.index.parse.collectors.compose import COMPOSE
from eshu_mcp.query.local.index.parse.collectors.dockerfile import DOCKERFILE, DOCKERFILE_VARIANT
from eshu_mcp.query.local.index.parse.collectors.docs import DOCUMENTATION_COLLECTOR
from eshu_mcp.query.local.index.parse.collectors.kubernetes import HELM, HELM_CHART, KUBERNETES
from eshu_mcp.query.local.index.parse.collectors.packages import (
    PACKAGE_LOCKFILE_COLLECTOR,
    PACKAGE_MANIFEST_COLLECTOR,
    REQUIREMENTS_COLLECTOR,
)
from eshu_mcp.query.local.index.parse.collectors.terraform import TERRAFORM, TERRAFORM_STATE

COLLECTORS: tuple[Collector, ...] = (
    # ownership, packages, documentation (pnpm-lock.yaml before the generic YAML readers)
    CODEOWNERS_COLLECTOR,
    PACKAGE_MANIFEST_COLLECTOR,
    PACKAGE_LOCKFILE_COLLECTOR,
    REQUIREMENTS_COLLECTOR,
    DOCUMENTATION_COLLECTOR,
    # infrastructure: specific YAML paths before the generic manifest reader
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
