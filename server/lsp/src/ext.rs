//! Rein's own LSP methods (`rein/*`). Their shapes are part of the product's
//! contract with editor plugins and tests; see ARCHITECTURE.md.

use serde::{Deserialize, Serialize};
use tower_lsp_server::ls_types::Uri;

/// `rein/documentState`: what the server holds for one open document. Used
/// by tests, benchmarks and `rein doctor` to check that the server's view of
/// a buffer matches the editor's.
pub const DOCUMENT_STATE: &str = "rein/documentState";

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct DocumentStateParams {
    pub uri: Uri,
    #[serde(default)]
    pub include_text: bool,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct DocumentState {
    pub uri: Uri,
    pub version: i32,
    pub language_id: String,
    /// BLAKE3 of the UTF-8 text, 64 hex digits.
    pub content_hash: String,
    pub line_count: usize,
    pub utf8_length: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub text: Option<String>,
}
