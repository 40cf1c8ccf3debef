"""
The images a repository builds and runs, and its CI jobs, listed by the tools whose names
say so: a two-stage Dockerfile's base images (build arguments resolved, ``COPY --from``
kept), a Deployment's image (with its kind), a Compose service's, and a GitHub Actions
workflow's jobs with their triggers, images and artifacts.
"""

from __future__ import annotations

from twisted.internet.task import Clock
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch import run_read_only_tool
from eshu_mcp.query.local.api.platform.resource import LocalQueryResource
from tests.test_api_code_indexed import indexed_repository
from tests.test_api_resource import InlinePool, ThreadReactor

SOURCES = {
    "Dockerfile": """ARG PYTHON=3.12
FROM python:${PYTHON}-slim AS build
RUN pip wheel -w /wheels .
FROM gcr.io/distroless/python3 AS runtime
COPY --from=build /wheels /wheels
""",
    "deploy/deployment.yaml": """apiVersion: apps/v1
kind: Deployment
metadata:
  name: api
spec:
  template:
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/api:1.4.0
""",
    "docker-compose.yml": (
        "services:\n  db:\n    image: postgres:16\n"
        "  api:\n    build: .\n    image: ghcr.io/acme/api:dev\n"
    ),
    ".github/workflows/ci.yml": """name: CI
on:
  push:
    branches: [main]
  pull_request:
jobs:
  test:
    runs-on: ubuntu-latest
    container: python:3.12
    steps:
      - uses: actions/checkout@v4
      - uses: actions/upload-artifact@v4
        with:
          name: coverage
          path: htmlcov
  image:
    needs: test
    runs-on: ubuntu-latest
    steps:
      - uses: docker/build-push-action@v5
        with:
          tags: ghcr.io/acme/api:1.4.0
""",
}


class BuildsAndRunsTests(SynchronousTestCase):
    def setUp(self):
        db, self.repo = indexed_repository(self, SOURCES, name="shop")
        self.resource = LocalQueryResource(db, reactor=ThreadReactor(), threadpool=InlinePool())

    def ask(self, tool: str, args: dict) -> tuple[str, dict]:
        result = self.successResultOf(run_read_only_tool(self.resource, tool, args, clock=Clock()))
        self.assertFalse(result.get("isError"), result["content"][0]["text"])
        return result["content"][0]["text"], result["structuredContent"]["data"]

    def identities(self, **args) -> dict[str, dict]:
        _, data = self.ask("list_container_image_identities", args)
        return {row["image_ref"]: row for row in data["identities"]}

    def test_the_dockerfile_stages_base_images_are_listed_with_resolved_arguments(self):
        found = self.identities()
        (build,) = found["python:3.12-slim"]["references"]
        self.assertEqual((build["role"], build["stage"]), ("base", "build"))
        self.assertEqual(build["from"], "python:${PYTHON}-slim")
        self.assertTrue(build["args_resolved"])
        (runtime,) = found["gcr.io/distroless/python3"]["references"]
        self.assertEqual((runtime["stage"], runtime["copies_from"]), ("runtime", ["build"]))

    def test_the_deployments_image_is_listed_as_run_by_it_and_built_by_ci(self):
        api = self.identities()["ghcr.io/acme/api:1.4.0"]
        self.assertEqual(sorted(api["roles"]), ["builds", "runs"])
        run = next(r for r in api["references"] if r["role"] == "runs")
        self.assertEqual((run["workload_kind"], run["workload"]), ("Deployment", "api"))
        self.assertEqual(api["outcome"], "declared_tag")  # no registry read: not resolved
        self.assertEqual(self.identities()["postgres:16"]["references"][0]["service"], "db")

    def test_an_image_compose_builds_names_its_dockerfile_and_final_stage(self):
        (built,) = self.identities()["ghcr.io/acme/api:dev"]["references"]
        self.assertEqual((built["role"], built["service"]), ("builds", "api"))
        self.assertEqual((built["dockerfile"], built["final_stage"]), ("Dockerfile", "runtime"))
        self.assertEqual(built["final_stage_base"], "gcr.io/distroless/python3")
        text, _ = self.ask("list_container_image_identities", {"image_ref": "ghcr.io/acme/api:dev"})
        self.assertIn("built by service api from Dockerfile stage runtime", text)

    def test_the_identities_text_names_each_image_where_it_is_declared(self):
        text, _ = self.ask("list_container_image_identities", {})
        self.assertIn("Dockerfile:4 gcr.io/distroless/python3 (base of stage runtime)", text)
        self.assertIn("run by Deployment api", text)

    def test_filters_and_the_cursor_page_the_identities(self):
        self.assertEqual(list(self.identities(image_ref="postgres:16")), ["postgres:16"])
        _, first = self.ask("list_container_image_identities", {"limit": 2})
        self.assertTrue(first["truncated"])
        _, rest = self.ask("list_container_image_identities", first["next_cursor"])
        names = [r["image_ref"] for r in first["identities"] + rest["identities"]]
        self.assertEqual(len(names), len(set(names)))
        self.assertEqual(len(names), len(self.identities()))

    def test_the_workflows_jobs_are_listed_with_triggers_images_and_artifacts(self):
        text, data = self.ask("list_ci_cd_run_correlations", {})
        jobs = {row["job"]: row for row in data["correlations"]}
        self.assertEqual(set(jobs), {"test", "image"})
        self.assertEqual(jobs["test"]["triggers"], ["push", "pull_request"])
        self.assertEqual(jobs["test"]["artifacts"], ["coverage"])
        self.assertEqual(jobs["test"]["images_used"], ["python:3.12"])
        self.assertEqual(jobs["image"]["images_built"], ["ghcr.io/acme/api:1.4.0"])
        self.assertEqual(jobs["image"]["outcome"], "derived")  # the Deployment runs it
        self.assertIn(".github/workflows/ci.yml:7 CI/test (on push, pull_request", text)
        self.assertEqual(data["evidence_summary"]["runs_observed"], 0)

    def test_a_run_identity_finds_nothing_since_no_run_is_observed(self):
        _, data = self.ask("list_ci_cd_run_correlations", {"commit_sha": "abc123"})
        self.assertEqual(data["correlations"], [])

    def test_a_kubernetes_workload_keeps_its_kind(self):
        args = {"query_type": "what_deploys", "target": "api"}
        _, data = self.ask("analyze_infra_relationships", args)
        self.assertEqual((data["labels"], data["kind"]), (["K8sWorkload"], "Deployment"))
        self.assertEqual({row["source_kind"] for row in data["outgoing"]}, {"Deployment"})

    def test_the_counts_agree_with_the_lists(self):
        text, data = self.ask("count_container_image_identities", {})
        self.assertEqual(data["total_identities"], len(self.identities()))
        self.assertEqual(data["by_outcome"], {"declared_tag": data["total_identities"]})
        text, data = self.ask("count_ci_cd_run_correlations", {})
        self.assertEqual(data["total_correlations"], 2)
        self.assertEqual(data["by_outcome"], {"derived": 1, "unresolved": 1})
        self.assertIn("2 CI jobs", text)
        _, data = self.ask("count_ci_cd_run_correlations", {"commit_sha": "abc123"})
        self.assertEqual(data["total_correlations"], 0)
