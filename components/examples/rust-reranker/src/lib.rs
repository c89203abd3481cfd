//! A kura reranker in Rust: token overlap, scored exactly as the Python
//! (`../python-reranker`) and JavaScript (`../js-reranker`) examples.
//!
//! A candidate's score is the share of the query's tokens that also occur
//! in its heading path or text. Tokens are lower-cased ASCII words and,
//! for Japanese and Chinese, pairs of neighbouring kana/kanji (a lone
//! character on its own).
//!
//! Build: `cargo build --release --target wasm32-wasip2 -p kura-example-reranker`.

use std::collections::HashSet;

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3040..=0x30FF | 0x3400..=0x4DBF | 0x4E00..=0x9FFF)
}

/// The tokens of a text.
pub fn tokens(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut word = String::new();
    let mut run: Vec<char> = Vec::new();
    for c in text.to_lowercase().chars().chain([' ']) {
        if c.is_ascii_alphanumeric() {
            word.push(c);
        } else if !word.is_empty() {
            out.insert(std::mem::take(&mut word));
        }
        if is_cjk(c) {
            run.push(c);
        } else if !run.is_empty() {
            let n = run.len().saturating_sub(1).max(1);
            for i in 0..n {
                out.insert(run[i..(i + 2).min(run.len())].iter().collect());
            }
            run.clear();
        }
    }
    out
}

/// One score per candidate (heading path, text), in [0, 1].
pub fn rerank<'a>(query: &str, candidates: impl Iterator<Item = (&'a str, &'a str)>) -> Vec<f64> {
    let q = tokens(query);
    candidates
        .map(|(heading, text)| {
            if q.is_empty() {
                return 0.0;
            }
            let t = tokens(&format!("{heading} {text}"));
            q.iter().filter(|w| t.contains(*w)).count() as f64 / q.len() as f64
        })
        .collect()
}

#[cfg(target_arch = "wasm32")]
mod glue {
    wit_bindgen::generate!({
        world: "reranker",
        path: "../../../wit",
    });

    struct Component;

    impl Guest for Component {
        fn rerank(query: String, candidates: Vec<Candidate>) -> Vec<f64> {
            super::rerank(
                &query,
                candidates
                    .iter()
                    .map(|c| (c.heading_path.as_str(), c.text.as_str())),
            )
        }
    }

    export!(Component);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_and_cjk_pairs() {
        let t = tokens("Vue の算出プロパティ v3 字");
        assert!(t.contains("字"), "a lone character is a token");
        for want in ["vue", "v3", "の算", "算出", "出プ", "ティ"] {
            assert!(t.contains(want), "{want} in {t:?}");
        }
    }

    #[test]
    fn the_score_is_the_share_of_query_tokens_found() {
        let s = rerank(
            "computed property",
            [("Computed", "a property"), ("x", "y")].into_iter(),
        );
        assert_eq!(s, [1.0, 0.0]);
        assert_eq!(rerank("", [("a", "b")].into_iter()), [0.0]);
    }
}
