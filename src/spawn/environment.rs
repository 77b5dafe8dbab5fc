//! The environment a process is started with, made ready for `execve`
//! once (`name=value` C strings) and shared between the processes that get
//! it.

use std::ffi::{CString, OsStr};
use std::os::unix::ffi::OsStrExt;
use std::sync::Arc;

use super::owned_cstring;

/// An environment made ready for `execve` once and shared by every process
/// started with it ([`Command::environment`]): the daemon's hooks and
/// starters all get the same one, and handing it over copies a pointer,
/// not its strings. Sent to a starter as a list of `[name, value]` pairs.
#[derive(Clone, Debug, Default)]
pub struct Environment {
    /// `name=value`, in the order given.
    pub(super) entries: Arc<[CString]>,
    /// The first pair that cannot be passed (a NUL byte in it).
    pub(super) bad: Option<Arc<str>>,
}

impl Environment {
    /// This process's environment (the variables whose name and value
    /// are UTF-8): what a daemon hands its hooks.
    pub fn of_process() -> Environment {
        Environment::new(
            std::env::vars_os()
                .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?))),
        )
    }

    /// The environment of these pairs, in this order.
    pub fn new<I, K, V>(vars: I) -> Environment
    where
        I: IntoIterator<Item = (K, V)>,
        K: AsRef<OsStr>,
        V: AsRef<OsStr>,
    {
        let mut bad = None;
        let entries = vars
            .into_iter()
            .map(|(k, v)| env_entry(k.as_ref(), v.as_ref(), &mut bad))
            .collect();
        Environment {
            entries,
            bad: bad.map(Arc::from),
        }
    }

    /// The pairs (a name is what comes before the first `=`).
    pub fn vars(&self) -> impl Iterator<Item = (&OsStr, &OsStr)> {
        self.entries.iter().map(|e| {
            let kv = e.as_bytes();
            let eq = kv.iter().position(|&b| b == b'=').unwrap_or(kv.len());
            let (k, v) = kv.split_at(eq);
            (
                OsStr::from_bytes(k),
                OsStr::from_bytes(v.get(1..).unwrap_or_default()),
            )
        })
    }
}

impl PartialEq for Environment {
    fn eq(&self, other: &Environment) -> bool {
        self.entries == other.entries
    }
}

impl serde::Serialize for Environment {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(
            self.vars()
                .map(|(k, v)| (k.to_string_lossy(), v.to_string_lossy())),
        )
    }
}

impl<'de> serde::Deserialize<'de> for Environment {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Environment, D::Error> {
        let pairs = Vec::<(String, String)>::deserialize(d)?;
        Ok(Environment::new(pairs))
    }
}

/// `name=value` in one allocation (room for the `=` and the NUL).
pub(super) fn env_entry(name: &OsStr, value: &OsStr, bad: &mut Option<String>) -> CString {
    let (name, value) = (name.as_bytes(), value.as_bytes());
    let mut kv = Vec::with_capacity(name.len() + value.len() + 2);
    kv.extend_from_slice(name);
    kv.push(b'=');
    kv.extend_from_slice(value);
    owned_cstring(kv, bad)
}
