//! A kura write policy in Rust. kura's baseline rules run first (`.system/`
//! reserved, `daily/` append-only) and hold whatever this says; return
//! `Err(Denial { .. })` to add a refusal. This one freezes `archive/`.

wit_bindgen::generate!({ world: "write-policy", path: "wit" });

use kura::plugins::types::DenyCode;

struct Component;

impl Guest for Component {
    fn check(request: WriteRequest) -> Result<(), Denial> {
        if request.path.starts_with("archive/") {
            return Err(Denial {
                code: DenyCode::Forbidden,
                message: "archive/ is frozen".into(),
            });
        }
        Ok(())
    }
}

export!(Component);
