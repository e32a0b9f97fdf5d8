//! Prompt caching as Anthropic documents it, simulated over a series of
//! requests: a request reads from the cache the longest prefix (tools,
//! then system, then messages, block by block) that an earlier request
//! wrote at one of its breakpoints, found at one of this request's
//! breakpoints or up to 20 blocks before one; it writes the prefix up to
//! each of its own breakpoints (when at least 1,024 tokens long). A
//! prefix matches only if every block before it is identical.
//!
//! Blocks and breakpoints follow `rein-models`' Anthropic request: one
//! breakpoint on the last tool, one on the last system block, then the
//! last part of the `stable_message` and of the last message.

use std::collections::HashSet;

use rein_models::ModelRequest;
use rein_models::tokens::{count_part, count_text};

/// Anthropic's minimum cacheable prompt for Sonnet.
pub const MIN_CACHEABLE: u64 = 1024;
/// How far before a breakpoint a hit is looked for.
const LOOKBACK: usize = 20;
/// Per-message framing (role markers), as `rein_models::tokens` counts it.
const MESSAGE_OVERHEAD: u64 = 4;

pub struct Block {
    /// Identifies the whole prefix ending with this block.
    key: blake3::Hash,
    tokens: u64,
    breakpoint: bool,
}

/// The request as a sequence of blocks, with its breakpoints.
pub fn blocks(request: &ModelRequest) -> Vec<Block> {
    let mut out: Vec<Block> = Vec::new();
    let mut push = |kind: &str, content: String, tokens: u64| {
        let mut h = blake3::Hasher::new();
        if let Some(prev) = out.last() {
            h.update(prev.key.as_bytes());
        }
        h.update(kind.as_bytes());
        h.update(&[0]);
        h.update(content.as_bytes());
        out.push(Block {
            key: h.finalize(),
            tokens,
            breakpoint: false,
        });
        out.len() - 1
    };
    let cache = request.cache.enabled;
    let mut marks = Vec::new();
    let mut last = None;
    for tool in &request.tools {
        let tokens = count_text(&tool.name)
            + count_text(&tool.description)
            + count_text(&tool.input_schema.to_string());
        let content = format!("{}\n{}\n{}", tool.name, tool.description, tool.input_schema);
        last = Some(push("tool", content, tokens));
    }
    marks.extend(last.filter(|_| cache));
    let mut last = None;
    for system in &request.system {
        last = Some(push("system", system.clone(), count_text(system)));
    }
    marks.extend(last.filter(|_| cache));
    let mut message_ends = Vec::new();
    for message in &request.messages {
        let mut end = None;
        for (i, part) in message.parts.iter().enumerate() {
            let overhead = if i == 0 { MESSAGE_OVERHEAD } else { 0 };
            let content = serde_json::to_string(part).unwrap_or_default();
            let kind = format!("{:?}", message.role);
            end = Some(push(&kind, content, count_part(part) + overhead));
        }
        message_ends.push(end);
    }
    if cache {
        let last_message = request.messages.len().checked_sub(1);
        let mut targets = vec![request.cache.stable_message, last_message];
        targets.dedup();
        for index in targets.into_iter().flatten() {
            if marks.len() >= 4 {
                break;
            }
            if let Some(Some(block)) = message_ends.get(index)
                && !marks.contains(block)
            {
                marks.push(*block);
            }
        }
    }
    for m in marks {
        out[m].breakpoint = true;
    }
    out
}

/// One request's input tokens, by how the cache treats them.
#[derive(Clone, Copy, Debug, Default)]
pub struct Billed {
    pub total: u64,
    /// Under a breakpoint: the prefix up to the request's last one.
    pub marked: u64,
    pub read: u64,
    pub written: u64,
}

impl Billed {
    pub fn uncached(&self) -> u64 {
        self.total - self.read - self.written
    }

    pub fn add(&mut self, other: &Billed) {
        self.total += other.total;
        self.marked += other.marked;
        self.read += other.read;
        self.written += other.written;
    }
}

/// Replays `requests` in order against an empty cache.
pub fn simulate(requests: &[Vec<Block>]) -> Vec<Billed> {
    let mut cache: HashSet<blake3::Hash> = HashSet::new();
    let mut out = Vec::new();
    for blocks in requests {
        let mut cumulative = Vec::with_capacity(blocks.len());
        let mut sum = 0;
        for b in blocks {
            sum += b.tokens;
            cumulative.push(sum);
        }
        let breakpoints: Vec<usize> = (0..blocks.len())
            .filter(|&i| blocks[i].breakpoint)
            .collect();
        let hit = breakpoints
            .iter()
            .filter_map(|&b| {
                (b.saturating_sub(LOOKBACK)..=b)
                    .rev()
                    .find(|&j| cache.contains(&blocks[j].key))
            })
            .max();
        let read = hit.map_or(0, |j| cumulative[j]);
        let marked = breakpoints.last().map_or(0, |&b| cumulative[b]);
        let written = if marked >= MIN_CACHEABLE {
            marked.saturating_sub(read)
        } else {
            0
        };
        for &b in &breakpoints {
            if cumulative[b] >= MIN_CACHEABLE {
                cache.insert(blocks[b].key);
            }
        }
        out.push(Billed {
            total: sum,
            marked,
            read,
            written,
        });
    }
    out
}
