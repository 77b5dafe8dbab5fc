//! A cron job's output as HTCondor's startd reads it: old-syntax
//! `Name = value` lines, each with the job's prefix put in front of it as
//! printed; blank lines skipped; a line starting with `-` ends an ad, and
//! the words after the dash name it (a tag: the ad is `<job>.<tag>`, else
//! the job's own ad) and may ask for an update (`update:<bool>`). An ad that
//! got at least one attribute is published with `<prefix>LastUpdate` set to
//! the time the output was read; a line that does not parse is reported
//! and skipped, and the rest is read on. What is left after the last `-`
//! line is the job's own ad. Pure.

use crate::classad::ClassAd;
use crate::classad::old::{OldItem, OldReader, Separator};

/// One ad a run published.
#[derive(Clone, Debug)]
pub struct CronAd {
    /// `<job>` or `<job>.<tag>`: a later run's ad of the same name
    /// replaces it.
    pub name: String,
    /// Its attributes (prefixed), with `<prefix>LastUpdate`.
    pub ad: ClassAd,
    /// The separator's `update:` word: `Some(true)` asks for an update at
    /// once, `Some(false)` for none; `None`: as `*_AUTOPUBLISH` says.
    pub update: Option<bool>,
}

/// What a run's output gave.
#[derive(Clone, Debug, Default)]
pub struct CronOutput {
    /// The ads, in the order their separators came.
    pub ads: Vec<CronAd>,
    /// Lines that did not parse, one message each (with its line number).
    pub problems: Vec<String>,
}

/// Reads the stdout of job `job` (prefix `prefix`), read at time `now`.
pub fn read(job: &str, prefix: &str, stdout: &[u8], now: i64) -> CronOutput {
    let mut text = Vec::with_capacity(stdout.len());
    for line in stdout.split(|&c| c == b'\n') {
        if !line.trim_ascii().is_empty() && line.first() != Some(&b'-') {
            text.extend_from_slice(prefix.as_bytes());
        }
        text.extend_from_slice(line);
        text.push(b'\n');
    }
    let reader = OldReader::default();
    let mut out = CronOutput::default();
    let mut pending: Option<ClassAd> = None;
    let publish = |ad: Option<ClassAd>, sep: Option<&Separator>, out: &mut CronOutput| {
        let Some(mut ad) = ad.filter(|a| a.iter().next().is_some()) else {
            return;
        };
        let (tag, update) = sep.map(Separator::cron_args).unwrap_or_default();
        ad.insert_value(format!("{prefix}LastUpdate").as_str(), now);
        out.ads.push(CronAd {
            name: tag.map_or_else(|| job.to_string(), |t| format!("{job}.{t}")),
            ad,
            update,
        });
    };
    for item in reader.read(&text) {
        match item {
            OldItem::Ad(a) => {
                out.problems
                    .extend(a.errors.iter().map(|e| format!("cannot read {e}")));
                pending = Some(a.ad);
            }
            OldItem::Separator(sep) => publish(pending.take(), Some(&sep), &mut out),
        }
    }
    publish(pending.take(), None, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::Value;

    fn get(ad: &ClassAd, name: &str) -> Value {
        ad.eval_attr(name, &crate::classad::FixedEnv::new(0))
    }

    #[test]
    fn the_manuals_example_gives_three_ads_in_order() {
        let out = read(
            "test",
            "",
            b"Value=1 \nSlotId=1 \n-s1 \nValue=2 \nSlotId=2 \n-s2 \nValue=10 \n- update:true\n",
            1000,
        );
        assert!(out.problems.is_empty(), "{:?}", out.problems);
        let names: Vec<_> = out.ads.iter().map(|a| a.name.as_str()).collect();
        assert_eq!(names, ["test.s1", "test.s2", "test"]);
        assert!(get(&out.ads[0].ad, "Value").identical(&Value::Int(1)));
        assert!(get(&out.ads[1].ad, "SlotId").identical(&Value::Int(2)));
        assert!(get(&out.ads[2].ad, "LastUpdate").identical(&Value::Int(1000)));
        assert_eq!(out.ads[0].update, None);
        assert_eq!(out.ads[2].update, Some(true));
    }

    #[test]
    fn the_prefix_goes_before_every_attribute_and_last_update() {
        let out = read("date", "Date_", b"\nNow = 5\n\nZone = \"UTC\"\n", 7);
        assert_eq!(out.ads.len(), 1);
        let ad = &out.ads[0].ad;
        assert!(get(ad, "Date_Now").identical(&Value::Int(5)));
        assert!(get(ad, "Date_Zone").identical(&Value::from("UTC")));
        assert!(get(ad, "Date_LastUpdate").identical(&Value::Int(7)));
        assert!(get(ad, "Now").identical(&Value::Undefined));
    }

    #[test]
    fn a_bad_line_is_reported_and_the_rest_is_read() {
        let out = read(
            "h",
            "",
            b"Good = 1\nthis is not an attribute\nAlso = 2\n",
            0,
        );
        assert_eq!(out.problems.len(), 1, "{:?}", out.problems);
        assert!(out.problems[0].contains("line 2"), "{}", out.problems[0]);
        assert!(get(&out.ads[0].ad, "Also").identical(&Value::Int(2)));
    }

    #[test]
    fn nothing_before_a_dash_publishes_nothing() {
        assert!(read("h", "", b"-\n-tag update:true\n\n", 0).ads.is_empty());
        assert!(read("h", "", b"", 0).ads.is_empty());
    }
}
