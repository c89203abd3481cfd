//! The manual tools' declarations: name, title, descriptions, effect and a
//! handler whose signature gives the input and output types.

use crate::domain::{Effect, ToolDef, Typed};
use crate::{DOMAIN, Manuals};

pub static TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "manual_ls",
        title: "List manuals",
        domain: &DOMAIN,
        description: "List manuals, or one level of a manual folder.",
        details: "List manuals, or one level of a manual's folder. `id` omitted or `manuals`: the manuals \
                      (folders under the manuals root). A manual or folder id: its children (folders, and .md/.json \
                      files). A file id cannot be listed (`invalid_parameter`).",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::LsInput, _| d.get::<Manuals>()?.ls(i)),
    },
    ToolDef {
        name: "manual_toc",
        title: "Manual contents",
        domain: &DOMAIN,
        description: "Each .md file's headings and start lines (for manual_read).",
        details: "Table of contents of a manual: every .md file with its headings and the line each starts on \
                      (pass a line to manual_read as ref.start_line).",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::TocInput, _| d.get::<Manuals>()?.toc(i)),
    },
    ToolDef {
        name: "manual_read",
        title: "Read manual",
        domain: &DOMAIN,
        description: "Read a section, snippet or whole file of a manual; at most {scan_max_chars} characters.",
        details: "Read part of a manual file. scope: `section` (default for .md: the section holding \
                      ref.start_line), `sections` (that section with its subsections, at most 20), `snippet` (a few \
                      lines), `file` (default for .json; for .md only when the server sets ALLOW_FILE_SCOPE and the \
                      call sets allow_file=true). At most {scan_max_chars} characters. Asking for the same section again \
                      continues after it (applied.mode = scan_fallback).",
        // Not idempotent, for what that says of a reading tool: a repeated
        // section read continues past it (scan_fallback).
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::ReadInput, _| d.get::<Manuals>()?.read(i)),
    },
    ToolDef {
        name: "manual_scan",
        title: "Scan manual file",
        domain: &DOMAIN,
        description: "Read a manual file {scan_max_chars} characters at a time, resuming at `next_cursor`.",
        details: "Read a manual file piece by piece, {scan_max_chars} characters at a time: from `start_line` (wins), \
                      `cursor.start_line`, or `cursor.char_offset` from a previous next_cursor (`cursor` may also be \
                      that offset alone, as a number or string).",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::ScanInput, _| d.get::<Manuals>()?.scan(i)),
    },
    ToolDef {
        name: "manual_find",
        title: "Find in manuals",
        domain: &DOMAIN,
        description: "Search the manuals: an evidence `summary`, `next_actions` and a `trace_id` for manual_hits.",
        details: "Search the manuals (Japanese, Spanish, English) and integrate what is found: BM25 candidates with \
                      signals, late rerank, a claim graph (claims, evidences, edges, facet coverage) and, when the result \
                      is weak, a corrective second search. Returns a `trace_id` (page through it with manual_hits), a \
                      `summary` derived from the claim graph and `next_actions`. `claim_graph` only with \
                      include_claim_graph=true.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::FindInput, job| d.get::<Manuals>()?.find(i, job)),
    },
    ToolDef {
        name: "manual_hits",
        title: "Page manual_find trace",
        domain: &DOMAIN,
        description: "Page through one list of a manual_find trace.",
        details: "Page through a manual_find trace: kind = candidates (default; compact, manual_id hoisted when \
                      shared), unscanned, conflicts, gaps, integrated_top, claims, evidences or edges. offset 0 and limit \
                      50 by default.",
        effect: Effect::Read,
        handler: &Typed(|d, i: crate::HitsInput, _| d.get::<Manuals>()?.hits(i)),
    },
];
