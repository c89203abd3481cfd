//! Host bindings of the `kura:plugins` worlds. The `types` and `log`
//! interfaces are generated once (with the write-policy world) and shared by
//! the other worlds through `with`.

pub mod write_policy {
    wasmtime::component::bindgen!({
        world: "write-policy",
        path: "../../wit",
    });
}

pub use write_policy::kura::plugins::{log, types};

pub mod reranker {
    wasmtime::component::bindgen!({
        world: "reranker",
        path: "../../wit",
        with: {
            "kura:plugins/types": super::types,
            "kura:plugins/log": super::log,
        },
    });
}

pub mod claim_graph {
    wasmtime::component::bindgen!({
        world: "claim-graph",
        path: "../../wit",
        with: {
            "kura:plugins/types": super::types,
            "kura:plugins/log": super::log,
        },
    });
}

pub mod auditor {
    wasmtime::component::bindgen!({
        world: "auditor",
        path: "../../wit",
        with: {
            "kura:plugins/types": super::types,
            "kura:plugins/log": super::log,
        },
    });
}

pub mod embedder {
    wasmtime::component::bindgen!({
        world: "embedder",
        path: "../../wit",
        with: {
            "kura:plugins/log": super::log,
        },
    });
}
