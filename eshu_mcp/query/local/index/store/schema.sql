-- eshu-mcp embedded index: SQLite schema (schema_version 4).
--
-- Written by the indexer (eshu_mcp.query.local.index), read by the local /api/v0 Resource
-- through eshu_mcp.query.local.index.store.open_reader(). Requires SQLite >= 3.34 with FTS5
-- and JSON1.
--
-- Stability: within a schema version tables, views and columns are only ever ADDED.
-- Version 4 added the definition search index (search_docs, search_fts).
-- Version 3 added the resolution method 'ambiguous' (code 7) and stores Python base names
-- and receiver types as written (dotted); version 2 changed the storage of entities, edges
-- and call sites (see "Compact storage");
-- the writer rebuilds an index written by an older version, readers refuse it.
--
-- Concurrency and visibility:
--   * journal_mode=WAL, one writer at a time (advisory lock file "<db>.lock"), any number of
--     readers.
--   * One indexing run of one repository = one generation. Everything a generation changes
--     (files, entities, call sites, imports, edges, secrets, fact_versions, the generation's
--     status flip and repositories.active_generation_id) is written in ONE transaction, so a
--     reader sees either the previous generation or the new one, never a mix. Only the
--     generations row in status 'pending' is committed earlier (so "building" is visible);
--     a run that dies leaves that row 'pending' until the next run marks it 'failed'
--     (failure_class 'interrupted'), and the previous active generation keeps serving.
--   * The database holds only the CURRENT state of each repository's content (one row per
--     file); history lives in generations + fact_versions.
--
-- Compact storage (target <= 4 bytes of index per byte of source):
--   * file bodies are stored once, in files.content; entity source is sliced from it by byte
--     span (view entity_source), never stored again.
--   * files_fts is a word index (unicode61, '_' inside words, detail='none'): MATCH whole
--     tokens or prefixes ("charge_fee", "charge"*), rank with bm25(files_fts). Substring search
--     scans files.content with LIKE/instr (milliseconds for tens of MB).
--   * graph node ids (entity ids, 'file:<id>', module keys) are stored once, in nodes; the
--     storage tables entity_rows, edge_rows and call_rows refer to them by integer nid, and
--     small vocabularies (edge type, resolution method, call kind) by integer code.
--   * the views entities, edges and call_sites give every reader the documented text columns;
--     they are what queries should read (the planner turns a filter on a text id into an
--     index lookup in nodes). INSTEAD OF INSERT triggers make the views writable for tools and
--     tests; the indexer writes the storage tables directly.

PRAGMA foreign_keys = ON;

-- key/value facts about this file: schema_version, extractor_version, grammar_versions (JSON
-- object language -> grammar wheel version), created_at (RFC3339 UTC).
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- ---------------------------------------------------------------- repositories & generations

-- One row per indexed work tree.
--   repo_id: 'repository:r_' || sha1(identity)[:8] where identity is the normalized remote URL
--            (https://<host lower>/<path lower, no .git>) of remote.origin.url, or the absolute
--            local path when the work tree has no origin remote (or is not a git work tree).
--   has_remote: 1 when repo_id came from a remote URL.
--   is_git: 1 for a git work tree, 0 for a plain directory (no HEAD, refs or dirty flag).
--   repo_key: small integer alias of repo_id used by edge_rows.
CREATE TABLE IF NOT EXISTS repositories (
    repo_key             INTEGER PRIMARY KEY,
    repo_id              TEXT NOT NULL UNIQUE,
    name                 TEXT NOT NULL,         -- basename of the work tree
    local_path           TEXT NOT NULL UNIQUE,  -- absolute path of the work tree
    remote_url           TEXT,                  -- normalized https://host/owner/repo
    repo_slug            TEXT,                  -- owner/repo (path part of remote_url)
    has_remote           INTEGER NOT NULL DEFAULT 0,
    is_git               INTEGER NOT NULL DEFAULT 1,
    default_branch       TEXT,                  -- origin/HEAD target, else the checked-out branch
    head_commit          TEXT,                  -- HEAD sha at the active generation
    head_ref             TEXT,                  -- branch name, or NULL when HEAD is detached
    dirty                INTEGER NOT NULL DEFAULT 0,  -- work tree had uncommitted changes when indexed
    active_generation_id TEXT,                  -- generations.generation_id now serving (NULL before the first)
    gen_seq              INTEGER NOT NULL DEFAULT 0,  -- seq of the newest generation row (any status)
    created_at           TEXT NOT NULL,         -- RFC3339 UTC
    last_indexed_at      TEXT                   -- RFC3339 UTC of the last successful generation
);

-- Branches and tags of a git repository at the active generation (git for-each-ref).
CREATE TABLE IF NOT EXISTS repository_refs (
    repo_id     TEXT NOT NULL REFERENCES repositories(repo_id) ON DELETE CASCADE,
    ref_name    TEXT NOT NULL,                  -- short name: 'main', 'v1.2.0', 'origin/main'
    ref_kind    TEXT NOT NULL,                  -- branch | tag | remote_branch
    commit_sha  TEXT NOT NULL,                  -- peeled commit for annotated tags
    is_head     INTEGER NOT NULL DEFAULT 0,     -- 1 for the checked-out branch
    PRIMARY KEY (repo_id, ref_kind, ref_name)
);

-- One row per indexing run of a repository.
--   generation_id: sha256 hex of Go-style JSON
--       {"fact_type":"GitRepositorySnapshot","identity":{"repo_path":<abs path>,"source_run_id":<uuid4>}}
--   seq: 1, 2, 3... per repository; fact_versions intervals are expressed in seq.
--   status: pending    - run in progress (or died: see failure_class 'interrupted')
--           active     - the generation now serving (exactly one per repository once indexed)
--           superseded - was active, replaced by a newer generation (superseded_at set)
--           failed     - the run failed; failure_class/failure_message say why; never served
--           completed  - reserved (Eshu vocabulary); not written by this indexer
--   A run that finds nothing changed (same HEAD, same file hashes) writes no generation.
--   freshness_hint: HEAD sha, with '-dirty' when the work tree had uncommitted changes;
--       'worktree' for non-git directories.
--   files_*: counts of this run: seen = files kept by the walk, changed = added + modified
--       (re-parsed), deleted = removed since the previous generation, failed = parse errors
--       that produced no entities.
CREATE TABLE IF NOT EXISTS generations (
    generation_id     TEXT PRIMARY KEY,
    repo_id           TEXT NOT NULL REFERENCES repositories(repo_id) ON DELETE CASCADE,
    seq               INTEGER NOT NULL,
    scope_id          TEXT NOT NULL,             -- 'git-repository-scope:' || repo_id
    scope_kind        TEXT NOT NULL DEFAULT 'repository',
    source_system     TEXT NOT NULL DEFAULT 'git',
    collector_kind    TEXT NOT NULL DEFAULT 'git',
    trigger_kind      TEXT NOT NULL DEFAULT 'snapshot',
    status            TEXT NOT NULL CHECK (status IN ('pending','active','superseded','completed','failed')),
    freshness_hint    TEXT,
    source_commit_sha TEXT,                      -- HEAD sha (NULL for non-git directories)
    is_delta          INTEGER NOT NULL DEFAULT 0,  -- 1 when some files were reused unchanged from the previous generation
    observed_at       TEXT NOT NULL,             -- RFC3339 UTC: run started
    ingested_at       TEXT,                      -- RFC3339 UTC: write transaction committed
    activated_at      TEXT,
    superseded_at     TEXT,
    files_seen        INTEGER NOT NULL DEFAULT 0,
    files_changed     INTEGER NOT NULL DEFAULT 0,
    files_deleted     INTEGER NOT NULL DEFAULT 0,
    files_failed      INTEGER NOT NULL DEFAULT 0,
    failure_class     TEXT,                      -- interrupted | index_error | git_error
    failure_message   TEXT,
    UNIQUE (repo_id, seq)
);
CREATE INDEX IF NOT EXISTS generations_repo_status ON generations (repo_id, status, seq DESC);

-- ---------------------------------------------------------------- content store

-- One row per file kept by the walk (git ls-files tracked + untracked-not-ignored, minus
-- .eshuignore, Eshu's default skip dirs/suffixes, symlinks leaving the repository).
--   file_id: rowid; stable while the path exists (a modified file keeps its file_id; a
--            renamed file is a delete + an add). Also the files_fts rowid.
--   language: Eshu parser key (python, go, javascript, typescript, tsx, java, rust, c, cpp,
--             c_sharp, ruby, php, ...) or NULL when no parser knows the file.
--   content: the UTF-8 text (invalid bytes replaced). '' for binary files and files over the
--            size cap (see parse_status).
--   parse_status: parsed      - entities/calls/imports extracted
--                 no_parser   - text kept for search, no language extractor
--                 too_large   - over the size cap; content '' (byte_size is the real size)
--                 withheld    - a file that holds secrets in clear (Terraform state): content '',
--                               only its collector's facts and redacted secret candidates kept
--                 binary      - NUL byte in the first 8 KiB; content ''
--                 parse_error - tree-sitter reported ERROR/MISSING nodes; extraction still ran
--                 entity_cap  - more than 10,000 entities; entities dropped, content kept
CREATE TABLE IF NOT EXISTS files (
    file_id        INTEGER PRIMARY KEY,
    repo_id        TEXT NOT NULL REFERENCES repositories(repo_id) ON DELETE CASCADE,
    relative_path  TEXT NOT NULL,                -- forward slashes, repo-relative
    language       TEXT,
    artifact_type  TEXT,                         -- local collector that read it (see artifact_facts)
    content        TEXT NOT NULL,
    content_hash   TEXT NOT NULL,                -- sha256 hex of the raw bytes
    byte_size      INTEGER NOT NULL,
    line_count     INTEGER NOT NULL,
    mtime_ns       INTEGER,                      -- fast change pre-check only; content_hash decides
    commit_sha     TEXT,                         -- HEAD sha of the generation that last (re)wrote the row
    parse_status   TEXT NOT NULL,
    parse_errors   INTEGER NOT NULL DEFAULT 0,   -- count of tree-sitter ERROR/MISSING nodes
    is_test        INTEGER NOT NULL DEFAULT 0,   -- Eshu test-file rules (dead-code §3.5)
    is_generated   INTEGER NOT NULL DEFAULT 0,   -- generated path or marker in the first 2 KiB
    indexed_at     TEXT NOT NULL,
    generation_id  TEXT NOT NULL,                -- generation that last (re)wrote the row
    UNIQUE (repo_id, relative_path)
);
CREATE INDEX IF NOT EXISTS files_repo_lang ON files (repo_id, language);
CREATE INDEX IF NOT EXISTS files_lang ON files (language);

-- Word index over path and body (see the header): MATCH tokens or prefixes, never LIKE.
CREATE VIRTUAL TABLE IF NOT EXISTS files_fts USING fts5(
    relative_path, content,
    content='files', content_rowid='file_id',
    tokenize="unicode61 tokenchars '_'", detail='none'
);
CREATE TRIGGER IF NOT EXISTS files_ai AFTER INSERT ON files BEGIN
    INSERT INTO files_fts(rowid, relative_path, content) VALUES (new.file_id, new.relative_path, new.content);
END;
CREATE TRIGGER IF NOT EXISTS files_ad AFTER DELETE ON files BEGIN
    INSERT INTO files_fts(files_fts, rowid, relative_path, content) VALUES ('delete', old.file_id, old.relative_path, old.content);
END;
CREATE TRIGGER IF NOT EXISTS files_au AFTER UPDATE OF relative_path, content ON files BEGIN
    INSERT INTO files_fts(files_fts, rowid, relative_path, content) VALUES ('delete', old.file_id, old.relative_path, old.content);
    INSERT INTO files_fts(rowid, relative_path, content) VALUES (new.file_id, new.relative_path, new.content);
END;

-- Graph node ids: every entity id, file node ('file:' || file_id) and module node
-- (modules.module_key) that a stored row refers to, numbered once.
CREATE TABLE IF NOT EXISTS nodes (
    nid      INTEGER PRIMARY KEY,
    node_id  TEXT NOT NULL UNIQUE
);

-- Code entities (Eshu content entities), stored by node number; read them through the
-- entities view below.
--   rid: the entity's nodes.nid (its entity_id lives in nodes.node_id).
--   parent: nodes.nid of the enclosing entity, NULL for top-level entities.
CREATE TABLE IF NOT EXISTS entity_rows (
    rid                    INTEGER PRIMARY KEY,
    file_id                INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    entity_type            TEXT NOT NULL,
    entity_name            TEXT NOT NULL,
    start_line             INTEGER NOT NULL,
    end_line               INTEGER NOT NULL,
    start_byte             INTEGER,
    end_byte               INTEGER,
    parent                 INTEGER,
    class_context          TEXT,
    cyclomatic_complexity  INTEGER,
    arg_count              INTEGER,
    signature              TEXT,
    metadata               TEXT NOT NULL DEFAULT '{}'
);
CREATE INDEX IF NOT EXISTS entity_rows_name ON entity_rows (entity_name);
CREATE INDEX IF NOT EXISTS entity_rows_file_line ON entity_rows (file_id, start_line);
CREATE INDEX IF NOT EXISTS entity_rows_parent ON entity_rows (parent) WHERE parent IS NOT NULL;
CREATE INDEX IF NOT EXISTS entity_rows_complexity ON entity_rows (cyclomatic_complexity DESC) WHERE cyclomatic_complexity > 0;

-- Code entities as every reader sees them.
--   entity_id: 'content-entity:e_' || blake2s_256(repo_id \n relative_path \n lower(entity_type)
--              \n entity_name \n start_line).hex[:12]   (Eshu's formula; graph handle 'entity:' || entity_id)
--   entity_type: Eshu label. Written today: Function (functions AND methods: there is no
--                Method label; a method has class_context / parent_entity_id), Class, Struct,
--                Interface, Trait, Enum, Union, Module, TypeAlias, ImplBlock, Macro, Record.
--                Python: a Module row only when the module has a docstring (Eshu's rule).
--   qualified_name: class_context || '.' || entity_name for members, else entity_name.
--   start_line: line of the NAME node (Eshu convention), 1-based; end_line: end of the definition.
--   start_byte/end_byte: UTF-8 byte span of the whole definition (decorators included for
--                Python) inside files.content; entity_source slices the source with them.
--   repo_id, relative_path, language, is_test, is_generated: the file's.
--   parent_entity_id: enclosing class/struct/impl/interface for methods, enclosing function for
--                nested functions, NULL for top-level entities.
--   class_context: name of the enclosing type for methods (Python class, Java/C#/PHP/Ruby class,
--                Go receiver type, Rust impl type), else NULL.
--   cyclomatic_complexity: McCabe per Eshu's tables (local-backend §3.6); NULL for JavaScript/
--                TypeScript/TSX (Eshu emits none) and for non-function entities.
--   signature: the definition's header, e.g. 'def charge(self, amount)'.
--   docstring: always NULL: the docstring is metadata.docstring.
--   metadata: JSON object with Eshu's keys where known: args, decorators, docstring, async,
--                bases, class_context, impl_context, visibility, exported, semantic_kind,
--                dead_code_root_kinds[], enclosing_function, exactness_blockers[].
--   generation_id: always '': see files.generation_id of file_id.
CREATE VIEW IF NOT EXISTS entities (
    rid, entity_id, repo_id, file_id, relative_path, entity_type, entity_name, qualified_name,
    start_line, end_line, start_byte, end_byte, language, parent_entity_id, class_context,
    cyclomatic_complexity, arg_count, line_span, is_test, is_generated, signature, docstring,
    metadata, generation_id
) AS
    SELECT r.rid, n.node_id, f.repo_id, r.file_id, f.relative_path, r.entity_type,
           r.entity_name,
           CASE WHEN r.class_context IS NULL THEN r.entity_name
                ELSE r.class_context || '.' || r.entity_name END,
           r.start_line, r.end_line, r.start_byte, r.end_byte, f.language, p.node_id,
           r.class_context, r.cyclomatic_complexity, r.arg_count, r.end_line - r.start_line + 1,
           f.is_test, f.is_generated, r.signature, NULL, r.metadata, ''
      FROM entity_rows r
      JOIN nodes n ON n.nid = r.rid
      JOIN files f ON f.file_id = r.file_id
      LEFT JOIN nodes p ON p.nid = r.parent;

CREATE TRIGGER IF NOT EXISTS entities_insert INSTEAD OF INSERT ON entities BEGIN
    INSERT OR IGNORE INTO nodes (node_id) VALUES (NEW.entity_id);
    INSERT OR IGNORE INTO nodes (node_id)
        SELECT NEW.parent_entity_id WHERE NEW.parent_entity_id IS NOT NULL;
    INSERT INTO entity_rows (rid, file_id, entity_type, entity_name, start_line, end_line,
                             start_byte, end_byte, parent, class_context, cyclomatic_complexity,
                             arg_count, signature, metadata)
    VALUES ((SELECT nid FROM nodes WHERE node_id = NEW.entity_id), NEW.file_id,
            NEW.entity_type, NEW.entity_name, NEW.start_line, NEW.end_line, NEW.start_byte,
            NEW.end_byte, (SELECT nid FROM nodes WHERE node_id = NEW.parent_entity_id),
            NEW.class_context, NEW.cyclomatic_complexity, NEW.arg_count, NEW.signature,
            COALESCE(NEW.metadata, '{}'));
END;

-- Entity source text, computed (not stored): the definition's bytes from files.content.
-- Cap it in the reader where a route needs a cap (Eshu: 64 KiB, Variables 4 KiB).
CREATE VIEW IF NOT EXISTS entity_source (rid, entity_id, file_id, entity_name, source_cache) AS
    SELECT r.rid, n.node_id, r.file_id, r.entity_name,
           CAST(substr(CAST(f.content AS BLOB), r.start_byte + 1, r.end_byte - r.start_byte) AS TEXT)
      FROM entity_rows r
      JOIN nodes n ON n.nid = r.rid
      JOIN files f ON f.file_id = r.file_id;

-- ---------------------------------------------------------------- raw parser evidence

-- Every call expression found by the extractors (resolved or not), stored compactly; read
-- them through the call_sites view below.
--   caller: nodes.nid of the innermost enclosing entity, NULL at module/file level.
--   full_name: NULL when it is callee_name (no receiver) or receiver || '.' || callee_name.
--   call_kind: code (1 call, 2 method_call, 3 constructor_call, 4 new_expression, 5 macro) or
--              the text of any other kind.
CREATE TABLE IF NOT EXISTS call_rows (
    call_id           INTEGER PRIMARY KEY,
    file_id           INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    caller            INTEGER,
    callee_name       TEXT NOT NULL,
    full_name         TEXT,
    receiver          TEXT,
    inferred_type     TEXT,
    call_kind,                                 -- no type: an integer code or text
    arg_count         INTEGER,
    line_number       INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS call_rows_file ON call_rows (file_id);
-- who calls a name: an incremental build rescopes the files calling a name it touched
CREATE INDEX IF NOT EXISTS call_rows_callee ON call_rows (callee_name);

-- Call sites as every reader sees them.
--   caller_entity_id: innermost enclosing Function (or Class body for class-level calls);
--                     NULL = module/file level.
--   callee_name: last segment ('join' for os.path.join); full_name as written ('os.path.join',
--   'self.fmt', 's.Start'); receiver ('self', 'os.path', 's'; NULL for bare calls);
--   inferred_type: receiver type when locally provable.
--   call_kind: call | method_call | constructor_call | new_expression | macro
CREATE VIEW IF NOT EXISTS call_sites (
    call_id, repo_id, file_id, caller_entity_id, callee_name, full_name, receiver,
    inferred_type, call_kind, arg_count, line_number
) AS
    SELECT c.call_id, f.repo_id, c.file_id, n.node_id, c.callee_name,
           COALESCE(c.full_name, CASE WHEN c.receiver IS NULL THEN c.callee_name
                                      ELSE c.receiver || '.' || c.callee_name END),
           c.receiver, c.inferred_type,
           CASE c.call_kind WHEN 1 THEN 'call' WHEN 2 THEN 'method_call'
                WHEN 3 THEN 'constructor_call' WHEN 4 THEN 'new_expression' WHEN 5 THEN 'macro'
                ELSE c.call_kind END,
           c.arg_count, c.line_number
      FROM call_rows c
      JOIN files f ON f.file_id = c.file_id
      LEFT JOIN nodes n ON n.nid = c.caller;

CREATE TRIGGER IF NOT EXISTS call_sites_insert INSTEAD OF INSERT ON call_sites BEGIN
    INSERT OR IGNORE INTO nodes (node_id)
        SELECT NEW.caller_entity_id WHERE NEW.caller_entity_id IS NOT NULL;
    INSERT INTO call_rows (call_id, file_id, caller, callee_name, full_name, receiver,
                           inferred_type, call_kind, arg_count, line_number)
    VALUES (NEW.call_id, NEW.file_id,
            (SELECT nid FROM nodes WHERE node_id = NEW.caller_entity_id), NEW.callee_name,
            CASE WHEN NEW.full_name IS (CASE WHEN NEW.receiver IS NULL THEN NEW.callee_name
                                             ELSE NEW.receiver || '.' || NEW.callee_name END)
                 THEN NULL ELSE NEW.full_name END,
            NEW.receiver, NEW.inferred_type,
            CASE NEW.call_kind WHEN 'call' THEN 1 WHEN 'method_call' THEN 2
                 WHEN 'constructor_call' THEN 3 WHEN 'new_expression' THEN 4 WHEN 'macro' THEN 5
                 ELSE NEW.call_kind END,
            NEW.arg_count, NEW.line_number);
END;

-- One row per imported name (Python 'from a import b, c' is two rows; 'import a' one row).
--   module: as written, normalized per language: Python dotted ('pkg.sub', '.sibling' for
--           relative), JS/TS specifier ('./lib', 'react'), Go import path, Java/C# dotted
--           name, Rust path ('crate::util'), C/C++ include path, Ruby require, PHP use name.
--   import_type: import | from | require | use | include | using
--   resolved_file_id: the repository file the module resolves to, when provable
--   is_external: 1 when it does not resolve inside the repository
CREATE TABLE IF NOT EXISTS imports (
    import_id         INTEGER PRIMARY KEY,
    repo_id           TEXT NOT NULL,
    file_id           INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    module            TEXT NOT NULL,
    imported_name     TEXT,
    alias             TEXT,
    import_type       TEXT,
    line_number       INTEGER NOT NULL,
    resolved_file_id  INTEGER,
    is_external       INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX IF NOT EXISTS imports_repo_module ON imports (repo_id, module);
CREATE INDEX IF NOT EXISTS imports_file ON imports (file_id);
CREATE INDEX IF NOT EXISTS imports_resolved ON imports (resolved_file_id);

-- Module nodes: one per distinct imported module of a repository (targets of IMPORTS edges).
--   module_key: repo_id || '|' || name      file_id: defining repository file, when in-repo
CREATE TABLE IF NOT EXISTS modules (
    module_key   TEXT PRIMARY KEY,
    repo_id      TEXT NOT NULL,
    name         TEXT NOT NULL,
    language     TEXT,
    file_id      INTEGER REFERENCES files(file_id) ON DELETE SET NULL
);
CREATE INDEX IF NOT EXISTS modules_repo_name ON modules (repo_id, name);

-- Inheritance evidence before resolution.
--   kind: extends | implements | trait_impl | embeds (Go struct embedding) | includes (Ruby mixin)
CREATE TABLE IF NOT EXISTS bases (
    entity_id   TEXT NOT NULL,                   -- class/struct/interface/impl entity
    base_name   TEXT NOT NULL,                   -- as written, last segment ('Base' for pkg.Base)
    kind        TEXT NOT NULL,
    repo_id     TEXT,
    file_id     INTEGER REFERENCES files(file_id) ON DELETE CASCADE,
    PRIMARY KEY (entity_id, base_name, kind)
) WITHOUT ROWID;

-- A definition used as a value rather than called (passed as an argument, assigned, returned,
-- used as a decorator, registered in a dict/list/tuple/set, given as a default, caught),
-- once per (file, name, receiver, source), at its first line. Resolved into REFERENCES edges.
--   name: last segment ('_cb' for self._cb); receiver: the rest as written ('self', 'os.path'),
--   '' for a bare name; source: nodes.nid of the innermost enclosing entity, 0 at file level.
CREATE TABLE IF NOT EXISTS reference_rows (
    file_id      INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    receiver     TEXT NOT NULL,
    source       INTEGER NOT NULL,
    line_number  INTEGER NOT NULL,
    PRIMARY KEY (file_id, name, receiver, source)
) WITHOUT ROWID;
-- who refers to a name (an incremental build's scope, as for call_rows_callee)
CREATE INDEX IF NOT EXISTS reference_rows_name ON reference_rows (name);

-- ---------------------------------------------------------------- resolved code graph

-- Resolved relationships of the active generation, stored compactly; read them through the
-- edges view below.
--   repo: repositories.repo_key.   src, dst: nodes.nid of the two endpoints.
--   type: code (1 CALLS, 2 IMPORTS, 3 INHERITS, 4 IMPLEMENTS, 5 OVERRIDES, 6 REFERENCES,
--         7 CONTAINS, 8 INSTANTIATES).
--   method: code (1 declared, 2 same_file, 3 import_binding, 4 type_inferred,
--           5 scope_unique_name, 6 repo_unique_name, 7 ambiguous) or the text of any other
--           method.
--   call_kind: coded as in call_rows.   confidence: hundredths (95 = 0.95).
CREATE TABLE IF NOT EXISTS edge_rows (
    edge_id            INTEGER PRIMARY KEY,
    repo               INTEGER NOT NULL,
    type               INTEGER NOT NULL,
    src                INTEGER NOT NULL,
    dst                INTEGER NOT NULL,
    call_kind,                                 -- no type: an integer code or text
    reason             TEXT,
    method,                                    -- no type: an integer code or text
    confidence         INTEGER,
    line_number        INTEGER,
    evidence_file_id   INTEGER
);
CREATE INDEX IF NOT EXISTS edge_rows_out ON edge_rows (src);
CREATE INDEX IF NOT EXISTS edge_rows_in ON edge_rows (dst);
-- Only the indexer filters by evidence file (retiring a rewritten file's edges): without it
-- every incremental build scanned the whole table twice (about 45 ms on Twisted).
CREATE INDEX IF NOT EXISTS edge_rows_evidence ON edge_rows (evidence_file_id);

-- Resolved relationships as every reader sees them; one row per (type, source_id, target_id,
-- line_number) (deduplicated by the indexer). Each generation rebuilds the rows whose
-- resolution can have changed (evidence_file_id = the file holding the call/import/definition)
-- or, after large changes, the whole repository.
-- Node ids in source_id/target_id:
--   entity   'content-entity:e_...'    (entities.entity_id)
--   file     'file:' || files.file_id
--   module   modules.module_key ('repository:r_...|name')
-- Types written and their endpoints:
--   CONTAINS  file -> top-level entity; Class/Struct/Interface/Trait/ImplBlock -> member Function;
--             Function -> nested Function
--   CALLS     Function (or file for module-level calls) -> Function | Class (constructor_call)
--   IMPORTS   file -> module (every import; imported_name/alias in reason JSON when all folded
--             entries agree); file -> entity when an imported name resolves to a definition
--   INHERITS  Class/Struct/Interface -> Class/Struct/Interface (extends, embeds, includes)
--   IMPLEMENTS class/struct -> Interface/Trait (implements, Rust trait impl)
--   OVERRIDES method -> method of the same name in a resolved base type
--   REFERENCES Function/Class (or file for module-level code) -> Function | Class | Interface
--             used as a value (reference_rows): same_file, import_binding, type_inferred
--             (self.x / Type.x through the class and its bases), scope_unique_name (a Go
--             package's function from another file of its directory)
-- resolution_method and confidence (Eshu's tiers, local-backend §3.3/§5.5; the values are the
-- precision measured for Python on Twisted against a runtime trace of its tests):
--   declared 0.95 (CONTAINS, IMPORTS to a module), same_file 0.95, import_binding 0.95,
--   type_inferred 0.95 (receiver class known: v = Cls(), typed locals and parameters, Python
--   annotations, return annotations of the callee, self.attr assigned in the class, Go
--   composite literals, Type::f / Type.f; or a self/this/super call found through the class
--   hierarchy), scope_unique_name 0.70 (not used for Python), repo_unique_name 0.90 (Python:
--   the only method of that name in the repository; the dead-code packet treats reachability
--   through only these as ambiguous),
--   ambiguous 0.75/n on each of n edges (Python: a method call whose receiver's class is
--   unknown, linked to every method of that name when there are at most 8, else left
--   unresolved as ambiguous:<n>; a self/typed call that subclasses override: the class's
--   method and the overrides; a receiver declared as an interface: the implementations).
--   Readers should present an ambiguous call's edges as one candidate set.
--   call_kind (CALLS): call | method_call | constructor_call | new_expression | macro
--   reason: JSON object or NULL (IMPORTS: {"imported_name":..,"alias":..})
--   generation_id: always '': edges belong to repositories.active_generation_id.
CREATE VIEW IF NOT EXISTS edges (
    edge_id, repo_id, type, source_id, target_id, call_kind, reason, resolution_method,
    confidence, line_number, evidence_file_id, generation_id
) AS
    SELECT r.edge_id, p.repo_id,
           CASE r.type WHEN 1 THEN 'CALLS' WHEN 2 THEN 'IMPORTS' WHEN 3 THEN 'INHERITS'
                WHEN 4 THEN 'IMPLEMENTS' WHEN 5 THEN 'OVERRIDES' WHEN 6 THEN 'REFERENCES'
                WHEN 7 THEN 'CONTAINS' WHEN 8 THEN 'INSTANTIATES' END,
           s.node_id, t.node_id,
           CASE r.call_kind WHEN 1 THEN 'call' WHEN 2 THEN 'method_call'
                WHEN 3 THEN 'constructor_call' WHEN 4 THEN 'new_expression' WHEN 5 THEN 'macro'
                ELSE r.call_kind END,
           r.reason,
           CASE r.method WHEN 1 THEN 'declared' WHEN 2 THEN 'same_file'
                WHEN 3 THEN 'import_binding' WHEN 4 THEN 'type_inferred'
                WHEN 5 THEN 'scope_unique_name' WHEN 6 THEN 'repo_unique_name'
                WHEN 7 THEN 'ambiguous' ELSE r.method END,
           r.confidence / 100.0, r.line_number, r.evidence_file_id, ''
      FROM edge_rows r
      JOIN nodes s ON s.nid = r.src
      JOIN nodes t ON t.nid = r.dst
      JOIN repositories p ON p.repo_key = r.repo;

CREATE TRIGGER IF NOT EXISTS edges_insert INSTEAD OF INSERT ON edges BEGIN
    INSERT OR IGNORE INTO nodes (node_id) VALUES (NEW.source_id);
    INSERT OR IGNORE INTO nodes (node_id) VALUES (NEW.target_id);
    INSERT INTO edge_rows (repo, type, src, dst, call_kind, reason, method, confidence,
                           line_number, evidence_file_id)
    VALUES ((SELECT repo_key FROM repositories WHERE repo_id = NEW.repo_id),
            CASE NEW.type WHEN 'CALLS' THEN 1 WHEN 'IMPORTS' THEN 2 WHEN 'INHERITS' THEN 3
                 WHEN 'IMPLEMENTS' THEN 4 WHEN 'OVERRIDES' THEN 5 WHEN 'REFERENCES' THEN 6
                 WHEN 'CONTAINS' THEN 7 WHEN 'INSTANTIATES' THEN 8
                 ELSE RAISE(ABORT, 'unknown edge type') END,
            (SELECT nid FROM nodes WHERE node_id = NEW.source_id),
            (SELECT nid FROM nodes WHERE node_id = NEW.target_id),
            CASE NEW.call_kind WHEN 'call' THEN 1 WHEN 'method_call' THEN 2
                 WHEN 'constructor_call' THEN 3 WHEN 'new_expression' THEN 4 WHEN 'macro' THEN 5
                 ELSE NEW.call_kind END,
            NEW.reason,
            CASE NEW.resolution_method WHEN 'declared' THEN 1 WHEN 'same_file' THEN 2
                 WHEN 'import_binding' THEN 3 WHEN 'type_inferred' THEN 4
                 WHEN 'scope_unique_name' THEN 5 WHEN 'repo_unique_name' THEN 6
                 WHEN 'ambiguous' THEN 7 ELSE NEW.resolution_method END,
            CAST(round(NEW.confidence * 100) AS INTEGER), NEW.line_number,
            NEW.evidence_file_id);
END;

-- Why a call site produced no CALLS edge:
--   external (bound by an import of a non-repository module) | builtin (language builtin) |
--   ambiguous:<n> (n equally good candidates) | no_definition
CREATE TABLE IF NOT EXISTS unresolved_calls (
    call_id   INTEGER PRIMARY KEY REFERENCES call_rows(call_id) ON DELETE CASCADE,
    reason    TEXT NOT NULL
);

-- ---------------------------------------------------------------- precomputed investigations

-- Hardcoded-secret candidates (local-backend §3.7). The secret never appears in clear:
-- redacted_excerpt is the line with the value replaced by [REDACTED]; value_hash is the sha256
-- hex of the matched value (lets a user check a known key without storing it).
--   finding_kind: aws_access_key | private_key | slack_token | api_token | password_literal | secret_literal
--   severity: critical (aws_access_key, private_key) | high (slack_token, api_token) | medium (password/secret literal)
--   suppression_notes: JSON array of test_or_fixture_path, placeholder_literal ('[]' = not suppressed)
CREATE TABLE IF NOT EXISTS secret_candidates (
    repo_id            TEXT NOT NULL,
    file_id            INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    relative_path      TEXT NOT NULL,
    language           TEXT,
    line_number        INTEGER NOT NULL,
    finding_kind       TEXT NOT NULL,
    redacted_excerpt   TEXT NOT NULL,
    suppression_notes  TEXT NOT NULL DEFAULT '[]',
    severity           TEXT,
    value_hash         TEXT,
    PRIMARY KEY (file_id, line_number, finding_kind)
);
CREATE INDEX IF NOT EXISTS secret_candidates_order ON secret_candidates (repo_id, relative_path, line_number, finding_kind);

-- Facts the local collectors read from a repository's own non-code files (CODEOWNERS,
-- package manifests and lockfiles, Terraform, Kubernetes/Helm/Compose YAML, Dockerfiles,
-- CI workflows, documentation): see index/collectors. Rows go with their file, like every
-- other per-file row, so generations and changed-since cover them.
--   artifact_type: the collector (files.artifact_type holds the same value)
--   fact_kind:     what the row is (owner_rule, package, dependency, tf_resource, image, ...)
--   name:          what queries look the fact up by
--   payload:       JSON object with the rest
CREATE TABLE IF NOT EXISTS artifact_facts (
    repo_id        TEXT NOT NULL,
    file_id        INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    relative_path  TEXT NOT NULL,
    artifact_type  TEXT NOT NULL,
    fact_kind      TEXT NOT NULL,
    name           TEXT NOT NULL,
    line_number    INTEGER NOT NULL,
    payload        TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS artifact_facts_kind ON artifact_facts (fact_kind, repo_id, name);
CREATE INDEX IF NOT EXISTS artifact_facts_file ON artifact_facts (file_id);

-- ---------------------------------------------------------------- definition search

-- One short document per definition and per file, for "where is the code that does X?"
-- (investigate_code_topic, search_semantic_context). Written with the file's other rows
-- (store/search.py builds them in the parser workers) and removed with them.
--   doc_id: also the search_fts rowid.
--   rid:  entity_rows.rid of the definition; NULL for a file's own document.
--   kind: 1 definition (Function, Class, Struct, Interface, ...: every entity but Module,
--         ImplBlock and Variable), 2 source file (file name, module docstring),
--         3 documentation file (.md/.rst/.txt/.adoc: file name and headings).
--   tier: 0 code, 1 tests, examples, changelogs and generated files (ranked after code
--         unless a question asks for them).
--   vector: a code definition's embedding (unit vector x 127 as int8) when the semantic
--         extra is installed (store/embedding.py), else NULL (and for tier 1 documents).
CREATE TABLE IF NOT EXISTS search_docs (
    doc_id     INTEGER PRIMARY KEY,
    file_id    INTEGER NOT NULL REFERENCES files(file_id) ON DELETE CASCADE,
    rid        INTEGER,
    kind       INTEGER NOT NULL,
    tier       INTEGER NOT NULL DEFAULT 0,
    vector     BLOB
);
CREATE INDEX IF NOT EXISTS search_docs_file ON search_docs (file_id);

-- Word index of the documents (contentless: the words are rebuilt from the stored rows by
-- store/search.py, never stored twice). Columns:
--   name: the name split into words (camelCase, snake_case, acronyms) and whole
--         ('add timeout addtimeout'); qualified: the enclosing class's words;
--   signature: the signature's words; doc: the docstring or leading comment's first
--   paragraph (at most 320 characters); path: the file path's words (no extension).
-- Porter stems, so 'wrapping' finds 'wrap'. Rank with bm25(search_fts, <name>,
-- <qualified>, <signature>, <doc>, <path> weights). Tests, examples, changelogs and
-- generated files keep only name, qualified and path words.
CREATE VIRTUAL TABLE IF NOT EXISTS search_fts USING fts5(
    name, qualified, signature, doc, path,
    content='', tokenize='porter unicode61', detail='full'
);

-- ---------------------------------------------------------------- freshness facts (changed-since)

-- One row per version of a stable fact; a version is live for generation seq in
-- [valid_from, valid_to) (valid_to NULL = live in the active generation).
--   stable_fact_key / fact_kind:
--     'repository:<repo_id>'            repository      payload = remote, HEAD, branch
--     'file:<repo_id>:<relative_path>'  file            payload = content sha256 + language
--     'content_entity:<entity_id>'      content_entity  payload = entity source + metadata hash
--   end_reason (set when valid_to is set):
--     updated    - a newer version of the same key starts at valid_to
--     retired    - the file was deleted (its file fact and all its entity facts): a tombstone
--     superseded - the entity vanished from a file that still exists
-- Changed-since between generation seq a and the active seq c: rows live at a
-- (valid_from <= a AND (valid_to IS NULL OR valid_to > a)) against rows live at c.
-- Retention: closed versions with valid_to older than the last 50 generations are pruned;
-- meta 'fact_retention_min_seq:<repo_id>' holds the oldest seq still answerable.
CREATE TABLE IF NOT EXISTS fact_versions (
    repo_id          TEXT NOT NULL,
    stable_fact_key  TEXT NOT NULL,
    fact_kind        TEXT NOT NULL,
    payload_hash     TEXT NOT NULL,              -- first 16 hex digits of a sha256 over the payload
    valid_from       INTEGER NOT NULL,
    valid_to         INTEGER,
    end_reason       TEXT,
    PRIMARY KEY (repo_id, stable_fact_key, valid_from)
) WITHOUT ROWID;
