//! The types of a component's exports, checked against its slot's world
//! before any compile. Reading the type section takes milliseconds (function
//! bodies are skipped), so a component whose `check` has another signature
//! stops the start in one line, as a missing file does, instead of failing
//! every call once the background compile reaches the link.

use std::sync::OnceLock;

use wit_parser::decoding::{DecodedWasm, decode};
use wit_parser::{Function, Resolve, SourceMap, Type, TypeDefKind, WorldItem, WorldKey};

use crate::config::Slot;

/// kura's own worlds, parsed once from the WIT the bindings are built from.
fn kura_worlds() -> &'static Resolve {
    static WORLDS: OnceLock<Resolve> = OnceLock::new();
    WORLDS.get_or_init(|| {
        let mut map = SourceMap::default();
        map.push_str("types.wit", include_str!("../../../wit/types.wit"));
        map.push_str("worlds.wit", include_str!("../../../wit/worlds.wit"));
        let mut resolve = Resolve::default();
        // The WIT is part of the build; the unit tests parse it.
        let group = map
            .parse()
            .unwrap_or_else(|(_, e)| panic!("kura's WIT: {e}"));
        resolve
            .push_group(group)
            .unwrap_or_else(|e| panic!("kura's WIT: {e}"));
        resolve
    })
}

/// The world a slot's component implements, and the export it must have.
fn wanted(slot: Slot) -> (&'static Resolve, &'static Function) {
    let resolve = kura_worlds();
    let (world, export) = match slot {
        Slot::Reranker => ("reranker", "rerank"),
        Slot::ClaimGraph => ("claim-graph", "build"),
        Slot::Auditor => ("auditor", "audit"),
        Slot::WritePolicy => ("write-policy", "check"),
        Slot::Embedder => ("embedder", "embed"),
    };
    let world = resolve
        .worlds
        .iter()
        .find(|(_, w)| w.name == world)
        .map(|(_, w)| w)
        .expect("every slot has a world in kura's WIT");
    match world.exports.get(&WorldKey::Name(export.into())) {
        Some(WorldItem::Function(f)) => (resolve, f),
        _ => panic!("the `{}` world exports the function `{export}`", world.name),
    }
}

/// Check that the component's export has the signature its slot's world
/// gives it. The outline check has already found the export by name. The
/// error is one line, naming the first difference.
pub fn check(slot: Slot, wasm: &[u8]) -> Result<(), String> {
    let (kura, want) = wanted(slot);
    let (theirs, world) = match decode(wasm) {
        Ok(DecodedWasm::Component(resolve, world)) => (resolve, world),
        Ok(DecodedWasm::WitPackage(..)) => {
            return Err("this is a WIT package, not a component that implements it".into());
        }
        Err(e) => return Err(format!("its types cannot be read: {e}")),
    };
    let found = theirs.worlds[world]
        .exports
        .iter()
        .find(|(key, _)| theirs.name_world_key(key) == want.name)
        .map(|(_, item)| item);
    let mismatch = |what: String| {
        format!(
            "export `{}` has the wrong type: {what}; the `{slot}` world's is `{}` \
             (build it against kura's WIT: `kura plugins new` starts a project that is)",
            want.name,
            Shape(kura, None).function(want)
        )
    };
    let got = match found {
        Some(WorldItem::Function(f)) => f,
        Some(_) => return Err(mismatch("it is an interface, not a function".into())),
        // The outline check refuses a missing export first.
        None => return Err(mismatch("it is missing".into())),
    };
    if got.params.len() != want.params.len() {
        return Err(mismatch(format!(
            "it takes {} parameter(s), not {}",
            got.params.len(),
            want.params.len()
        )));
    }
    for (i, (w, g)) in want.params.iter().zip(&got.params).enumerate() {
        let at = format!("parameter {} (`{}`)", i + 1, w.name);
        same(kura, Some(w.ty), &theirs, Some(g.ty), &at).map_err(mismatch)?;
    }
    same(kura, want.result, &theirs, got.result, "the result").map_err(mismatch)
}

/// Compare two types structurally (the component model's rule: records by
/// field names and types, variants and enums by case names, no type names).
/// The error says where they first differ.
fn same(
    kura: &Resolve,
    want: Option<Type>,
    theirs: &Resolve,
    got: Option<Type>,
    at: &str,
) -> Result<(), String> {
    let differ = || {
        format!(
            "{at} is `{}`, not `{}`",
            Shape(theirs, got).short(),
            Shape(kura, want).short()
        )
    };
    let (want, got) = match (want, got) {
        (None, None) => return Ok(()),
        (Some(w), Some(g)) => (resolved(kura, w), resolved(theirs, g)),
        _ => return Err(differ()),
    };
    let (w, g) = match (want, got) {
        (Type::Id(w), Type::Id(g)) => (&kura.types[w].kind, &theirs.types[g].kind),
        (Type::Id(_), _) | (_, Type::Id(_)) => return Err(differ()),
        (w, g) => return if w == g { Ok(()) } else { Err(differ()) },
    };
    let Some(pairs) = parts(w, g, at)? else {
        return Err(differ());
    };
    for (part, w, g) in pairs {
        same(kura, w, theirs, g, &format!("{at}, {part}"))?;
    }
    Ok(())
}

/// A part of a type (a field, a case, an element) and its type on each side.
type Part = (String, Option<Type>, Option<Type>);

/// The parts of two types alike in kind, paired to compare in turn (after
/// checking their names); None when the kinds differ.
fn parts(w: &TypeDefKind, g: &TypeDefKind, at: &str) -> Result<Option<Vec<Part>>, String> {
    Ok(Some(match (w, g) {
        (TypeDefKind::Record(w), TypeDefKind::Record(g)) => {
            names(
                w.fields.iter().map(|f| &f.name),
                g.fields.iter().map(|f| &f.name),
            )
            .map_err(|e| format!("{at}: {e}"))?;
            w.fields
                .iter()
                .zip(&g.fields)
                .map(|(a, b)| (format!("field `{}`", a.name), Some(a.ty), Some(b.ty)))
                .collect()
        }
        (TypeDefKind::Variant(w), TypeDefKind::Variant(g)) => {
            names(
                w.cases.iter().map(|c| &c.name),
                g.cases.iter().map(|c| &c.name),
            )
            .map_err(|e| format!("{at}: {e}"))?;
            w.cases
                .iter()
                .zip(&g.cases)
                .map(|(a, b)| (format!("case `{}`", a.name), a.ty, b.ty))
                .collect()
        }
        (TypeDefKind::Enum(w), TypeDefKind::Enum(g)) => {
            names(
                w.cases.iter().map(|c| &c.name),
                g.cases.iter().map(|c| &c.name),
            )
            .map_err(|e| format!("{at}: {e}"))?;
            Vec::new()
        }
        (TypeDefKind::Flags(w), TypeDefKind::Flags(g)) => {
            names(
                w.flags.iter().map(|f| &f.name),
                g.flags.iter().map(|f| &f.name),
            )
            .map_err(|e| format!("{at}: {e}"))?;
            Vec::new()
        }
        (TypeDefKind::Tuple(w), TypeDefKind::Tuple(g)) if w.types.len() == g.types.len() => w
            .types
            .iter()
            .zip(&g.types)
            .enumerate()
            .map(|(i, (a, b))| (format!("element {i}"), Some(*a), Some(*b)))
            .collect(),
        (TypeDefKind::Option(w), TypeDefKind::Option(g))
        | (TypeDefKind::List(w), TypeDefKind::List(g)) => {
            vec![("the element".into(), Some(*w), Some(*g))]
        }
        (TypeDefKind::FixedLengthList(w, n), TypeDefKind::FixedLengthList(g, m)) if n == m => {
            vec![("the element".into(), Some(*w), Some(*g))]
        }
        (TypeDefKind::Map(wk, wv), TypeDefKind::Map(gk, gv)) => vec![
            ("the key".into(), Some(*wk), Some(*gk)),
            ("the value".into(), Some(*wv), Some(*gv)),
        ],
        (TypeDefKind::Result(w), TypeDefKind::Result(g)) => vec![
            ("the ok case".into(), w.ok, g.ok),
            ("the error case".into(), w.err, g.err),
        ],
        // kura's worlds pass no resources, futures or streams: alike in
        // kind is all that can be said here; the link checks the rest.
        (TypeDefKind::Resource, TypeDefKind::Resource)
        | (TypeDefKind::Handle(_), TypeDefKind::Handle(_))
        | (TypeDefKind::Future(_), TypeDefKind::Future(_))
        | (TypeDefKind::Stream(_), TypeDefKind::Stream(_)) => Vec::new(),
        _ => return Ok(None),
    }))
}

/// Two lists of names (fields, cases, flags) must be the same, in order.
fn names<'a>(
    want: impl Iterator<Item = &'a String>,
    got: impl Iterator<Item = &'a String>,
) -> Result<(), String> {
    let want: Vec<&str> = want.map(String::as_str).collect();
    let got: Vec<&str> = got.map(String::as_str).collect();
    if want == got {
        return Ok(());
    }
    let first = want
        .iter()
        .zip(&got)
        .position(|(a, b)| a != b)
        .unwrap_or(want.len().min(got.len()));
    Err(match (want.get(first), got.get(first)) {
        (Some(w), Some(g)) => format!("has `{g}` where `{w}` belongs"),
        (Some(w), None) => format!("lacks `{w}`"),
        (None, Some(g)) => format!("has `{g}`, which does not belong"),
        (None, None) => unreachable!("the lists differ"),
    })
}

/// Follow type aliases (`type a = b`) to what they name.
fn resolved(resolve: &Resolve, mut ty: Type) -> Type {
    while let Type::Id(id) = ty {
        match resolve.types[id].kind {
            TypeDefKind::Type(inner) => ty = inner,
            _ => break,
        }
    }
    ty
}

/// A type written for a message.
struct Shape<'a>(&'a Resolve, Option<Type>);

impl Shape<'_> {
    fn function(&self, f: &Function) -> String {
        let params: Vec<String> = f
            .params
            .iter()
            .map(|p| format!("{}: {}", p.name, Shape(self.0, Some(p.ty)).short()))
            .collect();
        let result = match f.result {
            Some(r) => format!(" -> {}", Shape(self.0, Some(r)).short()),
            None => String::new(),
        };
        format!("func({}){result}", params.join(", "))
    }

    /// Primitives by name, a named type by its name, anonymous ones by
    /// their shape one level deep.
    fn short(&self) -> String {
        let Some(ty) = self.1 else {
            return "nothing".into();
        };
        let id = match ty {
            Type::Id(id) => id,
            Type::Bool => return "bool".into(),
            Type::U8 => return "u8".into(),
            Type::U16 => return "u16".into(),
            Type::U32 => return "u32".into(),
            Type::U64 => return "u64".into(),
            Type::S8 => return "s8".into(),
            Type::S16 => return "s16".into(),
            Type::S32 => return "s32".into(),
            Type::S64 => return "s64".into(),
            Type::F32 => return "f32".into(),
            Type::F64 => return "f64".into(),
            Type::Char => return "char".into(),
            Type::String => return "string".into(),
            Type::ErrorContext => return "error-context".into(),
        };
        let def = &self.0.types[id];
        let inner = |t: Option<Type>| match t {
            Some(t) => Shape(self.0, Some(t)).short(),
            None => "_".into(),
        };
        match &def.kind {
            TypeDefKind::Type(t) => Shape(self.0, Some(*t)).short(),
            _ if def.name.is_some() => def.name.clone().unwrap_or_default(),
            TypeDefKind::List(t) => format!("list<{}>", inner(Some(*t))),
            TypeDefKind::Option(t) => format!("option<{}>", inner(Some(*t))),
            TypeDefKind::Result(r) => format!("result<{}, {}>", inner(r.ok), inner(r.err)),
            TypeDefKind::Tuple(t) => format!(
                "tuple<{}>",
                t.types
                    .iter()
                    .map(|t| inner(Some(*t)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            other => other.as_str().to_owned(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_has_its_export_in_kuras_wit() {
        for slot in Slot::ALL {
            let (_, f) = wanted(slot);
            assert_eq!(f.name, crate::inspect::required_exports(slot)[0], "{slot}");
        }
        let (kura, f) = wanted(Slot::WritePolicy);
        assert_eq!(
            Shape(kura, None).function(f),
            "func(request: write-request) -> result<_, denial>"
        );
    }

    #[test]
    fn the_embedded_components_have_their_worlds_types() {
        for slot in Slot::ALL {
            if let Some(wasm) = crate::embedded(slot) {
                check(slot, wasm).unwrap_or_else(|e| panic!("{slot}: {e}"));
            }
        }
    }

    #[test]
    fn a_component_of_another_world_is_told_where_its_type_differs() {
        let reranker = crate::embedded(Slot::Reranker).unwrap();
        // Its `rerank` is not the auditor's `audit`: the outline check
        // refuses that first; asked here anyway, the message is one line.
        let e = check(Slot::Auditor, reranker).unwrap_err();
        assert!(e.contains("export `audit`") && e.contains("missing"), "{e}");
        assert!(!e.contains('\n'), "{e}");
    }

    #[test]
    fn records_differ_by_a_field_name_or_type() {
        let mut map = SourceMap::default();
        map.push_str(
            "w.wit",
            "package a:b;
             interface t {
               record r { x: u32, y: string }
               record s { x: u32, z: string }
               record u { x: u32, y: u64 }
               type alias = r;
             }",
        );
        let mut resolve = Resolve::default();
        resolve
            .push_group(map.parse().map_err(|(_, e)| e).unwrap())
            .unwrap();
        let ty = |name: &str| {
            let id = resolve
                .types
                .iter()
                .find(|(_, t)| t.name.as_deref() == Some(name))
                .unwrap()
                .0;
            Some(Type::Id(id))
        };
        assert!(same(&resolve, ty("r"), &resolve, ty("alias"), "p").is_ok());
        let e = same(&resolve, ty("r"), &resolve, ty("s"), "p").unwrap_err();
        assert_eq!(e, "p: has `z` where `y` belongs");
        let e = same(&resolve, ty("r"), &resolve, ty("u"), "p").unwrap_err();
        assert_eq!(e, "p, field `y` is `u64`, not `string`");
        let e = same(&resolve, ty("r"), &resolve, Some(Type::String), "p").unwrap_err();
        assert_eq!(e, "p is `string`, not `r`");
        let e = same(&resolve, None, &resolve, Some(Type::Bool), "the result").unwrap_err();
        assert_eq!(e, "the result is `bool`, not `nothing`");
    }
}
