//! The real environment for ClassAd evaluation: the system clock, the local
//! time zone, the password file. Lives outside the pure ClassAd core.

use std::cell::Cell;
use std::time::{SystemTime, UNIX_EPOCH};

use jiff::Timestamp;
use jiff::tz::TimeZone;

use crate::classad::Env;

/// Clock, zone, random numbers and accounts of the machine.
pub struct SystemEnv {
    zone: TimeZone,
    seed: Cell<u64>,
}

impl SystemEnv {
    /// The environment of this process.
    pub fn new() -> SystemEnv {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let low = u64::try_from(nanos & u128::from(u64::MAX)).unwrap_or(0);
        let seed = low ^ (u64::from(std::process::id()) << 32) | 1;
        SystemEnv {
            zone: TimeZone::system(),
            seed: Cell::new(seed),
        }
    }
}

impl Default for SystemEnv {
    fn default() -> SystemEnv {
        SystemEnv::new()
    }
}

impl Env for SystemEnv {
    fn now(&self) -> i64 {
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
    }

    fn local_offset(&self, t: i64) -> i32 {
        Timestamp::from_second(t)
            .map(|ts| self.zone.to_offset(ts).seconds())
            .unwrap_or(0)
    }

    fn zone_name(&self, t: i64) -> String {
        Timestamp::from_second(t)
            .map(|ts| self.zone.to_offset_info(ts).abbreviation().to_string())
            .unwrap_or_default()
    }

    fn random_u31(&self) -> u32 {
        let mut x = self.seed.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.seed.set(x);
        u32::try_from(x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33).unwrap_or(0)
    }

    fn user_home(&self, user: &str) -> Option<String> {
        let passwd = std::fs::read_to_string("/etc/passwd").ok()?;
        passwd.lines().find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.len() >= 6 && fields[0] == user && !fields[5].is_empty())
                .then(|| fields[5].to_string())
        })
    }
}
