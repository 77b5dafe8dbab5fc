//! Schema evolution: decoding envelopes written with an older schema.
//!
//! An envelope records the schema version it was written with. When the
//! shape of an event changes, [`SCHEMA`](super::SCHEMA) goes up by one and an
//! upcaster is added to [`UPCASTERS`]: a function that rewrites a decoded
//! envelope of the previous version, as a generic MessagePack tree, into the
//! next. Decoding an old record runs every upcaster from its version to
//! today's, then reads the result as today's [`Envelope`]; a record of
//! today's version is read directly. Golden bytes of every version
//! (`tests/fixtures/events/v<N>`) must keep decoding forever.

use rmpv::Value;

use super::{Envelope, LogEvent, SCHEMA, StoreError};

/// Rewrites an envelope of one schema version into the next, in place.
pub type Upcaster = fn(&mut Value) -> Result<(), Unfit>;

/// What an upcaster found in a record that does not fit the version it
/// rewrites (the record is then reported as corrupt, naming this).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Unfit(pub &'static str);

/// `UPCASTERS[i]` takes schema `i + 1` to `i + 2`. Schema 1 is the only
/// version written so far, so there is none yet.
pub const UPCASTERS: &[Upcaster] = &[];

/// The field `name` of a MessagePack map.
pub fn field<'a>(map: &'a mut Value, name: &str) -> Option<&'a mut Value> {
    match map {
        Value::Map(entries) => entries
            .iter_mut()
            .find(|(k, _)| k.as_str() == Some(name))
            .map(|(_, v)| v),
        _ => None,
    }
}

/// Decodes an envelope stored under `seq`, upcasting it from its schema
/// version to `current` with `upcasters` (`upcasters[i]` takes `i + 1` to
/// `i + 2`).
pub fn decode_with<E: LogEvent>(
    seq: u64,
    bytes: &[u8],
    current: u16,
    upcasters: &[Upcaster],
) -> Result<Envelope<E>, StoreError> {
    let corrupt = |message: String| StoreError::Corrupt { seq, message };
    let direct = rmp_serde::from_slice::<Envelope<E>>(bytes);
    let env = match direct {
        Ok(env) if env.schema == current => env,
        direct => {
            let first_error = direct.err().map(|e| e.to_string());
            let mut value = match rmpv::decode::read_value(&mut &bytes[..]) {
                Ok(v) => v,
                Err(e) => return Err(corrupt(first_error.unwrap_or_else(|| e.to_string()))),
            };
            let schema = field(&mut value, "schema")
                .and_then(|v| v.as_u64())
                .ok_or_else(|| {
                    corrupt(
                        first_error
                            .clone()
                            .unwrap_or_else(|| "it has no schema version".into()),
                    )
                })?;
            if schema > u64::from(current) {
                return Err(corrupt(format!(
                    "it was written with schema version {schema}, newer than this Roost reads \
                     ({current}): read it with a newer roost-log"
                )));
            }
            if schema == 0 {
                return Err(corrupt("its schema version is 0".into()));
            }
            for from in schema..u64::from(current) {
                let Some(up) = usize::try_from(from - 1)
                    .ok()
                    .and_then(|i| upcasters.get(i))
                else {
                    return Err(corrupt(format!("no upcaster from schema version {from}")));
                };
                up(&mut value)
                    .map_err(|m| corrupt(format!("upcasting from schema version {from}: {m}")))?;
                if let Some(v) = field(&mut value, "schema") {
                    *v = Value::from(from + 1);
                }
            }
            // Read back through rmp-serde, which reads enums as it wrote
            // them (a map from variant name to fields).
            let mut upcast = Vec::with_capacity(bytes.len() + 16);
            rmpv::encode::write_value(&mut upcast, &value)
                .map_err(|e| corrupt(format!("re-encoding after upcasting: {e}")))?;
            rmp_serde::from_slice::<Envelope<E>>(&upcast).map_err(|e| {
                corrupt(format!("after upcasting from schema version {schema}: {e}"))
            })?
        }
    };
    if env.seq != seq {
        return Err(corrupt(format!("it says it is record {}", env.seq)));
    }
    Ok(env)
}

/// Decodes an envelope of any schema version this Roost knows, as event
/// type `E` (a daemon's own, or [`super::Event`], which reads every
/// daemon's log). The upcasters work on the record's encoding, before it
/// is read as any type, so one list serves every daemon.
pub fn decode_as<E: LogEvent>(seq: u64, bytes: &[u8]) -> Result<Envelope<E>, StoreError> {
    decode_with(seq, bytes, SCHEMA, UPCASTERS)
}

/// Decodes an envelope as [`super::Event`], as every daemon's log reads.
pub fn decode(seq: u64, bytes: &[u8]) -> Result<Envelope, StoreError> {
    decode_as(seq, bytes)
}

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use super::*;
    use crate::events::{DaemonEvent, Event};

    /// `Daemon.Command` as an imagined schema 1 wrote it (its field was
    /// `cmd`), and an imagined schema 2 (`command`, in upper case).
    #[derive(Serialize)]
    enum OldEvent {
        Daemon(OldDaemon),
    }
    #[derive(Serialize)]
    enum OldDaemon {
        Command { cmd: String },
    }
    #[derive(Serialize)]
    struct OldEnvelope {
        seq: u64,
        time: i64,
        actor: String,
        schema: u16,
        event: OldEvent,
    }

    fn old(seq: u64, schema: u16) -> Vec<u8> {
        rmp_serde::to_vec_named(&OldEnvelope {
            seq,
            time: 5,
            actor: "daemon".into(),
            schema,
            event: OldEvent::Daemon(OldDaemon::Command {
                cmd: "drain graceful".into(),
            }),
        })
        .expect("encodes")
    }

    /// 1 → 2: the field `cmd` is renamed `command`.
    fn rename(env: &mut Value) -> Result<(), Unfit> {
        let event = field(env, "event").ok_or(Unfit("no event"))?;
        let daemon = field(event, "Daemon").ok_or(Unfit("not a daemon event"))?;
        let Some(Value::Map(fields)) = field(daemon, "Command") else {
            return Ok(());
        };
        for (k, _) in fields.iter_mut() {
            if k.as_str() == Some("cmd") {
                *k = Value::from("command");
            }
        }
        Ok(())
    }

    /// 2 → 3: commands are written in upper case.
    fn upper(env: &mut Value) -> Result<(), Unfit> {
        let event = field(env, "event").ok_or(Unfit("no event"))?;
        let daemon = field(event, "Daemon").ok_or(Unfit("not a daemon event"))?;
        if let Some(command) = field(daemon, "Command").and_then(|c| field(c, "command")) {
            let text = command
                .as_str()
                .ok_or(Unfit("command is not a string"))?
                .to_uppercase();
            *command = Value::from(text);
        }
        Ok(())
    }

    fn failing(_: &mut Value) -> Result<(), Unfit> {
        Err(Unfit("cannot"))
    }

    /// `Daemon.Command off` as schema 2 writes it.
    fn off(seq: u64) -> Vec<u8> {
        crate::events::encode(&Envelope {
            seq,
            time: 5,
            actor: "daemon".into(),
            schema: 2,
            event: Event::Daemon(DaemonEvent::Command {
                command: "off".into(),
            }),
        })
        .expect("encodes")
    }

    fn command(env: &Envelope) -> &str {
        match &env.event {
            Event::Daemon(DaemonEvent::Command { command }) => command,
            other => panic!("not a command: {other:?}"),
        }
    }

    #[test]
    fn an_old_record_is_upcast_through_every_version_to_todays() {
        let env = decode_with(4, &old(4, 1), 3, &[rename, upper]).expect("upcasts");
        assert_eq!(env.schema, 3);
        assert_eq!(command(&env), "DRAIN GRACEFUL");
        assert_eq!((env.seq, env.time, env.actor.as_str()), (4, 5, "daemon"));
        // From the middle of the chain: only the later upcasters run.
        let mid = off(4);
        let env = decode_with(4, &mid, 3, &[failing, upper]).expect("upcasts");
        assert_eq!(command(&env), "OFF");
    }

    #[test]
    fn a_record_of_todays_version_is_read_without_upcasting() {
        let today = off(9);
        let env = decode_with(9, &today, 2, &[failing]).expect("reads directly");
        assert_eq!(command(&env), "off");
    }

    #[test]
    fn newer_missing_and_failing_versions_are_errors_naming_record_and_version() {
        let e = decode_with::<Event>(4, &old(4, 7), 3, &[rename, upper]).expect_err("newer");
        let text = e.to_string();
        assert!(
            text.contains("record 4") && text.contains("schema version 7"),
            "{text}"
        );
        let e = decode_with::<Event>(4, &old(4, 1), 3, &[rename]).expect_err("no 2 -> 3");
        assert!(
            e.to_string().contains("no upcaster from schema version 2"),
            "{e}"
        );
        let e = decode_with::<Event>(4, &old(4, 1), 2, &[failing]).expect_err("fails");
        assert!(
            e.to_string()
                .contains("upcasting from schema version 1: cannot"),
            "{e}"
        );
        // Without the rename the old shape does not fit today's event.
        let e = decode_with::<Event>(4, &old(4, 1), 2, &[|_| Ok(())]).expect_err("misfit");
        assert!(
            e.to_string()
                .contains("after upcasting from schema version 1"),
            "{e}"
        );
        let e = decode_with::<Event>(5, &old(4, 1), 2, &[rename]).expect_err("wrong number");
        assert!(e.to_string().contains("it says it is record 4"), "{e}");
        let e = decode_with::<Event>(4, b"\xc1", 1, &[]).expect_err("garbage");
        assert!(e.to_string().contains("record 4 cannot be decoded"), "{e}");
    }
}
