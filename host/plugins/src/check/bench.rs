//! What one reranker component costs per call, for `kura-bench plugins`.

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::Compiled;
use crate::config::{Config, Slot};
use crate::{Limits, RerankCandidate, Runtime, bindings};

/// One reranker component ready to be timed (for `kura-bench plugins`):
/// compiled once, then called round after round, so that a bench can
/// interleave several components and a slower stretch of the machine
/// weighs on all of them alike.
pub struct RerankBench {
    runtime: Arc<Runtime>,
    pre: bindings::reranker::RerankerPre<crate::State>,
    limits: Limits,
    grants: Arc<crate::grants::Grants>,
    pub size: usize,
    /// Cranelift, from the wasm.
    pub compile: Duration,
    /// Loading the compiled artifact (what a cached start pays).
    pub cached_load: Duration,
}

/// One round's timings of a [`RerankBench`].
#[derive(Clone, Debug)]
pub struct RerankRound {
    /// A fresh store and instance.
    pub instantiate: Duration,
    /// Instantiate and rerank no candidates for an empty query: what a call
    /// costs before the component does any work of its own.
    pub empty_call: Duration,
    /// Instantiate and rerank the candidates, as kura does per call.
    pub call: Duration,
    pub scores: Vec<f64>,
}

impl RerankBench {
    /// Compile the reranker at `path` under the slot's default limits, no
    /// grants.
    pub fn new(path: &Path) -> Result<RerankBench, String> {
        let bytes =
            crate::fs::read_operator_file(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let runtime = Runtime::new(None).map_err(|e| e.to_string())?;
        let Compiled {
            component,
            compile,
            cached_load,
            ..
        } = Compiled::new(&runtime, &bytes)?;
        let grants = Arc::default();
        let pre =
            runtime.link::<bindings::reranker::RerankerPre<crate::State>>(&component, &grants)?;
        let limits = Limits::new(
            Slot::Reranker,
            Config::default().slot_limits(Slot::Reranker),
        );
        Ok(RerankBench {
            runtime,
            pre,
            limits,
            grants,
            size: bytes.len(),
            compile,
            cached_load,
        })
    }

    /// A fresh store and instance, then `rerank(query, list)` if asked.
    fn call(
        &self,
        rerank: Option<(&str, &[bindings::types::Candidate])>,
    ) -> Result<(Duration, Vec<f64>), String> {
        let out = crate::output::Captured::default();
        let _busy = self.runtime.busy();
        let t = Instant::now();
        let mut store = self
            .runtime
            .store(Slot::Reranker, &self.limits, &self.grants, &out)?;
        let instance = self
            .pre
            .instantiate(&mut store)
            .map_err(|e| e.to_string())?;
        let scores = match rerank {
            Some((query, list)) => instance
                .call_rerank(&mut store, query, list)
                .map_err(|e| e.to_string())?,
            None => Vec::new(),
        };
        Ok((t.elapsed(), scores))
    }

    /// Time an instantiation, an empty call and a call over `candidates`.
    pub fn round(
        &self,
        query: &str,
        candidates: &[RerankCandidate<'_>],
    ) -> Result<RerankRound, String> {
        let list: Vec<bindings::types::Candidate> = candidates.iter().map(Into::into).collect();
        let (instantiate, _) = self.call(None)?;
        let (empty_call, _) = self.call(Some(("", &[])))?;
        let (call, scores) = self.call(Some((query, &list)))?;
        Ok(RerankRound {
            instantiate,
            empty_call,
            call,
            scores,
        })
    }
}
