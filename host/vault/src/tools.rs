//! The vault tools' declarations: name, title, descriptions, effect and a
//! handler whose signature gives the input and output types.

use crate::domain::{Effect, ToolDef, Typed};
use crate::{DOMAIN, Vault};

pub static TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "vault_ls",
        title: "List vault folder",
        domain: &DOMAIN,
        description: "List a vault folder (not recursive): folders, then files, by name.",
        details: "List one folder of the vault (not recursive): folders first, then files, each sorted by name. \
                      Symbolic links are never listed. Optional: vault_read/vault_scan do not need it.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::LsInput, _| d.get::<Vault>()?.ls(i)),
    },
    ToolDef {
        name: "vault_read",
        title: "Read vault note",
        domain: &DOMAIN,
        description: "Read a vault note's lines (`range` or `full`), at most {scan_max_chars} characters; vault_scan resumes.",
        details: "Read lines of a vault note. `full` defaults to false, and then `range` is required. \
                      At most {scan_max_chars} characters are returned; when the text stops early, `next_cursor.char_offset` \
                      resumes it with vault_scan.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::ReadInput, _| d.get::<Vault>()?.read(i)),
    },
    ToolDef {
        name: "vault_scan",
        title: "Scan vault note",
        domain: &DOMAIN,
        description: "Read a vault note {scan_max_chars} characters at a time, resuming at `next_cursor`.",
        details: "Read a vault note piece by piece, {scan_max_chars} characters at a time. Start at `start_line` (wins), \
                      or at `cursor.start_line`, or resume at `cursor.char_offset` from the previous `next_cursor`; \
                      nothing is lost or repeated between pieces.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::ScanInput, _| d.get::<Vault>()?.scan(i)),
    },
    ToolDef {
        name: "vault_create",
        title: "Create vault note",
        domain: &DOMAIN,
        description: "Create a note. Existing: `conflict`; `.system/`: `forbidden`; in `daily/` only `daily/YYYY-MM-DD.md`.",
        details: "Create a new note (missing folders are created). An existing file is a `conflict`; \
                      `.system/` is reserved (`forbidden`); under `daily/` only `daily/YYYY-MM-DD.md` may be created.",
        effect: Effect::Write { idempotent: false },
        handler: &Typed(|d, i: crate::CreateInput, _| d.get::<Vault>()?.create(i)),
    },
    ToolDef {
        name: "vault_write",
        title: "Write vault note",
        domain: &DOMAIN,
        description: "Overwrite or append to an existing note (missing: `conflict`); `daily/` append-only, `.system/` reserved.",
        details: "Overwrite or append to an existing note (a missing file is a `conflict`: use vault_create). \
                      `daily/` notes accept only mode=append; `.system/` is reserved.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: crate::WriteInput, _| d.get::<Vault>()?.write(i)),
    },
    ToolDef {
        name: "vault_replace",
        title: "Replace in vault note",
        domain: &DOMAIN,
        description: "Replace `find` with `replace` in a note; not under `daily/` or `.system/`.",
        details: "Replace occurrences of `find` with `replace` in a note: the first one by default, \
                      `max_replacements` of them, or all with 0. Not allowed under `daily/` or `.system/`. \
                      When `find` does not occur the file is left untouched and `replacements` is 0.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: crate::ReplaceInput, _| d.get::<Vault>()?.replace(i)),
    },
    ToolDef {
        name: "vault_edit",
        title: "Edit vault note section",
        domain: &DOMAIN,
        description: "Append to, prepend to or replace the body of one note section.",
        details: "Append to, prepend to or replace the body of one section of a note, named by its heading path \
                      (`Projects > Kura`, or its last headings while they name one section). A section runs to the next \
                      heading of its level or higher, subsections included. `expected_hash` (vault_read's `hash`) refuses \
                      the write with `conflict` if the note changed. Under `daily/` only an append at the note's end is allowed.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: crate::EditInput, _| d.get::<Vault>()?.edit(i)),
    },
    ToolDef {
        name: "vault_search",
        title: "Search vault lines",
        domain: &DOMAIN,
        description: "Search vault notes line by line.",
        details: "Search the vault's notes line by line. mode: `regex` (default; an invalid pattern falls back \
                      to plain text), `plain` (exact text) or `loose` (all words, ignoring case and width). \
                      Filter by `glob` (on the relative path) and `relative_dir`; `limit` defaults to 50.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::SearchInput, job| d.get::<Vault>()?.search(i, job)),
    },
    ToolDef {
        name: "vault_find",
        title: "Find in vault",
        domain: &DOMAIN,
        description: "Find where the vault answers a question: an evidence `summary` and `next_actions`.",
        details: "Find where the vault answers a question, without a hit list: Stage 0 (the whole query, normalised) \
                      and Stage 1 (its words in any order) over the vault's sections, with the sentence encoder installed \
                      Stage 2 (the sections nearest in meaning, in any language), integrated (Stage 1.5) into a \
                      `summary` (candidates, signal coverage, file bias, gaps, sufficiency, integration_status) and \
                      `next_actions` with the smallest arguments for the next call (vault_read of the best evidence, \
                      vault_scan, vault_coverage, ... or stop). `budget.max_candidates` is capped at 1000 and `budget.time_ms` \
                      bounds the reading of candidates; `cutoff_reason` appears only when the budget cut the search.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::FindInput, job| d.get::<Vault>()?.find(i, job)),
    },
    ToolDef {
        name: "vault_links",
        title: "Vault note links",
        domain: &DOMAIN,
        description: "A note's links, backlinks, tags, aliases and properties.",
        details: "A note's links out, each with the file it resolves to (null: it points nowhere), and the links to it from \
                      other notes with the line each is on; also its tags, aliases and front-matter properties. Links are \
                      resolved as Obsidian does: `[[name]]` without case or `.md`, a path shortened while unique, never by \
                      `aliases`; \
                      markdown links relative to their note. `path` may also be an attachment (its backlinks) or a wikilink \
                      target such as `Note A`. Answered from the index, without reading notes.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::LinksInput, _| d.get::<Vault>()?.links(i)),
    },
    ToolDef {
        name: "vault_notes",
        title: "Query vault notes",
        domain: &DOMAIN,
        description: "Notes a filter keeps (`file.hasTag(\"x\") && rating >= 4`), sorted; or orphans, or broken links.",
        details: "The notes a filter keeps, in path order (or `sort`ed: `due`, `file.mtime desc`), with their tags, properties \
                      (only those named in `properties`, `file.*` included) and link counts. `filter` is a Bases expression, as in \
                      Obsidian's `.base` files: `==`, `!=`, `<`, `>=`, `&&`, `||`, `!`, arithmetic, dates (`due < today() + \"1 week\"`, \
                      `file.mtime > now() - \"3d\"`), `file.hasTag()`, `file.inFolder()`, `file.hasLink()`, `contains()`, ...; or \
                      clauses joined by `and`, each read as the expression it stands for: `#tag`, `key = value` \
                      (`==`; also `!=`, `<`, `<=`, `>`, `>=`), `key contains value`, `key exists`. Property types follow `.obsidian/types.json`; a note whose property is not of \
                      its type is left out and counted in `warnings`. `only`: `orphans` or `unresolved` (each with its links that \
                      point nowhere). vault_search and vault_find take the same `filter`.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::NotesInput, job| d.get::<Vault>()?.notes(i, job)),
    },
    ToolDef {
        name: "vault_base",
        title: "Evaluate a Bases view",
        domain: &DOMAIN,
        description: "A Bases view's rows, as Obsidian shows them.",
        details: "Evaluate a view of an Obsidian base (a `.base` file, or the `block`-th ```base block of a note) over the vault's \
                      files: global and view `filters` (`and`/`or`/`not`), `formulas`, the view's `order` as `columns` (named by \
                      `properties.displayName`), `sort`, `groupBy` (each row's `group`, and `groups` with their counts), `limit` \
                      and `summaries`. Rows are the same for table, cards, list and map views; `this` is the base file or the note \
                      embedding it. `limit`/`cursor` page the rows. A construct kura does not evaluate is refused as \
                      `invalid_parameter` naming it and where it is, never evaluated differently.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::BaseInput, job| d.get::<Vault>()?.base(i, job)),
    },
    ToolDef {
        name: "vault_tasks",
        title: "Vault tasks",
        domain: &DOMAIN,
        description: "Checkbox tasks of all notes as the Tasks and Dataview plugins read them, filtered e.g. `!completed && due <= today()`, or a note's ```tasks or ```dataview block evaluated.",
        details: "Every list item with a checkbox in the vault's notes (any status character; none in code), with its note, line, \
                      heading, parent task, tags, the Tasks plugin's emoji fields (📅 due, ⏳ scheduled, 🛫 start, ➕ created, ✅ done, \
                      ❌ cancelled, 🔁 recurrence, 🔺⏫🔼🔽⏬ priority, 🆔 id, ⛔ dependsOn, 🏁 onCompletion) and Dataview's inline fields \
                      (`[key:: value]`, `(key:: value)`). `filter` is an expression in vault_notes' language evaluated for each task: \
                      names are the task's own (Dataview's `text`, `status`, `checked`, `completed`, `fullyCompleted`, `line`, `path`, \
                      `tags`, `due`, `completion`; the Tasks plugin's `statusType`, `priority`, `priorityNumber`, `recurrence`), then \
                      its inline fields, then its note's properties and `key:: value` lines; `file` and `note.x` are the note's. \
                      `sort` and `group_by` name task properties. A ```dataview block's TASK gives tasks, LIST and TABLE `columns` and `rows`.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::TasksInput, job| d.get::<Vault>()?.tasks(i, job)),
    },
    ToolDef {
        name: "vault_task_status",
        title: "Set a task's status",
        domain: &DOMAIN,
        description: "Set a listed task's status as the Tasks plugin does (✅/❌ dates, next recurrence).",
        details: "Change the status of one task vault_tasks listed (`path`, `line` and its `hash`, or its `text`: a task \
                      changed since is `conflict`) as the Tasks plugin does: the status character; `✅ date` added when done and `❌ date` when \
                      cancelled, each removed when it goes back (the plugin's `setDoneDate`/`setCancelledDate` settings, its \
                      emoji or Dataview format); a recurring task done gets its next occurrence above it (below with \
                      `recurrenceOnNextLine`), its dates moved by the rule from due, scheduled or start (`when done`: from \
                      `date`), without done, cancelled, id or dependsOn; `🏁 delete` removes the done task. The rest of the line \
                      is kept. One change in the history (vault_undo takes it back); the write policy and locks apply (a \
                      `daily/` note is append-only).",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: crate::TaskStatusInput, _| d.get::<Vault>()?.task_status(i)),
    },
    ToolDef {
        name: "vault_move",
        title: "Move vault note",
        domain: &DOMAIN,
        description: "Move or rename a note, attachment or folder, rewriting links to it; all or nothing.",
        details: "Move or rename a note, an attachment or a folder (with everything in it) to a path that does not exist yet, \
                      and rewrite every link, embed and markdown link that pointed to what moved (and the links in what moved \
                      that its new place would change), keeping each link's form, heading, block and shown text. All or \
                      nothing: a journal in the state folder lets a killed server finish the move at its next start. Daily \
                      notes are never moved, but their links follow a moved note; `.system/` is reserved. `dry_run` reports \
                      without writing.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: crate::MoveInput, _| d.get::<Vault>()?.move_note(i)),
    },
    ToolDef {
        name: "vault_delete",
        title: "Delete vault note",
        domain: &DOMAIN,
        description: "Send a note, attachment or folder to `.trash/` (restore: vault_move it back); links to it stay.",
        details: "Send a note, an attachment or a folder to `.trash/` (Obsidian's convention), under the same path, or with \
                      ` 2`, ` 3`, ... when the trash already holds one; restore it with vault_move from `trash_path`. Links \
                      to it are left as written (`broken_links` counts them). Daily notes and `.system/` are refused.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: crate::DeleteInput, _| d.get::<Vault>()?.delete(i)),
    },
    ToolDef {
        name: "vault_history",
        title: "Vault change history",
        domain: &DOMAIN,
        description: "kura's vault changes, newest first.",
        details: "The changes kura made to the vault's files, newest first, each one tool call: its id, time, tool, the start of its \
                      arguments, client and session, and each file's blob before and after (null: no file). Filter by `path` (a \
                      note, or a folder and everything below it), `session` (`current`: this one) or `client`; `change` gives one \
                      change with its unified diff (at most {scan_max_chars} characters). `undone_by` names the undo that took a \
                      change back. The history is a git repository in kura's state folder (`kura history` names it; `git -C <state>/history/vault-<hash> log -p`).",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::domain::history::HistoryInput, _| {
            d.get::<Vault>()?.history(i)
        }),
    },
    ToolDef {
        name: "vault_undo",
        title: "Undo vault change",
        domain: &DOMAIN,
        description: "Undo a change or session, all or nothing; a file changed since is `conflict`.",
        details: "Undo one change from vault_history (`change`) or every change of a session (`session`, `current`: this one), \
                      newest first, all or nothing: each file goes back to what it held before (a move with its link rewrites, a \
                      deleted note back, a created one removed, folders made or removed again). If any of those files changed \
                      since (in an editor, by another agent), nothing is changed and the answer is `conflict` naming each file. \
                      The undo is itself a change: undo it to redo. `dry_run` reports what would be done.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: crate::domain::history::UndoInput, _| d.get::<Vault>()?.undo(i)),
    },
    ToolDef {
        name: "vault_coverage",
        title: "Vault citation coverage",
        domain: &DOMAIN,
        description: "How much of a note cited ranges cover, vs COVERAGE_MIN_RATIO, and the next range to read.",
        details: "How much of a note the cited line ranges cover: ranges merged when they overlap or touch, coverage_ratio = covered/total (1.0 for an empty file), meets_min_coverage against COVERAGE_MIN_RATIO, and next_actions (scan the first uncovered range, or stop).",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::CoverageInput, _| d.get::<Vault>()?.coverage(i)),
    },
    ToolDef {
        name: "artifact_audit",
        title: "Audit artifact",
        domain: &DOMAIN,
        description: "Audit a note written from a source: uncited nodes, orphan branches, one-way links, coverage, gain since last audit.",
        details: "Audit an artifact (a note written from a source note) against its source: finds rootless_node (no citation of source lines), orphan_branch (empty heading, or citations all outside the source) and one_way_ref (internal link with no link back, or to nothing). Citations are written `L12`, `L12-L18`, `(source.md:12-18)` or `source_lines: 12-18`; without cited_ranges they are read from the artifact. Reports coverage, marginal_gain since the previous audit of the pair (kept under .system/), needs_forced_full_scan and next_actions.",
        // It keeps the previous audit's coverage under `.system/` for marginal_gain.
        effect: Effect::Write { idempotent: false },
        handler: &Typed(|d, i: crate::AuditInput, _| d.get::<Vault>()?.audit(i)),
    },
];
