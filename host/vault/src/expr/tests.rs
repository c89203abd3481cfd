//! The expression language against a small vault: each documented
//! construct, and what is refused.

use serde_json::{Value, json};

use super::eval::{Env, Row, Vars};
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
    ("inbox.md", "A loose note with #Book/Later\n"),
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
        // Durations past any calendar give nothing, never an overflow.
        ("today() + \"99999999999999999999 years\"", Value::Null),
        (
            "today() + duration(\"9999999999999999 d\") * 99999999999999",
            Value::Null,
        ),
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
}

#[test]
fn constructs_kura_does_not_evaluate_are_refused_with_their_column() {
    for (text, column, says) in [
        ("values.sum()", 8, "sum()"),
        ("title.upper()", 7, "upper()"),
        ("dataview(x)", 1, "dataview()"),
        ("a = 1", 3, "=="),
        ("{a: 1}", 1, "object literal"),
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
