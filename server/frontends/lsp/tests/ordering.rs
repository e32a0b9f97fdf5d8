//! DESIGN.md §1: document notifications apply in the order the editor sent
//! them, although the transport runs handlers concurrently. 5,000
//! `didChange` go back to back through the real service, interleaved with
//! requests that must each see exactly the changes sent before them.

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use pretty_assertions::assert_eq;
use serde_json::{Value, json};
use support::{did_change, did_open, initialized, range};

const CHANGES: i32 = 5_000;
const URI: &str = "file:///ordering.txt";

/// A deterministic xorshift generator: the same edits on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n.max(1) as u64) as usize
    }
}

/// The model: lines of chars from the Basic Multilingual Plane, so a UTF-16
/// column is a char index.
struct Model {
    lines: Vec<Vec<char>>,
}

impl Model {
    fn text(&self) -> String {
        self.lines
            .iter()
            .map(|l| l.iter().collect::<String>())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Picks a random edit, applies it to the model and returns it as an
    /// LSP content change.
    fn random_edit(&mut self, rng: &mut Rng) -> Value {
        const ALPHABET: [char; 6] = ['a', 'b', 'z', ' ', 'é', '中'];
        let line = rng.below(self.lines.len());
        let len = self.lines[line].len();
        match rng.below(10) {
            0..=4 => {
                let col = rng.below(len + 1);
                let c = ALPHABET[rng.below(ALPHABET.len())];
                self.lines[line].insert(col, c);
                json!({"range": range(line as u32, col as u32, line as u32, col as u32), "text": c.to_string()})
            }
            5 | 6 if len > 0 => {
                let a = rng.below(len);
                let b = a + 1 + rng.below((len - a).min(4));
                self.lines[line].drain(a..b);
                json!({"range": range(line as u32, a as u32, line as u32, b as u32), "text": ""})
            }
            7 => {
                let col = rng.below(len + 1);
                let rest = self.lines[line].split_off(col);
                self.lines.insert(line + 1, rest);
                json!({"range": range(line as u32, col as u32, line as u32, col as u32), "text": "\n"})
            }
            8 if line + 1 < self.lines.len() => {
                let next = self.lines.remove(line + 1);
                self.lines[line].extend(next);
                json!({"range": range(line as u32, len as u32, line as u32 + 1, 0), "text": ""})
            }
            _ => {
                let new: Vec<char> = format!("line {} é", rng.below(1000)).chars().collect();
                let text: String = new.iter().collect();
                self.lines[line] = new;
                json!({"range": range(line as u32, 0, line as u32, len as u32), "text": text})
            }
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn five_thousand_changes_apply_in_order() {
    let (mut server, _) = initialized(json!({})).await;
    let mut model = Model {
        lines: vec![Vec::new()],
    };
    let mut rng = Rng(0x5eed_1234_abcd_ef01);
    let c = &mut server.client;
    c.notify("textDocument/didOpen", did_open(URI, ""))
        .await
        .unwrap();

    // (request id, the version it must see)
    let mut probes = Vec::new();
    for version in 2..CHANGES + 2 {
        // Most notifications carry one change; some carry several, which
        // must also apply in order within the notification.
        let count = if version % 50 == 0 { 3 } else { 1 };
        let changes: Vec<Value> = (0..count).map(|_| model.random_edit(&mut rng)).collect();
        c.notify(
            "textDocument/didChange",
            did_change(URI, version, json!(changes)),
        )
        .await
        .unwrap();
        if version % 97 == 0 {
            probes.push((
                c.send_request("rein/documentState", json!({"uri": URI}))
                    .await
                    .unwrap(),
                version,
            ));
        }
    }

    for (id, version) in probes {
        let response = c.response(id).await.unwrap();
        assert_eq!(
            response["result"]["version"], version,
            "request {id} saw the wrong version"
        );
    }
    let state = server.document(URI).await;
    assert_eq!(state["version"], CHANGES + 1);
    assert_eq!(state["text"].as_str().unwrap(), model.text());
}
