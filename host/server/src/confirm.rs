//! Confirmations: a call its user may regret is asked about through the
//! client first (an elicitation request, or on protocol 2026-07-28 an
//! `input_required` result answered in the retried call). Only a "yes"
//! runs it: a refusal, an error, a timeout, a cancellation or a closed
//! transport while asking runs nothing. On 2026-07-28 an answer counts only
//! for the call it was asked about: the question carries a single-use
//! nonce as its request state, tied to the tool and its arguments.

use std::collections::VecDeque;
use std::sync::Mutex;

use rmcp::RoleServer;
use rmcp::service::RequestContext;
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

/// Questions asked on 2026-07-28 and not answered yet, kept at most.
const ASKED_KEPT: usize = 1024;

/// The nonces of questions asked and not yet answered, each with the call
/// it was asked about (a digest of the tool and its arguments).
#[derive(Default)]
pub(crate) struct Asked {
    open: Mutex<VecDeque<(String, [u8; 32])>>,
}

/// Which call a question is about: the tool and its arguments.
fn call_key(tool: &str, args: Option<&Map<String, Value>>) -> [u8; 32] {
    let mut h = Sha256::new();
    h.update(tool.as_bytes());
    h.update([0]);
    h.update(serde_json::to_vec(&args).unwrap_or_default());
    h.finalize().into()
}

impl Asked {
    /// A fresh nonce for a question about `key` (the oldest open question
    /// is forgotten past [`ASKED_KEPT`]: its answer will be asked again).
    fn issue(&self, key: [u8; 32]) -> String {
        use std::sync::atomic::{AtomicU64, Ordering};
        static N: AtomicU64 = AtomicU64::new(0);
        let mut h = Sha256::new();
        h.update(N.fetch_add(1, Ordering::Relaxed).to_le_bytes());
        h.update(std::process::id().to_le_bytes());
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0);
        h.update(now.to_le_bytes());
        h.update(key);
        let nonce: String = h.finalize()[..16]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        if open.len() >= ASKED_KEPT {
            open.pop_front();
        }
        open.push_back((nonce.clone(), key));
        nonce
    }

    /// Whether `nonce` was issued for `key` and not used yet; it is used
    /// now either way (single use).
    fn redeem(&self, nonce: Option<&str>, key: [u8; 32]) -> bool {
        let Some(nonce) = nonce else { return false };
        let mut open = self.open.lock().unwrap_or_else(|e| e.into_inner());
        match open.iter().position(|(n, _)| n == nonce) {
            Some(i) => open.remove(i).is_some_and(|(_, k)| k == key),
            None => false,
        }
    }
}

/// What the user said to a confirmation.
pub(crate) enum Answer {
    Yes,
    No,
    /// The client declared no form elicitation: the call runs as asked
    /// (every change it makes can be undone from its history).
    CannotAsk,
    /// The client can ask but the question failed: an error answer (the
    /// user closed the dialog), no answer in time, the call cancelled or
    /// the transport closed meanwhile. Nothing is done.
    Failed(String),
    /// On the 2026-07-28 protocol, which forbids server-to-client requests:
    /// the client is to ask and call again with the answer.
    Ask(rmcp::model::InputRequiredResult),
}

/// The key of the confirmation among a call's input requests.
const CONFIRM_INPUT: &str = "confirm";

/// How long a question waits for its answer before the call is given up
/// (not run): long enough for a person to read it, short enough that a
/// client that never answers does not hold a turn for ever.
const CONFIRM_WAIT: std::time::Duration = std::time::Duration::from_secs(300);

/// Ask the user, through the client, to confirm `question`: an elicitation
/// request on the protocols that allow one, an `input_required` result
/// (then the answer in the retried call's `inputResponses`) on 2026-07-28.
pub(crate) async fn confirmed(
    context: &RequestContext<RoleServer>,
    asked: &Asked,
    request: &rmcp::model::CallToolRequestParams,
    question: &str,
) -> Answer {
    use rmcp::model::{
        ElicitRequest, ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema,
        InputRequest, InputRequiredResult, ProtocolVersion,
    };
    let form = context
        .client_capabilities()
        .and_then(|c| c.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none());
    if !form {
        return Answer::CannotAsk;
    }
    let accepted = |r: ElicitResult| match r.action {
        ElicitationAction::Accept => Answer::Yes,
        _ => Answer::No,
    };
    let params = ElicitRequestParams::FormElicitationParams {
        meta: None,
        message: question.to_owned(),
        requested_schema: ElicitationSchema::new(Default::default()),
    };
    if context
        .protocol_version()
        .is_some_and(|v| v >= ProtocolVersion::V_2026_07_28)
    {
        let key = call_key(&request.name, request.arguments.as_ref());
        let answer = request
            .input_responses
            .as_ref()
            .and_then(|r| r.get(CONFIRM_INPUT));
        // An answer counts only with the nonce of a question asked about
        // this very call, once; any other is asked again.
        return match answer {
            Some(answer) if asked.redeem(request.request_state.as_deref(), key) => {
                serde_json::from_value::<ElicitResult>(answer.clone()).map_or(Answer::No, accepted)
            }
            _ => Answer::Ask(InputRequiredResult::new(
                Some(
                    [(
                        CONFIRM_INPUT.to_owned(),
                        InputRequest::Elicitation(ElicitRequest::new(params)),
                    )]
                    .into(),
                ),
                Some(asked.issue(key)),
            )),
        };
    }
    let asked = tokio::select! {
        r = tokio::time::timeout(CONFIRM_WAIT, context.peer.create_elicitation(params)) => r,
        () = context.ct.cancelled() => return Answer::Failed("the call was cancelled".into()),
    };
    match asked {
        Ok(Ok(answer)) => accepted(answer),
        Ok(Err(e)) => {
            tracing::warn!("could not ask the user to confirm ({question}): {e}");
            Answer::Failed(format!("the question failed: {e}"))
        }
        Err(_) => Answer::Failed(format!("no answer within {} s", CONFIRM_WAIT.as_secs())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(path: &str) -> Option<Map<String, Value>> {
        serde_json::json!({ "path": path }).as_object().cloned()
    }

    #[test]
    fn an_answer_counts_once_and_only_for_the_call_it_was_asked_about() {
        let asked = Asked::default();
        let key = call_key("vault_delete", args("old").as_ref());
        let nonce = asked.issue(key);
        let other = call_key("vault_delete", args("other").as_ref());
        assert!(!asked.redeem(Some(&nonce), other), "other arguments");
        // Used by the refused attempt: a nonce is single-use.
        assert!(!asked.redeem(Some(&nonce), key), "reused");
        let nonce = asked.issue(key);
        assert!(!asked.redeem(None, key), "missing");
        assert!(!asked.redeem(Some("forged"), key), "never issued");
        assert!(asked.redeem(Some(&nonce), key));
        assert!(!asked.redeem(Some(&nonce), key), "used twice");
    }
}
