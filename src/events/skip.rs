//! For `skip_serializing_if`: a field added to an event since schema 1 is
//! left out at its default, so the events that do not use it encode as
//! they did before.

/// Zero counts.
#[allow(clippy::trivially_copy_pass_by_ref)]
pub fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// [`is_zero`] for flags.
#[allow(clippy::trivially_copy_pass_by_ref)]
pub fn is_false(b: &bool) -> bool {
    !*b
}

/// [`is_zero`] for seconds.
#[allow(clippy::trivially_copy_pass_by_ref)]
pub fn is_zero_f64(n: &f64) -> bool {
    *n == 0.0
}
