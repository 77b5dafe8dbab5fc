//! `roost-log state`: the state a replay to a point of the log gives,
//! as text.

use roost::cron::event::CronState;
use roost::startd::Replay;

use crate::filter::show_time;

/// The node's line of `state`: the drain or shutdown in force, or the
/// last drain's times; nothing for a node never drained.
fn node_text(n: &roost::policy::node::NodeSnapshot) -> String {
    let Some(d) = &n.drain else {
        return match n.drain_times {
            (0, 0) => String::new(),
            (start, stop) => format!(
                "{:<10} not draining (last drain {} to {})\n",
                "node",
                show_time(start),
                show_time(stop)
            ),
        };
    };
    if d.shutdown {
        return format!(
            "{:<10} shutting down ({:?}) since {}{}\n",
            "node",
            d.how,
            show_time(d.started),
            if d.restart { ", then restarting" } else { "" }
        );
    }
    let progress = if d.completed {
        ", every slot drained and idle"
    } else if d.all_drained {
        ", every slot drained"
    } else {
        ""
    };
    let start = d
        .start
        .as_deref()
        .map(|e| format!(", start {e}"))
        .unwrap_or_default();
    format!(
        "{:<10} draining ({:?}) since {}, request {}, reason {:?}, on completion {:?}{start}{progress}\n",
        "node",
        d.how,
        show_time(d.started),
        d.request_id,
        d.reason,
        d.on_completion
    )
}

/// `state`'s text: the node, each slot, the starters and hooks running,
/// each cron job and its ads, and the replay's problems.
pub fn state_text(r: &Replay) -> String {
    let mut s = node_text(&r.node);
    for (id, slot) in &r.slots {
        if slot.deleted {
            continue;
        }
        let claim = match &slot.claim {
            Some(c) => {
                let job = roost::startd::audit::job_label(&c.job);
                let ending = c
                    .ending
                    .map(|e| format!(", ending: {e:?}"))
                    .unwrap_or_default();
                format!("claim {} (job {job}{ending})", c.id)
            }
            None => "no claim".into(),
        };
        s.push_str(&format!(
            "{id:<10} {:<10} {:<10} since {}  {claim}{}\n",
            slot.state.to_string(),
            slot.activity.to_string(),
            show_time(slot.entered_activity),
            if slot.starter {
                ", starter running"
            } else {
                ""
            }
        ));
    }
    for (actor, st) in &r.starters {
        s.push_str(&format!(
            "{actor}: running for {} claim {} (pid {}, job {})\n",
            st.slot, st.claim, st.pid, st.job
        ));
    }
    for (actor, h) in &r.hooks {
        s.push_str(&format!(
            "{actor}: {} running for {} (pid {})\n",
            h.hook, h.slot, h.pid
        ));
    }
    s.push_str(&cron_text(&r.cron));
    for p in &r.problems {
        s.push_str(&format!("problem: {p}\n"));
    }
    s.push_str(&format!(
        "at record {} ({})",
        r.last_seq,
        show_time(r.last_time)
    ));
    s
}

/// Each cron job's runs and last ads: `cron.<name>: N runs, last started
/// T, ended T` (or `running, pid P`), then one line per ad, and for a
/// resource monitor one line per slot with what it shows there.
fn cron_text(c: &CronState) -> String {
    let mut s = String::new();
    for (actor, j) in &c.jobs {
        let when = |t: Option<i64>| t.map_or_else(|| "never".to_string(), show_time);
        let status = match j.running {
            Some((pid, _)) => format!("running, pid {pid}"),
            None => format!("ended {}", when(j.last_end)),
        };
        s.push_str(&format!(
            "{actor}: {} run(s), last started {}, {status}\n",
            j.runs,
            when(j.last_start)
        ));
        for ad in &j.ads {
            s.push_str(&format!("  {} {}\n", ad.name, ad.ad));
        }
        for slot in j.metrics.0.keys() {
            let attrs: Vec<String> = (j.metrics.attributes(slot).iter())
                .map(|(k, v)| format!("{k} = {}", roost::classad::unparse::value_to_string(v)))
                .collect();
            s.push_str(&format!("  {slot}: {}\n", attrs.join("; ")));
        }
    }
    s
}
