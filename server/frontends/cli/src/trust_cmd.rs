//! `rein trust [--revoke]`: the user's explicit decision about a
//! workspace's own settings, made after seeing what they grant. The
//! decision is kept in the user's state (never in the workspace) and holds
//! for the file as it is now: a changed file must be trusted again.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use rein_core::trust;
use serde_json::Value;

use crate::args::TrustArgs;
use rein_app::settings::{self, ANY_WORKSPACE_FILE, Assessment};

pub fn main(args: TrustArgs) -> ExitCode {
    match run(args) {
        Ok(text) => {
            let mut stdout = std::io::stdout().lock();
            let _ = stdout.write_all(text.as_bytes());
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("rein trust: {message}");
            ExitCode::from(2)
        }
    }
}

fn run(args: TrustArgs) -> Result<String, String> {
    let given = match args.workspace {
        Some(dir) => dir,
        None => std::env::current_dir().map_err(|e| format!("no current directory: {e}"))?,
    };
    let root: PathBuf = given
        .canonicalize()
        .map_err(|e| format!("the workspace {}: {e}", given.display()))?;
    let assessment = Assessment::of(&root, &Value::Null)?;
    let Some(fingerprint) = assessment.fingerprint() else {
        return Ok(format!(
            "{} has no {ANY_WORKSPACE_FILE}: there is nothing to trust.\n",
            root.display()
        ));
    };
    let state = settings::user_state()
        .ok_or("no home directory to keep the decision in (set HOME or XDG_STATE_HOME)")?;
    let trusted = !args.revoke;
    state
        .record(&root, fingerprint, trusted)
        .map_err(|e| e.to_string())?;
    let mut out = String::new();
    if assessment.grants.is_empty() {
        out.push_str(&format!(
            "{} only tightens (deny rules, lower budgets): it applies either way.\n",
            assessment.files
        ));
    } else {
        out.push_str(&format!(
            "{} of {} would:\n",
            assessment.files,
            trust::shown(&root.display().to_string())
        ));
        for grant in &assessment.grants {
            out.push_str(&format!("  • {grant}\n"));
        }
    }
    out.push_str(if trusted {
        "Trusted, as the file is now (a change to it must be trusted again).\n"
    } else {
        "Not trusted: Rein ignores what it would grant and keeps only what tightens.\n"
    });
    Ok(out)
}
