"""The packaged contract data: tool order, schemas, routes, toolsets and descriptions."""

import hashlib
import json
import re

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.catalog.contract import load_contract
from eshu_mcp.catalog.toolsets import TOOLSETS


def _words(text: str) -> list[str]:
    return text.split()


# The 162 tool names in the order the contract fixes for tools/list.
CONTRACT_ORDER = _words(
    """
find_code find_symbol inspect_code_inventory investigate_import_dependencies
inspect_call_graph_metrics trace_route_callers investigate_code_topic
investigate_hardcoded_secrets get_code_relationship_story analyze_code_relationships
find_dead_code investigate_dead_code find_cross_repo_dead_code find_dead_iac
find_unmanaged_resources get_iac_management_status explain_iac_management_status
propose_terraform_import_plan compose_replatforming_plan
list_aws_runtime_drift_findings list_terraform_config_state_drift_findings
get_replatforming_rollups find_unmanaged_resource_owners
calculate_cyclomatic_complexity find_most_complex_functions inspect_code_quality
execute_cypher_query visualize_graph_query search_registry_bundles
list_indexed_repositories get_repository_stats execute_language_query
find_function_call_chain dispatch_taint_path dispatch_reaching_def
dispatch_cfg_summary dispatch_pdg_summary count_repositories_by_language
list_repositories_by_language get_repository_language_inventory get_ecosystem_overview
get_graph_summary_packet investigate_contract_impact trace_deployment_chain
investigate_deployment_config find_blast_radius find_infra_resources
investigate_resource analyze_infra_relationships get_repo_summary get_repo_context
get_relationship_evidence analyze_pre_change_impact plan_developer_change
list_package_registry_packages list_package_registry_versions get_repo_story
get_repository_coverage trace_resource_to_code explain_dependency_path
find_change_surface investigate_change_surface compare_environments
count_infra_resources get_infra_resource_inventory list_cloud_resource_inventory
list_cloud_runtime_drift_findings list_package_registry_dependencies
list_package_registry_correlations list_admission_decisions
count_package_registry_packages get_package_registry_package_inventory
list_ci_cd_run_correlations count_ci_cd_run_correlations
get_ci_cd_run_correlation_inventory list_service_catalog_correlations
list_codeowners_ownership list_kubernetes_correlations
list_secrets_iam_identity_trust_chains list_secrets_iam_privilege_posture_observations
list_secrets_iam_secret_access_paths list_secrets_iam_posture_gaps
count_secrets_iam_posture list_observability_coverage_correlations
get_vulnerability_scanner_read_contract list_container_image_identities
list_container_image_tag_history list_supply_chain_impact_findings
list_advisory_evidence explain_supply_chain_impact list_security_alert_reconciliations
list_sbom_attestation_attachments count_supply_chain_impact_findings
get_supply_chain_impact_inventory count_security_alert_reconciliations
get_security_alert_reconciliation_inventory count_container_image_identities
get_container_image_identity_inventory count_sbom_attestation_attachments
get_sbom_attestation_attachment_inventory get_incident_context list_work_item_evidence
derive_visualization_packet get_generation_lifecycle get_changed_since
get_repository_freshness get_service_changed_since resolve_entity get_entity_context
get_workload_context get_workload_story get_service_context get_service_story
investigate_service get_service_intelligence_report get_file_content get_file_lines
get_entity_content build_evidence_citation_packet search_file_content
search_entity_content list_documentation_findings list_documentation_facts
get_documentation_evidence_packet check_documentation_evidence_packet_freshness
list_query_playbooks resolve_query_playbook list_investigation_workflows
resolve_investigation_workflow export_supply_chain_impact_packet
export_deployable_unit_packet export_cloud_runtime_drift_packet
list_semantic_documentation_observations list_semantic_code_hints
search_semantic_context count_documentation_findings
get_documentation_finding_inventory list_component_extensions
get_component_extension_diagnostics list_collector_extraction_readiness
get_collector_extraction_readiness list_fact_schema_versions get_fact_schema_version
list_collectors list_ingesters get_ingester_status get_index_status
get_hosted_readiness get_collector_readiness get_operator_control_plane
list_dead_letter_work_items list_reducer_input_invalid_facts get_freshness_causality
get_hosted_governance_status get_semantic_capability_status
get_answer_narration_status get_capability_catalog get_surface_inventory
trace_exposure_path ask list_relationship_edges list_repository_files
"""
)

# sha256 of the contract's input schemas (list in order, JSON with sorted keys) and of
# its [name, route] pairs: the catalog may add descriptions, toolsets and the arguments
# of EXTENSIONS, nothing else.
INPUT_SCHEMAS_SHA256 = "88ce2b0ab7547952f8a7612ab5093cb9ef81bcccce90701f1a1c81564876c4a5"
ROUTES_SHA256 = "a2cec9c919771e6a16493edaed882820754831a6859bb9d62ecbffd976734064"

# First 12 hex digits of sha256 over each contract ``purpose`` line: descriptions must
# be written afresh, never the contract's one-line hint.
PURPOSE_DIGESTS = frozenset(
    _words(
        """
0014ad26b346 032aedfee29e 08b76bbb6601 0a5590dea1f5 0b366e728e11 0b7b68f1e087
0d1b9b0aaa27 0e43d33aa64d 1032999723ab 1105ebd77921 144378fe839f 16d5efa49925
18eaed6010cd 1ad36ef86482 1c713c7a7baf 1dcee896839f 1dec4cbc14de 2213f7d68978
222af0145b9b 22a5172b08ee 2430bd1d686b 2488c923e518 2548a7c89729 25a2cf25c757
25fb29828e16 264d25c5c859 298df9e971dd 299873f05789 2b4bfbd459b6 2c755f3f4d95
2c8b9f494a49 2e073f3d89a5 304d263ab926 32857b0f47fa 36dc81e6c068 37cb05a3c4fb
390afbd28c8b 3cc81989751a 415b96a822a1 43b704b970e1 450f0dc1bcda 4784073986ad
47bef435cb75 48242f5ce906 4df5839f602f 511113cd2f5d 55e149eddfc5 560abe2de63f
57d5cdf743e7 581b3d130070 5aa8222c679a 5abe862c3bca 5af979553cea 5b03649829a4
5e1c790b2a24 5ea63f477452 62094eb8c376 62d71b784844 638fdc690758 65c4aa4d38dc
685929290fda 687a7112ec3c 6a2e5dc8a9e5 6b20cc512fb0 6bb1036e19b9 6cbd60a42ec0
6d008063bb58 6d5afae5510f 6e1bb9966467 6f1aadee7b73 6f5797185ccb 6fbd4ff5b6fc
6fdf7d89075a 708f0f636237 7369025a33fe 73a33984703f 75b6b2ac8e32 7695da7625be
77017c2e677c 77161105a695 7b48f3f8affb 7b565b7b0d8e 7c5241f6ccf5 7c93d599a0e1
7ced41621541 80a1e60957a7 8115dce6c4cf 81b6cb23c18b 82451995fdfa 83a78ad20ebc
852abdb23918 86fcf73c3636 8b0108b80a80 8e0feefd2efe 9024f1f6c37e 90b547108812
919c992eee61 93d769b48bfb 9477e03adb1d 94bc36c4b63e 94db74f0b828 9757c487a57c
9cc660014cf3 a8352566dd20 a854c6d4f81a a8c07cf9ce21 ac3398169435 ad81061a89a8
afcd47e01e90 b0e358325d5f b2ffc15f8cd7 b3ade722e167 b4a5b8840ab3 b631e77a7ea7
b632a1bd57d2 b78fa2b6bfe1 b8d7645c73ce ba270bee8b93 bc57154d958d be22f1954dab
c4df05f7b1a5 c4e546193100 c50a72253b59 c6cd272e9ebf c6f80413e4e0 c9662884b6f4
c9aa385374f5 caf287e92f03 cb79b713c99d cde9b30e0db7 ce2c1788689e cf0cea95fb15
d10f1ae00ad9 d2f0b6bd8677 d5ce023690e9 d72735c4872d d898d4f1ce2e d988e57b0aaf
daa97e4ae44d dac42c4782c3 dce32c6ddda3 df2c4bf884e5 e061d76ca040 e0bfffa92eb1
e1eb22d7365d e40bca2ae5bd e6611e7807d8 e7f1c44a5ccd ec1926952638 ec36643923e1
ef3f316d28f4 efdc9b88fb11 f07db6d9e247 f1ad65fcf288 f2ac4fdcf851 f327960a5858
f3b9134a1cc4 f7b63e039485 fb62dc2c6e8e fcb2afe3568b ff6c22533ac3 ffd1614647cd
"""
    )
)

TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
# Characters per description. Issue 10 shortened them to what each tool answers and
# when to choose it, leaving defaults, maxima and enum lists to the input schema
# (the floor was 200 before): short enough for a small default surface, long enough
# to still tell a model which tool to pick.
DESCRIPTION_BOUNDS = (80, 480)


# Arguments this project adds to a contract tool, each for a reason of its own:
# find_dead_code scans the whole repository, so its answer pages (Eshu's tool cannot).
# search_file_content and search_entity_content take case_sensitive and regex (issue 25):
# text search that tells ``Load`` from ``load``, or matches a bounded regular expression;
# sent only when given.
EXTENSIONS = {
    "find_dead_code": ("offset",),
    "search_file_content": ("case_sensitive", "regex"),
    "search_entity_content": ("case_sensitive", "regex"),
}


def _contract_record(record: dict) -> dict:
    """``record`` without this project's own arguments (:data:`EXTENSIONS`)."""
    added = EXTENSIONS.get(record["name"], ())
    if not added:
        return record
    schema = dict(record["input_schema"])
    schema["properties"] = {k: v for k, v in schema["properties"].items() if k not in added}
    route = dict(record["route"])
    for key in ("body_fields", "defaults", "omitted_when_absent"):
        route[key] = {k: v for k, v in route[key].items() if k not in added}
    return {**record, "input_schema": schema, "route": route}


def _digest(value) -> str:
    text = json.dumps(value, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class ContractOrderTests(SynchronousTestCase):
    def test_catalog_holds_the_162_contract_tools_in_contract_order(self):
        self.assertEqual(len(CONTRACT_ORDER), 162)
        self.assertEqual([record["name"] for record in load_contract()], CONTRACT_ORDER)

    def test_tool_names_are_unique_and_follow_the_mcp_name_rule(self):
        names = [record["name"] for record in load_contract()]
        self.assertEqual(len(set(names)), len(names))
        for name in names:
            self.assertRegex(name, TOOL_NAME)

    def test_input_schemas_are_the_contract_schemas_unchanged(self):
        schemas = [_contract_record(record)["input_schema"] for record in load_contract()]
        self.assertEqual(_digest(schemas), INPUT_SCHEMAS_SHA256)

    def test_routes_are_the_contract_routes_unchanged(self):
        routes = [[record["name"], _contract_record(record)["route"]] for record in load_contract()]
        self.assertEqual(_digest(routes), ROUTES_SHA256)

    def test_the_added_arguments_are_in_the_schema_and_sent(self):
        records = {record["name"]: record for record in load_contract()}
        for name, added in EXTENSIONS.items():
            for argument in added:
                self.assertIn(argument, records[name]["input_schema"]["properties"])
                self.assertEqual(records[name]["route"]["body_fields"][argument], argument)


class ToolsetFieldTests(SynchronousTestCase):
    def test_every_record_names_one_known_toolset(self):
        for record in load_contract():
            self.assertIn(record.get("toolset"), TOOLSETS, record["name"])

    def test_every_toolset_holds_at_least_one_tool(self):
        used = {record["toolset"] for record in load_contract()}
        self.assertEqual(used, set(TOOLSETS))


class DescriptionTests(SynchronousTestCase):
    def test_every_description_is_within_the_token_budget_bounds(self):
        low, high = DESCRIPTION_BOUNDS
        for record in load_contract():
            length = len(record["description"])
            self.assertTrue(low <= length <= high, f"{record['name']}: {length} characters")

    def test_no_description_is_a_contract_purpose_line(self):
        for record in load_contract():
            digest = hashlib.sha256(record["description"].encode("utf-8")).hexdigest()[:12]
            self.assertNotIn(digest, PURPOSE_DIGESTS, record["name"])

    def test_no_description_repeats_other_contract_text(self):
        for record in load_contract():
            description = record["description"]
            self.assertNotEqual(description, record["route"].get("notes"), record["name"])
            self.assertNotIn(description, json.dumps(record["route"]), record["name"])

    def test_descriptions_are_distinct(self):
        descriptions = [record["description"] for record in load_contract()]
        self.assertEqual(len(set(descriptions)), len(descriptions))

    def test_descriptions_are_single_paragraphs_without_markup(self):
        for record in load_contract():
            description = record["description"]
            self.assertEqual(description, description.strip(), record["name"])
            self.assertNotIn("\n", description, record["name"])
            self.assertNotIn("  ", description, record["name"])

    def test_collector_fed_tools_say_the_embedded_index_answers_empty(self):
        for record in load_contract():
            if record["data_source"] == "external":
                self.assertIn("embedded local index", record["description"], record["name"])
