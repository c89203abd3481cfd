//! The default `write-policy` component: `.system/` is reserved, `daily/` holds
//! `YYYY-MM-DD.md` notes that are only ever created or appended to.
//!
//! The rules live in [`policy`] as plain Rust and are unit-tested natively; the
//! wit-bindgen glue below only converts records and is compiled for wasm only.

pub mod policy;

#[cfg(target_arch = "wasm32")]
mod glue {
    use super::policy;

    wit_bindgen::generate!({
        world: "write-policy",
        path: "../../wit",
    });

    use kura::plugins::types::{DenyCode, WriteKind};

    struct Component;

    impl Guest for Component {
        fn check(request: WriteRequest) -> Result<(), Denial> {
            let kind = match request.kind {
                WriteKind::Create => policy::Kind::Create,
                WriteKind::Overwrite => policy::Kind::Overwrite,
                WriteKind::Append => policy::Kind::Append,
                WriteKind::Replace => policy::Kind::Replace,
                WriteKind::CopyOverwrite => policy::Kind::CopyOverwrite,
                WriteKind::CopyAppend => policy::Kind::CopyAppend,
            };
            policy::check(kind, &request.path, request.exists).map_err(|d| Denial {
                code: match d.code {
                    policy::Code::Forbidden => DenyCode::Forbidden,
                    policy::Code::Conflict => DenyCode::Conflict,
                    policy::Code::InvalidPath => DenyCode::InvalidPath,
                },
                message: d.message,
            })
        }
    }

    export!(Component);
}
