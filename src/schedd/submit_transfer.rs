//! File transfer in a submit description, as condor_submit 23 reads it:
//! `should_transfer_files` and `when_to_transfer_output` (the job's
//! `ShouldTransferFiles` and `WhenToTransferOutput`), `transfer_input_files`
//! and `transfer_output_files` (`TransferInput`, `TransferOutput`: lists
//! split at commas, each item trimmed, empty items dropped),
//! `transfer_output_remaps` (`TransferOutputRemaps`, a quoted string),
//! `TransferInputSizeMB` (the whole MiB of the executable, stdin and every
//! local input that exists, directories counted whole), and what the job
//! asks of a machine (`HasFileTransfer`, and each URL scheme it names in
//! `WantTransferPluginMethods`).

use super::submit::{Get, SubmitError, SubmitFiles, err};
use crate::classad::ClassAd;
use crate::transfer::plan::{absolute, items, parse_remaps, scheme};

/// The URL schemes a Roost node fetches itself (`file://`, `http://`,
/// `https://`); a job naming another is refused at submit.
pub const SCHEMES: [&str; 3] = ["file", "http", "https"];

/// What a description says of file transfer.
#[derive(Clone, Debug, PartialEq)]
pub struct Transfer {
    /// `ShouldTransferFiles`: `YES`, `NO` or `IF_NEEDED`.
    pub should: &'static str,
    /// `WhenToTransferOutput` (none for `NO`).
    pub when: Option<&'static str>,
    /// The URL schemes its inputs and output destinations name, sorted
    /// (`WantTransferPluginMethods`).
    pub methods: Vec<String>,
}

impl Transfer {
    /// Its clause of the job's `Requirements`.
    pub fn clause(&self) -> String {
        let mut has = "TARGET.HasFileTransfer".to_string();
        for m in &self.methods {
            has.push_str(&format!(
                " && stringListIMember(\"{m}\",TARGET.HasFileTransferPluginMethods)"
            ));
        }
        match self.should {
            "NO" => "(TARGET.FileSystemDomain == MY.FileSystemDomain)".into(),
            "YES" => format!("({has})"),
            _ => format!("((TARGET.FileSystemDomain == MY.FileSystemDomain) || ({has}))"),
        }
    }
}

/// Reads the description's transfer commands.
pub(super) fn read(get: &Get<'_>) -> Result<Transfer, SubmitError> {
    let (should, when) = should_and_when(get)?;
    let inputs = list(get, "transfer_input_files")?;
    let outputs = list(get, "transfer_output_files")?;
    if should == "NO" {
        for (cmd, l) in [
            ("transfer_input_files", &inputs),
            ("transfer_output_files", &outputs),
        ] {
            if let Some((line, _)) = l {
                return Err(err(
                    *line,
                    format!(
                        "you specified files you want Condor to transfer via \"{cmd}\", but \
                         you disabled should_transfer_files."
                    ),
                ));
            }
        }
    }
    let remaps = remaps(get)?;
    let mut methods: Vec<String> = Vec::new();
    let urls = (inputs.iter().flat_map(|(_, items)| items.iter()))
        .map(String::as_str)
        .chain(
            remaps
                .iter()
                .flat_map(|(_, r)| r.iter().map(|(_, to)| to.as_str())),
        );
    for (line, scheme) in urls.filter_map(|u| scheme(u).map(|s| (line_of(&inputs, &remaps), s))) {
        if !SCHEMES.iter().any(|s| s.eq_ignore_ascii_case(scheme)) {
            return Err(err(
                line,
                format!(
                    "{scheme}:// URLs are not transferred by Roost's nodes: use file://, \
                     http:// or https://, or a path on the submit machine"
                ),
            ));
        }
        if !methods.iter().any(|m| m == scheme) {
            methods.push(scheme.to_string());
        }
    }
    methods.sort();
    Ok(Transfer {
        should,
        when,
        methods,
    })
}

/// The line of the first of the commands that name URLs (for an error).
fn line_of(inputs: &Option<(usize, Vec<String>)>, remaps: &Remaps) -> usize {
    inputs
        .as_ref()
        .map(|(l, _)| *l)
        .or_else(|| remaps.as_ref().map(|(l, _)| *l))
        .unwrap_or(0)
}

/// Sets the job's transfer attributes from the description (`iwd`: the
/// job's initial directory, against which relative inputs are sized).
pub(super) fn set(
    get: &Get<'_>,
    files: &dyn SubmitFiles,
    iwd: &str,
    ad: &mut ClassAd,
) -> Result<Transfer, SubmitError> {
    let t = read(get)?;
    ad.insert_value("ShouldTransferFiles", t.should);
    match t.when {
        Some(w) => ad.insert_value("WhenToTransferOutput", w),
        None => {
            ad.remove("WhenToTransferOutput");
        }
    }
    let inputs = list(get, "transfer_input_files")?;
    if let Some((_, items)) = &inputs {
        ad.insert_value("TransferInput", items.join(",").as_str());
    }
    if let Some((_, items)) = list(get, "transfer_output_files")? {
        ad.insert_value("TransferOutput", items.join(",").as_str());
    }
    if let Some((line, _)) = remaps(get)? {
        let text = get("transfer_output_remaps")?
            .map(|(_, v)| v)
            .unwrap_or_default();
        let inner = unquote(&text).ok_or_else(|| bad_remaps(line, &text))?;
        ad.insert_value("TransferOutputRemaps", inner);
    }
    if !t.methods.is_empty() {
        ad.insert_value("WantTransferPluginMethods", t.methods.join(",").as_str());
    }
    // The executable and stdin count whether or not they are sent.
    let mut local: Vec<String> = Vec::new();
    for attr in ["Cmd", "In"] {
        if let Some(v) = super::queue::str_of(ad, attr) {
            local.push(v);
        }
    }
    if let Some((_, items)) = inputs {
        local.extend(items.into_iter().filter(|i| scheme(i).is_none()));
    }
    let bytes: u64 = (local.iter())
        .filter(|p| p.as_str() != "/dev/null")
        .filter_map(|p| files.size(&absolute(iwd, p.trim_end_matches('/'))))
        .sum();
    ad.insert_value(
        "TransferInputSizeMB",
        i64::try_from(bytes >> 20).unwrap_or(i64::MAX),
    );
    Ok(t)
}

/// `cmd` as a list: split at commas, each item trimmed, empty ones
/// dropped; `None` when the command is not given.
fn list(get: &Get<'_>, cmd: &str) -> Result<Option<(usize, Vec<String>)>, SubmitError> {
    Ok(get(cmd)?.map(|(line, v)| (line, items(&v))))
}

/// `transfer_output_remaps`: `"name = destination; …"`, which must be a
/// quoted string.
/// A command's line and what it says, as pairs.
type Remaps = Option<(usize, Vec<(String, String)>)>;

fn remaps(get: &Get<'_>) -> Result<Remaps, SubmitError> {
    let Some((line, text)) = get("transfer_output_remaps")? else {
        return Ok(None);
    };
    let inner = unquote(&text).ok_or_else(|| bad_remaps(line, &text))?;
    Ok(Some((line, parse_remaps(inner))))
}

fn bad_remaps(line: usize, text: &str) -> SubmitError {
    err(
        line,
        format!("transfer_output_remaps must be a quoted string, not: {text}"),
    )
}

fn unquote(text: &str) -> Option<&str> {
    text.trim()
        .strip_prefix('"')
        .and_then(|t| t.strip_suffix('"'))
}

/// `should_transfer_files` and `when_to_transfer_output` as condor_submit
/// reads them: `ShouldTransferFiles` and `WhenToTransferOutput` (none for
/// `NO`; `ON_EXIT_OR_EVICT` alone means `YES`).
fn should_and_when(get: &Get<'_>) -> Result<(&'static str, Option<&'static str>), SubmitError> {
    let should = get("should_transfer_files")?;
    let when = get("when_to_transfer_output")?;
    let should_is = match &should {
        None => None,
        Some((line, v)) => Some(match v.to_ascii_uppercase().as_str() {
            "YES" | "TRUE" => "YES",
            "NO" | "FALSE" => "NO",
            "IF_NEEDED" => "IF_NEEDED",
            _ => {
                return Err(err(
                    *line,
                    format!("invalid value ({v}) for should_transfer_files: YES, NO or IF_NEEDED"),
                ));
            }
        }),
    };
    let when_is = match &when {
        None => None,
        Some((line, v)) => match v.to_ascii_uppercase().as_str() {
            "ON_EXIT" => Some((*line, "ON_EXIT")),
            "ON_EXIT_OR_EVICT" => Some((*line, "ON_EXIT_OR_EVICT")),
            // An old value condor_submit still takes as if it were unset.
            "NEVER" => None,
            _ => {
                return Err(err(
                    *line,
                    format!(
                        "invalid value ({v}) for when_to_transfer_output: ON_EXIT or \
                         ON_EXIT_OR_EVICT"
                    ),
                ));
            }
        },
    };
    match (should_is, when_is) {
        (Some("NO"), Some((line, w))) => Err(err(
            line,
            format!(
                "when_to_transfer_output = {w} contradicts should_transfer_files = NO: \
                 remove one of them"
            ),
        )),
        (Some("NO"), None) => Ok(("NO", None)),
        (Some("IF_NEEDED"), Some((line, "ON_EXIT_OR_EVICT"))) => Err(err(
            line,
            "when_to_transfer_output = ON_EXIT_OR_EVICT and should_transfer_files = IF_NEEDED \
             are incompatible: choose ON_EXIT, or should_transfer_files = YES",
        )),
        (None | Some("YES"), Some((_, "ON_EXIT_OR_EVICT"))) => {
            Ok(("YES", Some("ON_EXIT_OR_EVICT")))
        }
        (Some("YES"), _) => Ok(("YES", Some("ON_EXIT"))),
        _ => Ok(("IF_NEEDED", Some("ON_EXIT"))),
    }
}
