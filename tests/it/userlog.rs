//! The StarterUserLog format against HTCondor: the records Roost writes
//! are byte for byte those HTCondor 23.9.6 wrote for the same events
//! (`tests/fixtures/userlog/htcondor-*`, captured from a real node), and
//! HTCondor's own reader (`htcondor2.JobEventLog`, through
//! `tools/userlog_oracle.py`) reads every record Roost writes, in both the
//! text and the XML form, back to exactly what Roost meant.
//!
//! `ROOST_BLESS=1 cargo test userlog` rewrites `roost.log` and `roost.xml`
//! when the writer changes on purpose; then rerun the oracle script.

use std::path::PathBuf;

use roost::userlog::{AttrValue, End, Event, JobId, Stage, Stamp, Usage, attributes, text, xml};

fn fixtures() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/userlog")
}

fn read(name: &str) -> String {
    std::fs::read_to_string(fixtures().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn at(h: u32, mi: u32, s: u32, millis: u32) -> Stamp {
    Stamp {
        date: (2026, 11, 22),
        time: (h, mi, s),
        millis,
    }
}

const ONE: JobId = JobId {
    cluster: 1,
    proc: 0,
};

fn host(port: u16) -> String {
    format!("<127.0.0.1:{port}?addrs=127.0.0.1-{port}&alias=vm>")
}

fn terminated(end: End) -> Event {
    Event::Terminated {
        end,
        usage: Usage::default(),
    }
}

#[test]
fn roost_writes_the_records_htcondor_wrote_for_the_same_events() {
    let text_of = |records: &[(Stamp, Event)]| -> String {
        records.iter().map(|(t, e)| text(ONE, *t, e)).collect()
    };
    // A job that exited 0.
    let ok = [
        (at(1, 41, 13, 0), Event::Execute { host: host(33793) }),
        (at(1, 41, 13, 0), terminated(End::Exit(0))),
    ];
    assert_eq!(text_of(&ok), read("htcondor-text.log"));

    // A vacated job.
    let vacated = [
        (at(1, 44, 48, 0), Event::Execute { host: host(35957) }),
        (
            at(1, 45, 14, 0),
            Event::Evicted {
                usage: Usage::default(),
            },
        ),
    ];
    assert_eq!(text_of(&vacated), read("htcondor-evicted.log"));

    // A job killed by a signal, then three PREPARE_JOB failures.
    let error = |t: Stamp, port: u16, message: &str| {
        (
            t,
            Event::StarterError {
                host: host(port),
                message: message.into(),
            },
        )
    };
    let failures = [
        (at(1, 44, 18, 0), Event::Execute { host: host(33131) }),
        (at(1, 44, 18, 0), terminated(End::Signal(9))),
        error(
            at(1, 44, 20, 0),
            37459,
            "PREPARE_JOB (prepare_job) failed (exited with status 1): <no message>",
        ),
        error(
            at(1, 44, 24, 0),
            39569,
            "PREPARE_JOB (prepare_job) failed (reported status 301): roost says later",
        ),
        error(
            at(1, 44, 27, 0),
            34707,
            "PREPARE_JOB (prepare_job) failed (reported status 042): roost says hold",
        ),
    ];
    assert_eq!(text_of(&failures), read("htcondor-signal-and-prepare.log"));

    // The XML form of a job that exited 1.
    let xml_records = [
        (at(1, 44, 15, 192), Event::Execute { host: host(42361) }),
        (at(1, 44, 15, 253), terminated(End::Exit(1))),
    ];
    let ours: String = xml_records.iter().map(|(t, e)| xml(ONE, *t, e)).collect();
    assert_eq!(ours, read("htcondor-xml.xml"));

    // The access point's records: a job submitted, then removed, as
    // HTCondor 23.9.6's schedd wrote them (the router cases' capture).
    let on = |h, mi, s| Stamp {
        date: (2026, 12, 7),
        time: (h, mi, s),
        millis: 0,
    };
    let removed = [
        (
            on(14, 1, 16),
            Event::Submitted {
                host: "<127.0.0.1:15557?addrs=127.0.0.1-15557&alias=vm.roost.test>".into(),
            },
        ),
        (
            on(14, 1, 30),
            Event::Aborted {
                reason: "via condor_rm (by user condor)".into(),
            },
        ),
    ];
    let id = JobId {
        cluster: 13,
        proc: 0,
    };
    let ours: String = removed.iter().map(|(t, e)| text(id, *t, e)).collect();
    let theirs = fixtures().join("../router/cases/htcondor/RS.log");
    assert_eq!(ours, std::fs::read_to_string(theirs).expect("RS.log"));
}

/// Every kind of record, with awkward values: ids past three digits,
/// markup and quotes in strings, multi-line errors, usage past a day.
fn samples() -> Vec<(JobId, Stamp, Event)> {
    let id = JobId {
        cluster: 1234,
        proc: 56,
    };
    let usage = Usage {
        user: 2 * 86_400 + 3 * 3600 + 4 * 60 + 5,
        system: 61,
    };
    vec![
        (
            id,
            at(0, 0, 1, 7),
            Event::Execute {
                host: "<node-7.example.org>".into(),
            },
        ),
        (id, at(0, 1, 0, 0), Event::Suspended { pids: 3 }),
        (id, at(0, 2, 0, 999), Event::Unsuspended),
        (id, at(9, 59, 59, 0), Event::Evicted { usage }),
        (
            ONE,
            at(10, 0, 0, 500),
            Event::Terminated {
                end: End::Exit(255),
                usage,
            },
        ),
        (
            JobId {
                cluster: 7,
                proc: 0,
            },
            at(23, 59, 59, 1),
            Event::Terminated {
                end: End::Signal(15),
                usage: Usage::default(),
            },
        ),
        (
            ONE,
            at(12, 0, 0, 0),
            Event::StarterError {
                host: "<a&b>".into(),
                message: "cannot open In file \"in put\" & 'more' <here>\nsecond line: 50% done\\"
                    .into(),
            },
        ),
        // The access point's records (roost schedd).
        (
            id,
            at(0, 0, 0, 0),
            Event::Submitted {
                host: "<127.0.0.1:9618?addrs=127.0.0.1-9618&alias=ap.example.org>".into(),
            },
        ),
        (
            id,
            at(0, 0, 2, 0),
            Event::Transfer {
                stage: Stage::InputStarted,
                host: Some("slot1@node-7.example.org".into()),
            },
        ),
        (
            id,
            at(0, 0, 3, 250),
            Event::Transfer {
                stage: Stage::InputFinished,
                host: None,
            },
        ),
        (
            id,
            at(0, 5, 0, 0),
            Event::Transfer {
                stage: Stage::OutputStarted,
                host: Some("<a&b>".into()),
            },
        ),
        (
            id,
            at(0, 5, 1, 0),
            Event::Transfer {
                stage: Stage::OutputFinished,
                host: Some("slot1@node-7.example.org".into()),
            },
        ),
        (
            id,
            at(1, 0, 0, 0),
            Event::Requeued {
                end: End::Exit(3),
                usage,
            },
        ),
        (
            ONE,
            at(1, 0, 1, 0),
            Event::Requeued {
                end: End::Signal(9),
                usage: Usage::default(),
            },
        ),
        (
            id,
            at(2, 0, 0, 0),
            Event::Held {
                reason: "The job attribute OnExitHold expression 'ExitCode == 3' evaluated to TRUE"
                    .into(),
                code: 3,
                subcode: 0,
            },
        ),
        (
            ONE,
            at(2, 0, 1, 0),
            Event::Held {
                reason: String::new(),
                code: 1,
                subcode: 0,
            },
        ),
        (
            id,
            at(2, 30, 0, 0),
            Event::Released {
                reason: "via roost release (by user alice)".into(),
            },
        ),
        (
            ONE,
            at(2, 30, 1, 0),
            Event::Released {
                reason: String::new(),
            },
        ),
        (
            id,
            at(3, 0, 0, 0),
            Event::Aborted {
                reason: "via roost rm (by user alice)".into(),
            },
        ),
        (
            ONE,
            at(3, 0, 1, 0),
            Event::Aborted {
                reason: String::new(),
            },
        ),
    ]
}

fn oracle_value(v: &serde_json::Value) -> AttrValue {
    match v {
        serde_json::Value::Bool(b) => AttrValue::Bool(*b),
        serde_json::Value::Number(n) if n.is_i64() => AttrValue::Int(n.as_i64().unwrap_or(0)),
        serde_json::Value::Number(n) => AttrValue::Real(n.as_f64().unwrap_or(f64::NAN)),
        serde_json::Value::String(s) => AttrValue::Str(s.clone()),
        other => panic!("unexpected value from the oracle: {other}"),
    }
}

fn epoch(at: Stamp) -> i64 {
    let (y, mo, d) = at.date;
    let (h, mi, s) = at.time;
    let t = jiff::civil::date(
        i16::try_from(y).expect("year"),
        i8::try_from(mo).expect("month"),
        i8::try_from(d).expect("day"),
    )
    .at(
        i8::try_from(h).expect("hour"),
        i8::try_from(mi).expect("minute"),
        i8::try_from(s).expect("second"),
        0,
    );
    t.to_zoned(jiff::tz::TimeZone::UTC)
        .expect("in range")
        .timestamp()
        .as_second()
}

#[test]
fn htcondor_reads_every_record_roost_writes_back_to_what_was_meant() {
    let samples = samples();
    let log: String = samples.iter().map(|(i, t, e)| text(*i, *t, e)).collect();
    let xml_log: String = samples.iter().map(|(i, t, e)| xml(*i, *t, e)).collect();
    let bless = std::env::var_os("ROOST_BLESS").is_some();
    for (name, ours) in [("roost.log", &log), ("roost.xml", &xml_log)] {
        let path = fixtures().join(name);
        if bless {
            std::fs::write(&path, ours).expect("write fixture");
        }
        assert_eq!(
            &read(name),
            ours,
            "{name} is not what the writer writes today: ROOST_BLESS=1 rewrites it, \
             then rerun tools/userlog_oracle.py"
        );
    }
    let oracle: serde_json::Value =
        serde_json::from_str(&read("htcondor-read.json")).expect("oracle JSON");
    for form in ["text", "xml"] {
        let read_back = oracle[form].as_array().expect("a list of events");
        assert_eq!(read_back.len(), samples.len(), "{form}: events read");
        for ((id, at, event), got) in samples.iter().zip(read_back) {
            let what = format!("{form} {event:?}");
            assert_eq!(got["type"], u64::from(event.number()), "{what}");
            assert_eq!(got["cluster"], id.cluster, "{what}");
            assert_eq!(got["proc"], id.proc, "{what}");
            assert_eq!(got["timestamp"], epoch(*at), "{what}");
            let attrs: Vec<(String, AttrValue)> = got["attributes"]
                .as_array()
                .expect("attributes")
                .iter()
                .map(|p| {
                    (
                        p[0].as_str().expect("name").to_string(),
                        oracle_value(&p[1]),
                    )
                })
                .collect();
            let mut meant: Vec<(String, AttrValue)> = attributes(*id, *at, event)
                .into_iter()
                .map(|(n, v)| (n.to_string(), v))
                .collect();
            if form == "text" {
                // The text form has no milliseconds.
                for (n, v) in &mut meant {
                    if n == "EventTime"
                        && let AttrValue::Str(s) = v
                        && let Some((whole, _)) = s.split_once('.')
                    {
                        *s = whole.to_string();
                    }
                }
            }
            assert_eq!(attrs, meant, "{what}");
        }
    }
}
