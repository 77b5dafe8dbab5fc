//! What the starter and the schedd's file server say to each other over
//! one TCP connection: one JSON object a line, each answered with one line,
//! file bytes following a line that gives their count. The starter proves
//! itself first ([`Hello`]: the job and its lease's token, which only the
//! node the job was handed to has), then lists the job's inputs, fetches
//! each from an offset (a partial file is fetched on from where it ends),
//! and sends each output, which the server keeps apart until it is whole
//! (a resent output goes on from what the server already has).

use serde::{Deserialize, Serialize};

use super::plan::Entry;

/// The longest line either side reads (a manifest of many files is the
/// longest).
pub const MAX_LINE: usize = 16 << 20;

/// Who asks: the job (`cluster.proc`) and its lease's token
/// (`RoostQueueLease` of the handed-out ad).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Hello {
    /// The job.
    pub job: String,
    /// Its lease's token.
    pub token: String,
}

/// What the starter asks.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Ask {
    /// The first line.
    Hello(Hello),
    /// The job's inputs.
    List,
    /// An input's bytes from `offset` on.
    Get {
        /// Its name in the manifest.
        name: String,
        /// Where to start.
        offset: u64,
    },
    /// An output of `size` bytes, named as in the sandbox: the server
    /// answers how much of it it has, and the rest follows.
    Put {
        /// Its name in the sandbox (relative, `/`-separated).
        name: String,
        /// Its whole size.
        size: u64,
        /// Its permission bits.
        mode: u32,
    },
    /// The end of the conversation.
    Done,
}

/// What the server answers.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Said {
    /// Taken.
    Ok,
    /// Refused, and why: the conversation ends.
    Refused(String),
    /// The inputs, directories before what they hold.
    Manifest(Vec<Entry>),
    /// `len` bytes follow.
    Data {
        /// How many.
        len: u64,
    },
    /// The server has the first `have` bytes of the output: send the rest.
    Have {
        /// How many it has.
        have: u64,
    },
    /// The output is whole, at `path` on the submit machine.
    Stored {
        /// Where.
        path: String,
    },
}

/// A line to send: `value` as JSON and a newline.
pub fn line<T: Serialize>(value: &T) -> Vec<u8> {
    let mut text = serde_json::to_vec(value).unwrap_or_default();
    text.push(b'\n');
    text
}

/// A line that is not one of the protocol's.
#[derive(Debug, thiserror::Error)]
#[error("not a transfer line ({0})")]
pub struct BadLine(#[from] serde_json::Error);

/// Reads a line of `T` (without its newline).
pub fn parse<T: serde::de::DeserializeOwned>(line: &[u8]) -> Result<T, BadLine> {
    Ok(serde_json::from_slice(line)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_back() {
        let asks = [
            Ask::Hello(Hello {
                job: "7.0".into(),
                token: "ab".into(),
            }),
            Ask::List,
            Ask::Get {
                name: "d/x".into(),
                offset: 5,
            },
            Ask::Put {
                name: "out".into(),
                size: 9,
                mode: 0o644,
            },
            Ask::Done,
        ];
        for a in asks {
            let l = line(&a);
            assert_eq!(l.last(), Some(&b'\n'));
            assert_eq!(parse::<Ask>(&l[..l.len() - 1]).ok(), Some(a));
        }
        assert!(parse::<Said>(b"{\"nope\":1}").is_err());
    }
}
