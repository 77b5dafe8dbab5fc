//! Limits that keep hostile input from exhausting the stack or memory.
//!
//! HTCondor itself rejects expressions nested deeper than 1000 brackets and
//! stops following attribute references after 400 levels; Roost does the
//! same and adds bounds HTCondor lacks (it crashes on about 100,000 chained
//! unary minus signs): on the size of any text parsed at once, on string
//! literals, on the depth of operator chains, and on strings built during
//! evaluation.

/// Parse and evaluation limits.
#[derive(Clone, Debug)]
pub struct Limits {
    /// Largest text parsed as one expression or one ad.
    pub max_text_bytes: usize,
    /// Largest string literal.
    pub max_string_bytes: usize,
    /// Deepest bracket nesting (HTCondor: 1000).
    pub max_nesting: usize,
    /// Deepest expression tree, counting chained operators.
    pub max_tree_depth: usize,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_text_bytes: 512 * 1024,
            max_string_bytes: 256 * 1024,
            max_nesting: 1000,
            max_tree_depth: 4000,
        }
    }
}

/// Nested attribute evaluations before giving up (HTCondor's value).
pub const MAX_ATTR_RECURSION: u32 = 400;

/// Largest string an expression may build while being evaluated; larger
/// results are `error`.
pub const MAX_EVAL_STRING_BYTES: usize = 16 * 1024 * 1024;

/// Expression nodes one evaluator may evaluate (across the results it
/// produces) before failing. Chained attributes such as `a = b + b;
/// b = c + c; ...` take time exponential in their number, in HTCondor too;
/// this bounds a hostile ad to well under a second of work.
pub const MAX_EVAL_STEPS: u64 = 20_000_000;

/// Largest list an expression may build while being evaluated.
pub const MAX_EVAL_LIST_LEN: usize = 1024 * 1024;

/// Distinct attribute names (ignoring case) given a symbol; later names are
/// uninterned (see [`super::name`]).
pub const MAX_SYMBOLS: usize = 1 << 20;

/// Bytes of attribute-name text the symbol table keeps.
pub const MAX_INTERNED_BYTES: usize = 32 * 1024 * 1024;

/// log2 of the spellings each thread caches in front of the shared symbol
/// table (1024 slots of 48 bytes, 48 KiB, allocated on first use). A
/// daemon's ads use a few hundred distinct names; a miss costs an
/// uncontended lock. 4096 slots were 192 KiB of each interning thread's
/// resident memory for no measurable gain in parsing. A process may choose
/// another size (`set_name_cache_bits`; a starter uses 16 slots).
pub const NAME_CACHE_BITS: u32 = 10;
