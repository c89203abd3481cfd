//! One error type with the codes of SPEC.md ("Errors"), and the one place it
//! becomes an MCP tool result.

use serde_json::{Value, json};

/// The error codes a manual, vault, bridge or audit tool may return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Code {
    InvalidParameter,
    InvalidPath,
    OutOfScope,
    NotFound,
    InvalidScope,
    Forbidden,
    Conflict,
    Internal,
    PluginFailed,
    Timeout,
}

impl Code {
    pub fn as_str(self) -> &'static str {
        match self {
            Code::InvalidParameter => "invalid_parameter",
            Code::InvalidPath => "invalid_path",
            Code::OutOfScope => "out_of_scope",
            Code::NotFound => "not_found",
            Code::InvalidScope => "invalid_scope",
            Code::Forbidden => "forbidden",
            Code::Conflict => "conflict",
            Code::Internal => "internal",
            Code::PluginFailed => "plugin_failed",
            Code::Timeout => "timeout",
        }
    }
}

/// A refused or failed tool call: code, one readable sentence, and details.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{message}")]
pub struct Error {
    pub code: Code,
    pub message: String,
    pub details: Value,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Error {
            code,
            message: message.into(),
            details: json!({}),
        }
    }

    pub fn with(mut self, key: &str, value: impl Into<Value>) -> Self {
        if let Value::Object(map) = &mut self.details {
            map.insert(key.to_owned(), value.into());
        }
        self
    }

    pub fn invalid_parameter(param: &str, message: impl Into<String>) -> Self {
        Error::new(Code::InvalidParameter, message).with("parameter", param)
    }

    pub fn internal(message: impl Into<String>) -> Self {
        Error::new(Code::Internal, message)
    }

    /// The `structuredContent` of an error result.
    pub fn to_json(&self) -> Value {
        json!({
            "error": {
                "code": self.code.as_str(),
                "message": self.message,
                "details": self.details,
            }
        })
    }

    /// The text content of an error result: the same, in one sentence.
    pub fn to_text(&self) -> String {
        format!("{}: {}", self.code.as_str(), self.message)
    }
}
