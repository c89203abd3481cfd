//! A kura reranker in Rust: the share of the query's words found in each
//! candidate's heading path or text, in [0, 1].

wit_bindgen::generate!({ world: "reranker", path: "wit" });

struct Component;

impl Guest for Component {
    fn rerank(query: String, candidates: Vec<Candidate>) -> Vec<f64> {
        let words: Vec<String> = query.split_whitespace().map(str::to_lowercase).collect();
        kura::plugins::log::log(
            kura::plugins::log::Level::Debug,
            &format!("{} words, {} candidates", words.len(), candidates.len()),
        );
        candidates
            .iter()
            .map(|c| {
                if words.is_empty() {
                    return 0.0;
                }
                let text = format!("{} {}", c.heading_path, c.text).to_lowercase();
                words.iter().filter(|w| text.contains(w.as_str())).count() as f64 / words.len() as f64
            })
            .collect()
    }
}

export!(Component);
