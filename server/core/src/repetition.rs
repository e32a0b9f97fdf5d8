//! A reply that has fallen into a loop: the same line, or the same few
//! lines, over and over until the output limit. Small models do this: on
//! 2 cores a 1.5B Qwen repeated one row of a test table for 4,096 tokens
//! and 7 minutes, past the task's whole time budget, after a first code
//! block that held the fix (BENCHMARKS.md, figure 9). The stream is cut
//! where the loop is plain and the reply is taken as it was before it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use futures::{Stream, StreamExt, future, stream};
use rein_models::{
    BadArguments, BadToolCall, ModelError, ModelEvent, ModelReply, Part, StopReason, ToolCall,
    Usage, tokens,
};

/// How many lines must repeat an earlier one, in a row, before a reply
/// counts as looping: more than code or prose ever repeats verbatim (the
/// same line, or a cycle of up to [`MAX_PERIOD`] lines).
pub const REPEATED_LINES: usize = 16;

/// The longest cycle looked for, in lines.
const MAX_PERIOD: usize = 4;

/// Where the loop at the end of `text` begins, if its complete lines end
/// in one: the byte offset just after the loop's first round, so that
/// `text[..offset]` keeps what came before the loop and one round of it.
/// The last line, unfinished, is not looked at.
pub fn looping_tail(text: &str) -> Option<usize> {
    let end = text.rfind('\n')?;
    let complete = &text[..end];
    // From the last complete line back: `back[k] == back[k + p]` is a line
    // repeating the one `p` lines before it.
    let mut back: Vec<&str> = Vec::new();
    let mut repeats = [0usize; MAX_PERIOD + 1];
    let mut running = [true; MAX_PERIOD + 1];
    running[0] = false;
    for line in complete.rsplit('\n') {
        back.push(line.trim_end());
        let j = back.len() - 1;
        for p in 1..=MAX_PERIOD {
            if running[p] && j >= p {
                if back[j] == back[j - p] {
                    repeats[p] += 1;
                } else {
                    running[p] = false;
                }
            }
        }
        if running.iter().all(|r| !r) {
            break;
        }
    }
    let longest = repeats.iter().copied().max().unwrap_or(0);
    if longest < REPEATED_LINES {
        return None;
    }
    // The first repeating line is `longest - 1` lines back from the last.
    let first_repeat = complete.rsplit('\n').nth(longest - 1)?;
    Some(first_repeat.as_ptr() as usize - text.as_ptr() as usize)
}

/// Watches a streamed text for a loop.
#[derive(Default)]
struct LoopWatch {
    text: String,
}

impl LoopWatch {
    /// Whether the text so far ends in a loop. Looked at only when a line
    /// ends: the scan stops at the first line that does not repeat, so a
    /// reply that is not looping costs a few comparisons a line.
    fn push(&mut self, delta: &str) -> bool {
        self.text.push_str(delta);
        delta.contains('\n') && looping_tail(&self.text).is_some()
    }
}

/// One tool call as its arguments stream: a file's lines in a JSON
/// string arrive as `\n` escapes, read here as line breaks.
struct CallWatch {
    id: String,
    name: String,
    raw: String,
    lines: LoopWatch,
    escaped: bool,
    finished: bool,
}

impl CallWatch {
    fn push(&mut self, fragment: &str) -> bool {
        self.raw.push_str(fragment);
        let mut decoded = String::with_capacity(fragment.len());
        for c in fragment.chars() {
            if self.escaped {
                self.escaped = false;
                if c == 'n' {
                    decoded.push('\n');
                } else {
                    decoded.push('\\');
                    decoded.push(c);
                }
            } else if c == '\\' {
                self.escaped = true;
            } else {
                decoded.push(c);
            }
        }
        self.lines.push(&decoded)
    }

    /// How the call ends when the stream is cut: `looping` is the one that
    /// looped; any other started call has its arguments complete.
    fn finish(&self, looping: bool) -> Result<ToolCall, BadToolCall> {
        let bad = |problem| BadToolCall {
            id: self.id.clone(),
            name: self.name.clone(),
            raw_arguments: self.raw.clone(),
            problem,
        };
        if looping {
            return Err(bad(BadArguments::Looping));
        }
        rein_models::parse_arguments(&self.raw)
            .map(|arguments| ToolCall {
                id: self.id.clone(),
                name: self.name.clone(),
                arguments,
            })
            .map_err(bad)
    }
}

/// Watches a streamed reply — its text and each call's arguments — for a
/// loop.
#[derive(Default)]
struct Watch {
    text: LoopWatch,
    calls: Vec<CallWatch>,
    cut: bool,
}

impl Watch {
    /// The events that end the reply after `event`, if it made the reply
    /// loop: for a call's arguments, every started call finished (the
    /// looping one as unusable), then a stop.
    fn after(&mut self, event: &ModelEvent) -> Option<Vec<ModelEvent>> {
        match event {
            ModelEvent::TextDelta(text) => self
                .text
                .push(text)
                .then(|| vec![ModelEvent::Stop(StopReason::EndTurn)]),
            ModelEvent::ToolCallStarted { index, id, name } => {
                if *index == self.calls.len() {
                    self.calls.push(CallWatch {
                        id: id.clone(),
                        name: name.clone(),
                        raw: String::new(),
                        lines: LoopWatch::default(),
                        escaped: false,
                        finished: false,
                    });
                }
                None
            }
            ModelEvent::ToolArgumentsDelta { index, fragment } => {
                let looping = self.calls.get_mut(*index)?.push(fragment);
                looping.then(|| {
                    let mut end: Vec<ModelEvent> = self
                        .calls
                        .iter()
                        .enumerate()
                        .filter(|(_, call)| !call.finished)
                        .map(|(i, call)| ModelEvent::ToolCallFinished {
                            index: i,
                            call: call.finish(i == *index),
                        })
                        .collect();
                    end.push(ModelEvent::Stop(StopReason::ToolUse));
                    end
                })
            }
            ModelEvent::ToolCallFinished { index, .. } => {
                if let Some(call) = self.calls.get_mut(*index) {
                    call.finished = true;
                }
                None
            }
            ModelEvent::Retrying { .. } => {
                *self = Watch::default();
                None
            }
            _ => None,
        }
    }
}

/// `events`, ended with a stop of its own as soon as the reply's text, or
/// a call's arguments, loop (nothing after it is read, so the connection
/// closes and the server stops generating); `cut` says it was. A call
/// cut there is unusable ([`BadArguments::Looping`]), the calls before it
/// are kept. The attempt a retry discards starts afresh.
pub fn cut_loops<S>(
    events: S,
    cut: Arc<AtomicBool>,
) -> impl Stream<Item = Result<ModelEvent, ModelError>> + Send
where
    S: Stream<Item = Result<ModelEvent, ModelError>> + Send,
{
    events
        .scan(Watch::default(), move |watch, event| {
            if watch.cut {
                return future::ready(None);
            }
            let end = match &event {
                Ok(event) => watch.after(event),
                Err(_) => None,
            };
            if end.is_some() {
                watch.cut = true;
                cut.store(true, Ordering::Relaxed);
            }
            let end = end.unwrap_or_default().into_iter().map(Ok);
            future::ready(Some(stream::iter(std::iter::once(event).chain(end))))
        })
        .flatten()
}

/// `reply`, cut short by [`cut_loops`], without its loop: the last text
/// part keeps what came before the loop and one round of it. The server
/// never sent the usage of a reply it did not finish: it is estimated
/// (`estimated_input`: the request's estimate), so budgets still count it.
/// Returns how many bytes were dropped.
pub fn trim_loop(reply: &mut ModelReply, estimated_input: u64) -> usize {
    // What the model generated, the loop included.
    if reply.usage == Usage::default() {
        reply.usage.input_tokens = estimated_input;
        reply.usage.output_tokens = reply.parts.iter().map(tokens::count_part).sum();
    }
    let mut dropped = 0;
    if let Some(Part::Text { text }) = reply
        .parts
        .iter_mut()
        .rev()
        .find(|p| matches!(p, Part::Text { .. }))
        && let Some(at) = looping_tail(text)
    {
        dropped = text.len() - at;
        text.truncate(at);
    }
    dropped
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(text: &str) -> Option<&str> {
        looping_tail(text).map(|at| &text[..at])
    }

    #[test]
    fn one_line_over_and_over_is_cut_after_its_first_copy() {
        let row = "    ([[1], [2]], [1, 2]),\n";
        let text = format!(
            "```py\ndef f():\n    pass\n```\n\n```python\n{}",
            row.repeat(17)
        );
        assert_eq!(
            cut(&text),
            Some(format!("```py\ndef f():\n    pass\n```\n\n```python\n{row}").as_str())
        );
    }

    #[test]
    fn blank_lines_up_to_the_limit_are_a_loop() {
        let text = format!("```json\n{{\"name\": \"x\"}}\n```\n{}", "\n".repeat(40));
        assert_eq!(cut(&text), Some("```json\n{\"name\": \"x\"}\n```\n\n"));
    }

    #[test]
    fn a_cycle_of_a_few_lines_is_a_loop() {
        let text = format!("intro\n{}", "a = 1\nb = 2\nc = 3\n".repeat(7));
        assert_eq!(cut(&text), Some("intro\na = 1\nb = 2\nc = 3\n"));
    }

    #[test]
    fn repetition_under_the_threshold_is_not_a_loop() {
        // 16 copies: 15 lines repeat the one before them.
        let text = format!("x\n{}", "        }\n".repeat(16));
        assert_eq!(cut(&text), None);
        assert_eq!(cut(&format!("{text}        }}\n")), Some("x\n        }\n"));
    }

    #[test]
    fn ordinary_code_and_an_unfinished_last_line_are_not_loops() {
        let code = "def f(xs):\n    out = []\n    for x in xs:\n        out.append(x)\n\n\n    return out\n";
        assert_eq!(cut(code), None);
        assert_eq!(cut(""), None);
        // The unfinished line is not counted.
        assert_eq!(cut(&format!("a\n{}a", "a\n".repeat(15))), None);
    }

    type Event = Result<ModelEvent, ModelError>;

    fn text(t: &str) -> Event {
        Ok(ModelEvent::TextDelta(t.into()))
    }

    /// What `cut_loops` lets through of `events`, and whether it cut.
    async fn through(events: Vec<Event>) -> (Vec<Event>, bool) {
        let flag = Arc::new(AtomicBool::new(false));
        let got = cut_loops(stream::iter(events), Arc::clone(&flag))
            .collect()
            .await;
        (got, flag.load(Ordering::Relaxed))
    }

    #[tokio::test]
    async fn the_stream_stops_at_the_loop_and_says_so() {
        let mut events = vec![text("start\n")];
        events.extend((0..40).map(|_| text("same\n")));
        events.push(Ok(ModelEvent::Stop(StopReason::MaxTokens)));
        let (got, cut) = through(events).await;
        // "start", 17 copies of "same", then the stop Rein put there.
        assert_eq!(got.len(), 19);
        assert!(matches!(
            got.last(),
            Some(Ok(ModelEvent::Stop(StopReason::EndTurn)))
        ));
        assert!(cut);
    }

    #[tokio::test]
    async fn a_retry_starts_the_watch_afresh() {
        let mut events: Vec<Event> = (0..10).map(|_| text("same\n")).collect();
        events.push(Ok(ModelEvent::Retrying {
            attempt: 1,
            delay: std::time::Duration::ZERO,
            reason: "reset".into(),
        }));
        events.extend((0..10).map(|_| text("same\n")));
        events.push(Ok(ModelEvent::Stop(StopReason::EndTurn)));
        let (got, cut) = through(events).await;
        assert_eq!(got.len(), 22);
        assert!(!cut);
    }

    /// A 1.5B model wrote a file as a `write_file` call whose `content`
    /// repeated one row to the token limit: the stream stops there, the
    /// looping call is unusable, the call before it is kept.
    #[tokio::test]
    async fn a_calls_arguments_that_loop_end_the_stream_and_the_call() {
        let started = |index: usize, name: &str| {
            Ok(ModelEvent::ToolCallStarted {
                index,
                id: format!("c{index}"),
                name: name.into(),
            })
        };
        let args = |index: usize, fragment: &str| {
            Ok(ModelEvent::ToolArgumentsDelta {
                index,
                fragment: fragment.into(),
            })
        };
        let mut events = vec![
            started(0, "read_file"),
            args(0, r#"{"path": "a.py"}"#),
            started(1, "write_file"),
            args(1, r#"{"path": "t.py", "content": "import x\n"#),
        ];
        // A row split across fragments, its `\n` escape too.
        events.extend((0..40).flat_map(|_| [args(1, "    ([1], [1]),\\"), args(1, "n")]));
        events.push(Ok(ModelEvent::Stop(StopReason::MaxTokens)));
        let (got, cut) = through(events).await;
        assert!(cut);
        let tail: Vec<String> = got
            .iter()
            .rev()
            .take(3)
            .rev()
            .map(|e| match e {
                Ok(ModelEvent::ToolCallFinished {
                    index,
                    call: Ok(call),
                }) => {
                    format!("{index} ok {} {}", call.name, call.arguments)
                }
                Ok(ModelEvent::ToolCallFinished {
                    index,
                    call: Err(bad),
                }) => {
                    format!("{index} bad {} {:?}", bad.name, bad.problem)
                }
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            tail,
            [
                r#"0 ok read_file {"path":"a.py"}"#,
                "1 bad write_file Looping",
                "Ok(Stop(ToolUse))"
            ]
        );
        // Stopped after the 17th row: nothing after the loop was read.
        assert!(got.len() < 2 * 20 + 4 + 3, "{}", got.len());
    }

    #[tokio::test]
    async fn arguments_with_varied_lines_are_not_cut() {
        let mut events = vec![Ok(ModelEvent::ToolCallStarted {
            index: 0,
            id: "c0".into(),
            name: "write_file".into(),
        })];
        events.extend((0..40).map(|n| {
            Ok(ModelEvent::ToolArgumentsDelta {
                index: 0,
                fragment: format!("line {n}\\n"),
            })
        }));
        events.push(Ok(ModelEvent::Stop(StopReason::ToolUse)));
        let (got, cut) = through(events).await;
        assert!(!cut);
        assert_eq!(got.len(), 42);
    }

    fn reply(text: String, usage: Usage) -> ModelReply {
        ModelReply {
            parts: vec![Part::Text { text }],
            bad_calls: Vec::new(),
            usage,
            stop: StopReason::EndTurn,
            retries: 0,
        }
    }

    #[test]
    fn a_cut_reply_keeps_one_round_and_its_usage_is_estimated() {
        let mut r = reply(format!("ok\n{}", "row\n".repeat(17)), Usage::default());
        assert_eq!(trim_loop(&mut r, 1234), 16 * 4);
        assert_eq!(
            r.parts,
            [Part::Text {
                text: "ok\nrow\n".into()
            }]
        );
        assert_eq!(r.usage.input_tokens, 1234);
        // Counted before the loop was dropped: the model did generate it.
        assert!(r.usage.output_tokens >= 17, "{:?}", r.usage);
    }

    #[test]
    fn a_usage_the_server_sent_is_kept() {
        let sent = Usage {
            input_tokens: 10,
            output_tokens: 20,
            ..Usage::default()
        };
        let mut r = reply(format!("ok\n{}", "row\n".repeat(17)), sent);
        trim_loop(&mut r, 1234);
        assert_eq!(r.usage, sent);
    }
}
