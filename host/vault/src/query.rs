//! Queries of the vault's files by their properties: the context an
//! expression is evaluated in (the graph, the other files, the property
//! types, one `now`), the notes a filter keeps, and the notes left out
//! because a property was malformed or an expression failed on them,
//! counted for `warnings`.

use std::sync::Arc;

use rayon::prelude::*;

use super::Vault;
use crate::error::Result;
use crate::expr::Fault;
use crate::expr::env::{Budget, Env};
use crate::expr::eval::Row;
use crate::expr::parse::Ex;
use crate::expr::types::Types;
use crate::expr::value::FileRef;
use crate::filter::Filter;
use crate::graph::Graph;
use crate::graph::resolve::Names;
use crate::job::Job;

/// What a query evaluates against, taken once per call.
pub struct Context {
    pub graph: Arc<Graph>,
    pub others: Arc<Names>,
    pub types: Types,
    pub statuses: crate::graph::tasks::Statuses,
    pub now: i64,
    /// When the query's budget (`QUERY_BUDGET_MS`, from the call's start)
    /// runs out.
    pub deadline: std::time::Instant,
}

impl Context {
    pub fn env<'a>(
        &'a self,
        vault: &'a Vault,
        this: Option<FileRef>,
        formulas: &'a [(String, Ex)],
        job: Job<'a>,
    ) -> Env<'a> {
        Env {
            graph: &self.graph,
            others: &self.others,
            root: &vault.root,
            types: &self.types,
            now: self.now,
            this,
            formulas,
            budget: Budget {
                deadline: self.deadline,
                ms: vault.query_budget_ms,
                job,
            },
            statuses: &self.statuses,
        }
    }
}

/// Files left out of an answer or shown with an error, and why (the
/// first few); each file counted once, whatever failed in it.
#[derive(Debug, Default)]
pub struct Skipped {
    pub count: u64,
    malformed: u64,
    first: Vec<String>,
    counted: std::collections::HashSet<String>,
}

/// How many reasons a warning names.
const SHOWN: usize = 5;

impl Skipped {
    pub fn add(&mut self, path: &str, f: &Fault, text: &str) {
        if !self.counted.insert(path.to_owned()) {
            return;
        }
        self.count += 1;
        self.malformed += f.malformed as u64;
        if self.first.len() < SHOWN {
            self.first.push(format!(
                "{path}: {} (at column {} of `{text}`)",
                f.message, f.at
            ));
        }
    }

    pub fn warnings(&self) -> Vec<String> {
        if self.count == 0 {
            return Vec::new();
        }
        let mut out = vec![format!(
            "{} file(s) left out or shown with an error: {} with a property not of its type (.obsidian/types.json), {} where an expression failed",
            self.count,
            self.malformed,
            self.count - self.malformed
        )];
        out.extend(self.first.iter().cloned());
        out
    }
}

/// The notes a filter keeps, in path order, and those it left out.
pub struct Kept {
    pub notes: Vec<usize>,
    pub skipped: Skipped,
}

impl Vault {
    pub(crate) fn context(&self) -> Result<Context> {
        let deadline =
            std::time::Instant::now() + std::time::Duration::from_millis(self.query_budget_ms);
        let graph = self.current_graph()?;
        let others = self.attachments()?;
        Ok(Context {
            graph,
            others,
            types: Types::load(&self.root),
            statuses: crate::graph::tasks::Statuses::load(&self.root),
            now: chrono::Utc::now().timestamp_millis(),
            deadline,
        })
    }

    /// The notes `filter` (its text `text`) keeps, of the context's graph;
    /// `Err` when the query ran past its budget or was cancelled.
    pub(crate) fn keep(&self, cx: &Context, filter: &Filter, text: &str, job: Job) -> Result<Kept> {
        let e = filter.expr();
        let env = cx.env(self, None, &[], job);
        let pool = cx.graph.pool(filter.first_tag().as_deref());
        // Every note may be tested: on both cores, in path order.
        let tested: Vec<(usize, Result<bool, Fault>)> = pool
            .par_chunks(512)
            .flat_map_iter(|chunk| {
                let mut row = Row::new(FileRef::Note(0), 0);
                chunk
                    .iter()
                    .map(|&i| {
                        row.reset(FileRef::Note(i as u32));
                        (i, env.test(e, &row))
                    })
                    .collect::<Vec<_>>()
            })
            .collect();
        let mut skipped = Skipped::default();
        let mut notes = Vec::new();
        for (i, t) in tested {
            match t {
                Ok(true) => notes.push(i),
                Ok(false) => {}
                Err(f) => {
                    if let Some(e) = f.stopped("the filter", text) {
                        return Err(e);
                    }
                    skipped.add(&cx.graph.notes[i].path, &f, text)
                }
            }
        }
        Ok(Kept { notes, skipped })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A note whose sort key and a chosen property both fail is one file
    /// in `warnings`, not two.
    #[test]
    fn a_file_is_counted_once_whatever_failed_in_it() {
        let mut s = Skipped::default();
        let f = Fault::new("boom", 3);
        s.add("a.md", &f, "due");
        s.add("a.md", &f, "formula.x");
        s.add("b.md", &f, "due");
        assert_eq!(s.count, 2);
        assert!(
            s.warnings()[0].starts_with("2 file(s)"),
            "{:?}",
            s.warnings()
        );
    }
}
