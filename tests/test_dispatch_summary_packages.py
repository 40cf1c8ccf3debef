"""Package summaries name the package, its version and the manifest line declaring it."""

from twisted.trial.unittest import SynchronousTestCase

from eshu_mcp.dispatch.summaries.result import summarize_envelope
from tests.answer_rows import derived

PFLAG = {
    "normalized_name": "github.com/spf13/pflag",
    "ecosystem": "gomod",
    "direct": True,
    "source_path": "go.mod",
    "evidence": [
        {"kind": "declares", "relative_path": "go.mod", "line": 8, "dependency_range": "v1.0.9"},
        {"kind": "locks", "relative_path": "go.sum", "line": 7, "version": "v1.0.9"},
    ],
}


class PackageSummaryTests(SynchronousTestCase):
    def lines(self, tool, data):
        return summarize_envelope(tool, derived(data)).splitlines()

    def test_packages_read_as_manifest_line_name_version_and_kind(self):
        own = {"normalized_name": "github.com/spf13/cobra", "ecosystem": "gomod"}
        own.update(direct=False, defined_locally=True, source_path="go.mod")
        data = {"packages": [PFLAG, own], "count": 2}
        self.assertEqual(
            self.lines("list_package_registry_packages", data),
            [
                "derived/fresh — 2 packages",
                "go.mod:8 github.com/spf13/pflag v1.0.9 (gomod, direct)",
                "go.mod github.com/spf13/cobra (gomod, defined here)",
            ],
        )

    def test_dependencies_name_both_ends(self):
        row = {
            "source_package_id": "gomod://proxy.golang.org/github.com/spf13/cobra",
            "dependency_normalized": "github.com/spf13/pflag",
            "dependency_range": "v1.0.9",
            "dependency_type": "runtime",
            "relative_path": "go.mod",
            "line": 8,
        }
        self.assertEqual(
            self.lines("list_package_registry_dependencies", {"dependencies": [row], "count": 1}),
            [
                "derived/fresh — 1 dependency",
                "go.mod:8 cobra -> github.com/spf13/pflag v1.0.9 (runtime)",
            ],
        )

    def test_versions_name_their_purl_and_flags(self):
        row = {"purl": "pkg:npm/left-pad@1.0.0", "package_manager": "npm", "is_deprecated": True}
        row["evidence"] = [{"relative_path": "package-lock.json", "line": 12}]
        self.assertEqual(
            self.lines("list_package_registry_versions", {"versions": [row], "count": 1})[1],
            "package-lock.json:12 pkg:npm/left-pad@1.0.0 (npm, deprecated)",
        )
