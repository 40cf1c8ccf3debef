"""
Collector facts in hand-built test indexes: a file read by its real local collector, its
facts stored as the indexer stores them.
"""

from __future__ import annotations

from eshu_mcp.query.local.index.parse.collectors import collect_file, collector_for

MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: payments-api
  namespace: pay
spec:
  template:
    metadata:
      labels: {app: payments-api}
    spec:
      containers:
        - name: api
          image: ghcr.io/acme/payments:1.0
"""


def add_collected_file(index, repo_id: str, path: str, text: str) -> int:
    """Add ``path`` to a test index (``tests.test_api_resource.ApiIndex``) with its facts."""
    collector = collector_for(path)
    assert collector is not None, f"no collector reads {path}"
    file_id = index.file(repo_id, path, text, language=None)
    index.writer.execute(
        "UPDATE files SET artifact_type = ? WHERE file_id = ?", (collector.artifact_type, file_id)
    )
    index.writer.executemany(
        "INSERT INTO artifact_facts (repo_id, file_id, relative_path, artifact_type, fact_kind,"
        " name, line_number, payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
        [
            (repo_id, file_id, path, collector.artifact_type, *row)
            for row in collect_file(collector, path, text)
        ],
    )
    return file_id
