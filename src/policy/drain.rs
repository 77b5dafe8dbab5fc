//! Draining and shutdown as every slot sees them: how running jobs go
//! (`condor_drain -how`, `condor_off`), the START expression while
//! draining, and what happens once every slot is drained. The node core
//! (`policy::node`) decides when a drain starts and ends; a slot's
//! `decide` reads the one in force.

use crate::classad::{ClassAd, Expr, Value, parse_expr};

use super::engine::PolicyError;

/// How a drain gets rid of running jobs (`condor_drain -how`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum DrainHow {
    /// Jobs may use their retirement and vacate time.
    Graceful,
    /// No retirement; vacate time honoured.
    Quick,
    /// Jobs are killed at once.
    Fast,
    /// Shutdown only: jobs may run to completion, whatever their retirement
    /// time (unless a MaxJobRetirementTime of -1 asks for eviction).
    Peaceful,
}

/// The machine's draining, as every slot sees it.
#[derive(Clone, Debug)]
pub struct Drain {
    /// How.
    pub how: DrainHow,
    /// Requirements while draining: the draining START expression `&&
    /// WithinResourceLimits`, or `false` when none is given.
    pub requirements: Expr,
    /// Whether every slot has finished (is Drained).
    pub all_drained: bool,
    /// A shutdown (`condor_off`) rather than a drain: slots do not become
    /// Drained, nothing new is fetched, and the daemon exits when no job
    /// is left.
    pub shutdown: bool,
    /// Why (`DrainReason`; HTCondor's default is "by command").
    pub reason: String,
    /// The request's id (`DrainingRequestId`), for cancelling it.
    pub request_id: u64,
    /// When it began (`LastDrainStartTime`).
    pub started: i64,
    /// What happens once every slot is Drained/Idle.
    pub on_completion: OnCompletion,
}

/// What a drain does once every slot is Drained/Idle (`condor_drain
/// -resume-on-completion` and friends; HTCondor's codes 0–4).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OnCompletion {
    /// Stay Drained until cancelled.
    #[default]
    Nothing,
    /// Cancel the drain: slots accept work again.
    Resume,
    /// The daemon exits.
    Exit,
    /// The daemon restarts.
    Restart,
    /// The configuration is re-read, then the drain is cancelled.
    Reconfig,
}

impl Drain {
    /// A drain; `start` is the START expression while draining (`None`:
    /// accept nothing), an error if it does not parse.
    pub fn new(how: DrainHow, start: Option<&str>) -> Result<Drain, PolicyError> {
        let Some(e) = start else {
            return Ok(Drain::closed(how));
        };
        let requirements =
            parse_expr(&format!("({e}) && WithinResourceLimits")).map_err(|e| PolicyError {
                knob: "draining START expression".into(),
                message: format!("is not a ClassAd expression: {e}"),
            })?;
        Ok(Drain {
            requirements,
            ..Drain::closed(how)
        })
    }

    /// A drain during which nothing starts.
    pub fn closed(how: DrainHow) -> Drain {
        Drain {
            how,
            requirements: Expr::from_value(Value::Bool(false)),
            all_drained: false,
            shutdown: false,
            reason: "by command".into(),
            request_id: 0,
            started: 0,
            on_completion: OnCompletion::Nothing,
        }
    }

    /// A shutdown (`off peaceful|graceful|fast`).
    pub fn shutdown(how: DrainHow) -> Drain {
        Drain {
            shutdown: true,
            reason: "shutdown".into(),
            ..Drain::closed(how)
        }
    }
}

/// Why `condor_drain -check` refused a drain.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CheckError {
    /// The expression does not parse.
    #[error("the check expression is not a ClassAd expression: {0}")]
    Parse(String),
    /// It is not true in this slot.
    #[error("check expression {check} is {value} in {slot}, not true: drain refused")]
    NotTrue {
        /// The expression.
        check: String,
        /// What it evaluated to.
        value: String,
        /// The slot's name.
        slot: String,
    },
}

/// `condor_drain -check`: the expression must evaluate to true in every
/// slot ad, else the drain is refused with the first slot where it did not
/// (HTCondor's `DRAINING_CHECK_EXPR_FAILED`).
pub fn drain_check(check: &str, ads: &[ClassAd], now: i64) -> Result<(), CheckError> {
    let e = parse_expr(check).map_err(|err| CheckError::Parse(err.to_string()))?;
    let env = crate::classad::FixedEnv::new(now);
    for ad in ads {
        let v = ad.eval(&e, &env);
        if !matches!(v, Value::Bool(true)) {
            let slot = match ad.eval_attr("Name", &env) {
                Value::Str(s) => s.to_string_lossy(),
                _ => "a slot".into(),
            };
            return Err(CheckError::NotTrue {
                check: check.to_string(),
                value: v.to_string(),
                slot,
            });
        }
    }
    Ok(())
}
