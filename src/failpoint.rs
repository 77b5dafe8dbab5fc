//! Failpoints: named places in the daemon where a test makes it crash, to
//! check what a restart makes of a crash at exactly that point. The
//! environment variable `ROOST_FAILPOINT` names one; when the daemon gets
//! there it aborts at once (SIGABRT, no cleanup, as a crash would). Unset —
//! always, outside tests — a failpoint costs one load of a cached flag.

use std::sync::OnceLock;

/// The failpoint `ROOST_FAILPOINT` names, read once.
fn armed() -> Option<&'static str> {
    static ARMED: OnceLock<Option<String>> = OnceLock::new();
    ARMED
        .get_or_init(|| {
            std::env::var("ROOST_FAILPOINT")
                .ok()
                .filter(|f| !f.is_empty())
        })
        .as_deref()
}

/// Whether `ROOST_FAILPOINT` names `name` (for work only a test's crash
/// there needs, such as making what came before it durable).
pub fn is_armed(name: &str) -> bool {
    armed() == Some(name)
}

/// Aborts the process if `ROOST_FAILPOINT` names `name`.
pub fn hit(name: &str) {
    if armed() == Some(name) {
        eprintln!("roost: failpoint {name}: aborting");
        std::process::abort();
    }
}
