//! `rein-e2e` holds the end-to-end suites: they spawn the real `rein`
//! binary (and, as the editor clients land, real Neovim and VS Code) and
//! talk to it exactly as an editor would. Helpers shared by the suites live
//! in `rein-testkit`; this crate only holds the suites.
//!
//! These tests must never call a real model API or reach the network, and
//! never depend on timing: they wait for messages, not for durations.
