//! The fake model server, exercised over real HTTP with reqwest (the client
//! Rein's providers use) and, where bytes matter, with a raw socket.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "fake_model/support.rs"]
mod support;

#[path = "fake_model/anthropic_wire.rs"]
mod anthropic_wire;
#[path = "fake_model/faults.rs"]
mod faults;
#[path = "fake_model/http_transport.rs"]
mod http_transport;
#[path = "fake_model/openai_wire.rs"]
mod openai_wire;
#[path = "fake_model/public_api.rs"]
mod public_api;
#[path = "fake_model/scenarios.rs"]
mod scenarios;
#[path = "fake_model/server_info.rs"]
mod server_info;
#[path = "fake_model/validation.rs"]
mod validation;
