//! A thread's file accesses as another user: `setfsuid`/`setfsgid` are
//! per thread, so a blocking thread of a root daemon can read and write
//! files with a job owner's rights while the others keep the daemon's.

use nix::unistd::{Gid, Uid};

/// This thread's file accesses as a user until the guard is dropped, when
/// the thread's own identity comes back.
#[must_use = "the identity is given back when the guard is dropped"]
pub struct FsUser(Option<(Uid, Gid)>);

impl FsUser {
    /// File accesses as `uid`/`gid` (`None`: nothing changes, as when the
    /// daemon is not root and can only be itself).
    pub fn take(user: Option<(u32, u32)>) -> FsUser {
        FsUser(user.map(|(uid, gid)| {
            let gid = nix::unistd::setfsgid(Gid::from_raw(gid));
            (nix::unistd::setfsuid(Uid::from_raw(uid)), gid)
        }))
    }
}

impl Drop for FsUser {
    fn drop(&mut self) {
        if let Some((uid, gid)) = self.0 {
            nix::unistd::setfsuid(uid);
            nix::unistd::setfsgid(gid);
        }
    }
}
