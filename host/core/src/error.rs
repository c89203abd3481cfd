//! One error type with the codes of docs/decisions.md ("Errors"), and the one place it
//! becomes an MCP tool result. The vibe tools answer in seed 002's own
//! envelope (`success: false`, upper-case codes): [`Code::Vibe`].

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
    /// The file system refused (disk full, permission, name too long, a
    /// link loop): `details.reason` names which, `details.os_error` quotes it.
    FilesystemError,
    Internal,
    PluginFailed,
    Timeout,
    /// The client cancelled the call (`notifications/cancelled`).
    Cancelled,
    /// A vibe tool's error (seed 002, "Error Handling").
    Vibe(VibeCode),
}

/// The codes of seed 002, plus three it implies: `INVALID_PATH` (its
/// `validate_path` refuses a path outside `VIBE_ROOT`), `INVALID_PARAMETER`
/// (an argument none of its codes fits: missing, or of the wrong type) and
/// `CONFLICT` (update_doc's `expected_hash` no longer matches).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VibeCode {
    ProjectNotFound,
    FileNotFound,
    FileExists,
    InvalidFolder,
    InvalidStatus,
    InvalidQuery,
    IndexError,
    FilesystemError,
    InvalidPath,
    InvalidParameter,
    Conflict,
}

impl VibeCode {
    pub fn as_str(self) -> &'static str {
        match self {
            VibeCode::ProjectNotFound => "PROJECT_NOT_FOUND",
            VibeCode::FileNotFound => "FILE_NOT_FOUND",
            VibeCode::FileExists => "FILE_EXISTS",
            VibeCode::InvalidFolder => "INVALID_FOLDER",
            VibeCode::InvalidStatus => "INVALID_STATUS",
            VibeCode::InvalidQuery => "INVALID_QUERY",
            VibeCode::IndexError => "INDEX_ERROR",
            VibeCode::FilesystemError => "FILESYSTEM_ERROR",
            VibeCode::InvalidPath => "INVALID_PATH",
            VibeCode::InvalidParameter => "INVALID_PARAMETER",
            VibeCode::Conflict => "CONFLICT",
        }
    }
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
            Code::FilesystemError => "filesystem_error",
            Code::Internal => "internal",
            Code::PluginFailed => "plugin_failed",
            Code::Timeout => "timeout",
            Code::Cancelled => "cancelled",
            Code::Vibe(v) => v.as_str(),
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

    pub fn vibe(code: VibeCode, message: impl Into<String>) -> Self {
        Error::new(Code::Vibe(code), message)
    }

    /// The `structuredContent` of an error result.
    pub fn to_json(&self) -> Value {
        if let Code::Vibe(_) = self.code {
            return json!({
                "success": false,
                "error": {
                    "code": self.code.as_str(),
                    "message": self.message,
                    "details": self.details,
                }
            });
        }
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
