//! Which languages a body of text is written in, by share of its letters
//! (whatlang's trigram detector on each paragraph), and whether a question
//! is asked in another one (issue 55: a search says so, and suggests the
//! caller's own phrasings in the corpus's language).

use std::collections::HashMap;

use crate::error::Result;
use crate::fs::{RelPath, Root};
use schemars::JsonSchema;
use serde::Serialize;
use whatlang::{Lang, Script};

/// Files of a corpus read to judge its languages, spread over all of it,
/// and the bytes read of each.
const SAMPLE_FILES: usize = 40;
const SAMPLE_BYTES: usize = 16 << 10;

/// Shares below this are left out of a profile (stray quotes, code).
const SHARE_MIN: f64 = 0.05;
/// A paragraph longer than this is judged on its first characters.
const PARAGRAPH_CHARS: usize = 2000;

/// One language of a corpus and its share of the text.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct Share {
    /// ISO 639-3 (`jpn`, `eng`, `spa`).
    pub code: &'static str,
    /// In English (`Japanese`).
    pub name: &'static str,
    /// Of the letters (in bytes) of the paragraphs whose language was
    /// recognised, link targets and code left out.
    pub share: f64,
}

/// Letters counted per language, and per script, over the paragraphs added.
#[derive(Clone, Debug, Default)]
pub struct Profile {
    letters: HashMap<Lang, usize>,
    scripts: HashMap<Script, usize>,
}

impl Profile {
    /// Count the paragraphs of `text` (split at blank lines; fenced code is
    /// left out: it is no one's prose).
    pub fn add(&mut self, text: &str) {
        let mut fenced = false;
        let mut para = String::new();
        for line in text.lines().chain(std::iter::once("")) {
            let t = line.trim_start();
            if t.starts_with("```") || t.starts_with("~~~") {
                fenced = !fenced;
                self.paragraph(&para);
                para.clear();
                continue;
            }
            if fenced {
                continue;
            }
            if t.is_empty() {
                self.paragraph(&para);
                para.clear();
            } else {
                para.push_str(line);
                para.push('\n');
            }
        }
    }

    fn paragraph(&mut self, p: &str) {
        let p = match p.char_indices().nth(PARAGRAPH_CHARS) {
            Some((b, _)) => &p[..b],
            None => p,
        };
        // Link targets, addresses and code are no one's prose.
        static NOT_PROSE: std::sync::LazyLock<regex::Regex> = std::sync::LazyLock::new(|| {
            regex::Regex::new(r"\]\([^)]*\)|[a-z]+://\S+|`[^`]*`").expect("a valid pattern")
        });
        let p = NOT_PROSE.replace_all(p, " ");
        // Bytes, not characters: a CJK character carries about what three
        // Latin letters do, and takes three bytes.
        let letters: usize = p
            .chars()
            .filter(|c| c.is_alphabetic())
            .map(char::len_utf8)
            .sum();
        if letters < 20 {
            return; // a heading or a list of names: too short to tell
        }
        if let Some(info) = whatlang::detect(&p).filter(|i| i.is_reliable()) {
            *self.letters.entry(info.lang()).or_default() += letters;
            *self.scripts.entry(family(info.script())).or_default() += letters;
        }
    }

    /// The languages written, most first, each with at least [`SHARE_MIN`]
    /// of the letters.
    pub fn shares(&self) -> Vec<Share> {
        let total: usize = self.letters.values().sum();
        let mut out: Vec<Share> = self
            .letters
            .iter()
            .map(|(lang, n)| Share {
                code: lang.code(),
                name: lang.eng_name(),
                share: (*n as f64 / total.max(1) as f64 * 100.0).round() / 100.0,
            })
            .filter(|s| s.share >= SHARE_MIN)
            .collect();
        out.sort_by(|a, b| b.share.total_cmp(&a.share).then(a.code.cmp(b.code)));
        out
    }
}

/// Scripts that share words: CJK ideographs are written in Chinese and in
/// Japanese (a Japanese question of kanji alone reads as Chinese).
fn family(s: Script) -> Script {
    match s {
        Script::Hiragana | Script::Katakana | Script::Mandarin => Script::Mandarin,
        other => other,
    }
}

impl Profile {
    /// The language `question` is asked in when the corpus is not written
    /// in it: its script holds less than a tenth of the corpus's letters,
    /// or (in a script of words between spaces) it is recognised reliably
    /// as a language with less than a tenth. None when it matches or cannot
    /// be told (a few names, a short phrase; CJK is judged by script alone:
    /// a Japanese question of kanji reads as Chinese).
    pub fn other_language(&self, question: &str) -> Option<&'static str> {
        let total: usize = self.letters.values().sum();
        if total == 0 {
            return None;
        }
        let info = whatlang::detect(question)?;
        let script = family(info.script());
        let tenth = |n: Option<&usize>| n.copied().unwrap_or(0) * 10 >= total;
        if !tenth(self.scripts.get(&script)) {
            return Some(info.lang().eng_name());
        }
        let judged = script != Script::Mandarin && info.is_reliable();
        (judged && !tenth(self.letters.get(&info.lang()))).then(|| info.lang().eng_name())
    }

    /// Count `other`'s letters too.
    pub fn merge(&mut self, other: &Profile) {
        for (l, n) in &other.letters {
            *self.letters.entry(*l).or_default() += n;
        }
        for (s, n) in &other.scripts {
            *self.scripts.entry(*s).or_default() += n;
        }
    }
}

/// A corpus's languages and size.
pub struct Written {
    pub profile: Profile,
    /// The files `keep` kept, and their bytes.
    pub files: u64,
    pub bytes: u64,
}

/// What the files under `dir` that `keep` keeps are written in, judged on
/// [`SAMPLE_FILES`] of them spread over the whole (the first
/// [`SAMPLE_BYTES`] of each).
pub fn written(root: &Root, dir: &RelPath, keep: impl Fn(&RelPath) -> bool) -> Result<Written> {
    let files: Vec<_> = root
        .walk_files(dir)?
        .into_iter()
        .filter(|(p, _)| keep(p))
        .collect();
    let mut profile = Profile::default();
    let step = files.len().div_ceil(SAMPLE_FILES).max(1);
    for (path, _) in files.iter().step_by(step) {
        if let Ok(bytes) = root.read(path) {
            let head = &bytes[..bytes.len().min(SAMPLE_BYTES)];
            profile.add(&String::from_utf8_lossy(head));
        }
    }
    Ok(Written {
        profile,
        files: files.len() as u64,
        bytes: files.iter().map(|(_, s)| s.size).sum(),
    })
}

/// What the folders of a corpus are written in, each judged once per
/// index generation (a judgement reads a sample of files: not at every
/// search).
#[derive(Default)]
pub struct Judged(std::sync::Mutex<HashMap<String, (u64, std::sync::Arc<Written>)>>);

impl Judged {
    /// [`written`] of `dir` under `root`, as judged at `generation`, or
    /// judged now.
    pub fn of(
        &self,
        generation: u64,
        root: &Root,
        dir: &RelPath,
        keep: impl Fn(&RelPath) -> bool,
    ) -> Result<std::sync::Arc<Written>> {
        let key = dir.to_string();
        let held = self
            .0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .cloned();
        if let Some((g, w)) = held
            && g == generation
        {
            return Ok(w);
        }
        let w = std::sync::Arc::new(written(root, dir, keep)?);
        self.0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, (generation, w.clone()));
        Ok(w)
    }
}

/// The one sentence a search says, when its caller gave no `queries`,
/// about a `question` in another language than the corpus (`what`: "the
/// manual is", "the notes are") or one that found little (`weak`): the
/// corpus's main languages, and what to pass.
pub fn hint(profile: &Profile, question: &str, what: &str, weak: bool) -> Option<String> {
    let shares = profile.shares();
    let main = shares.first()?;
    let written: Vec<String> = shares
        .iter()
        .take(3)
        .map(|s| format!("{} ({:.0}%)", s.name, s.share * 100.0))
        .collect();
    let written = format!("{what} written in {}", written.join(", "));
    let languages = if shares.len() > 1 {
        "each of those languages".to_owned()
    } else {
        main.name.to_owned()
    };
    let pass =
        format!("pass `queries` with the question in {languages} and terms the text would use");
    match profile.other_language(question) {
        Some(asked) => Some(format!(
            "the question reads as {asked} and {written}: {pass}"
        )),
        None if weak => Some(format!(
            "few of the question's words were found, and {written}: {pass}"
        )),
        None => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(texts: &[&str]) -> Profile {
        let mut p = Profile::default();
        for t in texts {
            p.add(t);
        }
        p
    }

    fn profile(texts: &[&str]) -> Vec<Share> {
        of(texts).shares()
    }

    const JA: &str = "算出プロパティはリアクティブな依存関係に基づいてキャッシュされます。依存関係が変わったときにだけ再評価されます。";
    const EN: &str = "A computed property is cached based on its reactive dependencies and only re-evaluated when one of them changes.";
    const ES: &str = "Una propiedad calculada se guarda en caché según sus dependencias reactivas y solo se vuelve a evaluar cuando cambian.";

    #[test]
    #[allow(clippy::disallowed_methods)] // the test writes the corpus as a person would
    fn a_corpus_is_judged_again_only_when_its_index_changed() {
        let t = tempfile::tempdir().unwrap();
        let file = t.path().join("a.md");
        std::fs::write(&file, EN).unwrap();
        let root = Root::open(t.path()).unwrap();
        let judged = Judged::default();
        let main = |generation| {
            let w = judged
                .of(generation, &root, &RelPath::root(), |_| true)
                .unwrap();
            w.profile.shares()[0].code
        };
        assert_eq!(main(1), "eng");
        std::fs::write(&file, JA).unwrap();
        assert_eq!(main(1), "eng", "kept while the index is the same");
        assert_eq!(main(2), "jpn");
    }

    #[test]
    fn a_corpus_of_one_language_is_all_of_it() {
        let shares = profile(&[JA, JA]);
        assert_eq!(shares.len(), 1);
        assert_eq!((shares[0].code, shares[0].share), ("jpn", 1.0));
    }

    #[test]
    fn a_mixed_corpus_gives_each_language_its_share_and_code_to_none() {
        let text = format!("{EN}\n\n{ES}\n\n```\nlet x = computed(() => a + b);\n```\n\n{EN}\n");
        let shares = profile(&[&text]);
        let codes: Vec<&str> = shares.iter().map(|s| s.code).collect();
        assert_eq!(codes, ["eng", "spa"]);
        assert!(shares[0].share > shares[1].share);
    }

    #[test]
    fn a_question_in_another_language_is_told_apart() {
        let english = of(&[EN]);
        assert_eq!(
            english.other_language("ファイルのパーミッションを変更するには"),
            Some("Japanese")
        );
        let japanese = of(&[JA]);
        assert_eq!(japanese.other_language("標準出力"), None, "kanji alone");
        let question = "how do I change the permissions of a file";
        assert_eq!(japanese.other_language(question), Some("English"));
        assert_eq!(english.other_language(question), None);
        let said = hint(
            &english,
            "ファイルのパーミッションを変更するには",
            "the notes are",
            false,
        );
        assert!(said.is_some_and(|s| s.contains("Japanese") && s.contains("English (100%)")));
        assert_eq!(hint(&english, question, "the notes are", false), None);
        assert!(hint(&english, question, "the notes are", true).is_some());
    }
}
