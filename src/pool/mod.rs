//! The pool on etcd (issue 34): where HTCondor has a collector holding
//! every daemon's ads, Roost's daemons keep their ads in etcd, each under
//! a lease that runs out like the collector's `CLASSAD_LIFETIME` when a
//! daemon vanishes. [`PoolSettings`] reads the knobs; [`etcd`] is the
//! client; [`publish`] the thread that keeps a daemon's ads there.
//!
//! Key layout under `ROOST_POOL_PREFIX` (default `/roost`):
//! `<prefix>/ads/<MyType>/<Name>` → the ad in new ClassAd syntax;
//! `<prefix>/requests/<principal>/<id>`, `<prefix>/inbox/<node>/<principal>/<id>`
//! and `<prefix>/replies/<node>/<principal>/<id>`: requests to a node
//! ([`inbox`]).

pub mod etcd;
pub mod inbox;
pub mod publish;

use std::time::Duration;

use crate::config::Config;

/// The pool's knobs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PoolSettings {
    /// `ROOST_POOL_ETCD`: the etcd endpoints (`http://host:port`).
    pub endpoints: Vec<String>,
    /// `ROOST_POOL_PREFIX`: every key of the pool begins with it.
    pub prefix: String,
    /// `ROOST_POOL_USER` and the password in `ROOST_POOL_PASSWORD_FILE`.
    pub credentials: Option<etcd::Credentials>,
    /// `UPDATE_INTERVAL` (300): ads are written at least this often.
    pub update_interval: Duration,
    /// `CLASSAD_LIFETIME` (900): a daemon's ads outlive it this long.
    pub lifetime: i64,
    /// `ROOST_POOL_TIMEOUT` (5): seconds one etcd call may take.
    pub timeout: Duration,
    /// `ROOST_POOL_ADMINS` (`root`): the etcd users whose requests the node
    /// carries out (`*`: any user).
    pub admins: Vec<String>,
    /// `ROOST_POOL_REQUEST_LIFETIME` (3600): seconds a request (and its
    /// reply) stays in etcd for a node that is away.
    pub request_lifetime: i64,
}

/// A pool knob that does not read.
#[derive(Debug, thiserror::Error)]
pub enum PoolError {
    /// A knob's value is wrong.
    #[error("{knob}: {message}")]
    Knob {
        /// The knob.
        knob: &'static str,
        /// What is wrong.
        message: String,
    },
    /// etcd failed.
    #[error(transparent)]
    Etcd(#[from] etcd::EtcdError),
    /// A request to a node had no reply in time.
    #[error(
        "{node} did not answer within {waited} s (is it running, in this pool?); the request stays in etcd for {lifetime} s and the node carries it out if it comes"
    )]
    NoReply {
        /// The node asked.
        node: String,
        /// Seconds waited.
        waited: u64,
        /// `ROOST_POOL_REQUEST_LIFETIME`.
        lifetime: i64,
    },
}

fn knob(knob: &'static str, message: impl ToString) -> PoolError {
    PoolError::Knob {
        knob,
        message: message.to_string(),
    }
}

impl PoolSettings {
    /// The pool `config` names; `None` when `ROOST_POOL_ETCD` is unset
    /// (the daemon is in no pool).
    pub fn from_config(config: &Config) -> Result<Option<PoolSettings>, PoolError> {
        let text = |k: &'static str| config.text(k).map_err(|e| knob(k, e));
        let Some(endpoints) = text("ROOST_POOL_ETCD")? else {
            return Ok(None);
        };
        let endpoints: Vec<String> = endpoints
            .split([',', ' ', '\t'])
            .filter(|e| !e.is_empty())
            .map(|e| {
                if e.contains("://") {
                    e.to_string()
                } else {
                    format!("http://{e}")
                }
            })
            .collect();
        if endpoints.is_empty() {
            return Ok(None);
        }
        if let Some(e) = endpoints.iter().find(|e| e.starts_with("https://")) {
            return Err(knob(
                "ROOST_POOL_ETCD",
                format!(
                    "{e}: TLS to etcd is not supported yet; use etcd's user authentication on a trusted network"
                ),
            ));
        }
        let prefix = text("ROOST_POOL_PREFIX")?
            .unwrap_or_else(|| "/roost".into())
            .trim_end_matches('/')
            .to_string();
        let credentials = match text("ROOST_POOL_USER")? {
            None => None,
            Some(user) => {
                let file = text("ROOST_POOL_PASSWORD_FILE")?.ok_or_else(|| {
                    knob(
                        "ROOST_POOL_PASSWORD_FILE",
                        "must be set with ROOST_POOL_USER",
                    )
                })?;
                let password = std::fs::read_to_string(&file)
                    .map_err(|e| knob("ROOST_POOL_PASSWORD_FILE", format!("{file}: {e}")))?;
                Some(etcd::Credentials {
                    user,
                    password: password.trim_end_matches(['\n', '\r']).to_string(),
                })
            }
        };
        let int = |k: &'static str, default: i64| -> Result<i64, PoolError> {
            let v = config.int(k).map_err(|e| knob(k, e))?.unwrap_or(default);
            if v < 1 {
                return Err(knob(k, format!("{v}: must be at least 1")));
            }
            Ok(v)
        };
        let secs = |n: i64| Duration::from_secs(u64::try_from(n).unwrap_or(1));
        Ok(Some(PoolSettings {
            endpoints,
            prefix,
            credentials,
            update_interval: secs(int("UPDATE_INTERVAL", 300)?),
            lifetime: int("CLASSAD_LIFETIME", 900)?,
            timeout: secs(int("ROOST_POOL_TIMEOUT", 5)?),
            admins: text("ROOST_POOL_ADMINS")?
                .unwrap_or_else(|| "root".into())
                .split([',', ' ', '\t'])
                .filter(|a| !a.is_empty())
                .map(str::to_string)
                .collect(),
            request_lifetime: int("ROOST_POOL_REQUEST_LIFETIME", 3600)?,
        }))
    }

    /// A client of the pool's etcd.
    pub fn client(&self) -> etcd::Etcd {
        etcd::Etcd::new(
            self.endpoints.clone(),
            self.credentials.clone(),
            self.timeout,
        )
    }

    /// Where every ad is: `<prefix>/ads/`.
    pub fn ads_prefix(&self) -> String {
        format!("{}/ads/", self.prefix)
    }

    /// The key of the ad `name` of type `my_type`.
    pub fn ad_key(&self, my_type: &str, name: &str) -> String {
        format!("{}{my_type}/{name}", self.ads_prefix())
    }

    /// The principal this daemon or tool is in etcd: its user, or
    /// `anonymous` without authentication.
    pub fn principal(&self) -> &str {
        self.credentials
            .as_ref()
            .map_or("anonymous", |c| c.user.as_str())
    }

    /// Whether `principal`'s requests are carried out.
    pub fn admits(&self, principal: &str) -> bool {
        self.admins.iter().any(|a| a == "*" || a == principal)
    }

    /// The body of `principal`'s request `id`: under the principal's own
    /// prefix, which etcd's roles let only that principal write.
    pub fn request_key(&self, principal: &str, id: &str) -> String {
        format!("{}/requests/{principal}/{id}", self.prefix)
    }

    /// Where a node finds the requests for it.
    pub fn inbox_prefix(&self, node: &str) -> String {
        format!("{}/inbox/{node}/", self.prefix)
    }

    /// The pointer to `principal`'s request `id` in `node`'s inbox.
    pub fn inbox_key(&self, node: &str, principal: &str, id: &str) -> String {
        format!("{}{principal}/{id}", self.inbox_prefix(node))
    }

    /// `node`'s reply to `principal`'s request `id`.
    pub fn reply_key(&self, node: &str, principal: &str, id: &str) -> String {
        format!("{}/replies/{node}/{principal}/{id}", self.prefix)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_knobs_name_the_pool_and_bad_ones_are_named() {
        let cfg = |text: &str| {
            let scope = crate::config::Scope {
                subsys: Some("STARTD".into()),
                localname: None,
            };
            crate::config::load_text("/etc/condor/condor_config", text, scope, vec![])
                .expect("config")
        };
        assert_eq!(
            PoolSettings::from_config(&cfg("UPDATE_INTERVAL = 5\n")).expect("reads"),
            None
        );
        let p = PoolSettings::from_config(&cfg(
            "ROOST_POOL_ETCD = 127.0.0.1:2379, http://h:1\nROOST_POOL_PREFIX = /p/\nCLASSAD_LIFETIME = 30\n",
        ))
        .expect("reads")
        .expect("a pool");
        assert_eq!(p.endpoints, ["http://127.0.0.1:2379", "http://h:1"]);
        assert_eq!(p.ad_key("Machine", "slot1@h"), "/p/ads/Machine/slot1@h");
        assert_eq!((p.lifetime, p.update_interval.as_secs()), (30, 300));
        let err = PoolSettings::from_config(&cfg("ROOST_POOL_ETCD = h:1\nROOST_POOL_USER = u\n"))
            .expect_err("no password file");
        assert!(
            err.to_string().contains("ROOST_POOL_PASSWORD_FILE"),
            "{err}"
        );
        let err = PoolSettings::from_config(&cfg("ROOST_POOL_ETCD = h:1\nCLASSAD_LIFETIME = 0\n"))
            .expect_err("no lifetime");
        assert!(err.to_string().contains("CLASSAD_LIFETIME"), "{err}");
    }
}
