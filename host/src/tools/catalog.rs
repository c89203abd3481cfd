//! Every tool's declaration: name, title, domain, descriptions, effect
//! (from which its MCP annotations and the read-only profile follow) and
//! handler. The handler's signature carries the rest: its input type (a
//! struct with `#[derive(Input)]` beside the domain function: the input
//! schema and the reading) and its output type (the output schema), so
//! neither can drift from what the handler takes and returns.

use super::{Effect, ToolDef, Typed};
use crate::bridge::{self, Bridge};
use crate::manual::{self, Manuals};
use crate::vault::{self, Vault};
use crate::vibe::{self, Vibe};

pub static TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "vault_ls",
        title: "List vault folder",
        domain: &vault::DOMAIN,
        description: "List one vault folder (not recursive): folders first, then files, by name.",
        details: "List one folder of the vault (not recursive): folders first, then files, each sorted by name. \
                      Symbolic links are never listed. Optional: vault_read/vault_scan do not need it.",
        effect: Effect::Read,
        handler: &Typed(|d, i: vault::LsInput, _| d.get::<Vault>()?.ls(i)),
    },
    ToolDef {
        name: "vault_read",
        title: "Read vault note",
        domain: &vault::DOMAIN,
        description: "Read lines of a vault note (`range`, or `full`); at most {scan_max_chars} characters, resumed by vault_scan.",
        details: "Read lines of a vault note. `full` defaults to false, and then `range` is required. \
                      At most {scan_max_chars} characters are returned; when the text stops early, `next_cursor.char_offset` \
                      resumes it with vault_scan.",
        effect: Effect::Read,
        handler: &Typed(|d, i: vault::ReadInput, _| d.get::<Vault>()?.read(i)),
    },
    ToolDef {
        name: "vault_scan",
        title: "Scan vault note",
        domain: &vault::DOMAIN,
        description: "Read a vault note {scan_max_chars} characters at a time, resuming from `next_cursor`; nothing lost or repeated.",
        details: "Read a vault note piece by piece, {scan_max_chars} characters at a time. Start at `start_line` (wins), \
                      or at `cursor.start_line`, or resume at `cursor.char_offset` from the previous `next_cursor`; \
                      nothing is lost or repeated between pieces.",
        effect: Effect::Read,
        handler: &Typed(|d, i: vault::ScanInput, _| d.get::<Vault>()?.scan(i)),
    },
    ToolDef {
        name: "vault_create",
        title: "Create vault note",
        domain: &vault::DOMAIN,
        description: "Create a new note. An existing file is `conflict`; `.system/` is `forbidden`; `daily/` takes only `daily/YYYY-MM-DD.md`.",
        details: "Create a new note (missing folders are created). An existing file is a `conflict`; \
                      `.system/` is reserved (`forbidden`); under `daily/` only `daily/YYYY-MM-DD.md` may be created.",
        effect: Effect::Write { idempotent: false },
        handler: &Typed(|d, i: vault::CreateInput, _| d.get::<Vault>()?.create(i)),
    },
    ToolDef {
        name: "vault_write",
        title: "Write vault note",
        domain: &vault::DOMAIN,
        description: "Overwrite or append to an existing note (missing: `conflict`). `daily/` is append-only; `.system/` is reserved.",
        details: "Overwrite or append to an existing note (a missing file is a `conflict`: use vault_create). \
                      `daily/` notes accept only mode=append; `.system/` is reserved.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: vault::WriteInput, _| d.get::<Vault>()?.write(i)),
    },
    ToolDef {
        name: "vault_replace",
        title: "Replace in vault note",
        domain: &vault::DOMAIN,
        description: "Replace occurrences of `find` in a note (first by default, 0 = all). Not under `daily/` or `.system/`.",
        details: "Replace occurrences of `find` with `replace` in a note: the first one by default, \
                      `max_replacements` of them, or all with 0. Not allowed under `daily/` or `.system/`. \
                      When `find` does not occur the file is left untouched and `replacements` is 0.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: vault::ReplaceInput, _| d.get::<Vault>()?.replace(i)),
    },
    ToolDef {
        name: "vault_search",
        title: "Search vault lines",
        domain: &vault::DOMAIN,
        description: "Search the vault's notes line by line (regex, plain or loose), filtered by glob and folder.",
        details: "Search the vault's notes line by line. mode: `regex` (default; an invalid pattern falls back \
                      to plain text), `plain` (exact text) or `loose` (all words, ignoring case and width). \
                      Filter by `glob` (on the relative path) and `relative_dir`; `limit` defaults to 50.",
        effect: Effect::Read,
        handler: &Typed(|d, i: vault::SearchInput, _| d.get::<Vault>()?.search(i)),
    },
    ToolDef {
        name: "vault_find",
        title: "Find in vault",
        domain: &vault::DOMAIN,
        description: "Find where the vault answers a question: a `summary` of the evidence and `next_actions` (what to read next, or stop).",
        details: "Find where the vault answers a question, without a hit list: Stage 0 (the whole query, normalised) \
                      and Stage 1 (its words in any order) over the vault's sections, integrated (Stage 1.5) into a \
                      `summary` (candidates, signal coverage, file bias, gaps, sufficiency, integration_status) and \
                      `next_actions` with the smallest arguments for the next call (vault_read of the best evidence, \
                      vault_scan, vault_coverage, ... or stop). `cutoff_reason` appears only when the budget cut the search.",
        effect: Effect::Read,
        handler: &Typed(|d, i: vault::FindInput, _| d.get::<Vault>()?.find(i)),
    },
    ToolDef {
        name: "vault_coverage",
        title: "Vault citation coverage",
        domain: &vault::DOMAIN,
        description: "How much of a note the cited line ranges cover, against COVERAGE_MIN_RATIO, with the next range to read.",
        details: "How much of a note the cited line ranges cover: ranges merged when they overlap or touch, coverage_ratio = covered/total (1.0 for an empty file), meets_min_coverage against COVERAGE_MIN_RATIO, and next_actions (scan the first uncovered range, or stop).",
        effect: Effect::Read,
        handler: &Typed(|d, i: vault::CoverageInput, _| d.get::<Vault>()?.coverage(i)),
    },
    ToolDef {
        name: "artifact_audit",
        title: "Audit artifact",
        domain: &vault::DOMAIN,
        description: "Audit a note written from a source note: uncited nodes, orphan branches, one-way links, coverage and gain since the last audit.",
        details: "Audit an artifact (a note written from a source note) against its source: finds rootless_node (no citation of source lines), orphan_branch (empty heading, or citations all outside the source) and one_way_ref (internal link with no link back, or to nothing). Citations are written `L12`, `L12-L18`, `(source.md:12-18)` or `source_lines: 12-18`; without cited_ranges they are read from the artifact. Reports coverage, marginal_gain since the previous audit of the pair (kept under .system/), needs_forced_full_scan and next_actions.",
        // It keeps the previous audit's coverage under `.system/` for marginal_gain.
        effect: Effect::Write { idempotent: false },
        handler: &Typed(|d, i: vault::AuditInput, _| d.get::<Vault>()?.audit(i)),
    },
    ToolDef {
        name: "manual_ls",
        title: "List manuals",
        domain: &manual::DOMAIN,
        description: "List the manuals, or one level of a manual's folder (folders, .md and .json files).",
        details: "List manuals, or one level of a manual's folder. `id` omitted or `manuals`: the manuals \
                      (folders under the manuals root). A manual or folder id: its children (folders, and .md/.json \
                      files). A file id cannot be listed (`invalid_parameter`).",
        effect: Effect::Read,
        handler: &Typed(|d, i: manual::LsInput, _| d.get::<Manuals>()?.ls(i)),
    },
    ToolDef {
        name: "manual_toc",
        title: "Manual contents",
        domain: &manual::DOMAIN,
        description: "Table of contents of a manual: each .md file's headings with their start lines (for manual_read).",
        details: "Table of contents of a manual: every .md file with its headings and the line each starts on \
                      (pass a line to manual_read as ref.start_line).",
        effect: Effect::Read,
        handler: &Typed(|d, i: manual::TocInput, _| d.get::<Manuals>()?.toc(i)),
    },
    ToolDef {
        name: "manual_read",
        title: "Read manual",
        domain: &manual::DOMAIN,
        description: "Read part of a manual file: a section (default for .md), with subsections, a snippet, or a whole file; at most {scan_max_chars} characters.",
        details: "Read part of a manual file. scope: `section` (default for .md: the section holding \
                      ref.start_line), `sections` (that section with its subsections, at most 20), `snippet` (a few \
                      lines), `file` (default for .json; for .md only when the server sets ALLOW_FILE_SCOPE and the \
                      call sets allow_file=true). At most {scan_max_chars} characters. Asking for the same section again \
                      continues after it (applied.mode = scan_fallback).",
        // Not idempotent, for what that says of a reading tool: a repeated
        // section read continues past it (scan_fallback).
        effect: Effect::Read,
        handler: &Typed(|d, i: manual::ReadInput, _| d.get::<Manuals>()?.read(i)),
    },
    ToolDef {
        name: "manual_scan",
        title: "Scan manual file",
        domain: &manual::DOMAIN,
        description: "Read a manual file {scan_max_chars} characters at a time, resuming from `next_cursor`.",
        details: "Read a manual file piece by piece, {scan_max_chars} characters at a time: from `start_line` (wins), \
                      `cursor.start_line`, or `cursor.char_offset` from a previous next_cursor (`cursor` may also be \
                      that offset alone, as a number or string).",
        effect: Effect::Read,
        handler: &Typed(|d, i: manual::ScanInput, _| d.get::<Manuals>()?.scan(i)),
    },
    ToolDef {
        name: "manual_find",
        title: "Find in manuals",
        domain: &manual::DOMAIN,
        description: "Search the manuals (ja/es/en) and integrate the evidence: a `trace_id` for manual_hits, a `summary` and `next_actions`.",
        details: "Search the manuals (Japanese, Spanish, English) and integrate what is found: BM25 candidates with \
                      signals, late rerank, a claim graph (claims, evidences, edges, facet coverage) and, when the result \
                      is weak, a corrective second search. Returns a `trace_id` (page through it with manual_hits), a \
                      `summary` derived from the claim graph and `next_actions`. `claim_graph` only with \
                      include_claim_graph=true.",
        effect: Effect::Read,
        handler: &Typed(|d, i: manual::FindInput, job| d.get::<Manuals>()?.find(i, job)),
    },
    ToolDef {
        name: "manual_hits",
        title: "Page manual_find trace",
        domain: &manual::DOMAIN,
        description: "Page through a manual_find trace: candidates, unscanned, conflicts, gaps, integrated_top, claims, evidences or edges.",
        details: "Page through a manual_find trace: kind = candidates (default; compact, manual_id hoisted when \
                      shared), unscanned, conflicts, gaps, integrated_top, claims, evidences or edges. offset 0 and limit \
                      50 by default.",
        effect: Effect::Read,
        handler: &Typed(|d, i: manual::HitsInput, _| d.get::<Manuals>()?.hits(i)),
    },
    ToolDef {
        name: "bridge_copy_section",
        title: "Copy manual section to vault",
        domain: &bridge::DOMAIN,
        description: "Copy one manual section (manual_read's `ref`) into a vault note, inside the server; the vault write policy applies.",
        details: "Copy one section of a manual into a vault note inside the server (the text is not returned). \
                      `from_ref` is manual_read's `ref` ({manual_id, path, start_line}); the text copied is exactly what \
                      manual_read returns for it (a .md section; a .json file whole). The destination follows the vault \
                      write policy (.system/ forbidden, daily/ append-only); `overwrite` creates a missing note.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: bridge::CopySectionInput, _| d.get::<Bridge>()?.copy_section(i)),
    },
    ToolDef {
        name: "bridge_copy_file",
        title: "Copy manual file to vault",
        domain: &bridge::DOMAIN,
        description: "Copy a whole manual file (.json; .md with ALLOW_FILE_SCOPE) into a vault note; the vault write policy applies.",
        details: "Copy a whole manual file into a vault note inside the server (the text is not returned). A .json file \
                      always; a .md file only when the server allows file scope (ALLOW_FILE_SCOPE=true) and \
                      limits.allow_file=true. The destination follows the vault write policy.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: bridge::CopyFileInput, _| d.get::<Bridge>()?.copy_file(i)),
    },
    ToolDef {
        name: "search",
        title: "Search vibe projects",
        domain: &vibe::DOMAIN,
        description: "Full-text search of vibe projects, best first (BM25 with boosts for type, status, key headings, recency); any text is safe.",
        details: "Full-text search across vibe projects (tasks, plans, sessions, ...), best match first. Chunks are the \
                      sections under level-1/2 headings; score = BM25 × boosts (document type, task status, priority \
                      headings such as Current Status / Next Steps / Blockers / Decisions, recency). Any text is safe \
                      to search: quotes, `-`, `:`, parentheses are just text. Snippets mark matches in **bold**.",
        effect: Effect::Read,
        handler: &Typed(|d, i: vibe::SearchInput, _| d.get::<Vibe>()?.search(i)),
    },
    ToolDef {
        name: "read_doc",
        title: "Read vibe document",
        domain: &vibe::DOMAIN,
        description: "Read one project document whole, with its metadata and the `hash` update_doc expects.",
        details: "Read one document of a vibe project whole, with its metadata (type, status, updated, tags, owner) \
                      and its SHA-256 `hash` (update_doc's expected_hash).",
        effect: Effect::Read,
        handler: &Typed(|d, i: vibe::ReadDocInput, _| d.get::<Vibe>()?.read_doc(i)),
    },
    ToolDef {
        name: "list_tasks",
        title: "List vibe tasks",
        domain: &vibe::DOMAIN,
        description: "List the tasks of one project or all, optionally by status.",
        details: "List the tasks of one project (or of all), optionally by status, with title, status, updated \
                      and objective; include_content adds each task's full text.",
        effect: Effect::Read,
        handler: &Typed(|d, i: vibe::ListTasksInput, _| d.get::<Vibe>()?.list_tasks(i)),
    },
    ToolDef {
        name: "get_plan",
        title: "Get vibe plan",
        domain: &vibe::DOMAIN,
        description: "Read a project's execution plan with its parsed overview and task counts (`exists: false` if missing).",
        details: "Read a project's execution plan (plans/execution-plan.md by default) with `parsed`: its Overview \
                      and the task counts of its Current Status. A missing plan is `exists: false`, not an error.",
        effect: Effect::Read,
        handler: &Typed(|d, i: vibe::GetPlanInput, _| d.get::<Vibe>()?.get_plan(i)),
    },
    ToolDef {
        name: "create_doc",
        title: "Create vibe document",
        domain: &vibe::DOMAIN,
        description: "Create a new file in a project folder (never overwrites: FILE_EXISTS).",
        details: "Create a new file in a project folder (never overwrites: FILE_EXISTS; use update_doc). \
                      `frontmatter` is written as YAML front matter. Indexed before it returns.",
        effect: Effect::Write { idempotent: false },
        handler: &Typed(|d, i: vibe::CreateDocInput, _| d.get::<Vibe>()?.create_doc(i)),
    },
    ToolDef {
        name: "update_doc",
        title: "Update vibe document",
        domain: &vibe::DOMAIN,
        description: "Replace an existing file's content; `expected_hash` refuses the write with CONFLICT if it changed.",
        details: "Replace the content of an existing file (FILE_NOT_FOUND otherwise; use create_doc). `frontmatter` \
                      is merged into the existing front matter (null removes a key). Pass `expected_hash` (read_doc's \
                      hash) to refuse the write with CONFLICT if the file changed since. Returns both hashes.",
        effect: Effect::Destructive { idempotent: true },
        handler: &Typed(|d, i: vibe::UpdateDocInput, _| d.get::<Vibe>()?.update_doc(i)),
    },
    ToolDef {
        name: "create_task",
        title: "Create vibe task",
        domain: &vibe::DOMAIN,
        description: "Create tasks/NNN-slug.md in the standard task format with the next free number.",
        details: "Create a task file in the standard format (# Task, Status, Objective, Context, Steps, Acceptance \
                      Criteria, Notes) as tasks/NNN-slug.md, with the next free number (allocated under the project's \
                      lock) and a kebab-case slug of the title; front matter only when there are tags.",
        effect: Effect::Write { idempotent: false },
        handler: &Typed(|d, i: vibe::CreateTaskInput, _| d.get::<Vibe>()?.create_task(i)),
    },
    ToolDef {
        name: "update_task_status",
        title: "Set vibe task status",
        domain: &vibe::DOMAIN,
        description: "Change a task's status (its `Status:` line and front matter).",
        details: "Change a task's status: rewrites its `Status:` line (never one inside a code fence) and keeps a \
                      front matter `status` the same. `task` is a number (\"004\") or a filename.",
        effect: Effect::Destructive { idempotent: true },
        handler: &Typed(|d, i: vibe::UpdateTaskStatusInput, _| {
            d.get::<Vibe>()?.update_task_status(i)
        }),
    },
    ToolDef {
        name: "create_plan",
        title: "Create vibe plan",
        domain: &vibe::DOMAIN,
        description: "Create or overwrite an execution plan in plans/.",
        details: "Create or overwrite an execution plan in plans/ (default execution-plan.md); `action` says which.",
        effect: Effect::Destructive { idempotent: true },
        handler: &Typed(|d, i: vibe::CreatePlanInput, _| d.get::<Vibe>()?.create_plan(i)),
    },
    ToolDef {
        name: "log_session",
        title: "Log vibe session",
        domain: &vibe::DOMAIN,
        description: "Record a session note in sessions/YYYY-MM-DD.md; `append` adds to the day's note.",
        details: "Record a session note in sessions/YYYY-MM-DD.md (local date; YYYY-MM-DD-suffix.md with `suffix`). \
                      append=true adds to the day's note after a `---` separator; without it an existing note is \
                      FILE_EXISTS (nothing is overwritten).",
        effect: Effect::Write { idempotent: false },
        handler: &Typed(|d, i: vibe::LogSessionInput, _| d.get::<Vibe>()?.log_session(i)),
    },
    ToolDef {
        name: "reindex",
        title: "Reindex vibe projects",
        domain: &vibe::DOMAIN,
        description: "Bring the vibe search index up to date (changed files, or all with `full`); sends progress, stops when cancelled.",
        details: "Bring the search index up to date with the files: only files whose size, mtime and content hash \
                      changed are re-read, or all with full=true; one project or all. Sends MCP progress notifications \
                      when the request carries a progress token.",
        effect: Effect::Write { idempotent: true },
        handler: &Typed(|d, i: vibe::ReindexInput, job| d.get::<Vibe>()?.reindex(i, job)),
    },
];
