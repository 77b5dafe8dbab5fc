//! The event log: append and read back, sequence checks, the per-actor
//! index, persistence across reopening, corrupt records reported with their
//! number, golden bytes that must decode forever, a model-based test, and
//! replaying a simulated run's log to the state the run ended in.

use std::path::PathBuf;

use proptest::prelude::*;
use roost::events::{
    Envelope, Event, EventRead, EventStore, SledStore, StoreError, decode, encode,
};
use roost::policy::slot::{Activity, SlotEvent, State};
use roost::startd::Replay;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("roost-events-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

/// The sequence numbers of `actor`'s events from `from` on, by its index.
fn actor_seqs(s: &impl EventRead, actor: &str, from: u64) -> Vec<u64> {
    s.read_actor(actor, from)
        .map(|e| e.expect("decodes").seq)
        .collect()
}

fn ev(at: i64, why: &str) -> Event {
    Event::Slot(SlotEvent::ActivityChanged {
        at,
        state: State::Unclaimed,
        activity: Activity::Idle,
        transition: roost::policy::slot::Transition::OwnerToUnclaimed,
        why: why.into(),
    })
}

#[test]
fn appends_are_read_back_in_order_and_survive_reopening() {
    let d = dir("basic");
    {
        let mut s = SledStore::open(&d).expect("open");
        assert_eq!(s.next_seq(), 1);
        let next = s
            .append(
                1,
                &[
                    (10, "slot1".into(), ev(10, "a")),
                    (11, "slot2".into(), ev(11, "b")),
                ],
            )
            .expect("append");
        assert_eq!(next, 3);
        s.append(3, &[(12, "slot1".into(), ev(12, "c"))])
            .expect("append");
        let err = s
            .append(3, &[(13, "slot1".into(), ev(13, "d"))])
            .expect_err("stale sequence");
        assert!(
            matches!(
                err,
                StoreError::WrongSequence {
                    expected: 3,
                    actual: 4
                }
            ),
            "{err}"
        );
    }
    let s = SledStore::open(&d).expect("reopen");
    assert_eq!(s.next_seq(), 4, "nothing of the refused batch was written");
    let all: Vec<Envelope> = s.read_from(1).map(|e| e.expect("decodes")).collect();
    assert_eq!(all.iter().map(|e| e.seq).collect::<Vec<_>>(), [1, 2, 3]);
    assert_eq!(all[1].actor, "slot2");
    let slot1 = actor_seqs(&s, "slot1", 1);
    assert_eq!(slot1, [1, 3]);
    let from2: Vec<u64> = s.read_from(2).map(|e| e.expect("decodes").seq).collect();
    assert_eq!(from2, [2, 3]);
    drop(s);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_last_record_whose_index_entries_were_lost_is_indexed_at_open() {
    // A crash between writing a record and its per-actor entries leaves
    // the record unindexed; opening the log mends it, and verify agrees.
    let d = dir("unindexed");
    {
        let mut s = SledStore::open(&d).expect("open");
        s.append(1, &[(10, "slot1".into(), ev(10, "a"))])
            .expect("append");
        s.append(
            2,
            &[
                (11, "slot2".into(), ev(11, "b")),
                (12, "slot1".into(), ev(12, "c")),
            ],
        )
        .expect("append");
    }
    {
        let db = super::events_cli::raw_sled(&d);
        let index = db.open_tree("by_actor").expect("tree");
        let last: Vec<sled::IVec> = index
            .iter()
            .keys()
            .map(|k| k.expect("key"))
            .filter(|k| k.ends_with(&2u64.to_be_bytes()))
            .collect();
        assert_eq!(last.len(), 2, "the last record has two actors' entries");
        for k in last {
            index.remove(k).expect("remove");
        }
        db.flush().expect("flush");
    }
    let s = SledStore::open(&d).expect("reopen");
    assert!(s.verify().is_empty(), "{:?}", s.verify());
    let slot1 = actor_seqs(&s, "slot1", 1);
    assert_eq!(slot1, [1, 3]);
    let slot2 = actor_seqs(&s, "slot2", 1);
    assert_eq!(slot2, [2]);
    drop(s);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_record_that_does_not_decode_is_reported_with_its_number() {
    let err = decode(7, b"\xc1garbage").expect_err("garbage");
    assert!(matches!(err, StoreError::Corrupt { seq: 7, .. }), "{err}");
    let env = Envelope {
        seq: 8,
        time: 0,
        actor: "slot1".into(),
        schema: 1,
        event: ev(0, "x"),
    };
    let err = decode(9, &encode(&env).expect("encodes")).expect_err("wrong number");
    assert!(
        err.to_string().contains("record 9") && err.to_string().contains("record 8"),
        "{err}"
    );
}

#[test]
fn golden_bytes_of_every_event_version_still_decode() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/events/v1-slot-activity-changed.hex");
    let hex = std::fs::read_to_string(&path).expect("fixture");
    let bytes: Vec<u8> = (0..hex.trim().len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex.trim()[i..i + 2], 16).expect("hex"))
        .collect();
    let env = decode(42, &bytes).expect("version 1 decodes");
    assert_eq!(env.schema, 1);
    assert_eq!(env.actor, "slot1");
    assert_eq!(
        env.event,
        Event::Slot(SlotEvent::ActivityChanged {
            at: 1_700_000_000,
            state: State::Claimed,
            activity: Activity::Busy,
            transition: roost::policy::slot::Transition::IdleToBusy,
            why: "starter spawned".into(),
        })
    );
}

#[derive(Clone, Debug)]
enum Op {
    Append(Vec<(String, i64)>),
    /// A batch larger than one record holds, of `n` events round-robin
    /// over the actors.
    Big(usize),
    StaleAppend,
    /// Take back everything from this many thousandths of the log on.
    Truncate(usize),
    Reopen,
}

const ACTORS: [&str; 3] = ["slot1", "slot2", "slot1_1"];

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => prop::collection::vec((prop::sample::select(ACTORS.to_vec()), 0i64..1000), 1..5)
            .prop_map(|v| Op::Append(v.into_iter().map(|(a, t)| (a.to_string(), t)).collect())),
        1 => (200usize..700).prop_map(Op::Big),
        1 => Just(Op::StaleAppend),
        1 => (0usize..1000).prop_map(Op::Truncate),
        1 => Just(Op::Reopen),
    ]
}

/// The log read back every way (from the start, from the middle, per actor
/// forwards and backwards) is exactly the model, and `verify` is clean.
fn check_against_model(store: &SledStore, model: &[(String, i64)]) -> Result<(), TestCaseError> {
    let got: Vec<(u64, String, i64)> = store
        .read_from(1)
        .map(|e| e.map(|e| (e.seq, e.actor, e.time)))
        .collect::<Result<_, _>>()
        .expect("decodes");
    let want: Vec<(u64, String, i64)> = model
        .iter()
        .enumerate()
        .map(|(i, (a, t))| (i as u64 + 1, a.clone(), *t))
        .collect();
    prop_assert_eq!(&got, &want);
    let mid = model.len() as u64 / 2 + 1;
    let tail: Vec<u64> = store
        .read_from(mid)
        .map(|e| e.expect("decodes").seq)
        .collect();
    prop_assert_eq!(tail, (mid..=model.len() as u64).collect::<Vec<_>>());
    for actor in ACTORS {
        let want: Vec<u64> = want
            .iter()
            .filter(|(_, a, _)| a == actor)
            .map(|(s, ..)| *s)
            .collect();
        let idx = actor_seqs(store, actor, 1);
        prop_assert_eq!(&idx, &want);
        let from_mid = actor_seqs(store, actor, mid);
        prop_assert_eq!(
            from_mid,
            want.iter()
                .copied()
                .filter(|s| *s >= mid)
                .collect::<Vec<_>>()
        );
        let back: Vec<u64> = store
            .read_actor_back(actor)
            .map(|e| e.expect("decodes").seq)
            .collect();
        prop_assert_eq!(back, want.iter().rev().copied().collect::<Vec<_>>());
    }
    prop_assert_eq!(store.reader().last_seq(), model.len() as u64);
    let problems = store.verify();
    prop_assert!(problems.is_empty(), "{:?}", problems);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Random appends (small, and larger than a record), refused appends,
    /// truncations and reopenings, against a model: the log always reads
    /// back exactly what was acknowledged, every way it can be read.
    #[test]
    fn the_log_matches_a_model(ops in prop::collection::vec(op(), 1..16)) {
        let d = dir(&format!("model-{}", rand_suffix(&ops)));
        let mut model: Vec<(String, i64)> = Vec::new();
        let mut store = SledStore::open(&d).expect("open");
        for o in ops {
            match o {
                Op::Append(batch) => {
                    let events: Vec<(i64, String, Event)> =
                        batch.iter().map(|(a, t)| (*t, a.clone(), ev(*t, "m"))).collect();
                    let next = store.append(store.next_seq(), &events).expect("append");
                    model.extend(batch);
                    prop_assert_eq!(next, model.len() as u64 + 1);
                }
                Op::Big(n) => {
                    let batch: Vec<(String, i64)> =
                        (0..n).map(|i| (ACTORS[i % 3].to_string(), i as i64)).collect();
                    let events: Vec<(i64, String, Event)> =
                        batch.iter().map(|(a, t)| (*t, a.clone(), ev(*t, "b"))).collect();
                    store.append(store.next_seq(), &events).expect("append");
                    model.extend(batch);
                }
                Op::StaleAppend => {
                    let stale = store.next_seq().saturating_sub(1);
                    prop_assert!(store.append(stale, &[(0, "slot1".into(), ev(0, "s"))]).is_err());
                }
                Op::Truncate(per_mille) => {
                    let keep = model.len() * per_mille / 1000;
                    store.truncate(keep as u64 + 1).expect("truncate");
                    model.truncate(keep);
                    prop_assert_eq!(store.next_seq(), keep as u64 + 1);
                }
                Op::Reopen => {
                    drop(store);
                    store = SledStore::open(&d).expect("reopen");
                }
            }
            check_against_model(&store, &model)?;
        }
        drop(store);
        let _ = std::fs::remove_dir_all(&d);
    }
}

fn rand_suffix(ops: &[Op]) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    format!("{ops:?}").hash(&mut h);
    format!("{:x}", h.finish())
}

#[test]
fn replaying_each_example_runs_log_gives_the_state_it_ended_in() {
    let examples = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/policies");
    let mut names: Vec<PathBuf> = std::fs::read_dir(&examples)
        .expect("examples")
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "toml"))
        .collect();
    names.sort();
    assert!(names.len() >= 5);
    for path in names {
        let sc =
            roost::policy::sim::Scenario::parse(&std::fs::read_to_string(&path).expect("example"))
                .expect("parses");
        let d = dir("replay");
        let mut store = SledStore::open(&d).expect("open");
        let finals = roost::policy::sim::simulate_with(
            &sc,
            |_| {},
            |actor, events| {
                let batch = roost::events::recorded_batch(actor, events);
                let next = store.next_seq();
                store
                    .append(next, &batch)
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            },
        )
        .expect("runs");
        // Every slot of the run (dynamic ones included), from the log alone.
        let replayed = Replay::run(store.read_from(1));
        assert!(replayed.problems.is_empty(), "{:?}", replayed.problems);
        assert_eq!(
            replayed.slots.len(),
            finals.slots.len(),
            "{}",
            path.display()
        );
        // The node's drain and shutdown too.
        assert_eq!(replayed.node, finals.node, "{}", path.display());
        for live in &finals.slots {
            assert_eq!(
                replayed.slots.get(&live.id),
                Some(live),
                "{}: {}",
                path.display(),
                live.id
            );
        }
        drop(store);
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn group_commit_serves_64_concurrent_appenders_without_loss() {
    use roost::events::GroupCommitter;
    let d = dir("group");
    let store = SledStore::open(&d).expect("open");
    let (committer, appender) = GroupCommitter::start(store);
    let mut threads = Vec::new();
    for w in 0..64 {
        let a = appender.clone();
        threads.push(std::thread::spawn(move || {
            let actor = format!("slot{w}");
            let mut acked = Vec::new();
            for i in 0..20i64 {
                let n = 1 + usize::try_from(i % 3).expect("small");
                let batch: Vec<(i64, String, Event)> = (0..n)
                    .map(|k| (i * 10 + k as i64, actor.clone(), ev(i, "g")))
                    .collect();
                let first = a.append(batch).expect("durable append");
                acked.push((first, n));
            }
            (actor, acked)
        }));
    }
    drop(appender);
    let results: Vec<(String, Vec<(u64, usize)>)> = threads
        .into_iter()
        .map(|t| t.join().expect("thread"))
        .collect();
    let store = committer.finish().expect("writer returns the store");
    let all: Vec<Envelope> = store.read_from(1).map(|e| e.expect("decodes")).collect();
    let total: usize = results
        .iter()
        .flat_map(|(_, a)| a.iter().map(|(_, n)| n))
        .sum();
    assert_eq!(all.len(), total, "every acknowledged event is in the log");
    assert!(
        all.iter().enumerate().all(|(i, e)| e.seq == i as u64 + 1),
        "contiguous"
    );
    for (actor, acked) in &results {
        for (first, n) in acked {
            for k in 0..*n as u64 {
                assert_eq!(
                    &all[usize::try_from(first + k - 1).expect("fits")].actor,
                    actor,
                    "batch kept together"
                );
            }
        }
        assert_eq!(
            store.read_actor(actor, 1).count(),
            acked.iter().map(|(_, n)| n).sum::<usize>()
        );
    }
    drop(store);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn recorded_batches_keep_their_place_and_reach_the_disk() {
    use roost::events::GroupCommitter;
    let d = dir("record");
    let store = SledStore::open(&d).expect("open");
    let reader = store.reader();
    let (committer, appender) = GroupCommitter::start(store);
    appender
        .record(vec![(1, "hook/1".into(), ev(1, "recorded first"))])
        .expect("record");
    let first = appender
        .append(vec![(2, "slot1".into(), ev(2, "durable"))])
        .expect("append");
    assert_eq!(first, 2, "the record took its place before the append");
    // A record with nothing durable after it is still written, on its own
    // within LAZY_FLUSH (while the appender stays), and so is one recorded
    // just before the writer stops.
    appender
        .record(vec![(3, "hook/2".into(), ev(3, "recorded later"))])
        .expect("record");
    let start = std::time::Instant::now();
    while reader.last_seq() < 3 {
        assert!(
            start.elapsed() < std::time::Duration::from_secs(60),
            "the lone record was never written"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    drop(reader);
    appender
        .record(vec![(4, "hook/3".into(), ev(4, "recorded last"))])
        .expect("record");
    drop(appender);
    let store = committer.finish().expect("store");
    drop(store);
    let store = SledStore::open(&d).expect("reopen");
    let actors: Vec<String> = store
        .read_from(1)
        .map(|e| e.expect("decodes").actor)
        .collect();
    assert_eq!(actors, ["hook/1", "slot1", "hook/2", "hook/3"]);
    drop(store);
    let _ = std::fs::remove_dir_all(&d);
}

/// Writes a log the way Roost did before batches were stored whole: one
/// bare envelope per sequence number, index entries with empty values.
fn write_older_layout(d: &std::path::Path, events: &[(&str, i64)]) {
    let db = crate::events_cli::raw_sled(d);
    let log = db.open_tree("log").expect("tree");
    let index = db.open_tree("by_actor").expect("tree");
    for (i, (actor, t)) in events.iter().enumerate() {
        let seq = i as u64 + 1;
        let env = Envelope {
            seq,
            time: *t,
            actor: actor.to_string(),
            schema: 1,
            event: ev(*t, "old"),
        };
        log.insert(seq.to_be_bytes(), encode(&env).expect("encodes"))
            .expect("insert");
        let mut k = actor.as_bytes().to_vec();
        k.push(0);
        k.extend_from_slice(&seq.to_be_bytes());
        index.insert(k, &[][..]).expect("insert");
    }
    db.flush().expect("flush");
}

#[test]
fn a_log_of_the_older_one_record_per_event_layout_reads_and_grows() {
    let d = dir("older");
    write_older_layout(&d, &[("slot1", 1), ("slot2", 2), ("slot1", 3)]);
    let mut s = SledStore::open(&d).expect("open");
    assert_eq!(s.next_seq(), 4);
    assert!(s.verify().is_empty(), "{:?}", s.verify());
    s.append(
        4,
        &[
            (4, "slot2".into(), ev(4, "new")),
            (5, "slot1".into(), ev(5, "new")),
        ],
    )
    .expect("append");
    let all: Vec<u64> = s.read_from(1).map(|e| e.expect("decodes").seq).collect();
    assert_eq!(all, [1, 2, 3, 4, 5]);
    let slot1 = actor_seqs(&s, "slot1", 2);
    assert_eq!(slot1, [3, 5]);
    let back: Vec<u64> = s
        .read_actor_back("slot1")
        .map(|e| e.expect("decodes").seq)
        .collect();
    assert_eq!(back, [5, 3, 1]);
    assert!(s.verify().is_empty(), "{:?}", s.verify());
    assert!(s.repair().expect("repair").is_empty(), "nothing to repair");
    s.truncate(3).expect("truncate");
    let all: Vec<u64> = s.read_from(1).map(|e| e.expect("decodes").seq).collect();
    assert_eq!(all, [1, 2]);
    assert!(s.verify().is_empty(), "{:?}", s.verify());
    drop(s);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_bad_envelope_inside_a_batch_is_set_aside_alone_and_its_neighbours_kept() {
    let d = dir("batch-damage");
    {
        let mut s = SledStore::open(&d).expect("open");
        let batch: Vec<(i64, String, Event)> = (1..=5)
            .map(|t| {
                let actor = if t % 2 == 0 { "slot2" } else { "slot1" };
                (t, actor.to_string(), ev(t, "b"))
            })
            .collect();
        s.append(1, &batch).expect("append");
    }
    let bad_bytes;
    {
        // Damage the third envelope of the record (event 3) in place: its
        // first byte becomes one MessagePack never uses.
        let db = crate::events_cli::raw_sled(&d);
        let log = db.open_tree("log").expect("tree");
        let mut record = log
            .get(1u64.to_be_bytes())
            .expect("get")
            .expect("record")
            .to_vec();
        let mut at = 1;
        for _ in 0..2 {
            let len = u32::from_le_bytes(record[at..at + 4].try_into().expect("len"));
            at += 4 + len as usize;
        }
        let len = u32::from_le_bytes(record[at..at + 4].try_into().expect("len")) as usize;
        record[at + 4] = 0xc1;
        bad_bytes = record[at + 4..at + 4 + len].to_vec();
        log.insert(1u64.to_be_bytes(), record).expect("insert");
        db.flush().expect("flush");
    }
    let mut s = SledStore::open(&d).expect("open");
    let problems = s.verify();
    assert!(
        problems
            .iter()
            .any(|p| p.contains("record 3 cannot be decoded")),
        "{problems:?}"
    );
    // Reading goes on past it, naming it.
    let read: Vec<Result<u64, String>> = s
        .read_from(1)
        .map(|e| e.map(|e| e.seq).map_err(|e| e.to_string()))
        .collect();
    assert_eq!(read.len(), 5);
    assert!(read[2].as_ref().is_err_and(|e| e.contains("record 3")));
    assert_eq!(read.iter().filter(|r| r.is_ok()).count(), 4);

    let done = s.repair().expect("repair");
    assert!(
        done.iter()
            .any(|d| d.contains("record 3 set aside in tree quarantine")),
        "{done:?}"
    );
    assert!(s.verify().is_empty(), "{:?}", s.verify());
    let all: Vec<u64> = s.read_from(1).map(|e| e.expect("decodes").seq).collect();
    assert_eq!(all, [1, 2, 4, 5], "every envelope that decodes is kept");
    let slot1 = actor_seqs(&s, "slot1", 1);
    assert_eq!(slot1, [1, 5]);
    let slot2: Vec<u64> = s
        .read_actor_back("slot2")
        .map(|e| e.expect("decodes").seq)
        .collect();
    assert_eq!(slot2, [4, 2]);
    assert_eq!(s.next_seq(), 6);
    s.append(6, &[(6, "slot1".into(), ev(6, "after"))])
        .expect("append after repair");
    drop(s);
    {
        let db = crate::events_cli::raw_sled(&d);
        let q = db.open_tree("quarantine").expect("tree");
        assert_eq!(
            q.get(3u64.to_be_bytes()).expect("get").as_deref(),
            Some(&bad_bytes[..]),
            "the damaged bytes are kept"
        );
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Runs scenario `text` in the simulator, appending each slot's events
/// through the group-commit writer with `checkpoints`; returns the slots the
/// run ended with and the store.
fn simulate_through_writer(
    text: &str,
    store: SledStore,
    checkpoints: roost::startd::Checkpointer,
) -> Result<(Vec<roost::policy::slot::Slot>, SledStore), TestCaseError> {
    let sc = roost::policy::sim::Scenario::parse(text).expect("scenario parses");
    let (committer, appender) = roost::events::GroupCommitter::start_with(store, Some(checkpoints));
    let finals = roost::policy::sim::simulate_with(
        &sc,
        |_| {},
        |actor, events| {
            appender
                .append(roost::events::recorded_batch(actor, events))
                .map(|_| ())
                .map_err(|e| e.to_string())
        },
    )
    .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
    drop(appender);
    Ok((finals.slots, committer.finish().expect("writer ends")))
}

/// The archive directories under `dir`, oldest first.
pub(crate) fn archive_parts(dir: &std::path::Path) -> Vec<PathBuf> {
    let mut parts: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|r| r.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    parts.sort_by_key(|p| {
        p.file_name()
            .and_then(|n| n.to_str())
            .and_then(|n| n.split('-').nth(1))
            .and_then(|n| n.parse::<u64>().ok())
    });
    parts
}

/// A digest of a text (to name a test's directory).
fn text_hash(text: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// A digest of every slot's whole state, in id order.
fn state_hash(slots: &std::collections::BTreeMap<String, &roost::policy::slot::Slot>) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    serde_json::to_string(slots)
        .expect("serializes")
        .hash(&mut h);
    h.finish()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(32))]

    /// Random simulated runs on each slot layout (offers, exits, vacates,
    /// drains, claims, keyboard use): the hash of the state the live run
    /// ended in equals the hash of the state replayed from its log alone,
    /// slot for slot, dynamic slots (and deleted ones) included.
    #[test]
    fn replaying_a_random_runs_log_gives_the_live_state(
        text in crate::policy_props::random_scenario_on(
            prop::sample::select(crate::policy_props::LAYOUTS.to_vec()),
        ),
    ) {
        let sc = roost::policy::sim::Scenario::parse(&text).expect("scenario parses");
        let d = dir(&format!("random-replay-{:x}", text_hash(&text)));
        let mut store = SledStore::open(&d).expect("open");
        let finals = roost::policy::sim::simulate_with(
            &sc,
            |_| {},
            |actor, events| {
                let next = store.next_seq();
                store
                    .write(next, &roost::events::recorded_batch(actor, events))
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            },
        )
        .map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        store.flush().expect("flush");
        let live: std::collections::BTreeMap<String, &roost::policy::slot::Slot> =
            finals.slots.iter().map(|s| (s.id.clone(), s)).collect();
        let replayed = Replay::run(store.read_from(1));
        prop_assert!(replayed.problems.is_empty(), "{:?}", replayed.problems);
        let from_log: std::collections::BTreeMap<String, &roost::policy::slot::Slot> =
            replayed.slots.iter().map(|(k, v)| (k.clone(), v)).collect();
        prop_assert_eq!(state_hash(&live), state_hash(&from_log), "{}", text);
        prop_assert_eq!(live, from_log);
        drop(store);
        let _ = std::fs::remove_dir_all(&d);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]

    /// The same random runs written through the group-commit writer with a
    /// checkpoint every few events: the whole log still replays to the live
    /// state, and replay from the last checkpoint alone gives every slot
    /// still alive exactly as the live run ended.
    #[test]
    fn replay_from_the_last_checkpoint_gives_the_live_state(
        text in crate::policy_props::random_scenario_on(
            prop::sample::select(crate::policy_props::LAYOUTS.to_vec()),
        ),
        every in 3u64..40,
    ) {
        use roost::events::DaemonEvent;
        use roost::startd::{CheckpointEvery, Checkpointer};
        let d = dir(&format!("checkpoint-replay-{every}-{:x}", text_hash(&text)));
        let store = SledStore::open(&d).expect("open");
        let every = CheckpointEvery { events: every, seconds: 0 };
        let (finals, store) =
            simulate_through_writer(&text, store, Checkpointer::new(Replay::default(), every))?;
        // The run's own events, checkpoints and snapshots aside.
        let written = store
            .read_from(1)
            .flatten()
            .filter(|e| {
                !matches!(
                    e.event,
                    Event::Daemon(DaemonEvent::Checkpoint { .. })
                        | Event::Slot(SlotEvent::Snapshot { .. })
                        | Event::Node(roost::policy::node::NodeEvent::Snapshot { .. })
                )
            })
            .count() as u64;
        let live: std::collections::BTreeMap<String, &roost::policy::slot::Slot> =
            finals.iter().map(|s| (s.id.clone(), s)).collect();

        let whole = Replay::run(store.read_from(1));
        prop_assert!(whole.problems.is_empty(), "{:?}", whole.problems);
        let from_log: std::collections::BTreeMap<String, &roost::policy::slot::Slot> =
            whole.slots.iter().map(|(k, v)| (k.clone(), v)).collect();
        prop_assert_eq!(&live, &from_log);

        let checkpoints = store
            .read_actor("daemon", 1)
            .filter(|e| matches!(e, Ok(e) if matches!(e.event, Event::Daemon(DaemonEvent::Checkpoint { .. }))))
            .count() as u64;
        prop_assert!(
            checkpoints >= written / (every.events + 1) / 2,
            "{} checkpoints for {} events, one due every {}",
            checkpoints, written, every.events
        );
        // At the end of every stretch between checkpoints, replay from the
        // stretch's checkpoint alone agrees with replay from the beginning
        // on every slot alive.
        let alive = |r: &Replay| -> std::collections::BTreeMap<String, roost::policy::slot::Slot> {
            r.slots.iter().filter(|(_, s)| !s.deleted).map(|(k, v)| (k.clone(), v.clone())).collect()
        };
        let mut full = Replay::default();
        let mut part: Option<Replay> = None;
        let mut compared = 0;
        for env in store.read_from(1) {
            let env = env.expect("decodes");
            if matches!(env.event, Event::Daemon(DaemonEvent::Checkpoint { .. })) {
                if let Some(p) = part.take() {
                    prop_assert_eq!(alive(&full), alive(&p), "before checkpoint {}", env.seq);
                    compared += 1;
                }
                part = Some(Replay::default());
            }
            full.apply(&env);
            if let Some(p) = part.as_mut() {
                p.apply(&env);
            }
        }
        prop_assert_eq!(compared + 1, checkpoints);
        let last = Replay::from_last_start(&store);
        prop_assert!(last.problems.is_empty(), "{:?}", last.problems);
        let live_alive: std::collections::BTreeMap<String, &roost::policy::slot::Slot> =
            live.iter().filter(|(_, s)| !s.deleted).map(|(k, v)| (k.clone(), *v)).collect();
        let from_checkpoint: std::collections::BTreeMap<String, &roost::policy::slot::Slot> =
            last.slots.iter().filter(|(_, s)| !s.deleted).map(|(k, v)| (k.clone(), v)).collect();
        prop_assert_eq!(state_hash(&live_alive), state_hash(&from_checkpoint));
        prop_assert_eq!(live_alive, from_checkpoint);
        drop(store);
        let _ = std::fs::remove_dir_all(&d);
    }
}

#[test]
fn pruning_splits_the_record_holding_the_cut_and_the_archive_is_a_log_of_its_own() {
    let d = dir("prune");
    let archive = d.join("archive");
    let mut s = SledStore::open(&d.join("log")).expect("open");
    let batch = |from: i64, n: i64| -> Vec<(i64, String, Event)> {
        (from..from + n)
            .map(|t| {
                let actor = ACTORS[usize::try_from(t % 3).expect("small")];
                (t, actor.to_string(), ev(t, "p"))
            })
            .collect()
    };
    s.append(1, &batch(1, 10)).expect("append"); // events 1-10, one record
    s.append(11, &batch(11, 10)).expect("append"); // events 11-20
    let gone = s.prune_before(15, Some(&archive)).expect("prune");
    assert_eq!(gone, 14);
    assert!(s.verify().is_empty(), "{:?}", s.verify());
    let kept: Vec<u64> = s.read_from(1).map(|e| e.expect("decodes").seq).collect();
    assert_eq!(kept, (15..=20).collect::<Vec<_>>());
    assert_eq!(s.reader().first_seq(), 15);
    let slot2 = actor_seqs(&s, "slot2", 1);
    assert_eq!(slot2, [16, 19]);
    // The log goes on from where it was.
    assert_eq!(s.append(21, &batch(21, 1)).expect("append"), 22);
    drop(s);

    let a = SledStore::open(&archive).expect("archive opens as a log");
    assert!(a.verify().is_empty(), "{:?}", a.verify());
    let archived: Vec<u64> = a.read_from(1).map(|e| e.expect("decodes").seq).collect();
    assert_eq!(archived, (1..=14).collect::<Vec<_>>());
    let slot2 = actor_seqs(&a, "slot2", 1);
    assert_eq!(slot2, [1, 4, 7, 10, 13]);
    drop(a);
    let _ = std::fs::remove_dir_all(&d);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(8))]

    /// Random runs through the writer with a checkpoint every few events
    /// and a small size cap: the log left starts where replay can begin and
    /// replays to the live state of every slot alive, and the archives and
    /// the log together hold every event exactly once, in order.
    #[test]
    fn a_log_cut_to_its_retention_still_replays_and_the_archives_hold_the_rest(
        text in crate::policy_props::random_scenario_on(
            prop::sample::select(crate::policy_props::LAYOUTS.to_vec()),
        ),
    ) {
        use roost::events::Retention;
        use roost::startd::{CheckpointEvery, Checkpointer};
        let d = dir(&format!("retention-{:x}", text_hash(&text)));
        let archive = d.join("archive");
        let store = SledStore::open(&d.join("log")).expect("open");
        let checkpoints = Checkpointer::new(
            Replay::default(),
            CheckpointEvery { events: 40, seconds: 0 },
        )
        .with_retention(Retention {
            keep_seconds: None,
            keep_bytes: Some(20_000),
            archive: Some(archive.clone()),
            keep_claims_seconds: Some(1 << 40),
            claims_file: Some(d.join("claims-kept.jsonl")),
        });
        let (finals, store) = simulate_through_writer(&text, store, checkpoints)?;
        let kept = Replay::run(store.read_from(1));
        prop_assert!(kept.problems.is_empty(), "{:?}", kept.problems);
        let alive: std::collections::BTreeMap<String, &roost::policy::slot::Slot> =
            finals.iter().filter(|s| !s.deleted).map(|s| (s.id.clone(), s)).collect();
        let replayed: std::collections::BTreeMap<String, &roost::policy::slot::Slot> =
            kept.slots.iter().filter(|(_, s)| !s.deleted).map(|(k, v)| (k.clone(), v)).collect();
        prop_assert_eq!(alive, replayed);
        prop_assert!(store.verify().is_empty(), "{:?}", store.verify());

        let mut seqs: Vec<u64> = Vec::new();
        let parts = archive_parts(&archive);
        for part in &parts {
            let a = SledStore::open(part).expect("archive opens");
            prop_assert!(a.verify().is_empty(), "{:?}", a.verify());
            seqs.extend(a.read_from(1).map(|e| e.expect("decodes").seq));
        }
        let first_kept = store.reader().first_seq();
        if store.reader().last_seq() > 200 {
            prop_assert!(first_kept > 1, "a log of {} events was not cut", store.reader().last_seq());
        }
        seqs.extend(store.read_from(1).map(|e| e.expect("decodes").seq));
        prop_assert_eq!(seqs, (1..=store.reader().last_seq()).collect::<Vec<_>>());

        // The claims kept from the cut events, joined with the audit of the
        // log left, are the audit trail of the whole run.
        let mut everything: Vec<Envelope> = Vec::new();
        for part in &parts {
            let a = SledStore::open(part).expect("archive opens");
            everything.extend(a.read_from(1).map(|e| e.expect("decodes")));
        }
        everything.extend(store.read_from(1).map(|e| e.expect("decodes")));
        let whole = roost::startd::audit::claims(&everything);
        let mut pieces: Vec<roost::startd::audit::ClaimRecord> =
            std::fs::read_to_string(d.join("claims-kept.jsonl"))
                .unwrap_or_default()
                .lines()
                .map(|l| serde_json::from_str(l).expect("a kept claim"))
                .collect();
        let live: Vec<Envelope> = store.read_from(1).map(|e| e.expect("decodes")).collect();
        pieces.extend(roost::startd::audit::claims(&live));
        prop_assert_eq!(roost::startd::audit::join(pieces), whole);
        drop(store);
        let _ = std::fs::remove_dir_all(&d);
    }
}
