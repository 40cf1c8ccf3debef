"""
Documentation findings say only what the index can tell: a mention is found, names code
outside the repository, has same-named candidates it cannot confirm, or matches nothing.
"""

from __future__ import annotations

import textwrap

import pytest
from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.query.local.index.build.indexer import index_repositories
from tests.test_api_resource import ApiClient

SOURCES = {
    "lib/response.js": """
        var path = require('path');
        var res = module.exports = {};

        res.json = function json(obj) {
          return path.resolve(obj);
        };

        var proto = {};
        proto.use = function use(fn) {
          return fn;
        };
        """,
    "README.md": """
        # Guide

        Call `res.json` to answer, `path.resolve` for paths and `Object.create` for
        objects. `router.use` mounts middleware; `removed_helper()` is gone.
        """,
}


@pytest.fixture(scope="module")
def client(tmp_path_factory):
    root = tmp_path_factory.mktemp("doc-mentions")
    repo = root / "site"
    for relative, text in SOURCES.items():
        (repo / relative).parent.mkdir(parents=True, exist_ok=True)
        (repo / relative).write_text(textwrap.dedent(text).lstrip())
    db = root / "index.sqlite"
    assert index_repositories(db, [repo], workers=1).ok
    return ApiClient(SynchronousTestCase(), str(db))


def test_findings_separate_found_external_unconfirmed_and_missing(client):
    response = client.request(
        "GET", "/documentation/findings", params={"limit": "50"}, envelope=True
    )
    assert response.status == 200, response.body
    findings = {f["claim_text"]: f for f in response.json()["data"]["findings"]}
    status = {claim: (f["resolution_status"], f["status"]) for claim, f in findings.items()}
    assert status["res.json"] == ("resolved", "valid")  # code, though it looks like a file
    assert status["path.resolve"] == ("external", "external_reference")  # require('path')
    assert status["Object.create"] == ("external", "external_reference")  # a builtin
    assert status["router.use"] == ("name_only", "unverified")
    assert "definitions named use elsewhere: proto.use" in findings["router.use"]["summary"]
    assert status["removed_helper()"] == ("unresolved", "missing_evidence")
    assert (
        "property, an option or a name defined at run time"
        in (findings["removed_helper()"]["summary"])
    )
