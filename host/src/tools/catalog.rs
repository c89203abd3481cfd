//! Every tool's declaration: input schemas (hand-written, as the seeds print
//! them), output schemas (generated from the output types, so
//! `structuredContent` always matches), annotations and the handler.

use rmcp::handler::server::common::schema_for_output;
use serde_json::{Value, json};

use super::{Domain, ToolDef, out};
use crate::{bridge, manual, vault, vibe};

fn object(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

fn int(description: &str, minimum: i64) -> Value {
    json!({ "type": ["integer", "null"], "minimum": minimum, "description": description })
}

fn path(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

fn line_range() -> Value {
    json!({
        "type": ["object", "null"],
        "description": "The lines to read (needed unless full is true)",
        "properties": {
            "start_line": int("First line, 1-based", 1),
            "end_line": int("Last line, inclusive; past the end reads to the end", 1),
        },
    })
}

fn cited_ranges(description: &str) -> Value {
    json!({
        "type": ["array", "null"],
        "description": description,
        "items": {
            "type": "object",
            "properties": {
                "start_line": { "type": "integer", "minimum": 1 },
                "end_line": { "type": "integer", "minimum": 1 },
            },
            "required": ["start_line", "end_line"],
        },
    })
}

fn text(description: &str) -> Value {
    json!({ "type": "string", "description": description })
}

fn opt_text(description: &str) -> Value {
    json!({ "type": ["string", "null"], "description": description })
}

fn project() -> Value {
    text("Project name: a folder directly under VIBE_ROOT")
}

fn folder(description: &str) -> Value {
    json!({ "type": "string", "enum": vibe::FOLDERS, "description": description })
}

/// An optional string out of `values`.
fn optional_one_of(values: &[&str], description: &str) -> Value {
    let mut allowed: Vec<Value> = values.iter().map(|v| json!(v)).collect();
    allowed.push(Value::Null);
    json!({ "type": ["string", "null"], "enum": allowed, "description": description })
}

fn status(description: &str) -> Value {
    optional_one_of(&vibe::STATUSES, description)
}

fn strings(description: &str) -> Value {
    json!({ "type": "array", "items": { "type": "string" }, "description": description })
}

fn copy_limits() -> Value {
    json!({
        "type": ["object", "null"],
        "description": "Caps on what one call copies",
        "properties": {
            "max_sections": int("Sections per call (one, the MVP of 003)", 1),
            "max_chars": int("Characters copied at most (default SCAN_MAX_CHARS, at most 200000)", 1),
            "allow_file": { "type": ["boolean", "null"], "description": "Ask for a whole .md file (needs ALLOW_FILE_SCOPE)" },
        },
    })
}

pub static TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "vault_ls",
        title: "List vault folder",
        domain: Domain::Vault,
        description: "List one vault folder (not recursive): folders first, then files, by name.",
        details: "List one folder of the vault (not recursive): folders first, then files, each sorted by name. \
                      Symbolic links are never listed. Optional: vault_read/vault_scan do not need it.",
        input: || {
            object(
                json!({ "path": { "type": ["string", "null"], "description": "Folder relative to the vault root; omitted = the root" } }),
                &[],
            )
        },
        output: schema_for_output::<vault::LsOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| out(d.vault()?.ls(a)),
    },
    ToolDef {
        name: "vault_read",
        title: "Read vault note",
        domain: Domain::Vault,
        description: "Read lines of a vault note (`range`, or `full`); at most {scan_max_chars} characters, resumed by vault_scan.",
        details: "Read lines of a vault note. `full` defaults to false, and then `range` is required. \
                      At most {scan_max_chars} characters are returned; when the text stops early, `next_cursor.char_offset` \
                      resumes it with vault_scan.",
        input: || {
            object(
                json!({
                    "path": path("File relative to the vault root"),
                    "full": { "type": ["boolean", "null"], "description": "Read from the first line (capped at {scan_max_chars} characters)" },
                    "range": line_range(),
                }),
                &["path"],
            )
        },
        output: schema_for_output::<vault::ReadOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| out(d.vault()?.read(a)),
    },
    ToolDef {
        name: "vault_scan",
        title: "Scan vault note",
        domain: Domain::Vault,
        description: "Read a vault note {scan_max_chars} characters at a time, resuming from `next_cursor`; nothing lost or repeated.",
        details: "Read a vault note piece by piece, {scan_max_chars} characters at a time. Start at `start_line` (wins), \
                      or at `cursor.start_line`, or resume at `cursor.char_offset` from the previous `next_cursor`; \
                      nothing is lost or repeated between pieces.",
        input: || {
            object(
                json!({
                    "path": path("File relative to the vault root"),
                    "start_line": int("Line to start at, 1-based (wins over cursor)", 1),
                    "cursor": {
                        "type": ["object", "null"],
                        "description": "Where to go on: the previous call's next_cursor",
                        "properties": {
                            "start_line": int("Line to start at, 1-based", 1),
                            "char_offset": int("Absolute character offset from a previous next_cursor", 0),
                        },
                    },
                }),
                &["path"],
            )
        },
        output: schema_for_output::<vault::ScanOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| out(d.vault()?.scan(a)),
    },
    ToolDef {
        name: "vault_create",
        title: "Create vault note",
        domain: Domain::Vault,
        description: "Create a new note. An existing file is `conflict`; `.system/` is `forbidden`; `daily/` takes only `daily/YYYY-MM-DD.md`.",
        details: "Create a new note (missing folders are created). An existing file is a `conflict`; \
                      `.system/` is reserved (`forbidden`); under `daily/` only `daily/YYYY-MM-DD.md` may be created.",
        input: || {
            object(
                json!({
                    "path": path("New file relative to the vault root"),
                    "content": { "type": "string", "minLength": 1, "description": "The whole content (non-empty)" },
                }),
                &["path", "content"],
            )
        },
        output: schema_for_output::<vault::WriteOutput>,
        read_only: false,
        destructive: false,
        idempotent: false,
        handler: |d, a, _| out(d.vault()?.create(a)),
    },
    ToolDef {
        name: "vault_write",
        title: "Write vault note",
        domain: Domain::Vault,
        description: "Overwrite or append to an existing note (missing: `conflict`). `daily/` is append-only; `.system/` is reserved.",
        details: "Overwrite or append to an existing note (a missing file is a `conflict`: use vault_create). \
                      `daily/` notes accept only mode=append; `.system/` is reserved.",
        input: || {
            object(
                json!({
                    "path": path("Existing file relative to the vault root"),
                    "content": { "type": "string", "description": "The text to write" },
                    "mode": { "type": "string", "enum": ["overwrite", "append"], "description": "Replace the file's content, or add after it" },
                }),
                &["path", "content", "mode"],
            )
        },
        output: schema_for_output::<vault::WriteOutput>,
        read_only: false,
        destructive: true,
        idempotent: false,
        handler: |d, a, _| out(d.vault()?.write(a)),
    },
    ToolDef {
        name: "vault_replace",
        title: "Replace in vault note",
        domain: Domain::Vault,
        description: "Replace occurrences of `find` in a note (first by default, 0 = all). Not under `daily/` or `.system/`.",
        details: "Replace occurrences of `find` with `replace` in a note: the first one by default, \
                      `max_replacements` of them, or all with 0. Not allowed under `daily/` or `.system/`. \
                      When `find` does not occur the file is left untouched and `replacements` is 0.",
        input: || {
            object(
                json!({
                    "path": path("Existing file relative to the vault root"),
                    "find": { "type": "string", "minLength": 1, "description": "The exact text to find (it must occur once)" },
                    "replace": { "type": "string", "description": "The text to put in its place" },
                    "max_replacements": int("How many occurrences to replace; 0 = all; default 1", 0),
                }),
                &["path", "find", "replace"],
            )
        },
        output: schema_for_output::<vault::ReplaceOutput>,
        read_only: false,
        destructive: true,
        idempotent: false,
        handler: |d, a, _| out(d.vault()?.replace(a)),
    },
    ToolDef {
        name: "vault_search",
        title: "Search vault lines",
        domain: Domain::Vault,
        description: "Search the vault's notes line by line (regex, plain or loose), filtered by glob and folder.",
        details: "Search the vault's notes line by line. mode: `regex` (default; an invalid pattern falls back \
                      to plain text), `plain` (exact text) or `loose` (all words, ignoring case and width). \
                      Filter by `glob` (on the relative path) and `relative_dir`; `limit` defaults to 50.",
        input: || {
            object(
                json!({
                    "query": { "type": "string", "minLength": 1, "description": "The text (or regular expression) to look for" },
                    "mode": { "type": ["string", "null"], "enum": ["plain", "regex", "loose", null], "description": "How query matches: as typed (default), as a regex, or word by word" },
                    "glob": { "type": ["string", "null"], "description": "e.g. `projects/**/*.md`" },
                    "relative_dir": { "type": ["string", "null"], "description": "Only files under this folder" },
                    "limit": int("Most results to return (1..1000, default 50)", 1),
                }),
                &["query"],
            )
        },
        output: schema_for_output::<vault::SearchOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| out(d.vault()?.search(a)),
    },
    ToolDef {
        name: "vault_find",
        title: "Find in vault",
        domain: Domain::Vault,
        description: "Find where the vault answers a question: a `summary` of the evidence and `next_actions` (what to read next, or stop).",
        details: "Find where the vault answers a question, without a hit list: Stage 0 (the whole query, normalised) \
                      and Stage 1 (its words in any order) over the vault's sections, integrated (Stage 1.5) into a \
                      `summary` (candidates, signal coverage, file bias, gaps, sufficiency, integration_status) and \
                      `next_actions` with the smallest arguments for the next call (vault_read of the best evidence, \
                      vault_scan, vault_coverage, ... or stop). `cutoff_reason` appears only when the budget cut the search.",
        input: || {
            let int_like = |d: &str| json!({ "type": ["integer", "number", "string", "null"], "description": d });
            object(
                json!({
                    "query": { "type": "string", "minLength": 1, "description": "What to look for, in plain words" },
                    "scope": {
                        "type": ["object", "null"],
                        "description": "Which notes to search",
                        "properties": {
                            "relative_dir": { "type": ["string", "null"], "description": "Only notes under this folder" },
                            "glob": { "type": ["string", "null"], "description": "Only notes whose vault-relative path matches, e.g. `projects/**/*.md`" },
                        },
                    },
                    "budget": {
                        "type": ["object", "null"],
                        "description": "How much work the search may do",
                        "properties": {
                            "max_candidates": int_like("At most this many candidate sections, integer >= 1 (default 200, hard cap 1000)"),
                            "time_ms": int_like("Stop reading candidates after this many milliseconds, integer >= 1 (default 60000)"),
                        },
                    },
                }),
                &["query"],
            )
        },
        output: schema_for_output::<vault::FindOutput>,
        read_only: true,
        destructive: false,
        idempotent: false,
        handler: |d, a, _| out(d.vault()?.find(a)),
    },
    ToolDef {
        name: "vault_coverage",
        title: "Vault citation coverage",
        domain: Domain::Vault,
        description: "How much of a note the cited line ranges cover, against COVERAGE_MIN_RATIO, with the next range to read.",
        details: "How much of a note the cited line ranges cover: ranges merged when they overlap or touch, coverage_ratio = covered/total (1.0 for an empty file), meets_min_coverage against COVERAGE_MIN_RATIO, and next_actions (scan the first uncovered range, or stop).",
        input: || {
            object(
                json!({
                    "path": path("File relative to the vault root"),
                    "cited_ranges": cited_ranges("Line ranges already read or cited (may be empty)"),
                }),
                &["path", "cited_ranges"],
            )
        },
        output: schema_for_output::<vault::CoverageOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| out(d.vault()?.coverage(a)),
    },
    ToolDef {
        name: "artifact_audit",
        title: "Audit artifact",
        domain: Domain::Vault,
        description: "Audit a note written from a source note: uncited nodes, orphan branches, one-way links, coverage and gain since the last audit.",
        details: "Audit an artifact (a note written from a source note) against its source: finds rootless_node (no citation of source lines), orphan_branch (empty heading, or citations all outside the source) and one_way_ref (internal link with no link back, or to nothing). Citations are written `L12`, `L12-L18`, `(source.md:12-18)` or `source_lines: 12-18`; without cited_ranges they are read from the artifact. Reports coverage, marginal_gain since the previous audit of the pair (kept under .system/), needs_forced_full_scan and next_actions.",
        input: || {
            object(
                json!({
                    "artifact_path": path("The artifact, relative to the vault root"),
                    "source_path": path("The source it was written from, relative to the vault root"),
                    "cited_ranges": cited_ranges("Source line ranges to count as covered (default: the artifact's citations)"),
                }),
                &["artifact_path", "source_path"],
            )
        },
        output: schema_for_output::<vault::AuditOutput>,
        // It keeps the previous audit's coverage under `.system/` for marginal_gain.
        read_only: false,
        destructive: false,
        idempotent: false,
        handler: |d, a, _| out(d.vault()?.audit(a)),
    },
    ToolDef {
        name: "manual_ls",
        title: "List manuals",
        domain: Domain::Manual,
        description: "List the manuals, or one level of a manual's folder (folders, .md and .json files).",
        details: "List manuals, or one level of a manual's folder. `id` omitted or `manuals`: the manuals \
                      (folders under the manuals root). A manual or folder id: its children (folders, and .md/.json \
                      files). A file id cannot be listed (`invalid_parameter`).",
        input: || {
            object(
                json!({ "id": { "type": ["string", "null"], "description": "`manuals` (default), a manual id, or a folder id from a previous listing" } }),
                &[],
            )
        },
        output: schema_for_output::<manual::LsOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| out(d.manuals()?.ls(a)),
    },
    ToolDef {
        name: "manual_toc",
        title: "Manual contents",
        domain: Domain::Manual,
        description: "Table of contents of a manual: each .md file's headings with their start lines (for manual_read).",
        details: "Table of contents of a manual: every .md file with its headings and the line each starts on \
                      (pass a line to manual_read as ref.start_line).",
        input: || {
            object(
                json!({ "manual_id": { "type": "string", "description": "The manual (its folder name)" } }),
                &["manual_id"],
            )
        },
        output: schema_for_output::<manual::TocOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| out(d.manuals()?.toc(a)),
    },
    ToolDef {
        name: "manual_read",
        title: "Read manual",
        domain: Domain::Manual,
        description: "Read part of a manual file: a section (default for .md), with subsections, a snippet, or a whole file; at most {scan_max_chars} characters.",
        details: "Read part of a manual file. scope: `section` (default for .md: the section holding \
                      ref.start_line), `sections` (that section with its subsections, at most 20), `snippet` (a few \
                      lines), `file` (default for .json; for .md only when the server sets ALLOW_FILE_SCOPE and the \
                      call sets allow_file=true). At most {scan_max_chars} characters. Asking for the same section again \
                      continues after it (applied.mode = scan_fallback).",
        input: || {
            object(
                json!({
                    "ref": {
                        "type": "object",
                        "description": "The section: a manual_find next_action's ref",
                        "properties": {
                            "manual_id": { "type": "string", "description": "The manual (its folder name)" },
                            "path": { "type": "string", "description": "File inside the manual" },
                            "start_line": int("A line inside the wanted section (default 1)", 1),
                        },
                        "required": ["manual_id", "path"],
                    },
                    "scope": { "type": ["string", "null"], "enum": ["snippet", "section", "sections", "file", null], "description": "How much to read around the line (default section)" },
                    "allow_file": { "type": ["boolean", "null"], "description": "Ask for a whole .md file (needs ALLOW_FILE_SCOPE)" },
                    "expand": {
                        "type": ["object", "null"],
                        "description": "Characters to add around a snippet",
                        "properties": {
                            "before_chars": int("Characters to add before", 0),
                            "after_chars": int("Characters to add after", 0),
                        },
                    },
                }),
                &["ref"],
            )
        },
        output: schema_for_output::<manual::ReadOutput>,
        read_only: true,
        destructive: false,
        // A repeated section read continues past it (scan_fallback).
        idempotent: false,
        handler: |d, a, _| out(d.manuals()?.read(a)),
    },
    ToolDef {
        name: "manual_scan",
        title: "Scan manual file",
        domain: Domain::Manual,
        description: "Read a manual file {scan_max_chars} characters at a time, resuming from `next_cursor`.",
        details: "Read a manual file piece by piece, {scan_max_chars} characters at a time: from `start_line` (wins), \
                      `cursor.start_line`, or `cursor.char_offset` from a previous next_cursor (`cursor` may also be \
                      that offset alone, as a number or string).",
        input: || {
            object(
                json!({
                    "manual_id": { "type": "string", "description": "The manual (its folder name)" },
                    "path": { "type": "string", "description": "File inside the manual" },
                    "start_line": int("Line to start at, 1-based (wins over cursor)", 1),
                    "cursor": {
                        "type": ["object", "integer", "string", "null"],
                        "description": "Where to go on: the previous call's next_cursor",
                        "properties": {
                            "start_line": int("Line to start at, 1-based", 1),
                            "char_offset": int("Absolute character offset", 0),
                        },
                    },
                }),
                &["manual_id", "path"],
            )
        },
        output: schema_for_output::<manual::ManualScanOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| out(d.manuals()?.scan(a)),
    },
    ToolDef {
        name: "manual_find",
        title: "Find in manuals",
        domain: Domain::Manual,
        description: "Search the manuals (ja/es/en) and integrate the evidence: a `trace_id` for manual_hits, a `summary` and `next_actions`.",
        details: "Search the manuals (Japanese, Spanish, English) and integrate what is found: BM25 candidates with \
                      signals, late rerank, a claim graph (claims, evidences, edges, facet coverage) and, when the result \
                      is weak, a corrective second search. Returns a `trace_id` (page through it with manual_hits), a \
                      `summary` derived from the claim graph and `next_actions`. `claim_graph` only with \
                      include_claim_graph=true.",
        input: || {
            let int_like = |d: &str| json!({ "type": ["integer", "number", "string", "null"], "description": d });
            object(
                json!({
                    "query": { "type": "string", "description": "What to look for, in plain words" },
                    "manual_id": { "type": ["string", "null"], "description": "Search this manual first (default DEFAULT_MANUAL_ID, else all)" },
                    "expand_scope": { "type": ["boolean", "null"], "description": "Widen to every manual when the first is insufficient (default true)" },
                    "only_unscanned_from_trace_id": { "type": ["string", "null"], "description": "Leave out the sections that trace already integrated" },
                    "include_claim_graph": { "type": ["boolean", "null"], "description": "Return the claim graph (default false)" },
                    "use_cache": { "type": ["boolean", "null"], "description": "Answer a repeated query from its trace (default SEM_CACHE_ENABLED)" },
                    "budget": {
                        "type": ["object", "null"],
                        "description": "How much work the search may do",
                        "properties": {
                            "max_candidates": int_like("At most this many candidates, integer >= 1 (default 200)"),
                            "time_ms": int_like("Stop optional stages after this many milliseconds, integer >= 1 (default 60000)"),
                        },
                    },
                }),
                &["query"],
            )
        },
        output: schema_for_output::<manual::FindOutput>,
        read_only: true,
        destructive: false,
        idempotent: false,
        handler: |d, a, job| out(d.manuals()?.find(a, job)),
    },
    ToolDef {
        name: "manual_hits",
        title: "Page manual_find trace",
        domain: Domain::Manual,
        description: "Page through a manual_find trace: candidates, unscanned, conflicts, gaps, integrated_top, claims, evidences or edges.",
        details: "Page through a manual_find trace: kind = candidates (default; compact, manual_id hoisted when \
                      shared), unscanned, conflicts, gaps, integrated_top, claims, evidences or edges. offset 0 and limit \
                      50 by default.",
        input: || {
            object(
                json!({
                    "trace_id": { "type": "string", "description": "A manual_find answer's trace_id" },
                    "kind": {
                        "type": ["string", "null"],
                        "description": "Which list of the trace (default candidates)",
                        "enum": ["candidates", "unscanned", "conflicts", "gaps", "integrated_top", "claims", "evidences", "edges", null],
                    },
                    "offset": int("Items to skip (default 0)", 0),
                    "limit": int("Items to return (default 50)", 1),
                }),
                &["trace_id"],
            )
        },
        output: schema_for_output::<manual::HitsOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| out(d.manuals()?.hits(a)),
    },
    ToolDef {
        name: "bridge_copy_section",
        title: "Copy manual section to vault",
        domain: Domain::Bridge,
        description: "Copy one manual section (manual_read's `ref`) into a vault note, inside the server; the vault write policy applies.",
        details: "Copy one section of a manual into a vault note inside the server (the text is not returned). \
                      `from_ref` is manual_read's `ref` ({manual_id, path, start_line}); the text copied is exactly what \
                      manual_read returns for it (a .md section; a .json file whole). The destination follows the vault \
                      write policy (.system/ forbidden, daily/ append-only); `overwrite` creates a missing note.",
        input: || {
            object(
                json!({
                    "from_ref": {
                        "type": "object",
                        "description": "The section: manual_read's ref",
                        "properties": {
                            "manual_id": { "type": "string", "description": "The manual (its folder name)" },
                            "path": { "type": "string", "description": "File inside the manual" },
                            "start_line": int("A line of the section (default 1)", 1),
                            "scope": { "type": ["string", "null"], "enum": ["section", "file", null], "description": "The section (default) or the whole file" },
                        },
                        "required": ["manual_id", "path"],
                    },
                    "to_path": path("Destination note, relative to the vault root"),
                    "mode": { "type": "string", "enum": ["overwrite", "append"], "description": "Replace the note's content, or add after it" },
                    "limits": copy_limits(),
                }),
                &["from_ref", "to_path", "mode"],
            )
        },
        output: schema_for_output::<bridge::CopySectionOutput>,
        read_only: false,
        destructive: true,
        idempotent: false,
        handler: |d, a, _| out(bridge::copy_section(d.manuals()?, d.vault()?, a)),
    },
    ToolDef {
        name: "bridge_copy_file",
        title: "Copy manual file to vault",
        domain: Domain::Bridge,
        description: "Copy a whole manual file (.json; .md with ALLOW_FILE_SCOPE) into a vault note; the vault write policy applies.",
        details: "Copy a whole manual file into a vault note inside the server (the text is not returned). A .json file \
                      always; a .md file only when the server allows file scope (ALLOW_FILE_SCOPE=true) and \
                      limits.allow_file=true. The destination follows the vault write policy.",
        input: || {
            object(
                json!({
                    "from_path": path("File inside the manual"),
                    "manual_id": { "type": "string", "description": "The manual (its folder name)" },
                    "to_path": path("Destination note, relative to the vault root"),
                    "mode": { "type": "string", "enum": ["overwrite", "append"], "description": "Replace the note's content, or add after it" },
                    "limits": copy_limits(),
                }),
                &["from_path", "manual_id", "to_path", "mode"],
            )
        },
        output: schema_for_output::<bridge::CopyFileOutput>,
        read_only: false,
        destructive: true,
        idempotent: false,
        handler: |d, a, _| out(bridge::copy_file(d.manuals()?, d.vault()?, a)),
    },
    ToolDef {
        name: "search",
        title: "Search vibe projects",
        domain: Domain::Vibe,
        description: "Full-text search of vibe projects, best first (BM25 with boosts for type, status, key headings, recency); any text is safe.",
        details: "Full-text search across vibe projects (tasks, plans, sessions, ...), best match first. Chunks are the \
                      sections under level-1/2 headings; score = BM25 × boosts (document type, task status, priority \
                      headings such as Current Status / Next Steps / Blockers / Decisions, recency). Any text is safe \
                      to search: quotes, `-`, `:`, parentheses are just text. Snippets mark matches in **bold**.",
        input: || {
            object(
                json!({
                    "query": text("Text to search for"),
                    "project": opt_text("Only this project"),
                    "folder": optional_one_of(&vibe::FOLDERS, "Only this folder"),
                    "limit": { "type": ["integer", "null"], "minimum": 1, "maximum": 100, "description": "Results at most (default 20, at most 100)" },
                }),
                &["query"],
            )
        },
        output: schema_for_output::<vibe::SearchOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| d.vibe(|v| v.search(a)),
    },
    ToolDef {
        name: "read_doc",
        title: "Read vibe document",
        domain: Domain::Vibe,
        description: "Read one project document whole, with its metadata and the `hash` update_doc expects.",
        details: "Read one document of a vibe project whole, with its metadata (type, status, updated, tags, owner) \
                      and its SHA-256 `hash` (update_doc's expected_hash).",
        input: || {
            object(
                json!({
                    "project": project(),
                    "folder": folder("Folder holding the file"),
                    "filename": text("File name, e.g. 004-definir-interfaz-mcp.md"),
                }),
                &["project", "folder", "filename"],
            )
        },
        output: schema_for_output::<vibe::DocOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| d.vibe(|v| v.read_doc(a)),
    },
    ToolDef {
        name: "list_tasks",
        title: "List vibe tasks",
        domain: Domain::Vibe,
        description: "List the tasks of one project or all, optionally by status.",
        details: "List the tasks of one project (or of all), optionally by status, with title, status, updated \
                      and objective; include_content adds each task's full text.",
        input: || {
            object(
                json!({
                    "project": opt_text("Only this project (default: all)"),
                    "status": status("Only tasks with this status"),
                    "include_content": { "type": ["boolean", "null"], "description": "Include each task's full text (default false)" },
                }),
                &[],
            )
        },
        output: schema_for_output::<vibe::ListTasksOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| d.vibe(|v| v.list_tasks(a)),
    },
    ToolDef {
        name: "get_plan",
        title: "Get vibe plan",
        domain: Domain::Vibe,
        description: "Read a project's execution plan with its parsed overview and task counts (`exists: false` if missing).",
        details: "Read a project's execution plan (plans/execution-plan.md by default) with `parsed`: its Overview \
                      and the task counts of its Current Status. A missing plan is `exists: false`, not an error.",
        input: || {
            object(
                json!({
                    "project": project(),
                    "filename": opt_text("Plan file in plans/ (default execution-plan.md)"),
                }),
                &["project"],
            )
        },
        output: schema_for_output::<vibe::PlanOutput>,
        read_only: true,
        destructive: false,
        idempotent: true,
        handler: |d, a, _| d.vibe(|v| v.get_plan(a)),
    },
    ToolDef {
        name: "create_doc",
        title: "Create vibe document",
        domain: Domain::Vibe,
        description: "Create a new file in a project folder (never overwrites: FILE_EXISTS).",
        details: "Create a new file in a project folder (never overwrites: FILE_EXISTS; use update_doc). \
                      `frontmatter` is written as YAML front matter. Indexed before it returns.",
        input: || {
            object(
                json!({
                    "project": project(),
                    "folder": folder("Folder to create the file in"),
                    "filename": text("File name"),
                    "content": text("File content"),
                    "frontmatter": { "type": ["object", "null"], "description": "YAML front matter fields" },
                }),
                &["project", "folder", "filename", "content"],
            )
        },
        output: schema_for_output::<vibe::CreateDocOutput>,
        read_only: false,
        destructive: false,
        idempotent: false,
        handler: |d, a, _| d.vibe(|v| v.create_doc(a)),
    },
    ToolDef {
        name: "update_doc",
        title: "Update vibe document",
        domain: Domain::Vibe,
        description: "Replace an existing file's content; `expected_hash` refuses the write with CONFLICT if it changed.",
        details: "Replace the content of an existing file (FILE_NOT_FOUND otherwise; use create_doc). `frontmatter` \
                      is merged into the existing front matter (null removes a key). Pass `expected_hash` (read_doc's \
                      hash) to refuse the write with CONFLICT if the file changed since. Returns both hashes.",
        input: || {
            object(
                json!({
                    "project": project(),
                    "folder": folder("Folder holding the file"),
                    "filename": text("File name"),
                    "content": text("The new full content"),
                    "frontmatter": { "type": ["object", "null"], "description": "Front matter fields to merge" },
                    "expected_hash": opt_text("SHA-256 (hex) the file must still have"),
                }),
                &["project", "folder", "filename", "content"],
            )
        },
        output: schema_for_output::<vibe::UpdateDocOutput>,
        read_only: false,
        destructive: true,
        idempotent: true,
        handler: |d, a, _| d.vibe(|v| v.update_doc(a)),
    },
    ToolDef {
        name: "create_task",
        title: "Create vibe task",
        domain: Domain::Vibe,
        description: "Create tasks/NNN-slug.md in the standard task format with the next free number.",
        details: "Create a task file in the standard format (# Task, Status, Objective, Context, Steps, Acceptance \
                      Criteria, Notes) as tasks/NNN-slug.md, with the next free number (allocated under the project's \
                      lock) and a kebab-case slug of the title; front matter only when there are tags.",
        input: || {
            object(
                json!({
                    "project": project(),
                    "title": text("Task title"),
                    "objective": text("Objective (one paragraph)"),
                    "steps": strings("Steps, in order"),
                    "acceptance_criteria": strings("Acceptance criteria"),
                    "context": { "type": ["object", "null"], "description": "e.g. related_files, dependencies (arrays)" },
                    "notes": opt_text("Additional notes"),
                    "status": status("Initial status (default pending)"),
                    "tags": { "type": ["array", "null"], "items": { "type": "string" }, "description": "Tags for the front matter" },
                }),
                &[
                    "project",
                    "title",
                    "objective",
                    "steps",
                    "acceptance_criteria",
                ],
            )
        },
        output: schema_for_output::<vibe::CreateTaskOutput>,
        read_only: false,
        destructive: false,
        idempotent: false,
        handler: |d, a, _| d.vibe(|v| v.create_task(a)),
    },
    ToolDef {
        name: "update_task_status",
        title: "Set vibe task status",
        domain: Domain::Vibe,
        description: "Change a task's status (its `Status:` line and front matter).",
        details: "Change a task's status: rewrites its `Status:` line (never one inside a code fence) and keeps a \
                      front matter `status` the same. `task` is a number (\"004\") or a filename.",
        input: || {
            object(
                json!({
                    "project": project(),
                    "task": text("Task number (\"004\") or filename (\"004-definir-interfaz-mcp.md\")"),
                    "status": { "type": "string", "enum": vibe::STATUSES, "description": "New status" },
                }),
                &["project", "task", "status"],
            )
        },
        output: schema_for_output::<vibe::UpdateStatusOutput>,
        read_only: false,
        destructive: true,
        idempotent: true,
        handler: |d, a, _| d.vibe(|v| v.update_task_status(a)),
    },
    ToolDef {
        name: "create_plan",
        title: "Create vibe plan",
        domain: Domain::Vibe,
        description: "Create or overwrite an execution plan in plans/.",
        details: "Create or overwrite an execution plan in plans/ (default execution-plan.md); `action` says which.",
        input: || {
            object(
                json!({
                    "project": project(),
                    "filename": opt_text("Plan file name (default execution-plan.md)"),
                    "content": text("The full plan"),
                }),
                &["project", "content"],
            )
        },
        output: schema_for_output::<vibe::CreatePlanOutput>,
        read_only: false,
        destructive: true,
        idempotent: true,
        handler: |d, a, _| d.vibe(|v| v.create_plan(a)),
    },
    ToolDef {
        name: "log_session",
        title: "Log vibe session",
        domain: Domain::Vibe,
        description: "Record a session note in sessions/YYYY-MM-DD.md; `append` adds to the day's note.",
        details: "Record a session note in sessions/YYYY-MM-DD.md (local date; YYYY-MM-DD-suffix.md with `suffix`). \
                      append=true adds to the day's note after a `---` separator; without it an existing note is \
                      FILE_EXISTS (nothing is overwritten).",
        input: || {
            object(
                json!({
                    "project": project(),
                    "content": text("The note (markdown)"),
                    "suffix": opt_text("Suffix for the file name, e.g. debugging-auth"),
                    "append": { "type": ["boolean", "null"], "description": "Append to the day's note (default false)" },
                }),
                &["project", "content"],
            )
        },
        output: schema_for_output::<vibe::LogSessionOutput>,
        read_only: false,
        destructive: false,
        idempotent: false,
        handler: |d, a, _| d.vibe(|v| v.log_session(a)),
    },
    ToolDef {
        name: "reindex",
        title: "Reindex vibe projects",
        domain: Domain::Vibe,
        description: "Bring the vibe search index up to date (changed files, or all with `full`); sends progress, stops when cancelled.",
        details: "Bring the search index up to date with the files: only files whose size, mtime and content hash \
                      changed are re-read, or all with full=true; one project or all. Sends MCP progress notifications \
                      when the request carries a progress token.",
        input: || {
            object(
                json!({
                    "project": opt_text("Only this project (default: all)"),
                    "full": { "type": ["boolean", "null"], "description": "Rebuild every file (default false)" },
                }),
                &[],
            )
        },
        output: schema_for_output::<vibe::ReindexOutput>,
        read_only: false,
        destructive: false,
        idempotent: true,
        handler: |d, a, job| d.vibe(|v| v.reindex(a, job)),
    },
];
