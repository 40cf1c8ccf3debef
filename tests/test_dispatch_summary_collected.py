"""Collector-fed summaries read each row as what it says, not as its first key=value pairs."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from tests.answer_rows import derived


class CollectedSummaryTests(SynchronousTestCase):
    def lines(self, tool, data):
        return summarize_envelope(tool, derived(data)).splitlines()

    def test_counts_state_the_total_and_each_dimension_largest_first(self):
        data = {"total_packages": 42, "by_ecosystem": {"npm": 7, "pypi": 13, "cargo": 7}}
        self.assertEqual(
            self.lines("count_package_registry_packages", data),
            ["derived/fresh — 42 packages", "by ecosystem: pypi 13, npm 7, cargo 7"],
        )

    def test_inventory_buckets_read_dimension_value_count(self):
        data = {"buckets": [{"dimension": "provider", "value": "aws", "count": 9}], "count": 1}
        self.assertEqual(self.lines("get_infra_resource_inventory", data)[1], "provider aws: 9")

    def test_ownership_rules_name_pattern_owner_and_files(self):
        row = {"source_path": ".github/CODEOWNERS", "line": 4, "pattern": "/services/web/"}
        row.update(owner_ref="@acme/frontend", owned_files=3)
        data = {"ownership": [row], "count": 1}
        self.assertEqual(
            self.lines("list_codeowners_ownership", data)[1],
            ".github/CODEOWNERS:4 /services/web/ -> @acme/frontend (3 files)",
        )

    def test_documentation_findings_name_the_claim_its_target_and_state(self):
        row = {"document_id": "docs/design.rst", "line": 8, "claim_type": "code_reference"}
        row.update(claim_text="compute_fee", states={"finding_state": "valid"})
        row["candidate_refs"] = [{"source_uri": "services/api/app/fees.py:4"}]
        self.assertEqual(
            self.lines("list_documentation_findings", {"findings": [row], "count": 1})[1],
            "docs/design.rst:8 code reference 'compute_fee' -> services/api/app/fees.py:4: valid",
        )

    def test_workload_correlations_name_the_workload_and_its_image(self):
        row = {"evidence_fact_ids": ["deploy/k8s/api.yaml:25"], "line_number": 25}
        row.update(
            correlation_id="manifest:r:deploy/k8s/api.yaml:shop/Deployment/api#api",
            image_ref="ghcr.io/acme/api:1.4.0",
            reason="the manifest runs an image this repository builds",
        )
        self.assertEqual(
            self.lines("list_kubernetes_correlations", {"correlations": [row], "count": 1})[1],
            "deploy/k8s/api.yaml:25 shop/Deployment/api#api runs ghcr.io/acme/api:1.4.0"
            " (the manifest runs an image this repository builds)",
        )

    def test_unused_infrastructure_names_the_address_and_why(self):
        row = {"relative_path": "infra/main.tf", "line_number": 44}
        row.update(
            artifact="data.aws_caller_identity.unused", finding="unused_terraform_data_source"
        )
        self.assertEqual(
            self.lines("find_dead_iac", {"findings": [row], "count": 1})[1],
            "infra/main.tf:44 data.aws_caller_identity.unused: unused terraform data source",
        )

    def test_language_inventories_count_files(self):
        data = {"languages": [{"language": "yaml", "file_count": 8}], "count": 1}
        self.assertEqual(self.lines("get_repository_language_inventory", data)[1], "yaml: 8 files")

    def test_impact_of_a_shared_name_says_how_many_definitions_it_joins(self):
        row = {"depth": 1, "kind": "Function", "name": "render", "relative_path": "a.py"}
        row["start_line"] = 3
        data = {"affected": [row], "affected_count": 1, "target": "width", "seed_count": 2}
        self.assertEqual(
            self.lines("analyze_pre_change_impact", data)[0],
            "derived/fresh — 1 affected definition for 'width' (2 definitions of that name,"
            " together)",
        )
        data["seed_count"] = 1
        self.assertEqual(
            self.lines("analyze_pre_change_impact", data)[0],
            "derived/fresh — 1 affected definition for 'width'",
        )

    def test_an_iac_status_tells_its_story_and_the_evidence_read(self):
        finding = {
            "missing_evidence": ["terraform_state"],
            "recommended_action": "apply the configuration",
            "evidence": [{"relative_path": "infra/main.tf", "line_number": 3, "source": "tf"}],
        }
        data = {"story": "aws_s3_bucket.b is terraform config only", "finding": finding}
        self.assertEqual(
            self.lines("get_iac_management_status", data),
            [
                "derived/fresh — aws_s3_bucket.b is terraform config only; missing evidence:"
                " terraform_state; next: apply the configuration",
                "infra/main.tf:3 tf",
            ],
        )
