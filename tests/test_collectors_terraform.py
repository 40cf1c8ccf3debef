"""The Terraform collector: declarations, references through interpolation, state addresses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from eshu_mcp.query.local.index.parse.collectors import collect_file, collector_for
from eshu_mcp.query.local.index.parse.collectors.terraform import (
    collect_state,
    collect_terraform,
    reference_target,
)

MAIN = """\
resource "aws_s3_bucket" "logs" {
  bucket = "${var.prefix}-logs"
  count  = var.enabled ? 1 : 0
}

resource "aws_iam_policy" "read" {
  policy = <<-EOT
    {"Resource": "${aws_s3_bucket.logs[0].arn}/*",
     "Note": "${local.note}"}
  EOT
}

module "vpc" {
  source  = "terraform-aws-modules/vpc/aws"
  version = "~> 5.0"
  name    = "${var.prefix}-vpc"
}

output "subnets" {
  value = [for s in module.vpc.private_subnets : s]
}

data "aws_region" "current" {}

variable "prefix" {}
variable "enabled" { default = true }

locals {
  note = "region ${data.aws_region.current.name}"
}
"""


def facts_of(text: str, path: str = "infra/main.tf"):
    return collect_terraform(path, text)


def by_kind(facts, kind):
    return {fact.name: fact for fact in facts if fact.kind == kind}


def test_blocks_are_declared_with_their_addresses_and_module_sources():
    facts = facts_of(MAIN)
    assert set(by_kind(facts, "tf_resource")) == {"aws_s3_bucket.logs", "aws_iam_policy.read"}
    assert by_kind(facts, "tf_resource")["aws_s3_bucket.logs"].payload["repeated"] is True
    module = by_kind(facts, "tf_module")["module.vpc"]
    assert (module.payload["source"], module.payload["version"]) == (
        "terraform-aws-modules/vpc/aws",
        "~> 5.0",
    )
    assert set(by_kind(facts, "tf_variable")) == {"var.prefix", "var.enabled"}
    assert set(by_kind(facts, "tf_output")) == {"output.subnets"}
    assert set(by_kind(facts, "tf_data")) == {"data.aws_region.current"}
    assert set(by_kind(facts, "tf_local")) == {"local.note"}
    assert by_kind(facts, "tf_resource")["aws_iam_policy.read"].line == 6


def test_references_are_read_inside_heredocs_interpolations_and_for_expressions():
    refs = {
        (fact.payload["from"], fact.name) for fact in facts_of(MAIN) if fact.kind == "tf_reference"
    }
    assert ("aws_s3_bucket.logs", "var.prefix") in refs
    assert ("aws_s3_bucket.logs", "var.enabled") in refs
    assert ("aws_iam_policy.read", "aws_s3_bucket.logs") in refs  # heredoc + index
    assert ("aws_iam_policy.read", "local.note") in refs
    assert ("module.vpc", "var.prefix") in refs
    assert ("output.subnets", "module.vpc") in refs
    assert ("local.note", "data.aws_region.current") in refs
    # the for-expression's iterator is not a declared address
    assert not any(target.startswith("s.") for _source, target in refs)


def test_module_output_references_name_the_output():
    output = next(
        fact
        for fact in facts_of(MAIN)
        if fact.kind == "tf_reference"
        and fact.name == "module.vpc"
        and fact.payload["from"] == "output.subnets"
    )
    assert output.payload["output"] == "private_subnets"


def test_reference_targets_skip_meta_arguments():
    assert reference_target(["each", "value"]) is None
    assert reference_target(["count", "index"]) is None
    assert reference_target(["path", "module"]) is None
    assert reference_target(["aws_vpc", "main", "id"]) == "aws_vpc.main"
    assert reference_target(["data", "aws_ami", "x", "id"]) == "data.aws_ami.x"


def test_a_malformed_file_keeps_what_parses_and_says_it_is_partial():
    facts = facts_of('resource "aws_sqs_queue" "jobs" {\n  name = "jobs"\n}\nresource "broken" {\n')
    assert "aws_sqs_queue.jobs" in by_kind(facts, "tf_resource")
    assert by_kind(facts, "tf_parse_error")


def test_state_keeps_addresses_and_types_never_attribute_values():
    state = {
        "version": 4,
        "terraform_version": "1.6.0",
        "resources": [
            {
                "module": "module.db",
                "mode": "managed",
                "type": "aws_db_instance",
                "name": "main",
                "provider": 'provider["registry.terraform.io/hashicorp/aws"]',
                "instances": [{"attributes": {"password": "s3cr3t-value", "username": "root"}}],
            },
            {"mode": "data", "type": "aws_ami", "name": "base", "instances": []},
        ],
        "outputs": {"db_password": {"value": "s3cr3t-value", "sensitive": True}},
    }
    text = json.dumps(state)
    facts = collect_state("terraform.tfstate", text)
    addresses = {fact.name: fact.payload for fact in facts if fact.kind == "tfstate_resource"}
    assert addresses["module.db.aws_db_instance.main"]["provider"] == "aws"
    assert addresses["module.db.aws_db_instance.main"]["instance_count"] == 1
    assert addresses["data.aws_ami.base"]["mode"] == "data"
    stored = json.dumps([(f.kind, f.name, f.payload) for f in facts])
    assert "s3cr3t" not in stored and "root" not in stored and "db_password" not in stored


def test_a_state_file_that_is_not_json_becomes_a_collect_error():
    collector = collector_for("envs/prod/terraform.tfstate")
    rows = collect_file(collector, "envs/prod/terraform.tfstate", "{not json")
    assert [row[0] for row in rows] == ["collect_error"]
    assert "JSONDecodeError" in rows[0][3]


def test_the_hcl_grammar_and_pyyaml_load_only_when_a_file_needs_them():
    script = (
        "import sys\n"
        "from eshu_mcp.query.local.index.parse.rows import parse_file\n"
        "parse_file('app/main.py', b'x = 1\\n')\n"
        "before = {'tree_sitter_hcl', 'yaml'} & set(sys.modules)\n"
        "parse_file('infra/main.tf', b'variable \"x\" {}\\n')\n"
        "print(sorted(before), 'tree_sitter_hcl' in sys.modules)\n"
    )
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
    )
    assert done.stdout.split() == ["[]", "True"]
