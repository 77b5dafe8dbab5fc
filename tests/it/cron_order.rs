//! The order cron ads merge in, side by side with HTCondor 23.9.6: the jobs
//! and configuration of `tests/fixtures/cron/order/` (startd cron jobs
//! printing tagged and untagged ads, with and without a prefix, publishing
//! in another order than their job list; schedd cron jobs likewise) run in
//! a real `roost startd` and `roost schedd`, and what both slot ads and the
//! schedd's ad hold of them must be what `tools/cron_order_htcondor.py`
//! captured on a real HTCondor node (`htcondor.txt`).

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use super::daemon::{stop, wait_for};
use super::schedd::Ap;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/cron/order");

/// What must be in the ads before they are read: every job's last ad.
const SLOT_NEEDS: [&str; 5] = [
    "OrdShared",
    "OrdFirstOwn",
    "OrdSecondOwn",
    "P_OrdValue",
    "OrdTwiceB",
];
const SCHEDD_NEEDS: [&str; 2] = ["OrdSFirstB", "OrdSSecond"];

/// The ads of `-l` output, each as its `(attribute, value text)` lines.
fn parse_long(text: &str) -> Vec<Vec<(String, String)>> {
    let mut ads = Vec::new();
    let mut cur = Vec::new();
    for line in text.lines() {
        if line.trim().is_empty() {
            if !cur.is_empty() {
                ads.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if let Some((k, v)) = line.split_once(" = ") {
            cur.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    if !cur.is_empty() {
        ads.push(cur);
    }
    ads
}

fn has(ad: &[(String, String)], name: &str) -> bool {
    ad.iter().any(|(k, _)| k == name)
}

fn wanted(attr: &str) -> bool {
    attr.starts_with("Ord") || attr.starts_with("P_Ord") || attr == "P_SlotId"
}

/// The fixture's lines for these slot ads and schedd ad.
fn lines(slots: &[Vec<(String, String)>], schedd: &[(String, String)]) -> Vec<String> {
    let mut out = Vec::new();
    for ad in slots {
        let name = (ad.iter())
            .find(|(k, _)| k == "Name")
            .map_or("?", |(_, v)| v.as_str());
        let who = name.trim_matches('"').split('@').next().unwrap_or("?");
        out.extend(
            (ad.iter())
                .filter(|(k, _)| wanted(k))
                .map(|(k, v)| format!("{who} {k} = {v}")),
        );
    }
    out.extend(
        (schedd.iter())
            .filter(|(k, _)| wanted(k))
            .map(|(k, v)| format!("schedd {k} = {v}")),
    );
    out.sort_by_key(|s| s.to_lowercase());
    out
}

fn copy_jobs(to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    for e in std::fs::read_dir(Path::new(FIXTURE).join("jobs")).expect("jobs") {
        let e = e.expect("entry");
        let dest = to.join(e.file_name());
        std::fs::copy(e.path(), &dest).expect("copy");
        std::fs::set_permissions(&dest, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    }
}

#[test]
fn cron_ads_merge_in_htcondors_order_in_slots_and_in_the_schedd_ad() {
    let jobs = std::env::temp_dir().join(format!("roost-cron-order-jobs-{}", std::process::id()));
    copy_jobs(&jobs);
    let mut extra = String::new();
    for f in ["startd.config", "schedd.config"] {
        let text = std::fs::read_to_string(Path::new(FIXTURE).join(f)).expect("config");
        extra.push_str(&text.replace("@DIR@", &jobs.display().to_string()));
    }
    let ap = Ap::setup("cron-order", &extra);
    let schedd = ap.schedd();
    let startd = ap.startd();
    ap.up();
    let read = || {
        let slots = parse_long(&String::from_utf8_lossy(
            &ap.roost(&["status", "-l"]).stdout,
        ));
        let scheds = parse_long(&String::from_utf8_lossy(
            &ap.roost(&["status", "-schedd", "-l"]).stdout,
        ));
        (slots, scheds)
    };
    wait_for("every cron job's ads", || {
        let (slots, scheds) = read();
        slots.len() == 2
            && (slots.iter()).all(|s| SLOT_NEEDS.iter().all(|n| has(s, n)))
            && scheds.len() == 1
            && SCHEDD_NEEDS.iter().all(|n| has(&scheds[0], n))
    });
    let (slots, scheds) = read();
    let got = lines(&slots, &scheds[0]);
    let want: Vec<String> = std::fs::read_to_string(Path::new(FIXTURE).join("htcondor.txt"))
        .expect("HTCondor's capture")
        .lines()
        .map(str::to_string)
        .collect();
    assert_eq!(got, want, "Roost (left) against HTCondor 23.9.6 (right)");
    assert!(stop(startd).success());
    assert!(stop(schedd).success());
    let _ = std::fs::remove_dir_all(&ap.dir);
    let _ = std::fs::remove_dir_all(&jobs);
}
