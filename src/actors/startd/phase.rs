//! When a slot's fetch timer fires within the second it is due: each
//! slot at its own point of the second (`fetch_phase`), so that slots do
//! not poll in step.

use std::time::Duration;

use crate::policy::layout::SlotSpec;
use crate::policy::slot::Slot;

/// Nanoseconds into each second at which the slot's FETCH_WORK timer
/// fires. Fetch delays are whole seconds, so where in its second a due
/// fetch starts is free; slots that started together would otherwise poll
/// in step, every idle FETCH_WORK (and its process) in the same
/// millisecond as the others' — and as the starter and REPLY_FETCH of a
/// job another slot has just fetched. Slot `k` (1 for `slot1`, a dynamic
/// slot `N_s` counting as `N + s`) takes the fractional part of `k` times
/// the golden ratio: 0.618, 0.236, 0.854, 0.472, …, spread over the second
/// for any number of slots, and none at the second's start, which is kept
/// for the fetch after one that brought work (see `SlotActor::reschedule`).
pub(super) fn fetch_phase(slot: &Slot, spec: &SlotSpec) -> u32 {
    phase_of(spec.id, &slot.id, &slot.kind)
}

/// [`fetch_phase`] of slot number `number`, id `id`, of kind `kind`.
fn phase_of(number: u32, id: &str, kind: &crate::policy::slot::SlotKind) -> u32 {
    let sub = match kind {
        crate::policy::slot::SlotKind::Dynamic { .. } => id
            .rsplit_once('_')
            .and_then(|(_, s)| s.parse::<u64>().ok())
            .unwrap_or(0),
        _ => 0,
    };
    let k = u64::from(number) + sub;
    // 0.6180339887… in 32-bit fixed point; the product's low 32 bits are
    // the fractional part.
    let frac = k.wrapping_mul(2_654_435_769) & 0xFFFF_FFFF;
    u32::try_from((frac * 1_000_000_000) >> 32).unwrap_or(0)
}

/// How long from `now_nanos` until `phase` nanoseconds into second `due`
/// (nothing when that has passed). A timer set so fires within second
/// `due`, never before it: the fetch it starts sees the delay it was
/// waiting for as over.
pub(super) fn until(now_nanos: i128, due: i64, phase: u32) -> Duration {
    let at = i128::from(due) * 1_000_000_000 + i128::from(phase);
    let wait = at - now_nanos;
    if wait <= 0 {
        return Duration::ZERO;
    }
    Duration::from_nanos(u64::try_from(wait).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::slot::SlotKind;

    fn phase(id: &str) -> u32 {
        let number = id
            .trim_start_matches("slot")
            .split('_')
            .next()
            .and_then(|n| n.parse().ok())
            .expect("a slot number");
        let kind = if id.contains('_') {
            SlotKind::Dynamic {
                parent: format!("slot{number}"),
            }
        } else {
            SlotKind::Static
        };
        phase_of(number, id, &kind)
    }

    #[test]
    fn slots_poll_at_different_points_of_the_second() {
        assert_eq!(phase("slot1"), 618_033_988);
        assert_eq!(phase("slot2"), 236_067_977);
        assert_eq!(phase("slot3"), 854_101_965);
        // A dynamic slot N_s counts as N + s.
        assert_eq!(phase("slot1_1"), phase("slot2"));
        assert_eq!(phase("slot1_2"), phase("slot3"));
        // None polls at the second's start.
        assert!((1..=1000u32).all(|k| phase(&format!("slot{k}")) > 0));
        // However many slots there are, the first n of them poll at least
        // a third of 1/n of a second apart.
        for n in 2..=64u32 {
            let mut p: Vec<u32> = (1..=n).map(|k| phase(&format!("slot{k}"))).collect();
            p.sort_unstable();
            p.push(p[0] + 1_000_000_000);
            let gap = p.windows(2).map(|w| w[1] - w[0]).min().unwrap_or(0);
            assert!(gap >= 1_000_000_000 / (3 * n), "{n} slots: {gap} ns");
        }
    }

    #[test]
    fn a_fetch_timer_fires_at_its_phase_within_the_due_second() {
        const S: i128 = 1_000_000_000;
        // At 100.25 s, due at 101 with phase 0.5: 1.25 s from now.
        assert_eq!(
            until(100 * S + S / 4, 101, 500_000_000),
            Duration::from_millis(1250)
        );
        // Phase 0: the second's start.
        assert_eq!(until(100 * S + S / 4, 101, 0), Duration::from_millis(750));
        // Already past: at once.
        assert_eq!(until(102 * S, 101, 0), Duration::ZERO);
        // Far off: no wrap-around to "at once".
        assert!(until(0, i64::MAX, 0) > Duration::from_secs(1 << 30));
    }
}
