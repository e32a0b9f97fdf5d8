//! A tool's kind in ACP's words.

use agent_client_protocol::v1::schema::ToolKind;

/// A tool's kind as ACP names it: the registry's fact, never the tool's
/// name (an MCP tool says what it does through its annotations).
pub fn acp_kind(kind: rein_core::tools::ToolKind) -> ToolKind {
    use rein_core::tools::ToolKind as Kind;
    match kind {
        Kind::Read => ToolKind::Read,
        Kind::Search => ToolKind::Search,
        Kind::Edit => ToolKind::Edit,
        Kind::Execute => ToolKind::Execute,
        // A question is the model thinking aloud to the user.
        Kind::Ask => ToolKind::Think,
        Kind::Other => ToolKind::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every kind a tool can say it has becomes one of ACP's, never
    /// "other" but for a tool that said nothing (issue 37 C: an MCP call
    /// showed as "Other" while its permission said "execute").
    #[test]
    fn every_kind_of_tool_has_a_kind_in_acp() {
        use rein_core::tools::ToolKind as Kind;
        let kinds: Vec<ToolKind> = [
            Kind::Read,
            Kind::Search,
            Kind::Edit,
            Kind::Execute,
            Kind::Ask,
            Kind::Other,
        ]
        .into_iter()
        .map(acp_kind)
        .collect();
        assert_eq!(
            kinds,
            [
                ToolKind::Read,
                ToolKind::Search,
                ToolKind::Edit,
                ToolKind::Execute,
                ToolKind::Think,
                ToolKind::Other
            ]
        );
    }
}
