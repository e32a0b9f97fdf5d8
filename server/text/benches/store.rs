//! Document store costs on a 1 MB document: incremental edits as an editor
//! sends them, and UTF-16 position conversion (VS Code's encoding).
//!
//! Run: `cargo bench -p rein-text --bench store`

// Test code: a panic is a failed test, which is what unwrap should do here.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::hint::black_box;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rein_text::{
    ContentChange, ContentHash, Document, OffsetEncoding, Position, Range, char_to_position,
    position_to_char,
};

/// About 1 MB of source-like text with some multi-byte characters.
fn one_megabyte() -> String {
    let line = "    let total = items.iter().map(|i| i.price * i.qty).sum::<u64>(); // ¥ 😀\n";
    line.repeat(1_000_000 / line.len() + 1)
}

fn random_position(rng: &mut SmallRng, doc: &Document) -> Position {
    let line = rng.random_range(0..doc.rope().len_lines() as u32);
    Position::new(line, rng.random_range(0..80))
}

fn edits(c: &mut Criterion) {
    let text = one_megabyte();
    let mut group = c.benchmark_group("edit_1mb");
    group.throughput(Throughput::Elements(1));

    group.bench_function("insert_char_random", |b| {
        let mut doc = Document::new(&text, 0, "rust");
        let mut rng = SmallRng::seed_from_u64(1);
        let mut version = 0;
        b.iter(|| {
            let pos = random_position(&mut rng, &doc);
            version += 1;
            doc.apply_changes(
                version,
                [ContentChange::replace(Range::new(pos, pos), "x")],
                OffsetEncoding::Utf16,
            )
        });
    });

    group.bench_function("replace_line_random", |b| {
        let mut doc = Document::new(&text, 0, "rust");
        let mut rng = SmallRng::seed_from_u64(2);
        let mut version = 0;
        b.iter(|| {
            let line = rng.random_range(0..doc.rope().len_lines() as u32 - 1);
            version += 1;
            doc.apply_changes(
                version,
                [ContentChange::replace(
                    Range::new(Position::new(line, 0), Position::new(line + 1, 0)),
                    "    let replaced = compute(\"a new line of about the same length\");\n",
                )],
                OffsetEncoding::Utf16,
            )
        });
    });

    group.bench_function("snapshot", |b| {
        let doc = Document::new(&text, 0, "rust");
        b.iter(|| doc.snapshot());
    });
    group.finish();

    // Hashing is paid once per version, when someone asks (snapshots of a
    // version share the result), so it is measured on its own.
    let mut group = c.benchmark_group("hash_1mb");
    group.throughput(Throughput::Bytes(text.len() as u64));
    let doc = Document::new(&text, 0, "rust");
    group.bench_function("content_hash", |b| {
        b.iter(|| ContentHash::of_rope(doc.rope()))
    });
    group.finish();
}

fn conversions(c: &mut Criterion) {
    let doc = Document::new(&one_megabyte(), 0, "rust");
    let rope = doc.rope();
    let mut group = c.benchmark_group("utf16_1mb");
    group.throughput(Throughput::Elements(1));
    group.bench_function("position_to_char", |b| {
        let mut rng = SmallRng::seed_from_u64(3);
        b.iter(|| {
            let pos = random_position(&mut rng, &doc);
            black_box(position_to_char(rope, pos, OffsetEncoding::Utf16))
        });
    });
    group.bench_function("char_to_position", |b| {
        let mut rng = SmallRng::seed_from_u64(4);
        b.iter(|| {
            let idx = rng.random_range(0..rope.len_chars());
            black_box(char_to_position(rope, idx, OffsetEncoding::Utf16))
        });
    });
    group.finish();
}

criterion_group!(benches, edits, conversions);
criterion_main!(benches);
