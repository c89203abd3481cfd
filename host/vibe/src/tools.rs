//! The vibe tools' declarations: name, title, descriptions, effect and a
//! handler whose signature gives the input and output types.

use crate::domain::{Effect, ToolDef, Typed};
use crate::{DOMAIN, Vibe};

pub static TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "search",
        title: "Search vibe projects",
        domain: &DOMAIN,
        description: "Search vibe projects by words and meaning, best first; any text is safe.",
        details: "Full-text search across vibe projects (tasks, plans, sessions, ...), best match first. Chunks are the \
                      sections under level-1/2 headings; score = BM25 × boosts (document type, task status, priority \
                      headings such as Current Status / Next Steps / Blockers / Decisions, recency); with the sentence \
                      encoder installed, the chunks nearest in meaning (in any language) join them, BM25 plus a meaning \
                      term (until its vectors are built, `warnings` says the search matched words only). Any text is safe \
                      to search: quotes, `-`, `:`, parentheses are just text. Snippets mark matches in **bold**.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::SearchInput, _| d.get::<Vibe>()?.search(i)),
    },
    ToolDef {
        name: "read_doc",
        title: "Read vibe document",
        domain: &DOMAIN,
        description: "Read a whole project document with metadata and the `hash` for update_doc.",
        details: "Read one document of a vibe project whole, with its metadata (type, status, updated, tags, owner) \
                      and its SHA-256 `hash` (update_doc's expected_hash).",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::ReadDocInput, _| d.get::<Vibe>()?.read_doc(i)),
    },
    ToolDef {
        name: "list_tasks",
        title: "List vibe tasks",
        domain: &DOMAIN,
        description: "List a project's tasks, or all.",
        details: "List the tasks of one project (or of all), optionally by status, with title, status, updated \
                      and objective; include_content adds each task's full text.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::ListTasksInput, _| d.get::<Vibe>()?.list_tasks(i)),
    },
    ToolDef {
        name: "get_plan",
        title: "Get vibe plan",
        domain: &DOMAIN,
        description: "A project's execution plan with overview and task counts (`exists: false` if missing).",
        details: "Read a project's execution plan (plans/execution-plan.md by default) with `parsed`: its Overview \
                      and the task counts of its Current Status. A missing plan is `exists: false`, not an error.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::GetPlanInput, _| d.get::<Vibe>()?.get_plan(i)),
    },
    ToolDef {
        name: "create_doc",
        title: "Create vibe document",
        domain: &DOMAIN,
        description: "Create a project file (never overwrites: FILE_EXISTS).",
        details: "Create a new file in a project folder (never overwrites: FILE_EXISTS; use update_doc). \
                      `frontmatter` is written as YAML front matter. Indexed before it returns.",
        effect: Effect::Write { idempotent: false },
        handler: &Typed(|d, i: crate::CreateDocInput, _| d.get::<Vibe>()?.create_doc(i)),
    },
    ToolDef {
        name: "update_doc",
        title: "Update vibe document",
        domain: &DOMAIN,
        description: "Replace an existing file's content.",
        details: "Replace the content of an existing file (FILE_NOT_FOUND otherwise; use create_doc). `frontmatter` \
                      is merged into the existing front matter (null removes a key). Pass `expected_hash` (read_doc's \
                      hash) to refuse the write with CONFLICT if the file changed since. Returns both hashes.",
        effect: Effect::Destructive { idempotent: true },
        handler: &Typed(|d, i: crate::UpdateDocInput, _| d.get::<Vibe>()?.update_doc(i)),
    },
    ToolDef {
        name: "create_task",
        title: "Create vibe task",
        domain: &DOMAIN,
        description: "Create tasks/NNN-slug.md (next free number) in the standard format.",
        details: "Create a task file in the standard format (# Task, Status, Objective, Context, Steps, Acceptance \
                      Criteria, Notes) as tasks/NNN-slug.md, with the next free number (allocated under the project's \
                      lock) and a kebab-case slug of the title; front matter only when there are tags.",
        effect: Effect::Write { idempotent: false },
        handler: &Typed(|d, i: crate::CreateTaskInput, _| d.get::<Vibe>()?.create_task(i)),
    },
    ToolDef {
        name: "update_task_status",
        title: "Set vibe task status",
        domain: &DOMAIN,
        description: "Set a task's `Status:` line and front matter status.",
        details: "Change a task's status: rewrites its `Status:` line (never one inside a code fence) and keeps a \
                      front matter `status` the same. `task` is a number (\"004\") or a filename.",
        effect: Effect::Destructive { idempotent: true },
        handler: &Typed(|d, i: crate::UpdateTaskStatusInput, _| {
            d.get::<Vibe>()?.update_task_status(i)
        }),
    },
    ToolDef {
        name: "create_plan",
        title: "Create vibe plan",
        domain: &DOMAIN,
        description: "Create or overwrite an execution plan in plans/.",
        details: "Create or overwrite an execution plan in plans/ (default execution-plan.md); `action` says which.",
        effect: Effect::Destructive { idempotent: true },
        handler: &Typed(|d, i: crate::CreatePlanInput, _| d.get::<Vibe>()?.create_plan(i)),
    },
    ToolDef {
        name: "log_session",
        title: "Log vibe session",
        domain: &DOMAIN,
        description: "Write a session note to sessions/YYYY-MM-DD.md.",
        details: "Record a session note in sessions/YYYY-MM-DD.md (local date; YYYY-MM-DD-suffix.md with `suffix`). \
                      append=true adds to the day's note after a `---` separator; without it an existing note is \
                      FILE_EXISTS (nothing is overwritten).",
        effect: Effect::Write { idempotent: false },
        handler: &Typed(|d, i: crate::LogSessionInput, _| d.get::<Vibe>()?.log_session(i)),
    },
    ToolDef {
        name: "history",
        title: "Vibe change history",
        domain: &DOMAIN,
        description: "kura's vibe changes, newest first.",
        details: "The changes kura made to the vibe workspace's files, newest first, as vault_history gives the vault's: \
                      `path` (`project`, `project/folder`, a document), `session` (`current`: this one), `client`, `change` with \
                      its unified diff. A git repository in kura's state folder (`history/vibe`).",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::domain::history::HistoryInput, _| {
            d.get::<Vibe>()?.history(i)
        }),
    },
    ToolDef {
        name: "undo",
        title: "Undo vibe change",
        domain: &DOMAIN,
        description: "Undo a vibe change or session, all or nothing.",
        details: "Undo one change from `history` (`change`) or every change of a session (`session`, `current`: this one), \
                      newest first, all or nothing, as vault_undo does for the vault: a file changed since stops it \
                      (FILESYSTEM_ERROR with `details.files`); the undo is itself a change. `dry_run` reports only.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: crate::domain::history::UndoInput, _| d.get::<Vibe>()?.undo(i)),
    },
    ToolDef {
        name: "reindex",
        title: "Reindex vibe projects",
        domain: &DOMAIN,
        description: "Update the vibe search index (changed files, or all with `full`); sends progress.",
        details: "Bring the search index up to date with the files: only files whose size, mtime and content hash \
                      changed are re-read, or all with full=true; one project or all. Sends MCP progress notifications \
                      when the request carries a progress token.",
        effect: Effect::Write { idempotent: true },
        handler: &Typed(|d, i: crate::ReindexInput, job| d.get::<Vibe>()?.reindex(i, job)),
    },
];
