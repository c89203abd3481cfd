//! The default `reranker` component: lexical late interaction. Each query
//! token is matched against every token of a candidate section (heading path
//! and text, analysed by `kura-text` exactly as the index analyses them): an
//! equal token scores 1, a Latin-script word that shares character trigrams
//! with the query token scores partial credit, and the section's score is the
//! mean of the best matches over the query tokens, in [0, 1].
//!
//! The scoring lives in [`score`] as plain Rust, unit-tested natively; the
//! wit-bindgen glue at the bottom converts records and is compiled for wasm only.

pub mod score;

#[cfg(target_arch = "wasm32")]
mod glue {
    wit_bindgen::generate!({
        world: "reranker",
        path: "../../wit",
    });

    struct Component;

    impl Guest for Component {
        fn rerank(query: String, candidates: Vec<Candidate>) -> Vec<f64> {
            let sections: Vec<super::score::Section<'_>> = candidates
                .iter()
                .map(|c| super::score::Section {
                    heading: &c.heading_path,
                    text: &c.text,
                })
                .collect();
            super::score::rerank(&query, &sections)
        }
    }

    export!(Component);
}
