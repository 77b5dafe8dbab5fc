//! The manual's numbered state/activity transitions (the arrows of the
//! startd's state diagram in `ep-policy-configuration.rst`), as a type:
//! each variant carries the number the manual prints beside its arrow, and
//! the log stores that number (one byte), so the on-disk form is exactly
//! the bare number it always was.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::slot::{Activity, State};

/// Declares the enum and its table of every variant from one list, so a
/// number cannot be added to one and forgotten in the other.
macro_rules! transitions {
    ($($(#[$doc:meta])* $name:ident = $n:literal,)*) => {
        /// A numbered transition of the manual's state diagram.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        #[repr(u8)]
        pub enum Transition {
            $($(#[$doc])* $name = $n,)*
        }

        impl Transition {
            /// Every transition, by number.
            pub const ALL: &'static [Transition] = &[$(Transition::$name,)*];
        }
    };
}

transitions! {
    /// A move the manual draws no numbered arrow for (a dynamic slot's
    /// first claim, a lease that expires while Busy, a fast drain or
    /// vacate of a running job).
    Unnumbered = 0,
    /// Owner → Unclaimed: IS_OWNER is false.
    OwnerToUnclaimed = 1,
    /// Unclaimed → Owner: IS_OWNER is true.
    UnclaimedToOwner = 2,
    /// Unclaimed/Idle → Unclaimed/Benchmarking: RunBenchmarks.
    IdleToBenchmarking = 3,
    /// Unclaimed/Benchmarking → Unclaimed/Idle: the benchmarks finished.
    BenchmarkingToIdle = 4,
    /// Unclaimed → Claimed, without a match first (a fetched job, a
    /// direct claim request).
    UnclaimedToClaimed = 5,
    /// Unclaimed → Matched.
    UnclaimedToMatched = 6,
    /// Unclaimed → Backfill: START_BACKFILL.
    UnclaimedToBackfill = 7,
    /// Matched → Owner: START turned false, the match timed out, a vacate.
    MatchedToOwner = 8,
    /// Matched → Claimed: the claimant's claim request.
    MatchedToClaimed = 9,
    /// Claimed → Preempting.
    ClaimedToPreempting = 10,
    /// Claimed/Idle → Claimed/Busy: a starter runs the job.
    IdleToBusy = 11,
    /// Claimed/Busy → Claimed/Idle: the starter exited.
    BusyToIdle = 12,
    /// Claimed/Busy → Claimed/Retiring.
    BusyToRetiring = 13,
    /// Claimed/Busy → Claimed/Suspended: SUSPEND.
    BusyToSuspended = 14,
    /// Claimed/Suspended → Claimed/Busy: CONTINUE.
    SuspendedToBusy = 15,
    /// Claimed/Suspended → Claimed/Retiring.
    SuspendedToRetiring = 16,
    /// Claimed/Suspended → Preempting: retirement ran out.
    SuspendedToPreempting = 17,
    /// Claimed/Retiring → Preempting: retirement ran out.
    RetiringToPreempting = 18,
    /// Claimed/Retiring → Claimed/Busy: the better claim went away.
    RetiringToBusy = 19,
    /// Claimed/Retiring → Claimed/Suspended: SUSPEND.
    RetiringToSuspended = 20,
    /// Preempting/Vacating → Preempting/Killing: KILL, or the vacate time
    /// ran out.
    VacatingToKilling = 21,
    /// Preempting/Vacating → Owner: the job left.
    VacatingToOwner = 22,
    /// Preempting/Vacating → Claimed/Idle: a waiting claim takes over.
    VacatingToClaimed = 23,
    /// Preempting/Killing → Claimed/Idle: a waiting claim takes over.
    KillingToClaimed = 24,
    /// Preempting/Killing → Owner: the job is gone.
    KillingToOwner = 25,
    /// Backfill/Idle → Backfill/Busy: the client runs.
    BackfillIdleToBusy = 26,
    /// Backfill/Busy → Backfill/Idle: the client exited.
    BackfillBusyToIdle = 27,
    /// Backfill/Busy → Backfill/Killing: the client must go.
    BackfillBusyToKilling = 28,
    /// Backfill/Killing → Backfill/Idle: the client is gone.
    BackfillKillingToIdle = 29,
    /// Backfill → Owner.
    BackfillToOwner = 30,
    /// Backfill → Claimed: a claim waited for the client to go.
    BackfillToClaimed = 31,
    /// Backfill → Matched: a match waited for the client to go.
    BackfillToMatched = 32,
    /// Drained/Retiring → Drained/Idle: every slot is drained.
    DrainedRetiringToIdle = 33,
    /// Drained/Retiring → Owner: the drain ended.
    DrainedRetiringToOwner = 34,
    /// Drained/Idle → Owner: the drain ended.
    DrainedIdleToOwner = 35,
    /// Owner → Drained/Retiring: draining.
    OwnerToDrained = 36,
    /// Unclaimed → Drained/Retiring: draining.
    UnclaimedToDrained = 37,
}

impl Transition {
    /// The manual's number (0 for [`Transition::Unnumbered`]).
    #[must_use]
    pub const fn number(self) -> u8 {
        self as u8
    }

    /// The transition with the manual's number `n`, if there is one.
    #[must_use]
    pub fn from_number(n: u8) -> Option<Transition> {
        Transition::ALL.get(usize::from(n)).copied()
    }

    /// Where the arrow leads: the state and activity every transition with
    /// this number ends in. `None` for the arrows into Preempting (10, 17,
    /// 18: Vacating or Killing, as WANT_VACATE says) and for
    /// [`Transition::Unnumbered`].
    #[must_use]
    pub fn target(self) -> Option<(State, Activity)> {
        use Transition as T;
        Some(match self {
            T::OwnerToUnclaimed | T::BenchmarkingToIdle => (State::Unclaimed, Activity::Idle),
            T::UnclaimedToOwner
            | T::MatchedToOwner
            | T::VacatingToOwner
            | T::KillingToOwner
            | T::BackfillToOwner
            | T::DrainedRetiringToOwner
            | T::DrainedIdleToOwner => (State::Owner, Activity::Idle),
            T::IdleToBenchmarking => (State::Unclaimed, Activity::Benchmarking),
            T::UnclaimedToClaimed
            | T::MatchedToClaimed
            | T::BusyToIdle
            | T::VacatingToClaimed
            | T::KillingToClaimed
            | T::BackfillToClaimed => (State::Claimed, Activity::Idle),
            T::UnclaimedToMatched | T::BackfillToMatched => (State::Matched, Activity::Idle),
            T::UnclaimedToBackfill | T::BackfillBusyToIdle | T::BackfillKillingToIdle => {
                (State::Backfill, Activity::Idle)
            }
            T::IdleToBusy | T::SuspendedToBusy | T::RetiringToBusy => {
                (State::Claimed, Activity::Busy)
            }
            T::BusyToRetiring | T::SuspendedToRetiring => (State::Claimed, Activity::Retiring),
            T::BusyToSuspended | T::RetiringToSuspended => (State::Claimed, Activity::Suspended),
            T::VacatingToKilling => (State::Preempting, Activity::Killing),
            T::BackfillIdleToBusy => (State::Backfill, Activity::Busy),
            T::BackfillBusyToKilling => (State::Backfill, Activity::Killing),
            T::DrainedRetiringToIdle => (State::Drained, Activity::Idle),
            T::OwnerToDrained | T::UnclaimedToDrained => (State::Drained, Activity::Retiring),
            T::Unnumbered
            | T::ClaimedToPreempting
            | T::SuspendedToPreempting
            | T::RetiringToPreempting => return None,
        })
    }
}

/// The manual's number.
impl fmt::Display for Transition {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.number())
    }
}

/// Stored as the bare number, the form every log has always held.
impl Serialize for Transition {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u8(self.number())
    }
}

impl<'de> Deserialize<'de> for Transition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Transition, D::Error> {
        let n = u8::deserialize(d)?;
        Transition::from_number(n).ok_or_else(|| {
            serde::de::Error::custom(format!(
                "transition {n} is not one of the manual's (0 to 37)"
            ))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_number_from_0_to_37_names_its_own_transition() {
        assert_eq!(Transition::ALL.len(), 38);
        for (i, t) in Transition::ALL.iter().enumerate() {
            assert_eq!(usize::from(t.number()), i, "{t:?}");
            assert_eq!(Transition::from_number(t.number()), Some(*t));
        }
        assert_eq!(Transition::from_number(38), None);
    }

    #[test]
    fn each_fixed_arrow_leads_where_its_name_says() {
        let open = [0, 10, 17, 18];
        for t in Transition::ALL {
            let target = t.target();
            assert_eq!(target.is_none(), open.contains(&t.number()), "{t:?}");
            if let Some((state, activity)) = target {
                let name = format!("{t:?}");
                let to = name.rsplit("To").next().unwrap_or_default().to_string();
                assert!(
                    to == state.to_string() || to == activity.to_string(),
                    "{t:?} leads to {state}/{activity}"
                );
            }
        }
    }

    #[test]
    fn it_is_stored_as_the_bare_number() {
        // The log's own bytes are pinned by the golden event fixtures.
        let text = serde_json::to_string(&Transition::BusyToRetiring).expect("encodes");
        assert_eq!(text, "13");
        let back: Transition = serde_json::from_str(&text).expect("decodes");
        assert_eq!(back, Transition::BusyToRetiring);
        let err = serde_json::from_str::<Transition>("99").expect_err("99 is no transition");
        assert!(err.to_string().contains("transition 99"), "{err}");
    }
}
