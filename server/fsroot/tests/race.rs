//! The attack of issue 32 against the primitive alone: a folder swapped
//! for a link to the outside, in a tight loop, while files are created,
//! replaced and appended to beneath it. Nothing may land outside.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::fs;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use rein_fsroot::{Links, Resolver, Root, refusal};
use rustix::fs::{CWD, RenameFlags, renameat_with};

const TRIES: usize = 3_000;

fn race(resolver: Resolver) {
    let dir = tempfile::TempDir::new().unwrap();
    let ws = dir.path().join("ws");
    let outside = dir.path().join("outside");
    fs::create_dir_all(ws.join("d")).unwrap();
    fs::create_dir_all(&outside).unwrap();
    std::os::unix::fs::symlink(&outside, ws.join("d-link")).unwrap();
    let root = Root::open(&ws, Links::Within)
        .unwrap()
        .with_resolver(resolver);

    // `d` is always there: a folder, or (exchanged atomically) the link.
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (stop, swaps, ws) = (stop.clone(), swaps.clone(), ws.clone());
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                renameat_with(
                    CWD,
                    ws.join("d"),
                    CWD,
                    ws.join("d-link"),
                    RenameFlags::EXCHANGE,
                )
                .unwrap();
                swaps.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    let (mut written, mut refused) = (0, 0);
    // At least `TRIES` rounds, and on until both outcomes were seen (a
    // busy machine may starve the swapper for a while).
    let mut i = 0;
    while i < TRIES || (written == 0 || refused == 0) && i < 20 * TRIES {
        i += 1;
        let results = [
            root.create_new(format!("d/config-{i}.toml"), b"mode = \"off\"\n", None),
            root.replace("d/config.toml", b"auto_approve = true\n", None),
            root.append("d/log.txt").map(drop),
        ];
        for result in results {
            match result {
                Ok(()) => written += 1,
                Err(e) if refusal(&e).is_some() => refused += 1,
                Err(e) => panic!("{resolver:?}: neither written nor refused: {e}"),
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let landed: Vec<_> = fs::read_dir(&outside).unwrap().collect();
    assert!(landed.is_empty(), "{resolver:?}: {landed:?} landed outside");
    eprintln!(
        "{resolver:?}: {i} rounds, {written} written, {refused} refused, {} swaps",
        swaps.load(Ordering::Relaxed)
    );
    // Both outcomes happened, or the race was not run.
    assert!(
        written > 0 && refused > 0 && swaps.load(Ordering::Relaxed) > 0,
        "{resolver:?}: {written} written, {refused} refused"
    );
}

#[test]
fn a_folder_swapped_for_a_link_in_a_loop_never_lets_a_write_out_kernel() {
    race(Resolver::Kernel);
}

#[test]
fn a_folder_swapped_for_a_link_in_a_loop_never_lets_a_write_out_walk() {
    race(Resolver::Walk);
}
