"""Dockerfile and CI collectors: stages and ARG-substituted bases; jobs, actions, built images."""

from __future__ import annotations

from eshu_mcp.query.local.index.parse.collectors.ci import (
    built_images,
    collect_github_workflow,
    collect_gitlab_ci,
)
from eshu_mcp.query.local.index.parse.collectors.dockerfile import collect_dockerfile

DOCKERFILE = """\
# syntax=docker/dockerfile:1
ARG GO=1.22
ARG BASE=gcr.io/distroless/static
FROM --platform=$BUILDPLATFORM golang:${GO}-alpine AS build
ARG GO=ignored-inside-a-stage
RUN go build \\
    -o /out/app \\
    ./cmd/app
FROM build AS test
RUN go test ./...
FROM ${BASE}:nonroot
COPY --from=build /out/app /app
COPY --from=docker.io/library/busybox:1.36 /bin/sh /bin/sh
EXPOSE 8080/tcp 9090
FROM $UNKNOWN_IMAGE AS odd
"""


def test_stages_resolve_global_args_and_name_their_bases():
    facts = collect_dockerfile("Dockerfile", DOCKERFILE)
    stages = [
        (f.name, f.payload["base_image"], f.payload["base_stage"])
        for f in facts
        if f.kind == "docker_stage"
    ]
    assert stages == [
        ("build", "golang:1.22-alpine", ""),
        ("test", "build", "build"),
        ("2", "gcr.io/distroless/static:nonroot", ""),
        ("odd", "$UNKNOWN_IMAGE", ""),
    ]
    build = next(f for f in facts if f.name == "build" and f.kind == "docker_stage")
    assert build.payload["platform"] == "$BUILDPLATFORM" and build.line == 4
    odd = next(f for f in facts if f.name == "odd")
    assert odd.payload["resolved"] is False


def test_images_are_external_bases_and_copy_sources_never_stage_names():
    facts = collect_dockerfile("Dockerfile", DOCKERFILE)
    images = [(f.name, f.payload["role"]) for f in facts if f.kind == "image"]
    assert images == [
        ("golang:1.22-alpine", "base"),
        ("gcr.io/distroless/static:nonroot", "base"),
        ("docker.io/library/busybox:1.36", "copy_from"),
        ("$UNKNOWN_IMAGE", "base"),
    ]
    copies = {(f.name, f.payload["from_stage"]) for f in facts if f.kind == "docker_copy_from"}
    assert copies == {("build", True), ("docker.io/library/busybox:1.36", False)}
    ports = [f.name for f in facts if f.kind == "docker_expose"]
    assert ports == ["8080/tcp", "9090"]


def test_a_dockerfile_without_from_yields_nothing():
    assert collect_dockerfile("Dockerfile", "RUN echo hi\n") == []


WORKFLOW = """\
name: release
on: [push, workflow_dispatch]
jobs:
  build:
    runs-on: [self-hosted, linux]
    environment: {name: prod, url: https://example.com}
    container: {image: "node:20"}
    steps:
      - uses: actions/checkout@8f4b7f84864484a7bf31766abe9204da3cbe65b3
      - uses: docker://alpine:3.20
      - run: |
          docker buildx build --push --tag ghcr.io/acme/app:${{ github.ref_name }} .
          docker push ghcr.io/acme/app:latest
  reuse:
    uses: acme/workflows/.github/workflows/deploy.yml@v3
    needs: [build]
"""


def test_github_workflow_jobs_actions_refs_and_images():
    facts = collect_github_workflow(".github/workflows/release.yml", WORKFLOW)
    (workflow,) = [f for f in facts if f.kind == "ci_workflow"]
    assert workflow.name == "release"
    assert workflow.payload["triggers"] == ["push", "workflow_dispatch"]
    actions = {(f.name, f.payload["ref"]) for f in facts if f.kind == "ci_action"}
    assert actions == {
        ("actions/checkout", "8f4b7f84864484a7bf31766abe9204da3cbe65b3"),
        ("docker://alpine:3.20", ""),
        ("acme/workflows/.github/workflows/deploy.yml", "v3"),
    }
    build = next(f for f in facts if f.kind == "ci_job" and f.name == "build")
    assert build.line == 4
    assert build.payload["environment"] == "prod"
    assert build.payload["runs_on"] == "self-hosted,linux"
    assert build.payload["images_built"] == [
        "ghcr.io/acme/app:${{ github.ref_name }}",
        "ghcr.io/acme/app:latest",
    ]
    assert build.payload["images_used"] == ["alpine:3.20", "node:20"]
    reuse = next(f for f in facts if f.kind == "ci_job" and f.name == "reuse")
    assert reuse.payload["needs"] == ["build"]


def test_shell_build_detection():
    assert built_images("docker build -t a/b:1 . && docker build --tag=c/d .") == ["a/b:1", "c/d"]
    assert built_images("podman build -f X -t reg/x:$TAG .; echo done") == ["reg/x:$TAG"]
    assert built_images("docker run -t alpine") == []


GITLAB = """\
include: 'https://example.com/ci.yml'
stages: [build, release]
variables: {A: b}
.base:
  image: ruby:3.3
build:
  extends: .base
  stage: build
  script: docker build -t $CI_REGISTRY_IMAGE:$CI_COMMIT_SHA .
release:
  stage: release
  image: {name: "alpine:3.20", entrypoint: [""]}
  needs: [{job: build}]
  environment: production
  script: [echo release]
"""


def test_gitlab_jobs_skip_hidden_templates_and_keywords():
    facts = collect_gitlab_ci(".gitlab-ci.yml", GITLAB)
    (pipeline,) = [f for f in facts if f.kind == "ci_workflow"]
    assert pipeline.payload["stages"] == ["build", "release"]
    assert pipeline.payload["includes"] == [
        {"kind": "remote", "target": "https://example.com/ci.yml"}
    ]
    jobs = {f.name: f.payload for f in facts if f.kind == "ci_job"}
    assert set(jobs) == {"build", "release"}
    assert jobs["build"]["images_built"] == ["$CI_REGISTRY_IMAGE:$CI_COMMIT_SHA"]
    assert jobs["build"]["extends"] == [".base"]
    assert jobs["release"]["images_used"] == ["alpine:3.20"]
    assert jobs["release"]["needs"] == ["build"]
    assert jobs["release"]["environment"] == "production"


def test_a_workflow_that_is_not_yaml_is_reported():
    (fact,) = collect_github_workflow(".github/workflows/x.yml", "jobs: [unclosed\n")
    assert fact.kind == "yaml_error"


def test_jobs_name_the_artifacts_they_keep_and_their_workflows_triggers():
    workflow = """\
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/upload-artifact@v4
        with: {name: coverage, path: htmlcov}
      - uses: actions/upload-artifact@v4
        with:
          path: |
            dist/
            build/
"""
    (job,) = [
        f
        for f in collect_github_workflow(".github/workflows/t.yml", workflow)
        if f.kind == "ci_job"
    ]
    assert job.payload["artifacts"] == ["coverage", "dist/"]
    assert job.payload["triggers"] == ["push"]
    pipeline = """\
build:
  script: make
  only: [main]
  artifacts:
    paths: [dist/]
    reports: {junit: report.xml}
pack:
  script: make pack
  artifacts: {name: package, paths: [out/]}
"""
    jobs = {
        f.name: f.payload
        for f in collect_gitlab_ci(".gitlab-ci.yml", pipeline)
        if f.kind == "ci_job"
    }
    assert jobs["build"]["artifacts"] == ["dist/", "report.xml"]
    assert jobs["build"]["triggers"] == ["main"]
    assert jobs["pack"]["artifacts"] == ["package"]
