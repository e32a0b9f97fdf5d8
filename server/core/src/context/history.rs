//! The working history of a task, kept as structured items rather than as
//! chat messages, so the context manager knows what each tool result is (a
//! file read at some version, a test log) and can shed it sensibly.

use rein_models::{Message, Part, Role, ToolResult, tokens};
use serde::{Deserialize, Serialize};

use crate::exec::{CommandKind, CommandResult};
use crate::workspace::ReadVersion;

/// What a tool result is, beyond its text.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ResultMeta {
    Plain,
    /// A read of `path` at `version`.
    FileRead {
        path: String,
        version: ReadVersion,
    },
    /// A change to `path`, which is now at `version`.
    Edited {
        path: String,
        version: ReadVersion,
    },
    /// A command's outcome; `summary` is what remains once the log is old.
    Command {
        kind: CommandKind,
        command: String,
        result: CommandResult,
        summary: String,
    },
}

/// One tool result, whole. What the model sees of it may be less (a stub,
/// a summary), decided at assembly; this original is never altered.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RecordedResult {
    pub call_id: String,
    pub tool: String,
    pub content: String,
    pub is_error: bool,
    pub meta: ResultMeta,
    pub tokens: u64,
}

impl RecordedResult {
    pub fn new(
        call_id: String,
        tool: String,
        content: String,
        is_error: bool,
        meta: ResultMeta,
    ) -> Self {
        let tokens = tokens::count_text(&content) + 4;
        Self {
            call_id,
            tool,
            content,
            is_error,
            meta,
            tokens,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "item", rename_all = "snake_case")]
pub enum Item {
    /// Words to the model from the user or the harness (the task, a nudge,
    /// a verification gap).
    User { text: String, tokens: u64 },
    /// The model's turn: text, thinking and tool calls, as it produced them.
    Assistant { parts: Vec<Part>, tokens: u64 },
    /// The results of the previous assistant turn's calls, in call order,
    /// and any note the harness adds (loop-guard notices).
    Results {
        results: Vec<RecordedResult>,
        notes: Vec<String>,
    },
    /// What compaction left of older items; the originals are archived.
    Summary {
        text: String,
        archive: String,
        tokens: u64,
    },
}

impl Item {
    pub fn user(text: impl Into<String>) -> Self {
        let text = text.into();
        let tokens = tokens::count_text(&text) + 4;
        Self::User { text, tokens }
    }

    pub fn assistant(parts: Vec<Part>) -> Self {
        let tokens = parts.iter().map(tokens::count_part).sum::<u64>() + 4;
        Self::Assistant { parts, tokens }
    }

    /// Tokens of the item as stored (before any shedding).
    pub fn tokens(&self) -> u64 {
        match self {
            Self::User { tokens, .. }
            | Self::Assistant { tokens, .. }
            | Self::Summary { tokens, .. } => *tokens,
            Self::Results { results, notes } => {
                results.iter().map(|r| r.tokens).sum::<u64>()
                    + notes.iter().map(|n| tokens::count_text(n)).sum::<u64>()
                    + 4
            }
        }
    }
}

/// The items of a task, in order.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct History {
    pub items: Vec<Item>,
}

impl History {
    pub fn push(&mut self, item: Item) {
        self.items.push(item);
    }

    /// Indices where the history may be cut without separating a tool call
    /// from its result: before an item that is not a `Results`.
    pub fn cut_points(&self) -> impl Iterator<Item = usize> + '_ {
        (1..self.items.len()).filter(|&i| !matches!(self.items[i], Item::Results { .. }))
    }
}

/// Renders items to messages: `view` decides what each result shows.
/// The id prefix of the `write_file` calls made from the files a reply
/// wrote (`crate::whole_files`). The history shows such a call to the
/// model as the file it wrote, and its result as text: shown as a tool
/// call and a tool response, a small model imitates them (it answered
/// with a `<tool_response>` of its own).
pub const FILE_CALL_PREFIX: &str = "file_";

/// A call made from the files a reply wrote: Rein's id, a file's path and
/// content.
fn from_files(call_id: &str, arguments: &serde_json::Value) -> bool {
    call_id.starts_with(FILE_CALL_PREFIX)
        && arguments["path"].is_string()
        && arguments["content"].is_string()
}

/// A file-writing call as the model wrote it: the path, then the file in a
/// fence longer than any inside it.
pub fn as_written(arguments: &serde_json::Value) -> String {
    let path = arguments["path"].as_str().unwrap_or_default();
    let content = arguments["content"].as_str().unwrap_or_default();
    format!("{path}\n{}", fenced_block("", content))
}

/// `text` in a fenced block with `info` after the opening fence. The fence
/// is longer than any run of backticks inside, so the text cannot end it.
pub fn fenced_block(info: &str, text: &str) -> String {
    let mut fence = "```".to_owned();
    while text.contains(fence.as_str()) {
        fence.push('`');
    }
    let newline = if text.ends_with('\n') { "" } else { "\n" };
    format!("{fence}{info}\n{text}{newline}{fence}")
}

pub fn to_messages<'a>(
    items: impl IntoIterator<Item = &'a Item>,
    mut view: impl FnMut(&RecordedResult) -> String,
) -> Vec<Message> {
    let mut messages: Vec<Message> = Vec::new();
    // Calls shown as text: their results are text too, never unpaired.
    let mut as_text: std::collections::HashSet<&str> = std::collections::HashSet::new();
    let push_user_parts = |messages: &mut Vec<Message>, parts: Vec<Part>| match messages.last_mut()
    {
        // Consecutive user items share a message (results, then a nudge).
        Some(last) if last.role == Role::User => last.parts.extend(parts),
        _ => messages.push(Message {
            role: Role::User,
            parts,
        }),
    };
    for item in items {
        match item {
            Item::User { text, .. } => {
                push_user_parts(&mut messages, vec![Part::text(text.clone())])
            }
            Item::Summary { text, .. } => {
                push_user_parts(&mut messages, vec![Part::text(text.clone())])
            }
            Item::Assistant { parts, .. } => messages.push(Message {
                role: Role::Assistant,
                parts: parts
                    .iter()
                    .map(|part| match part {
                        Part::ToolCall(call) if from_files(&call.id, &call.arguments) => {
                            as_text.insert(call.id.as_str());
                            Part::text(as_written(&call.arguments))
                        }
                        other => other.clone(),
                    })
                    .collect(),
            }),
            Item::Results { results, notes } => {
                let mut parts: Vec<Part> = results
                    .iter()
                    .map(|r| {
                        if as_text.contains(r.call_id.as_str()) {
                            return Part::text(view(r));
                        }
                        Part::ToolResult(ToolResult {
                            call_id: r.call_id.clone(),
                            content: view(r),
                            is_error: r.is_error,
                        })
                    })
                    .collect();
                parts.extend(notes.iter().map(|n| Part::text(n.clone())));
                push_user_parts(&mut messages, parts);
            }
        }
    }
    messages
}
