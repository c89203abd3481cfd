//! The corpus generator: scales a folder of manuals (by default
//! `fixtures/corpora`) to N files / ~M MB. The original manuals are copied
//! unchanged (the gold set's answers stay where the gold set says), and the
//! rest are synthetic files under `<manual>/synthetic/`, each built from
//! sections of the same manual drawn at random and varied: Latin-script
//! words are sometimes misspelt, suffixed or swapped for another word of the
//! manual, CJK characters are sometimes swapped for another of the manual's,
//! so the vocabulary and the posting lists grow as a real corpus's would
//! rather than repeating the same text.

#![allow(clippy::disallowed_methods)] // a bench tool writing its own corpus, not the server

use std::path::{Path, PathBuf};

use kura::fs::RelPath;
use kura::manual::units::extract;

/// A small deterministic generator (xorshift64*), so a corpus is reproducible.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.max(1))
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }

    pub fn chance(&mut self, p: f64) -> bool {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64 <= p
    }
}

struct Manual {
    name: String,
    sections: Vec<String>,
    words: Vec<String>,
    cjk: Vec<char>,
    bytes: u64,
}

fn files_under(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => out.push(p),
                _ => {}
            }
        }
    }
    out.sort();
    out
}

fn is_cjk(c: char) -> bool {
    kura::text::tokenize::is_cjk(c)
}

/// The manuals the benchmarks' figures were measured on: a corpus is
/// scaled from these when the source folder holds them (manuals added to
/// `fixtures/corpora` later, for gold sets, would change every figure),
/// from every manual of a source folder that holds none of them.
pub const MEASURED: [&str; 5] = [
    "debian-reference-en",
    "debian-reference-es",
    "debian-reference-ja-named",
    "manpages-ja",
    "vue-docs-ja",
];

fn load(source: &Path) -> anyhow::Result<Vec<Manual>> {
    let mut manuals = Vec::new();
    let mut names: Vec<String> = std::fs::read_dir(source)?
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    if names.iter().any(|n| MEASURED.contains(&n.as_str())) {
        names.retain(|n| MEASURED.contains(&n.as_str()));
    }
    names.sort();
    for name in names {
        let mut m = Manual {
            name: name.clone(),
            sections: Vec::new(),
            words: Vec::new(),
            cjk: Vec::new(),
            bytes: 0,
        };
        for p in files_under(&source.join(&name)) {
            if p.extension().and_then(|e| e.to_str()) != Some("md") {
                continue;
            }
            let text = std::fs::read_to_string(&p)?;
            m.bytes += text.len() as u64;
            let rel = RelPath::parse("x.md", false).map_err(|e| anyhow::anyhow!(e.message))?;
            for u in extract(&rel, &text) {
                if u.body.len() > 80 {
                    m.sections.push(u.body);
                }
            }
            for w in text.split(|c: char| !c.is_alphanumeric() || is_cjk(c)) {
                if w.len() >= 4 && w.is_ascii() && m.words.len() < 200_000 {
                    m.words.push(w.to_owned());
                }
            }
            m.cjk
                .extend(text.chars().filter(|c| is_cjk(*c)).take(20_000));
        }
        if !m.sections.is_empty() {
            manuals.push(m);
        }
    }
    Ok(manuals)
}

/// One varied copy of a section.
fn vary(section: &str, m: &Manual, rng: &mut Rng) -> String {
    let mut out = String::with_capacity(section.len() + 16);
    let mut word = String::new();
    let flush = |word: &mut String, out: &mut String, rng: &mut Rng| {
        if word.is_empty() {
            return;
        }
        if word.len() >= 4 && rng.chance(0.3) {
            match rng.below(3) {
                0 if !m.words.is_empty() => out.push_str(&m.words[rng.below(m.words.len())]),
                1 => {
                    out.push_str(word);
                    out.push_str(&(rng.below(90) + 10).to_string());
                }
                _ => {
                    let mut cs: Vec<char> = word.chars().collect();
                    let i = 1 + rng.below(cs.len() - 2);
                    cs.swap(i, i + 1);
                    out.extend(cs);
                }
            }
        } else {
            out.push_str(word);
        }
        word.clear();
    };
    for c in section.chars() {
        if c.is_ascii_alphanumeric() {
            word.push(c);
            continue;
        }
        flush(&mut word, &mut out, rng);
        if is_cjk(c) && !m.cjk.is_empty() && rng.chance(0.15) {
            out.push(m.cjk[rng.below(m.cjk.len())]);
        } else {
            out.push(c);
        }
    }
    flush(&mut word, &mut out, rng);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

fn copy_tree(from: &Path, to: &Path) -> anyhow::Result<(u64, u64)> {
    let (mut files, mut bytes) = (0, 0);
    for p in files_under(from) {
        let rel = p.strip_prefix(from)?;
        let dest = to.join(rel);
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)?;
        }
        std::fs::copy(&p, &dest)?;
        if matches!(p.extension().and_then(|e| e.to_str()), Some("md" | "json")) {
            files += 1;
            bytes += std::fs::metadata(&p)?.len();
        }
    }
    Ok((files, bytes))
}

/// What was written.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct Generated {
    pub files: u64,
    pub bytes: u64,
}

/// Write the scaled corpus into `out` (which should be empty).
pub fn generate(
    source: &Path,
    out: &Path,
    files: u64,
    megabytes: u64,
    seed: u64,
) -> anyhow::Result<Generated> {
    let manuals = load(source)?;
    anyhow::ensure!(
        !manuals.is_empty(),
        "no manuals with markdown under {}",
        source.display()
    );
    let mut total = Generated { files: 0, bytes: 0 };
    for m in &manuals {
        let (f, b) = copy_tree(&source.join(&m.name), &out.join(&m.name))?;
        total.files += f;
        total.bytes += b;
    }
    let want_files = files.saturating_sub(total.files);
    let want_bytes = (megabytes << 20).saturating_sub(total.bytes);
    if want_files == 0 {
        return Ok(total);
    }
    let per_file = (want_bytes / want_files).max(512) as usize;
    let all: u64 = manuals.iter().map(|m| m.bytes).sum();
    let mut rng = Rng::new(seed);
    let mut made = 0u64;
    for (k, m) in manuals.iter().enumerate() {
        // Each manual grows in proportion to its size; the last takes the rest.
        let share = if k + 1 == manuals.len() {
            want_files - made
        } else {
            want_files * m.bytes / all.max(1)
        };
        for i in 0..share {
            let dir = out
                .join(&m.name)
                .join("synthetic")
                .join(format!("{:03}", i / 100));
            std::fs::create_dir_all(&dir)?;
            // Sizes vary from half to one and a half times the mean.
            let target = per_file / 2 + rng.below(per_file.max(1));
            let mut text = String::with_capacity(target + 4096);
            while text.len() < target {
                let s = &m.sections[rng.below(m.sections.len())];
                text.push_str(&vary(s, m, &mut rng));
                text.push('\n');
            }
            std::fs::write(dir.join(format!("{i:05}.md")), &text)?;
            total.files += 1;
            total.bytes += text.len() as u64;
        }
        made += share;
    }
    Ok(total)
}

/// Every `.md` file below `root`, depth first, each folder's entries sorted.
pub fn markdown_files(root: &Path) -> anyhow::Result<Vec<std::path::PathBuf>> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let mut entries: Vec<_> = std::fs::read_dir(&dir)?
            .flatten()
            .map(|e| e.path())
            .collect();
        entries.sort();
        for p in entries {
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|e| e == "md") {
                out.push(p);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_spread() {
        let mut a = Rng::new(7);
        let mut b = Rng::new(7);
        let xs: Vec<usize> = (0..1000).map(|_| a.below(10)).collect();
        let ys: Vec<usize> = (0..1000).map(|_| b.below(10)).collect();
        assert_eq!(xs, ys);
        for d in 0..10 {
            let n = xs.iter().filter(|x| **x == d).count();
            assert!((60..=140).contains(&n), "{d}: {n}");
        }
    }

    /// A manual added to the source for a gold set does not change the
    /// corpus the figures were measured on.
    #[test]
    fn only_the_measured_manuals_are_scaled_when_the_source_has_them() {
        let src = tempfile::tempdir().unwrap();
        let text: String = (0..5)
            .map(|i| format!("## Section {i}\n\n{}\n\n", "words of a section ".repeat(8)))
            .collect();
        for name in [MEASURED[0], "added-later"] {
            std::fs::create_dir_all(src.path().join(name)).unwrap();
            std::fs::write(src.path().join(name).join("a.md"), &text).unwrap();
        }
        let names = |src: &Path| -> Vec<String> {
            load(src).unwrap().into_iter().map(|m| m.name).collect()
        };
        assert_eq!(names(src.path()), [MEASURED[0]]);
        std::fs::remove_dir_all(src.path().join(MEASURED[0])).unwrap();
        assert_eq!(
            names(src.path()),
            ["added-later"],
            "another collection is used whole"
        );
    }

    #[test]
    fn generated_corpus_has_the_size_asked_and_varied_files() {
        let src = tempfile::tempdir().unwrap();
        let m = src.path().join("m");
        std::fs::create_dir_all(&m).unwrap();
        let mut text = String::new();
        for i in 0..30 {
            text.push_str(&format!("## Section {i}\n\nComputed properties cache values; 算出プロパティはキャッシュされます。 line {i}\n\n"));
        }
        std::fs::write(m.join("a.md"), &text).unwrap();
        let out = tempfile::tempdir().unwrap();
        let g = generate(src.path(), out.path(), 40, 1, 3).unwrap();
        assert_eq!(g.files, 40);
        assert!(g.bytes > 700_000 && g.bytes < 1_400_000, "{g:?}");
        let a = std::fs::read_to_string(out.path().join("m/synthetic/000/00000.md")).unwrap();
        let b = std::fs::read_to_string(out.path().join("m/synthetic/000/00001.md")).unwrap();
        assert_ne!(a, b);
        assert_eq!(
            std::fs::read_to_string(out.path().join("m/a.md")).unwrap(),
            text
        );
    }
}
