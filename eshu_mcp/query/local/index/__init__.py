"""
The embedded index: walk git work trees, parse them with tree-sitter, and keep one SQLite
file of files, entities, call sites, imports, resolved edges, secrets and generations.

Entry points: ``indexer.index_repositories`` (synchronous), ``command.main`` (the
``eshu-mcp index`` CLI), ``service.IndexService`` (the daemon's builder and watcher) and
``store.open_reader`` (read connections for the query layer; schema in ``schema.sql``).
"""
