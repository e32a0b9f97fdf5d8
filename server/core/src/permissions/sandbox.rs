//! How the sandbox a command would run in changes the verdict on it.
//!
//! Denies always stand. Then:
//! - a command that asks for the network is asked about, whatever the
//!   rules said ("this command wants the network");
//! - where a sandbox was wanted but this machine cannot provide all of it,
//!   every command is asked about (the tests included): none runs
//!   unconfined without the user's yes;
//! - with the full sandbox and the user's `sandbox.auto_approve`, a command
//!   that only the defaults would have asked about runs without a prompt
//!   (the kernel keeps it in the workspace, offline); the user's own ask
//!   rules still ask.

use crate::exec::Confinement;
use crate::exec::SandboxMode;
use crate::permissions::{Action, Decision, Policy, Rule, RuleTarget, Subject, Verdict};

/// `[[sandbox.rules]]` match commands as an allow rule of `run_command`
/// would: the name is only a label both sides of the match share.
const COMMAND_TOOL: &str = "run_command";

fn command_rule(pattern: &str) -> Rule {
    Rule {
        decision: Decision::Allow,
        tool: COMMAND_TOOL.to_owned(),
        pattern: Some(pattern.to_owned()),
        target: RuleTarget::Command,
    }
}

/// Whether `pattern` is usable as a `[[sandbox.rules]]` command pattern
/// (the syntax of `run_command(…)` rules); `Err` says why not.
pub fn check_rule_pattern(pattern: &str) -> Result<(), String> {
    command_rule(pattern).compile().map(|_| ())
}

/// The mode `[[sandbox.rules]]` give one command, compiled once.
#[derive(Clone, Debug, Default)]
pub struct SandboxRules {
    rules: Vec<(Policy, SandboxMode)>,
}

impl SandboxRules {
    /// Patterns that do not compile were refused with the configuration
    /// (see [`check_rule_pattern`]); any left are skipped.
    pub fn new(rules: &[(String, SandboxMode)]) -> Self {
        let rules = rules
            .iter()
            .filter(|(pattern, _)| check_rule_pattern(pattern).is_ok())
            .map(|(pattern, mode)| (Policy::new(vec![command_rule(pattern)]), *mode))
            .collect();
        Self { rules }
    }

    /// The mode of the first rule matching all of `command`.
    pub fn mode_for(&self, command: &str) -> Option<SandboxMode> {
        let action = Action {
            tool: COMMAND_TOOL,
            subject: Subject::Command { command },
        };
        self.rules
            .iter()
            .find(|(policy, _)| policy.check(&action).decision == Decision::Allow)
            .map(|(_, mode)| *mode)
    }
}

/// `verdict` on `action` (a command or a test run), once the sandbox is
/// taken into account. `network`: the model asked for the network.
pub fn with_sandbox(
    verdict: Verdict,
    action: &Action<'_>,
    network: bool,
    rule_mode: Option<SandboxMode>,
    confinement: &Confinement,
    auto_approve: bool,
) -> Verdict {
    if !action.runs_process() || verdict.decision == Decision::Deny {
        return verdict;
    }
    if network {
        return Verdict::new(
            Decision::Ask,
            "sandbox: wants the network",
            format!(
                "{} wants the network, which commands do not have unless the user allows it",
                capitalized(action)
            ),
        );
    }
    if rule_mode == Some(SandboxMode::Off) && !matches!(confinement, Confinement::Off) {
        return Verdict::new(
            Decision::Ask,
            "sandbox: a rule runs it outside",
            format!(
                "{} runs outside the sandbox (a [[sandbox.rules]] entry), so the user decides",
                capitalized(action)
            ),
        );
    }
    match confinement {
        Confinement::Degraded { missing, .. } => Verdict::new(
            Decision::Ask,
            "sandbox: incomplete here",
            format!(
                "{} would run without part of the sandbox ({}), so the user decides",
                capitalized(action),
                missing.join("; ")
            ),
        ),
        Confinement::Full { .. }
            if auto_approve
                && verdict.decision == Decision::Ask
                && (verdict.rule.starts_with("default:")
                    || verdict.rule.starts_with("built-in ask:")) =>
        {
            Verdict::new(
                Decision::Allow,
                "sandbox: auto-approved inside the sandbox",
                format!(
                    "{} runs inside the sandbox (workspace only, no network), which the user lets run without asking",
                    capitalized(action)
                ),
            )
        }
        _ => verdict,
    }
}

fn capitalized(action: &Action<'_>) -> String {
    let text = action.describe();
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => text,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::permissions::Policy;

    fn full() -> Confinement {
        Confinement::Full {
            description: "landlock".into(),
        }
    }

    fn degraded() -> Confinement {
        Confinement::Degraded {
            description: "partial".into(),
            missing: vec!["file confinement".into()],
        }
    }

    /// (command, network, confinement, auto) → (decision, rule).
    #[test]
    fn the_sandbox_changes_what_asks() {
        let policy = Policy::from_config(
            &[],
            &["run_command(make deploy:*)".to_owned()],
            &["run_command(git push:*)".to_owned()],
            &crate::tools::builtin(),
        )
        .unwrap();
        let check = |command: &str, network: bool, c: &Confinement, auto: bool| {
            let action = crate::tools::run_command::action(command);
            let v = with_sandbox(policy.check(&action), &action, network, None, c, auto);
            (v.decision, v.rule)
        };
        let tests = |c: &Confinement| {
            let action = crate::tools::run_tests::action(None);
            with_sandbox(policy.check(&action), &action, false, None, c, true).decision
        };
        use Decision::*;
        assert_eq!(check("make", false, &full(), true).0, Allow);
        assert_eq!(check("make", false, &full(), false).0, Ask);
        assert_eq!(check("make", true, &full(), true).0, Ask, "network asks");
        assert_eq!(
            check("make deploy", false, &full(), true).0,
            Ask,
            "a user ask stays"
        );
        assert_eq!(
            check("git push", true, &full(), true).0,
            Deny,
            "denies stand"
        );
        assert_eq!(check("make", false, &degraded(), true).0, Ask);
        assert_eq!(
            tests(&degraded()),
            Ask,
            "even the tests ask without a sandbox"
        );
        assert_eq!(tests(&full()), Allow);
        assert_eq!(tests(&Confinement::Unmanaged), Allow);
        assert_eq!(
            check("make", false, &Confinement::Off, true),
            (Ask, "default: commands ask".to_owned())
        );
        let outside = crate::tools::run_command::action("docker run x");
        let v = with_sandbox(
            Verdict::new(Allow, "allow: run_command(docker:*)", "allowed"),
            &outside,
            false,
            Some(SandboxMode::Off),
            &full(),
            true,
        );
        assert_eq!(
            (v.decision, v.rule.as_str()),
            (Ask, "sandbox: a rule runs it outside")
        );
    }
}
