//! The first-stage signals of a section (seed 004): `heading`,
//! `heading_focus`, `normalized`, `loose`, `exceptions`, and the bonuses that
//! the query's coverage, a shared chapter/section/page reference and an exact
//! document name add to its BM25 score. The file's name is the document's
//! outermost heading: many manual sets name a document by its file and never
//! repeat the title.

use rayon::prelude::*;
use std::collections::HashSet;

use super::clip;
use super::output::{Cand, Found, Key, Signal};
use crate::domain::search::{Weights, flag, w};
use crate::index::Hit;
use crate::name;
use crate::text::Folded;
use crate::text::facet::{self, Facet};
use crate::text::phrase::{self, Run};
use crate::text::tokenize::{content_units, is_cjk};

/// Characters of a section the signals look at (a huge table is not read to its end).
const ANALYSE_CHARS: usize = 20_000;

/// What the first stage measures on a section, beside its BM25.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Feature {
    /// A query word is in the heading path (led by the file's title).
    Heading,
    /// The section's own heading or the document's name is about the query.
    Focus,
    /// The query asks for exceptions and the section states some.
    Exceptions,
    /// The query's chapter, section or page reference is the document's.
    Reference,
    /// The query states the document's name (not just words the name contains).
    ExactName,
    /// The share of the query's words in the section (0..1).
    Coverage,
    /// The share of the query's long CJK words the section holds as is,
    /// not only as scattered bigrams (0..1).
    Run,
    /// The section's closeness in meaning to the question: its cosine
    /// relative to the best section's (0..1; 0 without the dense signal).
    Dense,
    /// The same, weighted by how much of the question the searched manuals
    /// never use: `Dense` × (1 − the share of the question's words present
    /// in them). A question in another language shares no words with the
    /// manual, and meaning is all there is to go by.
    DenseUnmatched,
}

/// What each feature adds to a section's BM25 (normalised by the best);
/// `Coverage`'s weight is the `SPARSE_QUERY_COVERAGE_WEIGHT` setting.
pub type Table = Weights<Feature, 9>;

pub const SIGNALS: Table = Weights([
    w(Feature::Heading, 0.15),
    w(Feature::Focus, 0.25),
    w(Feature::Exceptions, 0.2),
    w(Feature::Reference, 1.0),
    w(Feature::ExactName, 0.3),
    w(Feature::Coverage, 0.35),
    w(Feature::Run, 0.4),
    w(Feature::Dense, 0.3),
    w(Feature::DenseUnmatched, 3.0),
]);

/// Signals and first-stage score of one section (see the module comment).
struct Analysis {
    signals: Vec<Signal>,
    coverage: f64,
    bonus: f64,
}

/// Whether a query word missing as such is present as a variant sharing
/// its stem (`watchers` for `watcher`, `computadas` for `computada`).
fn stem_variant(terms: &[String], matched: &[&String], head: &Folded, body: &Folded) -> bool {
    terms.iter().any(|t| {
        let chars = t.chars().count();
        if chars < 5 || matched.contains(&t) || t.chars().any(is_cjk) {
            return false;
        }
        let stem: String = t.chars().take((chars - 2).max(4)).collect();
        head.has_word_prefix(&stem) || body.has_word_prefix(&stem)
    })
}

/// The share of the query's long words held whole in the heading path or
/// the body.
fn held_whole(runs: &[Run], head: &Folded, body: &Folded) -> f64 {
    if runs.is_empty() {
        return 0.0;
    }
    let held = runs
        .iter()
        .filter(|r| head.as_str().contains(&r.text) || body.as_str().contains(&r.text))
        .count();
    held as f64 / runs.len() as f64
}

fn analyse(
    query: &str,
    units: &[Vec<String>],
    runs: &[Run],
    asks_exceptions: bool,
    table: &Table,
    hit: &Hit,
) -> Analysis {
    let terms: Vec<String> = units.iter().flatten().cloned().collect();
    let body_text = clip(&hit.body, ANALYSE_CHARS);
    let title = name::title(&hit.file);
    let head = Folded::new(&format!("{title} > {}", hit.heading));
    let named = Folded::new(&title);
    let named_by = name::compare(query, &hit.file, &hit.heading);
    let own = Folded::new(hit.heading.rsplit(" > ").next().unwrap_or(""));
    let body = Folded::new(body_text);
    let mut signals = Vec::new();
    let matched: Vec<&String> = terms
        .iter()
        .filter(|t| head.has_term(t) || body.has_term(t))
        .collect();
    // Each query word weighs the same, however many bigrams it has.
    let share = |has: &dyn Fn(&String) -> bool| {
        units
            .iter()
            .map(|u| u.iter().filter(|t| has(t)).count() as f64 / u.len() as f64)
            .sum::<f64>()
            / units.len().max(1) as f64
    };
    let coverage = share(&|t| matched.contains(&t));
    let in_heading = terms.iter().any(|t| head.has_term(t));
    let focus = share(&|t| own.has_term(t)) >= 0.5
        || share(&|t| named.has_term(t)) >= 0.5
        || named_by.exact;
    let in_heading = in_heading || named_by.reference;
    if in_heading {
        signals.push(Signal::Heading);
    }
    if focus {
        signals.push(Signal::HeadingFocus);
    }
    // Found only through normalisation: the term is not in the raw text as
    // such (case, width, diacritics or compatibility forms differ).
    if matched
        .iter()
        .any(|t| !body_text.contains(t.as_str()) && !hit.heading.contains(t.as_str()))
    {
        signals.push(Signal::Normalized);
    }
    // A query word missing as such but present as a variant sharing its stem
    // (`watchers` for `watcher`, `computadas` for `computada`).
    let loose = stem_variant(&terms, &matched, &head, &body);
    if loose {
        signals.push(Signal::Loose);
    }
    let exceptions = asks_exceptions
        && (facet::has_exception_marker(&hit.heading) || facet::has_exception_marker(body_text));
    if exceptions {
        signals.push(Signal::Exceptions);
    }
    // A long word whole in the heading path or the body.
    let whole = held_whole(runs, &head, &body);
    let bonus = table.score(|f| match f {
        Feature::Heading => flag(in_heading),
        Feature::Focus => flag(focus),
        Feature::Exceptions => flag(exceptions),
        Feature::Reference => flag(named_by.reference),
        Feature::ExactName => flag(named_by.exact),
        Feature::Coverage => coverage,
        Feature::Run => whole,
        // Placed by `score`, which sees every section.
        Feature::Dense | Feature::DenseUnmatched => 0.0,
    });
    Analysis {
        signals,
        coverage,
        bonus,
    }
}

/// Score found sections against `query`: BM25 normalised by the best, plus
/// the signal bonuses for the sections marked `analyse` (the rest keep their
/// BM25 rank). Sections in `known` (ranked by an earlier stage) count for
/// the best BM25 score but are left out.
pub(super) fn score(
    query: &str,
    found: &[Found],
    table: &Table,
    known: Option<&HashSet<Key>>,
    present: f64,
) -> Vec<Cand> {
    let units = content_units(query);
    let runs = phrase::runs(query);
    let asks_exceptions = facet::detect(query).contains(&Facet::Exceptions);
    let best = found.iter().map(|f| f.hit.score).fold(0.0f32, f32::max);
    // Each section is analysed on its own: on both cores.
    let analysed: Vec<Option<Analysis>> = found
        .par_iter()
        .map(|f| {
            (f.analyse && known.is_none_or(|k| !k.contains(&f.key())))
                .then(|| analyse(query, &units, &runs, asks_exceptions, table, &f.hit))
        })
        .collect();
    let best_dense = found.iter().map(|f| f.dense).fold(0.0f32, f32::max);
    found
        .iter()
        .zip(analysed)
        .filter(|(f, _)| known.is_none_or(|k| !k.contains(&f.key())))
        .map(|(f, a)| {
            let base = if best > 0.0 {
                f64::from(f.hit.score / best)
            } else {
                0.0
            };
            let a = a.unwrap_or(Analysis {
                signals: vec![],
                coverage: 0.0,
                bonus: 0.0,
            });
            let near = if best_dense > 0.0 {
                f64::from(f.dense.max(0.0) / best_dense)
            } else {
                0.0
            };
            let dense = table.score(|feature| match feature {
                Feature::Dense => near,
                Feature::DenseUnmatched => near * (1.0 - present),
                _ => 0.0,
            });
            Cand {
                manual_id: f.manual_id.clone(),
                path: f.path.clone(),
                start_line: f.hit.start_line,
                heading: f.hit.heading.clone(),
                score: base + a.bonus + dense,
                base: base + a.bonus + dense,
                signals: a.signals,
                coverage: a.coverage,
                snippet: None,
            }
        })
        .collect()
}
