//! A component's outline, read without compiling it: what it imports and
//! exports at its top level. This takes milliseconds even for an 18 MB
//! componentize-py build, so start-up can refuse a file that is not a
//! component, implements another world or needs an import kura does not
//! provide — in one line that says what to do — before any compile.

use wasmparser::{Chunk, Encoding, Parser, Payload};

use crate::config::Slot;

/// The top-level imports and exports of a component.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Outline {
    pub imports: Vec<String>,
    pub exports: Vec<String>,
}

/// The interfaces kura links for every component: WASI 0.2 with nothing
/// granted (no folders, no network, no environment, no arguments; clocks
/// and random are real; stdout and stderr go to kura's log) and the world's
/// own `kura:plugins` interfaces.
pub const PROVIDED: &[&str] = &[
    "wasi:cli",
    "wasi:clocks",
    "wasi:filesystem",
    "wasi:io",
    "wasi:random",
    "wasi:sockets",
    "kura:plugins",
];

/// Read a component's outline.
pub fn outline(wasm: &[u8]) -> Result<Outline, String> {
    let mut out = Outline::default();
    let mut parser = Parser::new(0);
    let mut data = wasm;
    loop {
        let (payload, consumed) = match parser.parse(data, true) {
            Ok(Chunk::Parsed { payload, consumed }) => (payload, consumed),
            Ok(Chunk::NeedMoreData(_)) => return Err("the file is truncated".into()),
            Err(_) if data.len() == wasm.len() => {
                // wasmparser's message lists the expected bytes over several
                // lines; what matters is that the file is something else.
                return Err(if wasm.starts_with(b"\0asm") {
                    "a WebAssembly file of an unsupported version".into()
                } else {
                    "not a WebAssembly file (it does not start with the `\\0asm` magic)".into()
                });
            }
            Err(e) => return Err(format!("not a valid component: {e}")),
        };
        data = &data[consumed..];
        match payload {
            Payload::Version { encoding, .. } if encoding != Encoding::Component => {
                return Err(
                    "this is a core WebAssembly module, not a component: build for wasm32-wasip2 \
                     (Rust), or wrap it with `wasm-tools component new`"
                        .into(),
                );
            }
            Payload::ComponentImportSection(r) => {
                for i in r {
                    let i = i.map_err(|e| format!("not a valid component: {e}"))?;
                    out.imports.push(i.name.name.to_owned());
                }
            }
            Payload::ComponentExportSection(r) => {
                for e in r {
                    let e = e.map_err(|e| format!("not a valid component: {e}"))?;
                    out.exports.push(e.name.name.to_owned());
                }
            }
            // Nested modules and components are not part of the outline:
            // skip their bytes with the parent parser.
            Payload::ModuleSection {
                unchecked_range, ..
            }
            | Payload::ComponentSection {
                unchecked_range, ..
            } => {
                let len = unchecked_range.len();
                if len > data.len() {
                    return Err("the file is truncated".into());
                }
                data = &data[len..];
            }
            Payload::End(_) => return Ok(out),
            _ => {}
        }
    }
}

/// `wasi:http/types@0.2.3` → `wasi:http`.
fn package(import: &str) -> &str {
    import.split(['/', '@']).next().unwrap_or(import)
}

/// What to do about an import kura does not provide.
fn fix_for(package: &str) -> &'static str {
    match package {
        "wasi:http" => {
            "a component that calls a service needs the operator's grant \
             (`plugins.<slot>.http_hosts`); otherwise componentize-js adds it unless told not to: \
             build with `--disable http fetch-event` (jco componentize: `--disable http --disable \
             fetch-event`); in Rust or Python, drop the HTTP client dependency"
        }
        _ => "a plugin computes from its arguments only; remove the dependency that imports it",
    }
}

impl Outline {
    /// Check the outline against a slot's world: every export the world
    /// needs is there and every import is one kura provides. The error is
    /// one line.
    /// `http`: the slot is granted HTTP hosts, so `wasi:http` is provided.
    pub fn check(&self, slot: Slot, http: bool) -> Result<(), String> {
        let missing: Vec<&str> = required_exports(slot)
            .iter()
            .copied()
            .filter(|want| !self.exports.iter().any(|e| e == want))
            .collect();
        if !missing.is_empty() {
            return Err(format!(
                "does not implement the `{slot}` world: missing export {} (it exports: {})",
                missing
                    .iter()
                    .map(|m| format!("`{m}`"))
                    .collect::<Vec<_>>()
                    .join(", "),
                if self.exports.is_empty() {
                    "nothing".to_owned()
                } else {
                    self.exports.join(", ")
                }
            ));
        }
        let foreign: Vec<&str> = self
            .imports
            .iter()
            .map(String::as_str)
            // Plain names (`candidate`) are the world's own types.
            .filter(|i| {
                i.contains(':')
                    && !PROVIDED.contains(&package(i))
                    && !(http && package(i) == "wasi:http")
            })
            .collect();
        if let Some(first) = foreign.first() {
            return Err(format!(
                "imports `{}`, which kura does not provide (kura provides {} and nothing else); fix: {}",
                foreign.join("`, `"),
                PROVIDED.join(", "),
                fix_for(package(first))
            ));
        }
        Ok(())
    }

    /// The slot whose world this component implements, by its exports.
    pub fn slot(&self) -> Option<Slot> {
        Slot::ALL.into_iter().find(|s| {
            required_exports(*s)
                .iter()
                .all(|want| self.exports.iter().any(|e| e == want))
        })
    }
}

/// The exports each world requires.
pub fn required_exports(slot: Slot) -> &'static [&'static str] {
    match slot {
        Slot::Reranker => &["rerank"],
        Slot::ClaimGraph => &["build"],
        Slot::Auditor => &["audit"],
        Slot::WritePolicy => &["check"],
        Slot::Embedder => &["embed"],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outline_of(imports: &[&str], exports: &[&str]) -> Outline {
        Outline {
            imports: imports.iter().map(|s| s.to_string()).collect(),
            exports: exports.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn a_wasi_http_import_is_explained_with_the_fix() {
        let o = outline_of(
            &[
                "wasi:io/streams@0.2.3",
                "wasi:http/types@0.2.10",
                "kura:plugins/log@0.1.0",
            ],
            &["check"],
        );
        let e = o.check(Slot::WritePolicy, false).unwrap_err();
        assert!(e.contains("`wasi:http/types@0.2.10`"), "{e}");
        assert!(e.contains("--disable http fetch-event"), "{e}");
        assert!(e.contains("plugins.<slot>.http_hosts"), "{e}");
        assert!(!e.contains('\n'));
        // A slot granted HTTP hosts is given wasi:http.
        o.check(Slot::WritePolicy, true).unwrap();
    }

    #[test]
    fn the_world_is_found_from_the_exports() {
        let o = outline_of(&["wasi:cli/stderr@0.2.0", "candidate"], &["rerank"]);
        assert_eq!(o.slot(), Some(Slot::Reranker));
        assert!(o.check(Slot::Reranker, false).is_ok());
        let e = o.check(Slot::Auditor, false).unwrap_err();
        assert!(
            e.contains("missing export `audit`") && e.contains("rerank"),
            "{e}"
        );
    }

    #[test]
    fn files_that_are_not_components_are_named_as_such() {
        assert!(
            outline(b"this is not wasm")
                .unwrap_err()
                .contains("not a WebAssembly file")
        );
        let core = outline(b"\0asm\x01\0\0\0").unwrap_err();
        assert!(core.contains("core WebAssembly module"), "{core}");
        let empty_component = b"\0asm\x0d\0\x01\0";
        assert_eq!(outline(empty_component).unwrap(), Outline::default());
    }
}
