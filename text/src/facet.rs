//! The six facets of manual search (docs/decisions.md) and the cue phrases that mark
//! them in Japanese, Spanish and English. A query's facets say what kind of
//! answer is wanted; a section's facets say what kind of answer it gives.
//! Cues are matched on [`crate::plain`] text: Japanese cues as substrings,
//! Latin-script cues as whole words or phrases (so `vs` does not fire inside
//! `vscode`).

use crate::plain;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Facet {
    Definition,
    Procedure,
    Eligibility,
    Exceptions,
    Compare,
    Unknown,
}

impl Facet {
    pub const ALL: [Facet; 6] = [
        Facet::Definition,
        Facet::Procedure,
        Facet::Eligibility,
        Facet::Exceptions,
        Facet::Compare,
        Facet::Unknown,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Facet::Definition => "definition",
            Facet::Procedure => "procedure",
            Facet::Eligibility => "eligibility",
            Facet::Exceptions => "exceptions",
            Facet::Compare => "compare",
            Facet::Unknown => "unknown",
        }
    }

    pub fn parse(s: &str) -> Option<Facet> {
        Facet::ALL.into_iter().find(|f| f.as_str() == s)
    }

    /// The cue phrases of this facet (lower case, diacritics folded).
    pub fn cues(self) -> &'static [&'static str] {
        match self {
            Facet::Definition => DEFINITION_CUES,
            Facet::Procedure => PROCEDURE_CUES,
            Facet::Eligibility => ELIGIBILITY_CUES,
            Facet::Exceptions => EXCEPTIONS_CUES,
            Facet::Compare => COMPARE_CUES,
            Facet::Unknown => &[],
        }
    }
}

// The cue phrases, one table per facet.

const DEFINITION_CUES: &[&str] = &[
    "とは",
    "定義",
    "意味",
    "って何",
    "ってなに",
    "とは何",
    "概要",
    "what is",
    "what are",
    "what does",
    "definition",
    "define",
    "meaning",
    "que es",
    "que son",
    "definicion",
    "significa",
    "significado",
    "concepto",
];

const PROCEDURE_CUES: &[&str] = &[
    "手順",
    "方法",
    "やり方",
    "使い方",
    "書き方",
    "するには",
    "したい",
    "どうやって",
    "設定",
    "how to",
    "how do",
    "how can",
    "how should",
    "steps",
    "step by step",
    "usage",
    "set up",
    "setup",
    "configure",
    "install",
    "como",
    "pasos",
    "procedimiento",
    "configurar",
    "instalar",
    "usar",
    "utilizar",
];

const ELIGIBILITY_CUES: &[&str] = &[
    "対象",
    "条件",
    "要件",
    "必要",
    "可能",
    "できる",
    "使える",
    "サポート",
    "対応",
    "前提",
    "eligible",
    "eligibility",
    "requirement",
    "requirements",
    "requires",
    "required",
    "can i",
    "supported",
    "compatible",
    "prerequisite",
    "allowed",
    "requisito",
    "requisitos",
    "elegible",
    "condiciones",
    "puedo",
    "se puede",
    "compatible",
    "necesita",
    "necesario",
    "permitido",
];

const EXCEPTIONS_CUES: &[&str] = &[
    "例外",
    "ただし",
    "除く",
    "除いて",
    "以外",
    "注意",
    "制限",
    "制約",
    "警告",
    "できない",
    "できません",
    "使えない",
    "避け",
    "落とし穴",
    "except",
    "exception",
    "unless",
    "however",
    "caveat",
    "caveats",
    "warning",
    "limitation",
    "limitations",
    "not supported",
    "cannot",
    "can t",
    "pitfall",
    "avoid",
    "excepto",
    "excepcion",
    "excepciones",
    "salvo",
    "sin embargo",
    "advertencia",
    "limitacion",
    "limitaciones",
    "no se puede",
    "no puede",
    "evitar",
];

const COMPARE_CUES: &[&str] = &[
    "違い",
    "比較",
    "異なる",
    "違う",
    "どちら",
    "どっち",
    "使い分け",
    "との差",
    "vs",
    "versus",
    "difference",
    "differences",
    "differ",
    "compare",
    "compared",
    "comparison",
    "instead of",
    "better",
    "diferencia",
    "diferencias",
    "comparar",
    "comparacion",
    "frente a",
    "en lugar de",
    "mejor",
];

/// Whether `cue` occurs in `plain_text` (the [`crate::plain`] form).
fn has_cue(plain_text: &str, cue: &str) -> bool {
    if cue.is_ascii() {
        // Whole words: the plain form has a space on both sides of each word.
        let mut padded = String::with_capacity(cue.len() + 2);
        padded.push(' ');
        padded.push_str(cue);
        padded.push(' ');
        plain_text.contains(&padded)
    } else {
        plain_text.contains(cue)
    }
}

/// The facets whose cues occur in `text`, in the order of [`Facet::ALL`];
/// `[Unknown]` when none does.
pub fn detect(text: &str) -> Vec<Facet> {
    detect_plain(&plain(text))
}

/// [`detect`] on text already in [`crate::plain`] form.
pub fn detect_plain(plain_text: &str) -> Vec<Facet> {
    let found: Vec<Facet> = Facet::ALL
        .into_iter()
        .filter(|f| f.cues().iter().any(|c| has_cue(plain_text, c)))
        .collect();
    if found.is_empty() {
        vec![Facet::Unknown]
    } else {
        found
    }
}

/// Whether `text` carries an exception marker (ただし, except, salvo, ...).
pub fn has_exception_marker(text: &str) -> bool {
    let p = plain(text);
    Facet::Exceptions.cues().iter().any(|c| has_cue(&p, c))
}

/// `text` in [`crate::plain`] form with every facet cue removed: what is
/// left is what the query is about ("v-if と v-show の違い" → "v if と v show の").
pub fn strip_cues(text: &str) -> String {
    let mut p = plain(text);
    for f in Facet::ALL {
        for cue in f.cues() {
            if cue.is_ascii() {
                let padded = format!(" {cue} ");
                while p.contains(&padded) {
                    p = p.replace(&padded, " ");
                }
            } else {
                p = p.replace(cue, " ");
            }
        }
    }
    p.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_facets_in_three_languages() {
        assert_eq!(detect("算出プロパティとは何ですか"), [Facet::Definition]);
        assert_eq!(detect("What is a computed property?"), [Facet::Definition]);
        assert_eq!(
            detect("¿Qué es una propiedad computada?"),
            [Facet::Definition]
        );
        assert_eq!(detect("How to install the router"), [Facet::Procedure]);
        assert_eq!(detect("¿Cómo instalo el enrutador?"), [Facet::Procedure]);
        assert_eq!(detect("v-if と v-show の違い"), [Facet::Compare]);
        assert_eq!(detect("ref vs reactive"), [Facet::Compare]);
        assert_eq!(detect("diferencia entre ref y reactive"), [Facet::Compare]);
        assert_eq!(detect("ただし、SSR では使えません"), [Facet::Exceptions]);
        assert_eq!(detect("all hooks except unmounted"), [Facet::Exceptions]);
        assert_eq!(detect("Requisitos del navegador"), [Facet::Eligibility]);
        assert_eq!(detect("Teleport"), [Facet::Unknown]);
    }

    #[test]
    fn latin_cues_match_whole_words_only() {
        assert_eq!(detect("vscode extension"), [Facet::Unknown]);
        assert_eq!(detect("composables"), [Facet::Unknown]);
    }

    #[test]
    fn several_facets_keep_a_fixed_order() {
        assert_eq!(
            detect("how to compare ref vs reactive"),
            [Facet::Procedure, Facet::Compare]
        );
    }

    #[test]
    fn strip_cues_leaves_the_topic() {
        assert_eq!(
            strip_cues("What is a computed property?"),
            "a computed property"
        );
        assert_eq!(strip_cues("v-if と v-show の違い"), "v if と v show の");
    }

    #[test]
    fn every_facet_round_trips_through_its_name() {
        for f in Facet::ALL {
            assert_eq!(Facet::parse(f.as_str()), Some(f));
        }
    }
}
