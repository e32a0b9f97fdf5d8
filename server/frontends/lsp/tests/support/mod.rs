#![allow(dead_code)] // Each test file uses a different part of this module.

//! An in-process server on a `tokio::io::duplex` pipe, driven by the raw
//! JSON test client: the real service and transport, minus the process.

use std::time::Duration;

use rein_lsp::{ServerHandle, ServerOptions};
use rein_testkit::LspClient;
use serde_json::{Value, json};
use tokio::io::{DuplexStream, WriteHalf};
use tokio::task::JoinHandle;

pub struct InProcess {
    pub client: LspClient<WriteHalf<DuplexStream>>,
    pub handle: ServerHandle,
    pub server: JoinHandle<()>,
}

/// The server runs inside the test binary, but commands still start
/// through the real `rein sandbox-exec`.
pub fn start(mut options: ServerOptions) -> InProcess {
    // The real binary, brought up to date from the sources (the package
    // of this crate has none).
    options.rein_binary = rein_testkit::rein_binary().expect("the rein binary");
    let (client_end, server_end) = tokio::io::duplex(64 * 1024);
    let (server_read, server_write) = tokio::io::split(server_end);
    let (client_read, client_write) = tokio::io::split(client_end);
    let (handle, serving) = rein_lsp::start(server_read, server_write, options);
    let server = tokio::spawn(serving);
    let client = LspClient::new(client_read, client_write).with_timeout(Duration::from_secs(20));
    InProcess {
        client,
        handle,
        server,
    }
}

/// Starts a server and completes the `initialize` handshake with the given
/// client capabilities; returns the whole `initialize` response.
pub async fn initialized(capabilities: Value) -> (InProcess, Value) {
    let mut server = start(ServerOptions::default());
    let response = server
        .client
        .request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": capabilities, "clientInfo": {"name": "test"}}),
        )
        .await
        .unwrap();
    server
        .client
        .notify("initialized", json!({}))
        .await
        .unwrap();
    (server, response)
}

pub fn did_open(uri: &str, text: &str) -> Value {
    json!({"textDocument": {"uri": uri, "languageId": "python", "version": 1, "text": text}})
}

pub fn did_change(uri: &str, version: i32, changes: Value) -> Value {
    json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": changes})
}

pub fn range(l1: u32, c1: u32, l2: u32, c2: u32) -> Value {
    json!({"start": {"line": l1, "character": c1}, "end": {"line": l2, "character": c2}})
}

impl InProcess {
    /// The server's `rein/documentState` for `uri`, with its text.
    pub async fn document(&mut self, uri: &str) -> Value {
        let response = self
            .client
            .request(
                "rein/documentState",
                json!({"uri": uri, "includeText": true}),
            )
            .await
            .unwrap();
        response["result"].clone()
    }
}
