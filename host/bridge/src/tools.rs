//! The bridge tools' declarations: name, title, descriptions, effect and a
//! handler whose signature gives the input and output types.

use crate::domain::{Effect, ToolDef, Typed};
use crate::{Bridge, DOMAIN};

pub static TOOLS: &[ToolDef] = &[
    ToolDef {
        name: "bridge_copy_section",
        title: "Copy manual section",
        domain: &DOMAIN,
        description: "Copy a manual section into a vault note, server-side; vault write policy applies.",
        details: "Copy one section of a manual into a vault note inside the server (the text is not returned). \
                      `from_ref` is manual_read's `ref` ({manual_id, path, start_line}); the text copied is exactly what \
                      manual_read returns for it (a .md section; a .json file whole). The destination follows the vault \
                      write policy (.system/ forbidden, daily/ append-only); `overwrite` creates a missing note.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: crate::CopySectionInput, _| d.get::<Bridge>()?.copy_section(i)),
    },
    ToolDef {
        name: "bridge_copy_file",
        title: "Copy manual file",
        domain: &DOMAIN,
        description: "Copy a whole manual file (.json; .md with ALLOW_FILE_SCOPE) into a vault note; vault write policy applies.",
        details: "Copy a whole manual file into a vault note inside the server (the text is not returned). A .json file \
                      always; a .md file only when the server allows file scope (ALLOW_FILE_SCOPE=true) and \
                      limits.allow_file=true. The destination follows the vault write policy.",
        effect: Effect::Destructive { idempotent: false },
        handler: &Typed(|d, i: crate::CopyFileInput, _| d.get::<Bridge>()?.copy_file(i)),
    },
];
