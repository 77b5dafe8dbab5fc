//! The access point's pure core: what `roost submit` turns a submit
//! description into ([`submit`]). No I/O: files a description names (a
//! `queue … from` file, the matches of `queue … matching`) are read through
//! a [`submit::SubmitFiles`] the caller gives.

pub mod ad;
pub mod event;
mod lease;
pub mod limits;
mod lines;
pub mod policy;
pub mod protocol;
pub mod queue;
pub mod route;
pub mod router;
pub mod submit;
mod submit_more;
pub mod submit_transfer;
pub mod userlog;
