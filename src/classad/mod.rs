//! The ClassAd language, exact to HTCondor's.
//!
//! * [`parse_expr`], [`parse_ad`] and [`old`] turn text into [`Expr`] and
//!   [`ClassAd`] (new syntax with chumsky over the [`lexer`]'s tokens; old
//!   `Name = expr` lines as hooks use them).
//! * [`Evaluator`] evaluates with HTCondor's semantics: three-valued logic,
//!   MY/TARGET scoping in a match, every built-in function.
//! * [`matchmaking`] implements the symmetric match and `Rank`.
//! * [`unparse`] prints new syntax, old syntax and JSON as HTCondor does.
//!
//! The module is pure: no I/O, no clock (time comes from an [`Env`]), no
//! threads, nothing of actix or sled. Parsing rejects hostile input with a
//! [`ParseError`] (see [`Limits`]); evaluation never fails, and no input can
//! overflow the stack.

mod ad;
pub mod argenv;
mod ast;
mod builtins;
pub(crate) mod cfmt;
pub mod convert;
mod error;
mod eval;
mod lexer;
mod limits;
pub mod matchmaking;
mod name;
pub mod old;
mod ops;
mod parser;
mod timefmt;
pub mod unparse;
mod value;

pub use ad::ClassAd;
pub use ast::{BinOp, Binary, Call, Expr, UnOp};
pub use builtins::Builtin;
pub use error::{ParseError, Position};
pub use eval::{Env, Evaluator, FixedEnv, eval_expr_in};
pub use lexer::Syntax;
pub use limits::{
    Limits, MAX_ATTR_RECURSION, MAX_EVAL_LIST_LEN, MAX_EVAL_STEPS, MAX_EVAL_STRING_BYTES,
};
pub use name::{Name, set_cache_bits as set_name_cache_bits};
pub use parser::{
    parse_ad, parse_ad_with, parse_ads_new, parse_expr, parse_expr_prefix, parse_expr_with,
};
pub use value::{AbsTime, AdValue, ListValue, Str, Value};
