"""
The embedded index: walk git work trees, parse them with tree-sitter, and keep one SQLite
file of files, entities, call sites, imports, resolved edges, secrets and generations.

Rooms by phase: ``walk`` (which files), ``parse`` (bytes to rows; the language registry,
extractors, collectors), ``resolve`` (imports, calls, references, inheritance), ``store``
(schema, writer, generations) and ``build`` (runs, the builder child, the service, watch).
Entry points: ``build.indexer.index_repositories`` (synchronous), ``build.command.main``
(the ``eshu-mcp index`` CLI), ``build.service.IndexService`` (the daemon's builder and
watcher) and ``store.database.open_reader`` (read connections for the query layer).
"""
