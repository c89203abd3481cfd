//! A kura embedder in Rust: a static embedding of hashed character
//! n-grams (each word, and each pair of neighbouring characters), 256
//! numbers per text. It matches spellings, not meaning: replace `features`
//! and `embed_one` with your model (its weights can be compiled in with
//! `include_bytes!`). kura scales the vectors to unit length.

wit_bindgen::generate!({ world: "embedder", path: "../../../wit" });

const DIM: usize = 256;

/// FNV-1a: a stable hash, the same in every build.
fn hash(s: &str) -> u32 {
    s.bytes().fold(0x811c_9dc5u32, |h, b| {
        (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
    })
}

/// The words of a text and the pairs of neighbouring characters in each.
fn features(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for word in text.to_lowercase().split(|c: char| !c.is_alphanumeric()) {
        let chars: Vec<char> = word.chars().collect();
        if chars.is_empty() {
            continue;
        }
        out.push(word.to_owned());
        out.extend(chars.windows(2).map(|w| w.iter().collect::<String>()));
    }
    out
}

fn embed_one(text: &str) -> Vec<f32> {
    let mut v = vec![0.0f32; DIM];
    for f in features(text) {
        let h = hash(&f);
        let sign = if h & 0x8000_0000 == 0 { 1.0 } else { -1.0 };
        v[h as usize % DIM] += sign;
    }
    v
}

struct Component;

impl Guest for Component {
    fn embed(texts: Vec<String>) -> Vec<Vec<f32>> {
        kura::plugins::log::log(
            kura::plugins::log::Level::Debug,
            &format!("{} texts", texts.len()),
        );
        texts.iter().map(|t| embed_one(t)).collect()
    }
}

export!(Component);
