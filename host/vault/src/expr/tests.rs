//! The expression language against a small vault: each documented
//! construct, and what is refused.

use serde_json::{Value, json};

use super::env::Env;
use super::eval::{Row, Vars};
use super::time::Date;
use super::types::Types;
use super::value::FileRef;
use crate::graph::Graph;
use crate::graph::resolve::Names;

const NOTES: &[(&str, &str)] = &[
    (
        "books/Dune.md",
        "---\ntitle: Dune\nrating: 5\nprice: 12.5\nage: 5\nstatus: done\nread: 2024-03-01\nauthors: [\"[[Frank Herbert]]\", Someone]\ntags: [book, scifi/classic]\n---\nSee [[Frank Herbert]] and ![[cover.png]] #favourite\n",
    ),
    (
        "books/Emma.md",
        "---\ntitle: Emma\nrating: 3\nprice: 8\nage: 4\nstatus: reading\ntags: book\n---\nNo links.\n",
    ),
    (
        "people/Frank Herbert.md",
        "---\nborn: 1920-10-08\n---\nWrote [[Dune]].\n",
    ),
    ("books/Dune.md", "A loose note with #Book/Later\n"),
];

struct Vault {
    _dir: tempfile::TempDir,
    root: crate::fs::Root,
    graph: Graph,
    others: Names,
    types: Types,
}

fn vault() -> Vault {
    let dir = tempfile::tempdir().unwrap();
    let root = crate::fs::Root::open(dir.path()).unwrap();
    Vault {
        _dir: dir,
        root,
        graph: crate::graph::tests::graph(NOTES),
        others: Names::new(vec!["cover.png".to_owned()]),
        types: Types::default(),
    }
}

/// 2026-11-29 12:00 in the machine's time zone.
fn now() -> i64 {
    Date::parse("2026-11-29T12:00:00").unwrap().ms
}

fn env(v: &Vault) -> Env<'_> {
    Env {
        graph: &v.graph,
        others: &v.others,
        root: &v.root,
        types: &v.types,
        now: now(),
        this: Some(FileRef::Note(2)),
        formulas: &[],
        budget: budget(60_000),
        statuses: crate::graph::tasks::Statuses::defaults(),
    }
}

/// A budget of `ms` from now.
fn budget(ms: u64) -> super::env::Budget<'static> {
    super::env::Budget {
        deadline: std::time::Instant::now() + std::time::Duration::from_millis(ms),
        ms,
        job: crate::job::Job::default(),
    }
}

/// `text` evaluated for note `path`, as a tool returns it.
fn eval_at(v: &Vault, path: &str, text: &str) -> Result<Value, String> {
    let e = super::parse(text, false).map_err(|f| format!("{} @{}", f.message, f.at))?;
    let env = env(v);
    let i = v.graph.find(path).unwrap();
    let row = Row::new(FileRef::Note(i as u32), 0);
    env.eval(&e, &row, Vars::default())
        .map(|x| env.json_of(&x))
        .map_err(|f| format!("{} @{}", f.message, f.at))
}

#[test]
fn each_documented_construct_evaluates_as_obsidian_documents_it() {
    let v = vault();
    let dune = "books/Dune.md";
    for (text, want) in [
        // Arithmetic, comparison, booleans, precedence.
        ("price * 2 + 1", json!(26)),
        ("(price / age).toFixed(2)", json!("2.50")),
        ("price % 5", json!(2.5)),
        ("rating >= 4 && status == \"done\"", json!(true)),
        ("rating > 5 || !(status != 'done')", json!(true)),
        ("-rating", json!(-5)),
        // Texts.
        ("title + \" (\" + rating + \")\"", json!("Dune (5)")),
        ("title.lower().contains(\"du\")", json!(true)),
        ("title.length", json!(4)),
        ("\"a,b,c,d\".replace(/,/, \"-\")", json!("a-b,c,d")),
        ("\"a,b,c,d\".replace(/,/g, \"-\")", json!("a-b-c-d")),
        ("\"a,b,c,d\".split(\",\", 3)", json!(["a", "b", "c"])),
        ("\"hello world\".title()", json!("Hello World")),
        ("\"hello\".slice(1, 4)", json!("ell")),
        ("\"hello\".containsAny(\"x\", \"e\")", json!(true)),
        ("/abc/.matches(\"xabcx\")", json!(true)),
        // Lists.
        ("[1,2,3,4].filter(value > 2)", json!([3, 4])),
        ("[1,2,3].map(value + index)", json!([1, 3, 5])),
        ("[1,2,3].reduce(acc + value, 0)", json!(6)),
        ("[3,1,2].sort().reverse().join(\"-\")", json!("3-2-1")),
        ("[1,[2,3]].flat().length", json!(3)),
        ("[1,2,2,3].unique()", json!([1, 2, 3])),
        ("authors[1]", json!("Someone")),
        ("list(title)", json!(["Dune"])),
        ("max(1, rating, 3)", json!(5)),
        ("if(price > 10, \"dear\", \"cheap\")", json!("dear")),
        ("if(missing, \"x\")", Value::Null),
        ("number(\"3.4\") + 1", json!(4.4)),
        // Dates and durations.
        (
            "date(\"2024-12-01\") + \"1M\" + \"4h\" + \"3m\"",
            json!("2025-01-01T04:03:00"),
        ),
        ("read.format(\"YYYY-MM-DD\")", json!("2024-03-01")),
        ("read.year", json!(2024)),
        ("read < today()", json!(true)),
        ("today() + \"1 week\"", json!("2026-12-06")),
        ("(now() + \"1d\") - now()", json!(86_400_000)),
        ("now() + duration(\"1d\") * 2", json!("2026-12-01T12:00:00")),
        ("read.relative()", json!("3 years ago")),
        // Files, links, note and formula prefixes, this.
        ("file.name", json!("Dune.md")),
        ("file.basename", json!("Dune")),
        ("file.folder", json!("books")),
        ("file.ext", json!("md")),
        ("file.path", json!("books/Dune.md")),
        ("note.rating == note[\"rating\"]", json!(true)),
        ("file.hasTag(\"scifi\")", json!(true)),
        ("file.hasTag(\"favourite\", \"nothing\")", json!(true)),
        ("file.hasTag(\"sci\")", json!(false)),
        ("file.inFolder(\"books\")", json!(true)),
        ("file.hasLink(\"Frank Herbert\")", json!(true)),
        ("file.hasLink(this)", json!(true)),
        ("file.hasLink(\"cover.png\")", json!(true)),
        ("file.hasProperty(\"price\")", json!(true)),
        // Each link, the front matter's too.
        (
            "file.links",
            json!(["people/Frank Herbert.md", "people/Frank Herbert.md"]),
        ),
        ("file.embeds", json!(["cover.png"])),
        ("file.backlinks", json!(["people/Frank Herbert.md"])),
        ("file.tags.contains(\"#book\")", json!(true)),
        ("authors.contains(this)", json!(true)),
        ("authors[0] == this", json!(true)),
        (
            "authors[0].asFile().file.path",
            json!("people/Frank Herbert.md"),
        ),
        ("link(\"Dune\") == file", json!(true)),
        ("this.file.name", json!("Frank Herbert.md")),
        ("this.born.year", json!(1920)),
        ("file.properties.status", json!("done")),
        ("file.properties.keys().length", json!(8)),
        // Any value.
        ("title.isTruthy()", json!(true)),
        ("missing.isEmpty()", json!(true)),
        ("rating.isType(\"number\")", json!(true)),
        ("123.toString()", json!("123")),
        ("!missing.contains(\"x\")", json!(true)),
    ] {
        assert_eq!(eval_at(&v, dune, text), Ok(want.clone()), "{text}");
    }
    // Durations past any calendar are refused by name (a date past
    // JavaScript's range), never an overflow or a date shown as 1970.
    // A part of a day scales into hours.
    assert_eq!(
        eval_at(&v, dune, "(now() + duration(\"1d\") * 0.5) - now()"),
        Ok(json!(43_200_000))
    );
    // Past the calendar's years (chrono's ±262,142) but within
    // JavaScript's: refused too, never shown as 1970; formatting a date
    // at the calendar's end does not panic.
    assert!(
        eval_at(&v, dune, "date(\"2026-01-01\") + \"8600000000000s\"")
            .unwrap_err()
            .contains("range")
    );
    let _ = eval_at(
        &v,
        dune,
        "(date(\"2026-01-01\") - \"264169y\").format(\"w gggg\")",
    );
    for text in [
        "today() + \"99999999999999999999 years\"",
        "today() + duration(\"9999999999999999 d\") * 99999999999999",
        "date(\"2026-01-01\") + \"9999999999999s\"",
    ] {
        let e = eval_at(&v, dune, text).unwrap_err();
        assert!(e.contains("range"), "{text}: {e}");
    }
}

#[test]
fn constructs_kura_does_not_evaluate_are_refused_with_their_column() {
    for (text, column, says) in [
        ("values.sum()", 8, "sum()"),
        ("title.upper()", 7, "upper()"),
        ("dataview(x)", 1, "dataview()"),
        ("a = 1", 3, "=="),
        ("{a 1}", 4, "`:`"),
        ("file.nothing", 1, "file.nothing"),
        ("rating >", 9, "the end"),
        ("/x/y.matches(a)", 1, "flag `y`"),
        ("\"open", 1, "never closed"),
        ("this.formula.x", 1, "this.formula"),
    ] {
        let f = super::parse(text, false).unwrap_err();
        assert!(f.message.contains(says), "{text}: {}", f.message);
        assert_eq!(f.at, column, "{text}: {}", f.message);
    }
}

#[test]
fn a_formula_that_refers_to_itself_fails_for_its_file_alone() {
    let v = vault();
    let formulas = vec![
        (
            "a".to_owned(),
            super::parse("formula.b + 1", false).unwrap(),
        ),
        ("b".to_owned(), super::parse("formula.a", false).unwrap()),
        (
            "ppu".to_owned(),
            super::parse("price / age", false).unwrap(),
        ),
    ];
    let env = Env {
        formulas: &formulas,
        ..env(&v)
    };
    let row = Row::new(FileRef::Note(0), formulas.len());
    let e = super::parse("formula.a", false).unwrap();
    let f = env.eval(&e, &row, Vars::default()).unwrap_err();
    assert!(f.message.contains("refers to itself"), "{}", f.message);
    let e = super::parse("formula.ppu * 2", false).unwrap();
    assert_eq!(
        env.json_of(&env.eval(&e, &row, Vars::default()).unwrap()),
        json!(5)
    );
}

#[test]
fn a_malformed_typed_property_is_a_fault_of_its_file() {
    let mut v = vault();
    v.types = Types::parse(br#"{"types": {"rating": "number", "status": "number"}}"#).unwrap();
    assert_eq!(eval_at(&v, "books/Dune.md", "rating + 1"), Ok(json!(6)));
    let e = super::parse("status > 1", false).unwrap();
    let env = env(&v);
    let f = env
        .eval(&e, &Row::new(FileRef::Note(0), 0), Vars::default())
        .unwrap_err();
    assert!(f.malformed, "{f:?}");
}

#[test]
fn a_conjunction_with_a_tag_narrows_to_the_tag_s_notes() {
    for (text, tag) in [
        ("file.hasTag(\"Book\") && rating > 3", Some("book")),
        ("rating > 3 && file.hasTag(\"#a/b\")", Some("a/b")),
        ("file.hasTag(\"a\") || rating > 3", None),
        ("!file.hasTag(\"a\")", None),
    ] {
        assert_eq!(
            super::required_tag(&super::parse(text, false).unwrap()).as_deref(),
            tag,
            "{text}"
        );
    }
}

#[test]
fn a_huge_or_deeply_nested_expression_is_refused_not_a_stack_overflow() {
    let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
    let f = super::parse(&deep, false).unwrap_err();
    assert!(f.message.contains("nested"), "{}", f.message);
    let long = vec!["1"; 100_000].join(" + ");
    let f = super::parse(&long, false).unwrap_err();
    assert!(f.message.contains("tokens"), "{}", f.message);
    let negated = format!("{}x", "!".repeat(500));
    assert!(super::parse(&negated, false).is_err());
    // A list doubled at each step stops at its bound, with a fault.
    let v = vault();
    let r = eval_at(
        &v,
        "books/Dune.md",
        "[1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20].reduce(acc + acc, [1]).length",
    );
    assert!(r.unwrap_err().contains("items"));
}

#[test]
fn a_summary_reads_its_values_only() {
    assert!(super::parse("values.mean().round(2)", true).is_ok());
    let f = super::parse("values.length + price", true).unwrap_err();
    assert!(f.message.contains("values"), "{}", f.message);
    assert!(super::parse("file.size", true).is_err());
}

#[test]
fn what_an_expression_builds_is_bounded_whatever_it_is_asked() {
    let v = vault();
    for text in [
        "\"x\".repeat(1048576).split(\"\").join(\"y\".repeat(1048576))",
        "\"x\".repeat(1048576).replace(\"\", \"y\".repeat(1048576))",
        "\"x\".repeat(4096).split(\"\").map(\"y\".repeat(1048576))",
        "\"x\".repeat(64).split(\"\").reduce([acc, acc], 0)",
    ] {
        let r = eval_at(&v, "books/Dune.md", text);
        assert!(r.is_err(), "{text}: {r:?}");
    }
}

#[test]
fn formulas_using_formulas_stop_at_a_depth() {
    let v = vault();
    let formulas: Vec<(String, super::parse::Ex)> = (0..200)
        .map(|k| {
            let text = if k == 0 {
                "1".to_owned()
            } else {
                format!("formula.f{} + 1", k - 1)
            };
            (format!("f{k}"), super::parse(&text, false).unwrap())
        })
        .collect();
    let env = Env {
        formulas: &formulas,
        ..env(&v)
    };
    let row = Row::new(FileRef::Note(0), formulas.len());
    let ok = super::parse("formula.f20", false).unwrap();
    assert_eq!(
        env.json_of(&env.eval(&ok, &row, Vars::default()).unwrap()),
        json!(21)
    );
    let deep = super::parse("formula.f199", false).unwrap();
    let row = Row::new(FileRef::Note(0), formulas.len());
    let f = env.eval(&deep, &row, Vars::default()).unwrap_err();
    assert!(f.message.contains("deep"), "{}", f.message);
}

/// The issue's 24-token filter: 200,000 one-letter texts joined by
/// `reduce`. Each item copied the whole text so far (4.9 s); added in
/// place, it is linear.
#[test]
fn a_reduce_that_joins_texts_adds_in_place() {
    let v = vault();
    let start = std::time::Instant::now();
    let got = eval_at(
        &v,
        "books/Dune.md",
        "\"x\".repeat(200000).split(\"\").reduce(acc + value, \"\").length",
    );
    assert_eq!(got, Ok(json!(200000)));
    // Generous for a debug build on a busy machine; quadratic took 4.9 s
    // in release.
    assert!(
        start.elapsed() < std::time::Duration::from_secs(3),
        "{:?}",
        start.elapsed()
    );
    let lists = eval_at(
        &v,
        "books/Dune.md",
        "[1, 2, 3].reduce(acc + [value * 2], [])",
    );
    assert_eq!(lists, Ok(json!([2, 4, 6])));
    // The accumulator read inside what is added to it: as JavaScript.
    let chained = eval_at(
        &v,
        "books/Dune.md",
        "[\"a\", \"b\"].reduce(acc + (value + acc.length), \"\")",
    );
    assert_eq!(chained, Ok(json!("a0b2")));
    // An accumulator that stays empty holds nothing, however heavy what
    // is added to it.
    let none = eval_at(
        &v,
        "books/Dune.md",
        "[1, 2, 3, 4, 5].reduce(acc + \"x\".repeat(1000000), null)",
    );
    assert_eq!(none, Ok(json!(null)));
}

/// Every evaluation has a deadline: an expression that would run for
/// minutes (nested per-item methods over long lists) stops at its budget
/// with a fault that stops the whole query, naming the budget.
#[test]
fn an_expression_stops_at_its_budget() {
    let v = vault();
    let env = Env {
        budget: budget(200),
        ..env(&v)
    };
    let e = super::parse(
        "list(\"x\".repeat(60000).split(\"\")).map(list(\"y\".repeat(60000).split(\"\")).filter(value == \"z\").length).length",
        false,
    )
    .unwrap();
    let start = std::time::Instant::now();
    let f = env
        .eval(&e, &Row::new(FileRef::Note(0), 0), Vars::default())
        .unwrap_err();
    assert!(
        start.elapsed() < std::time::Duration::from_secs(2),
        "{:?}",
        start.elapsed()
    );
    assert_eq!(f.stop, Some(super::Stop::Budget), "{f:?}");
    let e = f.stopped("the filter", "…").unwrap();
    assert_eq!(e.code, crate::error::Code::Timeout);
    assert!(e.message.contains("200 ms"), "{}", e.message);
}

/// A cancelled call stops its query at the next look.
#[test]
fn a_cancelled_call_stops_its_expression() {
    let v = vault();
    let cancelled = || true;
    let env = Env {
        budget: super::env::Budget {
            job: crate::job::Job::new(None, Some(&cancelled)),
            ..budget(60_000)
        },
        ..env(&v)
    };
    let e = super::parse(
        "list(\"x\".repeat(60000).split(\"\")).filter(value == \"x\").length",
        false,
    )
    .unwrap();
    let f = env
        .eval(&e, &Row::new(FileRef::Note(0), 0), Vars::default())
        .unwrap_err();
    assert_eq!(f.stop, Some(super::Stop::Cancelled), "{f:?}");
    assert_eq!(
        f.stopped("the filter", "…").unwrap().code,
        crate::error::Code::Cancelled
    );
}

/// Evaluation nests at most `MAX_NEST` deep, and that deep fits on a
/// stack half the size of the threads queries run on: a chain of formulas,
/// each a long left-leaning sum of the next, is refused by name, never a
/// stack overflow (which aborts the process).
#[test]
fn deep_formula_chains_are_refused_not_a_stack_overflow() {
    let sum = |next: &str| {
        let mut t = format!("formula.{next}");
        for _ in 0..400 {
            t.push_str(" + 1");
        }
        t
    };
    let formulas: Vec<(String, super::parse::Ex)> = (0..30)
        .map(|k| {
            let text = if k == 29 {
                "1".to_owned()
            } else {
                sum(&format!("f{}", k + 1))
            };
            (format!("f{k}"), super::parse(&text, false).unwrap())
        })
        .collect();
    let got = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let v = vault();
            let env = Env {
                formulas: &formulas,
                ..env(&v)
            };
            let e = super::parse("formula.f0", false).unwrap();
            env.eval(
                &e,
                &Row::new(FileRef::Note(0), formulas.len()),
                Vars::default(),
            )
            .map_err(|f| f.message)
        })
        .unwrap()
        .join()
        .unwrap();
    let message = got.unwrap_err();
    assert!(message.contains("nested more than"), "{message}");
    // Nearly as deep as allowed (two formulas of 400 additions each, about
    // 800 levels), on the same stack: evaluated.
    let ok = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let v = vault();
            let formulas: Vec<(String, super::parse::Ex)> = vec![
                ("f0".to_owned(), super::parse(&sum("f1"), false).unwrap()),
                (
                    "f1".to_owned(),
                    super::parse(&sum("f2").replacen("formula.f2", "1", 1), false).unwrap(),
                ),
            ];
            let env = Env {
                formulas: &formulas,
                ..env(&v)
            };
            let e = super::parse("formula.f0", false).unwrap();
            env.eval(&e, &Row::new(FileRef::Note(0), 2), Vars::default())
                .map(|x| env.json_of(&x))
                .map_err(|f| f.message)
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(ok, Ok(json!(801)));
}

/// Obsidian's help, Bases › Functions (`en/Bases/Functions.md`): every
/// "Example: … returns …" that needs no particular note, in the page's
/// order by section, evaluated as written. Where the page's example is
/// not an expression alone, the note says how it is taken.
#[test]
fn obsidian_s_functions_page_examples_return_what_it_documents() {
    let v = vault();
    let examples: &[(&str, &str, Value)] = &[
        // Global
        ("list()", "list(\"value\")", json!(["value"])),
        ("number()", "number(\"3.4\")", json!(3.4)),
        (
            "duration(): on the left of `*`",
            "date(\"2026-01-01\") + (duration(\"1d\") * 2) == date(\"2026-01-03\")",
            json!(true),
        ),
        // Any
        ("isTruthy()", "1.isTruthy()", json!(true)),
        ("isType()", "\"example\".isType(\"string\")", json!(true)),
        ("isType()", "true.isType(\"boolean\")", json!(true)),
        ("toString()", "123.toString()", json!("123")),
        // Date
        (
            "date.date(): the time removed",
            "now().date().format(\"HH:mm:ss\")",
            json!("00:00:00"),
        ),
        (
            "format(): the page's `date` is a date property",
            "date(\"2025-05-27\").format(\"YYYY-MM-DD\")",
            json!("2025-05-27"),
        ),
        (
            "date isEmpty()",
            "date(\"2025-05-27\").isEmpty()",
            json!(false),
        ),
        // String
        ("contains()", "\"hello\".contains(\"ell\")", json!(true)),
        (
            "containsAll()",
            "\"hello\".containsAll(\"h\", \"e\")",
            json!(true),
        ),
        (
            "containsAny()",
            "\"hello\".containsAny(\"x\", \"y\", \"e\")",
            json!(true),
        ),
        ("endsWith()", "\"hello\".endsWith(\"lo\")", json!(true)),
        ("isEmpty()", "\"Hello world\".isEmpty()", json!(false)),
        ("isEmpty()", "\"\".isEmpty()", json!(true)),
        (
            "replace(): the page prints `a-b,c,d`, a typo for the first `:` replaced",
            "\"a:b:c:d\".replace(/:/, \"-\")",
            json!("a-b:c:d"),
        ),
        (
            "replace() with g",
            "\"a:b:c:d\".replace(/:/g, \"-\")",
            json!("a-b-c-d"),
        ),
        (
            "replace() with groups (an earlier version of the page)",
            "\"John Smith\".replace(/(\\w+) (\\w+)/, \"$2, $1\")",
            json!("Smith, John"),
        ),
        ("repeat()", "\"123\".repeat(2)", json!("123123")),
        ("string reverse()", "\"hello\".reverse()", json!("olleh")),
        ("string slice()", "\"hello\".slice(1, 4)", json!("ell")),
        (
            "split()",
            "\"a,b,c,d\".split(\",\", 3)",
            json!(["a", "b", "c"]),
        ),
        (
            "split() by a pattern",
            "\"a,b,c,d\".split(/,/, 3)",
            json!(["a", "b", "c"]),
        ),
        ("startsWith()", "\"hello\".startsWith(\"he\")", json!(true)),
        ("title()", "\"hello world\".title()", json!("Hello World")),
        ("trim()", "\"  hi  \".trim()", json!("hi")),
        // Number
        ("abs()", "(-5).abs()", json!(5)),
        ("ceil()", "(2.1).ceil()", json!(3)),
        ("floor()", "(2.9).floor()", json!(2)),
        ("number isEmpty()", "5.isEmpty()", json!(false)),
        ("round()", "(2.5).round()", json!(3)),
        ("round(digits)", "(2.3333).round(2)", json!(2.33)),
        ("toFixed()", "(3.14159).toFixed(2)", json!("3.14")),
        // List
        ("list contains()", "[1,2,3].contains(2)", json!(true)),
        (
            "list containsAll()",
            "[1,2,3].containsAll(2,3)",
            json!(true),
        ),
        (
            "list containsAny()",
            "[1,2,3].containsAny(3,4)",
            json!(true),
        ),
        ("filter()", "[1,2,3,4].filter(value > 2)", json!([3, 4])),
        ("flat()", "[1,[2,3]].flat()", json!([1, 2, 3])),
        ("list isEmpty()", "[1,2,3].isEmpty()", json!(false)),
        ("join()", "[1,2,3].join(\",\")", json!("1,2,3")),
        ("map()", "[1,2,3,4].map(value + 1)", json!([2, 3, 4, 5])),
        ("reduce() (sum)", "[1,2,3].reduce(acc + value, 0)", json!(6)),
        (
            "reduce() (max): the page's `values` (a summary's) as a list",
            "[3, \"x\", 7, 1].filter(value.isType(\"number\")).reduce(if(acc == null || value > acc, value, acc), null)",
            json!(7),
        ),
        (
            "reduce() (max) of no numbers",
            "[\"x\"].filter(value.isType(\"number\")).reduce(if(acc == null || value > acc, value, acc), null)",
            json!(null),
        ),
        ("list reverse()", "[1,2,3].reverse()", json!([3, 2, 1])),
        ("list slice()", "[1,2,3,4].slice(1,3)", json!([2, 3])),
        ("sort()", "[3, 1, 2].sort()", json!([1, 2, 3])),
        (
            "sort() texts",
            "[\"c\", \"a\", \"b\"].sort()",
            json!(["a", "b", "c"]),
        ),
        ("unique()", "[1,2,2,3].unique()", json!([1, 2, 3])),
        // Object
        ("object isEmpty()", "{}.isEmpty()", json!(true)),
        ("keys()", "{\"a\": 1, \"b\": 2}.keys()", json!(["a", "b"])),
        ("values()", "{\"a\": 1, \"b\": 2}.values()", json!([1, 2])),
        // Regular expression
        ("matches()", "/abc/.matches(\"abcde\")", json!(true)),
    ];
    let mut wrong = Vec::new();
    for (what, text, want) in examples {
        let got = eval_at(&v, "books/Dune.md", text);
        if got.as_ref() != Ok(want) {
            wrong.push(format!("{what}: `{text}` gave {got:?}, documented {want}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    // `now().time()` returns "a string such as 23:59:59".
    let time = eval_at(&v, "books/Dune.md", "now().time()").unwrap();
    let time = time.as_str().unwrap();
    assert!(
        time.len() == 8 && time.as_bytes()[2] == b':' && time.as_bytes()[5] == b':',
        "{time}"
    );
}

/// Regular expressions and replacements with JavaScript's meaning, as
/// Obsidian evaluates them: `\w`, `\d` and `\b` are ASCII, and a
/// replacement's `$` forms are expanded.
#[test]
fn regular_expressions_read_as_javascript_reads_them() {
    let v = vault();
    for (text, want) in [
        ("/^\\w+$/.matches(\"café\")", json!(false)),
        ("/^\\w+$/.matches(\"cafe_1\")", json!(true)),
        ("/^[\\w-]+$/.matches(\"a-b\")", json!(true)),
        ("/\\d/.matches(\"٣\")", json!(false)),
        ("/\\bé/.matches(\"café\")", json!(true)),
        ("\"abc\".replace(/b/, \"$`|$'|$&|$$\")", json!("aa|c|b|$c")),
        ("\"a-b\".replace(/(?<x>a)/, \"[$<x>]\")", json!("[a]-b")),
        ("\"ab\".replace(/(a)/, \"$2$1\")", json!("$2ab")),
        ("\"a.b.c\".replace(\".\", \"[$&]\")", json!("a[.]b[.]c")),
        // No named group: `$<x>` is kept as written.
        ("\"a<b\".replace(\"<\", \"$<x>\")", json!("a$<x>b")),
        // Classes as JavaScript reads them: `-` after `\w` is itself,
        // `[`, `&&` are plain characters.
        ("/^[\\w-.]+$/.matches(\"a-b.c\")", json!(true)),
        ("/[\\w-z]/.matches(\"`\")", json!(false)),
        ("/[\\w-z]/.matches(\"-\")", json!(true)),
        ("/[a&&b]/.matches(\"&\")", json!(true)),
        ("/[[]/.matches(\"[\")", json!(true)),
    ] {
        assert_eq!(eval_at(&v, "books/Dune.md", text), Ok(want), "{text}");
    }
    let e = eval_at(
        &v,
        "books/Dune.md",
        "\"x\".repeat(2000).replace(/x/g, \"$'$'\").length",
    )
    .unwrap_err();
    assert!(e.contains("1 MiB"), "{e}");
    // One match whose replacement copies the rest of the text 200,000
    // times: refused as soon as it passes 1 MiB, never built whole.
    let e = eval_at(
        &v,
        "books/Dune.md",
        "\"x\".repeat(500000).replace(/x/, \"$'\".repeat(200000)).length",
    )
    .unwrap_err();
    assert!(e.contains("1 MiB"), "{e}");
    let e = super::parse("/[]/.matches(\"a\")", false).unwrap_err();
    assert!(e.message.contains("empty class"), "{}", e.message);
}

/// `toFixed` as JavaScript rounds: the exact value, a half away from zero.
#[test]
fn to_fixed_rounds_as_javascript_does() {
    let v = vault();
    for (text, want) in [
        ("(1.25).toFixed(1)", "1.3"),
        ("(2.5).toFixed(0)", "3"),
        ("(0.5).toFixed(0)", "1"),
        ("(1.005).toFixed(2)", "1.00"),
        ("(-1.5).toFixed(0)", "-2"),
        ("(9.995).toFixed(2)", "9.99"),
        ("(99.5).toFixed(0)", "100"),
        ("(-0.0001).toFixed(2)", "-0.00"),
        ("(3).toFixed(2)", "3.00"),
    ] {
        assert_eq!(
            eval_at(&v, "books/Dune.md", text),
            Ok(json!(want)),
            "{text}"
        );
    }
}

/// Obsidian's help, Bases › Bases syntax: its examples of operators,
/// dates, lists, objects and links that need no particular note.
#[test]
fn the_bases_syntax_page_s_examples_evaluate_as_it_says() {
    let v = vault();
    let dune = "books/Dune.md";
    for (text, want) in [
        // Arithmetic operators: `radius * (2 * 3.14)`, a number.
        ("5 * (2 * 3.14)", json!(31.400000000000002)),
        ("7 % 3", json!(1)),
        // Date arithmetic.
        (
            "(date(\"2024-12-01\") + \"1M\" + \"4h\" + \"3m\").format(\"YYYY-MM-DD HH:mm:ss\")",
            json!("2025-01-01 04:03:00"),
        ),
        ("(now() + \"1d\") - now()", json!(86_400_000)),
        ("(now() + \"1 hour\") - now()", json!(3_600_000)),
        ("today() + \"7d\" == today() + \"1w\"", json!(true)),
        // File properties: `file.ext == "md"` holds for a Markdown file.
        ("file.ext == \"md\"", json!(true)),
        // Numbers in parentheses; booleans without quotes.
        ("(2.5)", json!(2.5)),
        ("true && !false", json!(true)),
        // Lists by a 0-based index; objects by name or dot.
        ("[\"a\", \"b\"][0]", json!("a")),
        ("{\"sub\": 3}[\"sub\"]", json!(3)),
        ("{\"sub\": 3}.sub", json!(3)),
        ("list(\"x\")", json!(["x"])),
        // Links: equal when they point to the same file, or, pointing
        // nowhere, when their text is the same.
        (
            "link(\"Frank Herbert\") == link(\"people/Frank Herbert\")",
            json!(true),
        ),
        ("link(\"Nowhere\") == link(\"Nowhere\")", json!(true)),
        ("link(\"Nowhere\") == link(\"Elsewhere\")", json!(false)),
        ("authors[0] == link(\"Frank Herbert\")", json!(true)),
    ] {
        assert_eq!(eval_at(&v, dune, text), Ok(want.clone()), "{text}");
    }
}

/// Obsidian's help, Bases › Formulas (`en/Bases/Formulas.md`): each example
/// formula over a note holding the properties it names, the results
/// worked out by hand (JavaScript's arithmetic for the divisions).
#[test]
fn the_formulas_page_s_examples_compute_what_it_describes() {
    let dir = tempfile::tempdir().unwrap();
    let note = "---\nprice: 12.5\nquantity: 3\ntax: 1\ndiscount: 2\npart: 1\nwhole: 4\ndescription: about\nstatus: Done\ncompleted: false\nurgent: false\nimportant: true\ntags: [urgent]\ndue_date: 2020-01-01\nstart_date: 2026-01-01\ntasks: [a, b, c]\nimpact: 3\nurgency: 4\neffort: 2\nfirst_name: Ada\nlast_name: Lovelace\nmonthlyUses: 10\n---\n";
    let v = Vault {
        root: crate::fs::Root::open(dir.path()).unwrap(),
        _dir: dir,
        graph: crate::graph::tests::graph(&[("Formulas.md", note)]),
        others: Names::new(Vec::new()),
        types: Types::default(),
    };
    let formulas = vec![
        (
            "price_per_unit".to_owned(),
            super::parse("price / quantity", false).unwrap(),
        ),
        ("Owned".to_owned(), super::parse("2.6", false).unwrap()),
    ];
    let env = Env {
        formulas: &formulas,
        ..env(&v)
    };
    let row = Row::new(FileRef::Note(0), formulas.len());
    for (text, want) in [
        ("price * quantity", json!(37.5)),
        (
            "file.name + \" - \" + description",
            json!("Formulas.md - about"),
        ),
        ("formula.price_per_unit * 1.1", json!(4.583333333333334)),
        ("price + tax", json!(13.5)),
        ("price - discount", json!(10.5)),
        ("price / quantity", json!(4.166666666666667)),
        ("(part / whole) * 100", json!(25)),
        ("price > 100", json!(false)),
        ("status == \"Done\"", json!(true)),
        ("status != \"Done\"", json!(false)),
        ("!completed", json!(true)),
        ("price > 0 && quantity > 0", json!(true)),
        ("urgent || important", json!(true)),
        ("if(price, \"$\" + price.toFixed(2), \"\")", json!("$12.50")),
        ("file.name.lower()", json!("formulas.md")),
        ("tags.contains(\"urgent\")", json!(true)),
        ("due_date.format(\"YYYY-MM-DD\")", json!("2020-01-01")),
        (
            "(start_date + \"2w\").format(\"YYYY-MM-DD\")",
            json!("2026-01-15"),
        ),
        (
            "if(due_date < now() && status != \"Done\", \"Overdue\", \"\")",
            json!(""),
        ),
        ("tasks.length", json!(3)),
        ("(impact * urgency) / effort", json!(6)),
        ("first_name + \" \" + last_name", json!("Ada Lovelace")),
        ("monthlyUses * formula.Owned.round()", json!(30)),
        ("{\"name\": \"value\"}.name", json!("value")),
        ("'world'", json!("world")),
        ("(2 + 2)", json!(4)),
    ] {
        let e = super::parse(text, false).unwrap();
        let got = env
            .eval(&e, &row, Vars::default())
            .map(|x| env.json_of(&x))
            .map_err(|f| f.message);
        assert_eq!(got, Ok(want), "{text}");
    }
}
