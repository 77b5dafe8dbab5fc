//! The event log survives `kill -9`: a writer process appends from four
//! threads through the group committer and prints each batch the log
//! acknowledged; it is killed with SIGKILL at a random point, 100 times
//! over the same log. After each kill the log must verify clean, be a
//! contiguous run of records from 1, hold every acknowledged batch whole
//! and in place, and accept the next writer's appends.
//!
//! Each change Roost makes to sled (`vendor/sled/ROOST-PATCH.md`) is on a
//! path these runs take: every acknowledged append is a flush that seals
//! the I/O buffer and writes it on the flushing thread (the fourth
//! change); with events padded to 8 KiB, buffers also fill and are sealed
//! and written by sled's thread pool (the first), whose idle threads are
//! woken one per task; and every round reads the whole log back through
//! the page cache's LRU (the second).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

use roost::events::{DaemonEvent, Event, EventRead, EventStore, SledStore};

fn payload(w: usize, n: u64, i: usize, pad: usize) -> String {
    let mut s = format!("w{w} b{n} e{i}");
    if s.len() < pad {
        s.push_str(&".".repeat(pad - s.len()));
    }
    s
}

#[test]
fn every_acknowledged_event_survives_kill_9_and_the_log_stays_a_clean_prefix() {
    let acked = kill_rounds("small", 100, 0);
    assert!(acked > 500, "the writers got work done: {acked}");
}

#[test]
fn acknowledged_events_survive_kill_9_while_full_buffers_are_written_by_sleds_pool() {
    let pad = 8192;
    let acked = kill_rounds("padded", 40, pad);
    // Several of sled's 512 KiB I/O buffers filled (at least 1.5 events
    // per acknowledged batch, on average 2).
    assert!(acked * pad * 3 / 2 > 8 * 512 * 1024, "{acked} batches");
}

/// `rounds` writers killed at random points over one log, each event padded
/// to `pad` bytes; checks the log after each and returns how many batches
/// were acknowledged in all.
fn kill_rounds(name: &str, rounds: usize, pad: usize) -> usize {
    let dir = std::env::temp_dir().join(format!("roost-crash-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let mut rng: u64 = 0x9E37_79B9_7F4A_7C15;
    let mut next = || {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng
    };
    // Every acknowledged batch of every round: first seq → (events, writer, batch, round).
    let mut acked: BTreeMap<u64, (usize, usize, u64, usize)> = BTreeMap::new();
    let mut total_kills = 0;
    for round in 0..rounds {
        let mut child = Command::new(env!("CARGO_BIN_EXE_roost-devtools"))
            .arg("log-writer")
            .arg(&dir)
            .args(["--pad", &pad.to_string()])
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("writer starts");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        // Kill after a random number of acknowledgements (0: while it opens).
        let wait_for = usize::try_from(next() % 60).unwrap_or(0);
        let mut seen = Vec::new();
        while seen.len() < wait_for {
            match lines.next() {
                Some(Ok(l)) => seen.push(l),
                _ => break,
            }
        }
        child.kill().expect("SIGKILL");
        let _ = child.wait();
        total_kills += 1;
        // Lines already written before the kill are acknowledged too.
        seen.extend(lines.map_while(Result::ok));
        for l in &seen {
            let f: Vec<&str> = l.split(' ').collect();
            assert_eq!(f.len(), 4, "ack line {l:?}");
            let first: u64 = f[0].parse().expect("seq");
            let len: usize = f[1].parse().expect("len");
            let w: usize = f[2].parse().expect("writer");
            let n: u64 = f[3].parse().expect("batch");
            assert!(
                acked.insert(first, (len, w, n, round)).is_none(),
                "round {round}: sequence number {first} acknowledged twice"
            );
        }

        let store = SledStore::open(&dir).expect("the log opens after SIGKILL");
        let problems = store.verify();
        assert!(problems.is_empty(), "round {round}: {problems:?}");
        let all: Vec<_> = store
            .read_from(1)
            .map(|e| e.expect("every record decodes"))
            .collect();
        for (i, e) in all.iter().enumerate() {
            assert_eq!(
                e.seq,
                i as u64 + 1,
                "round {round}: a gap before record {}",
                e.seq
            );
        }
        assert_eq!(store.next_seq(), all.len() as u64 + 1);
        for (&first, &(len, w, n, r)) in &acked {
            for i in 0..len {
                let seq = first + i as u64;
                let e = all
                    .get(usize::try_from(seq - 1).unwrap_or(usize::MAX))
                    .unwrap_or_else(|| {
                        panic!("round {round}: acknowledged record {seq} (round {r}) is lost")
                    });
                assert_eq!(e.actor, format!("w{w}"));
                assert_eq!(
                    e.event,
                    Event::Daemon(DaemonEvent::Command {
                        command: payload(w, n, i, pad)
                    }),
                    "round {round}: record {seq}"
                );
            }
        }
        drop(store);
    }
    assert_eq!(total_kills, rounds);
    let _ = std::fs::remove_dir_all(&dir);
    acked.len()
}
