//! A small blocking etcd v3 client over etcd's JSON gateway (`/v3/…`, the
//! gRPC API as HTTP and JSON, served on every client port since etcd 3.4):
//! leases, put, range by prefix, delete, and authentication (a user and
//! password give a token, asked again when etcd says it expired). Keys and
//! values travel base64-encoded, numbers as strings, as the gateway wants.
//! Each endpoint is tried in turn until one answers. Blocking: call it
//! from a thread of its own, never from an actor.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};

/// What went wrong talking to etcd.
#[derive(Debug, thiserror::Error)]
pub enum EtcdError {
    /// No endpoint answered.
    #[error("no etcd endpoint answered ({endpoints}): {last}")]
    Unreachable {
        /// The endpoints tried.
        endpoints: String,
        /// The last one's error.
        last: String,
    },
    /// etcd answered with an error.
    #[error("etcd refused {call}: {message}")]
    Refused {
        /// The call (`kv/put`, …).
        call: String,
        /// etcd's message.
        message: String,
    },
    /// An answer that is not what the gateway sends.
    #[error("etcd's answer to {call} is not understood: {message}")]
    Garbled {
        /// The call.
        call: String,
        /// What is wrong with it.
        message: String,
    },
}

/// A user and password etcd authenticates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    /// The etcd user.
    pub user: String,
    /// Its password.
    pub password: String,
}

/// One key and its value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Kv {
    /// The key.
    pub key: String,
    /// The value.
    pub value: Vec<u8>,
}

/// An etcd client: endpoints (`http://host:port`), credentials, a token.
#[derive(Debug)]
pub struct Etcd {
    endpoints: Vec<String>,
    agent: ureq::Agent,
    credentials: Option<Credentials>,
    token: std::sync::Mutex<Option<String>>,
    timeout: Duration,
}

/// The end of the range of keys that begin with `prefix` (etcd's
/// `range_end`): the prefix with its last byte below 0xff raised by one.
pub fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < 0xff {
            end.push(last + 1);
            return end;
        }
    }
    // Every byte 0xff (or empty): all keys from the prefix on.
    vec![0]
}

fn b64(bytes: &[u8]) -> String {
    STANDARD.encode(bytes)
}

/// An int64 as the gateway writes it (a string) or a JSON number.
fn int(v: &Value) -> Option<i64> {
    match v {
        Value::String(s) => s.parse().ok(),
        Value::Number(n) => n.as_i64(),
        _ => None,
    }
}

/// The key-values of a range answer.
pub fn kvs_of(answer: &Value) -> Result<Vec<Kv>, EtcdError> {
    let garbled = |message: &str| EtcdError::Garbled {
        call: "kv/range".into(),
        message: message.into(),
    };
    let Some(kvs) = answer.get("kvs") else {
        return Ok(Vec::new());
    };
    let kvs = kvs.as_array().ok_or_else(|| garbled("kvs is not a list"))?;
    let decode = |v: Option<&Value>| match v {
        None => Ok(Vec::new()),
        Some(Value::String(s)) => STANDARD.decode(s).map_err(|e| garbled(&e.to_string())),
        Some(_) => Err(garbled("a key or value is not base64 text")),
    };
    kvs.iter()
        .map(|kv| {
            let key = decode(kv.get("key"))?;
            Ok(Kv {
                key: String::from_utf8(key).map_err(|_| garbled("a key is not UTF-8"))?,
                value: decode(kv.get("value"))?,
            })
        })
        .collect()
}

fn is_timeout(err: &std::io::Error) -> bool {
    matches!(
        err.kind(),
        std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
    )
}

/// Whether one line of a watch's stream says the range changed: events,
/// or the watch cancelled (its start compacted away) — read again then.
fn watch_says_changed(line: &str) -> Result<bool, EtcdError> {
    let v: Value = serde_json::from_str(line).map_err(|e| EtcdError::Garbled {
        call: "watch".into(),
        message: e.to_string(),
    })?;
    if let Some(err) = v.get("error") {
        return Err(EtcdError::Refused {
            call: "watch".into(),
            message: err
                .get("message")
                .and_then(Value::as_str)
                .unwrap_or("error")
                .to_string(),
        });
    }
    let Some(r) = v.get("result") else {
        return Ok(false);
    };
    let events = r
        .get("events")
        .and_then(Value::as_array)
        .is_some_and(|e| !e.is_empty());
    let cancelled = r.get("canceled").and_then(Value::as_bool) == Some(true)
        || r.get("compact_revision").and_then(int).unwrap_or(0) > 0;
    Ok(events || cancelled)
}

impl Etcd {
    /// A client of `endpoints`, each call given `timeout`.
    pub fn new(
        endpoints: Vec<String>,
        credentials: Option<Credentials>,
        timeout: Duration,
    ) -> Etcd {
        Etcd {
            endpoints: endpoints
                .into_iter()
                .map(|e| e.trim_end_matches('/').to_string())
                .collect(),
            agent: ureq::AgentBuilder::new()
                .timeout_connect(timeout)
                .timeout(timeout)
                .build(),
            credentials,
            token: std::sync::Mutex::new(None),
            timeout,
        }
    }

    /// The endpoints, as given.
    pub fn endpoints(&self) -> &[String] {
        &self.endpoints
    }

    fn token(&self) -> Option<String> {
        self.token.lock().ok().and_then(|t| t.clone())
    }

    fn set_token(&self, token: Option<String>) {
        if let Ok(mut t) = self.token.lock() {
            *t = token;
        }
    }

    /// One POST to the first endpoint that answers.
    fn post(&self, call: &str, body: &Value, token: Option<&str>) -> Result<Value, EtcdError> {
        let mut last = String::from("no endpoint configured");
        for e in &self.endpoints {
            let mut req = self.agent.post(&format!("{e}/v3/{call}"));
            if let Some(t) = token {
                req = req.set("Authorization", t);
            }
            match req.send_json(body) {
                Ok(resp) => {
                    return resp.into_json::<Value>().map_err(|err| EtcdError::Garbled {
                        call: call.into(),
                        message: err.to_string(),
                    });
                }
                Err(ureq::Error::Status(status, resp)) => {
                    let text = resp.into_string().unwrap_or_default();
                    let message = serde_json::from_str::<Value>(&text)
                        .ok()
                        .and_then(|v| {
                            (v.get("message").or_else(|| v.get("error")))
                                .and_then(Value::as_str)
                                .filter(|m| !m.is_empty())
                                .map(str::to_string)
                        })
                        .unwrap_or_else(|| match status {
                            401 => "not authenticated (HTTP 401)".into(),
                            403 => "permission denied (HTTP 403)".into(),
                            _ => format!("HTTP {status} {}", text.trim()),
                        });
                    return Err(EtcdError::Refused {
                        call: call.into(),
                        message,
                    });
                }
                Err(err) => last = format!("{e}: {err}"),
            }
        }
        Err(EtcdError::Unreachable {
            endpoints: self.endpoints.join(","),
            last,
        })
    }

    /// A call, authenticated when credentials are configured (a token
    /// etcd no longer takes is asked for again, once).
    fn call(&self, call: &str, body: &Value) -> Result<Value, EtcdError> {
        let Some(cred) = &self.credentials else {
            return self.post(call, body, None);
        };
        if let Some(token) = self.token() {
            match self.post(call, body, Some(&token)) {
                Err(EtcdError::Refused { message, .. })
                    if message.contains("invalid auth token") =>
                {
                    self.set_token(None);
                }
                other => return other,
            }
        }
        let answer = self.post(
            "auth/authenticate",
            &json!({"name": cred.user, "password": cred.password}),
            None,
        )?;
        let token = (answer.get("token").and_then(Value::as_str))
            .ok_or_else(|| EtcdError::Garbled {
                call: "auth/authenticate".into(),
                message: "no token".into(),
            })?
            .to_string();
        self.set_token(Some(token.clone()));
        self.post(call, body, Some(&token))
    }

    /// A lease of `ttl` seconds; its id.
    pub fn grant(&self, ttl: i64) -> Result<i64, EtcdError> {
        let a = self.call("lease/grant", &json!({"TTL": ttl}))?;
        (a.get("ID").and_then(int)).ok_or_else(|| EtcdError::Garbled {
            call: "lease/grant".into(),
            message: a.to_string(),
        })
    }

    /// Keeps lease `id` alive; `false`: it has expired.
    pub fn keepalive(&self, id: i64) -> Result<bool, EtcdError> {
        let a = self.call("lease/keepalive", &json!({"ID": id.to_string()}))?;
        let ttl = a
            .get("result")
            .and_then(|r| r.get("TTL"))
            .and_then(int)
            .unwrap_or(0);
        Ok(ttl > 0)
    }

    /// Revokes lease `id` (its keys go at once).
    pub fn revoke(&self, id: i64) -> Result<(), EtcdError> {
        self.call("lease/revoke", &json!({"ID": id.to_string()}))
            .map(drop)
    }

    /// Every key (and value) that begins with `prefix`, in key order.
    pub fn range_prefix(&self, prefix: &str) -> Result<Vec<Kv>, EtcdError> {
        self.range_prefix_at(prefix).map(|(kvs, _)| kvs)
    }

    /// Every key (and value) that begins with `prefix`, and the store's
    /// revision they were read at.
    pub fn range_prefix_at(&self, prefix: &str) -> Result<(Vec<Kv>, i64), EtcdError> {
        let a = self.call(
            "kv/range",
            &json!({"key": b64(prefix.as_bytes()), "range_end": b64(&prefix_end(prefix.as_bytes()))}),
        )?;
        let revision = (a.get("header").and_then(|h| h.get("revision")))
            .and_then(int)
            .unwrap_or(0);
        Ok((kvs_of(&a)?, revision))
    }

    /// Waits, at most about `wait`, for a key beginning with `prefix` to
    /// change after revision `after` (a watch from `after + 1`: a change
    /// made since is seen at once). `Ok(true)`: something changed (or etcd
    /// can no longer say since when: read again); `Ok(false)`: nothing did.
    pub fn wait_change(&self, prefix: &str, after: i64, wait: Duration) -> Result<bool, EtcdError> {
        use std::io::BufRead;
        let body = json!({"create_request": {
            "key": b64(prefix.as_bytes()),
            "range_end": b64(&prefix_end(prefix.as_bytes())),
            "start_revision": (after + 1).to_string(),
        }});
        // A token, asked for by an ordinary call when there is none yet.
        if self.credentials.is_some() && self.token().is_none() {
            self.get(prefix)?;
        }
        let agent = ureq::AgentBuilder::new()
            .timeout_connect(self.timeout)
            .timeout_read(wait)
            .build();
        let mut last = String::from("no endpoint configured");
        for e in &self.endpoints {
            let mut req = agent.post(&format!("{e}/v3/watch"));
            if let Some(t) = self.token() {
                req = req.set("Authorization", &t);
            }
            let resp = match req.send_json(&body) {
                Ok(r) => r,
                Err(err) => {
                    last = format!("{e}: {err}");
                    continue;
                }
            };
            let started = std::time::Instant::now();
            let mut lines = std::io::BufReader::new(resp.into_reader()).lines();
            while started.elapsed() < wait {
                match lines.next() {
                    None => return Ok(true),
                    Some(Err(err)) if is_timeout(&err) => return Ok(false),
                    Some(Err(err)) => {
                        return Err(EtcdError::Unreachable {
                            endpoints: e.clone(),
                            last: err.to_string(),
                        });
                    }
                    Some(Ok(line)) => {
                        if watch_says_changed(&line)? {
                            return Ok(true);
                        }
                    }
                }
            }
            return Ok(false);
        }
        Err(EtcdError::Unreachable {
            endpoints: self.endpoints.join(","),
            last,
        })
    }

    /// Any call of etcd's API, as JSON (for administration: users, roles).
    pub fn call_json(&self, call: &str, body: &Value) -> Result<Value, EtcdError> {
        self.call(call, body)
    }

    /// The value of `key`, if it has one.
    pub fn get(&self, key: &str) -> Result<Option<Vec<u8>>, EtcdError> {
        let a = self.call("kv/range", &json!({"key": b64(key.as_bytes())}))?;
        let kvs = kvs_of(&a)?;
        Ok(kvs.into_iter().next().map(|kv| kv.value))
    }

    /// Writes `puts` (under `lease`, when given) and deletes `deletes`,
    /// all or none (one transaction).
    pub fn write(
        &self,
        puts: &[(String, Vec<u8>)],
        deletes: &[String],
        lease: Option<i64>,
    ) -> Result<(), EtcdError> {
        let mut ops: Vec<Value> = puts
            .iter()
            .map(|(k, v)| {
                let mut put = json!({"key": b64(k.as_bytes()), "value": b64(v)});
                if let Some(l) = lease {
                    put["lease"] = Value::String(l.to_string());
                }
                json!({"request_put": put})
            })
            .collect();
        ops.extend(
            deletes
                .iter()
                .map(|k| json!({"request_delete_range": {"key": b64(k.as_bytes())}})),
        );
        if ops.is_empty() {
            return Ok(());
        }
        self.call("kv/txn", &json!({"success": ops})).map(drop)
    }

    /// Deletes every key that begins with `prefix`.
    pub fn delete_prefix(&self, prefix: &str) -> Result<(), EtcdError> {
        self.call(
            "kv/deleterange",
            &json!({"key": b64(prefix.as_bytes()), "range_end": b64(&prefix_end(prefix.as_bytes()))}),
        )
        .map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_range_ends_after_its_last_key() {
        assert_eq!(prefix_end(b"/roost/ads/"), b"/roost/ads0");
        assert_eq!(prefix_end(b"a\xff"), b"b");
        assert_eq!(prefix_end(b"\xff"), vec![0]);
    }

    #[test]
    fn range_answers_decode_and_garbage_is_named() {
        let a = json!({"header": {}, "kvs": [{"key": b64(b"/k"), "value": b64(b"v"), "version": "1"}], "count": "1"});
        assert_eq!(
            kvs_of(&a).expect("decodes"),
            vec![Kv {
                key: "/k".into(),
                value: b"v".to_vec()
            }]
        );
        assert_eq!(kvs_of(&json!({"header": {}})).expect("empty"), Vec::new());
        assert!(kvs_of(&json!({"kvs": [{"key": "%%%"}]})).is_err());
        assert_eq!(int(&json!("12")), Some(12));
        assert_eq!(int(&json!(12)), Some(12));
    }

    #[test]
    fn watch_lines_say_when_to_read_again() {
        let created = r#"{"result":{"header":{"revision":"1"},"created":true}}"#;
        assert!(!watch_says_changed(created).expect("reads"));
        let put = r#"{"result":{"header":{"revision":"2"},"events":[{"kv":{"key":"L2Fh"}}]}}"#;
        assert!(watch_says_changed(put).expect("reads"));
        let compacted = r#"{"result":{"canceled":true,"compact_revision":"7"}}"#;
        assert!(watch_says_changed(compacted).expect("reads"));
        assert!(watch_says_changed(r#"{"error":{"message":"permission denied"}}"#).is_err());
        assert!(watch_says_changed("garbage").is_err());
    }
}
