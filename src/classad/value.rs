//! Values: what evaluating a ClassAd expression produces.
//!
//! One enum with cheap clones: strings, lists and ads are reference counted.
//! Strings are byte strings, as in HTCondor (hook output may carry any
//! bytes); printing escapes what it must. A list value is the list's
//! *expressions* plus the scope they are evaluated in, because ClassAd lists
//! are lazy: `{ 1, 1/0 }` is a list whose second element is only evaluated
//! when something asks for it.

use std::fmt;
use std::sync::Arc;

use super::ad::ClassAd;
use super::ast::Expr;

/// A byte string with cheap clones.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Str(Arc<[u8]>);

impl Str {
    /// The bytes.
    pub fn as_bytes(&self) -> &[u8] {
        &self.0
    }

    /// Length in bytes.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether the string is empty.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The text, with invalid UTF-8 replaced.
    pub fn to_string_lossy(&self) -> String {
        String::from_utf8_lossy(&self.0).into_owned()
    }
}

impl From<&str> for Str {
    fn from(s: &str) -> Str {
        Str(Arc::from(s.as_bytes()))
    }
}

impl From<String> for Str {
    fn from(s: String) -> Str {
        Str(Arc::from(s.into_bytes()))
    }
}

impl From<&[u8]> for Str {
    fn from(s: &[u8]) -> Str {
        Str(Arc::from(s))
    }
}

impl From<Vec<u8>> for Str {
    fn from(s: Vec<u8>) -> Str {
        Str(Arc::from(s))
    }
}

impl fmt::Debug for Str {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&String::from_utf8_lossy(&self.0), f)
    }
}

/// An absolute time: seconds since the epoch and the zone offset (seconds
/// east of UTC) it is presented in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AbsTime {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub secs: i64,
    /// Zone offset in seconds east of UTC.
    pub offset: i32,
}

/// Which of the two ads of a match context a frame belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Side {
    Left,
    Right,
}

impl Side {
    pub(crate) fn other(self) -> Side {
        match self {
            Side::Left => Side::Right,
            Side::Right => Side::Left,
        }
    }
}

/// A scope in which attribute names are resolved: an ad and, implicitly, its
/// chain of enclosing scopes. The two ads of an evaluation and the helper
/// ads HTCondor builds around them in a match are named by position; an ad
/// written inside an expression carries its enclosing scope with it.
#[derive(Clone)]
pub(crate) enum Frame {
    /// No ad at all: every attribute reference is undefined.
    Empty,
    /// MY (left) or TARGET (right) of the evaluation.
    Top(Side),
    /// The helper ad around a side in a match (`lCtx`/`rCtx`).
    Ctx(Side),
    /// The match ad at the root of a match.
    Match,
    /// An ad value with its lexical parent scope.
    Nested(Arc<Nested>),
}

pub(crate) struct Nested {
    pub(crate) ad: ClassAd,
    pub(crate) parent: Option<Frame>,
}

impl Frame {
    pub(crate) fn detached(ad: ClassAd) -> Frame {
        Frame::Nested(Arc::new(Nested { ad, parent: None }))
    }
}

/// A list value: its element expressions and the scope they evaluate in.
#[derive(Clone)]
pub struct ListValue {
    pub(crate) items: Arc<[Expr]>,
    pub(crate) frame: Option<Frame>,
}

impl ListValue {
    /// A list of already-evaluated values.
    pub fn from_values(values: Vec<Value>) -> ListValue {
        let items: Vec<Expr> = values.into_iter().map(Expr::from_value).collect();
        ListValue {
            items: Arc::from(items),
            frame: None,
        }
    }

    /// The element expressions.
    pub fn items(&self) -> &[Expr] {
        &self.items
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    /// Whether the list is empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

/// An ad value: a nested ad, or one of the ads of the evaluation context.
#[derive(Clone)]
pub struct AdValue(pub(crate) Frame);

impl AdValue {
    /// An ad value that is not attached to any scope.
    pub fn new(ad: ClassAd) -> AdValue {
        AdValue(Frame::detached(ad))
    }

    /// The ad, for values returned from evaluation (which are always
    /// detached from the evaluation's context).
    pub fn classad(&self) -> Option<&ClassAd> {
        match &self.0 {
            Frame::Nested(n) => Some(&n.ad),
            _ => None,
        }
    }
}

/// The value of a ClassAd expression.
#[derive(Clone)]
pub enum Value {
    /// `undefined`: a missing attribute or an unknowable answer.
    Undefined,
    /// `error`: a type error or invalid operation.
    Error,
    /// A boolean.
    Bool(bool),
    /// A 64-bit integer (wraps on overflow, as in HTCondor).
    Int(i64),
    /// A real (IEEE double).
    Real(f64),
    /// A string.
    Str(Str),
    /// A list.
    List(ListValue),
    /// A nested ad.
    Ad(AdValue),
    /// An absolute time.
    AbsTime(AbsTime),
    /// A relative time in seconds.
    RelTime(f64),
}

impl Value {
    /// A string value.
    pub fn string(s: impl Into<Str>) -> Value {
        Value::Str(s.into())
    }

    /// Whether this is `undefined`.
    pub fn is_undefined(&self) -> bool {
        matches!(self, Value::Undefined)
    }

    /// Whether this is `error`.
    pub fn is_error(&self) -> bool {
        matches!(self, Value::Error)
    }

    /// Whether this is `undefined` or `error`.
    pub fn is_exceptional(&self) -> bool {
        matches!(self, Value::Undefined | Value::Error)
    }

    /// HTCondor's "boolean equivalent": booleans, and numbers compared with 0.
    pub fn as_bool_equiv(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            Value::Int(i) => Some(*i != 0),
            Value::Real(r) => Some(*r != 0.0),
            _ => None,
        }
    }

    /// The integer, if this is an integer.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The string bytes, if this is a string.
    pub fn as_str(&self) -> Option<&Str> {
        match self {
            Value::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The list, if this is a list.
    pub fn as_list(&self) -> Option<&ListValue> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    /// Integer or real as a double.
    pub fn as_number(&self) -> Option<f64> {
        match self {
            #[allow(clippy::cast_precision_loss)]
            Value::Int(i) => Some(*i as f64),
            Value::Real(r) => Some(*r),
            _ => None,
        }
    }

    /// Name of the value's type, for messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Undefined => "undefined",
            Value::Error => "error",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Real(_) => "real",
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Ad(_) => "classad",
            Value::AbsTime(_) => "absolute time",
            Value::RelTime(_) => "relative time",
        }
    }

    /// Structural identity: same type and same value, strings compared with
    /// case, reals by bit pattern (so `NaN` is identical to itself), lists and
    /// ads by their printed form. This is what tests compare with.
    pub fn identical(&self, other: &Value) -> bool {
        match (self, other) {
            (Value::Undefined, Value::Undefined) | (Value::Error, Value::Error) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Int(a), Value::Int(b)) => a == b,
            (Value::Real(a), Value::Real(b)) => a.to_bits() == b.to_bits(),
            (Value::RelTime(a), Value::RelTime(b)) => a.to_bits() == b.to_bits(),
            (Value::Str(a), Value::Str(b)) => a == b,
            (Value::AbsTime(a), Value::AbsTime(b)) => a == b,
            (Value::List(_), Value::List(_)) | (Value::Ad(_), Value::Ad(_)) => {
                super::unparse::value_to_string(self) == super::unparse::value_to_string(other)
            }
            _ => false,
        }
    }
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::unparse::value_to_string(self))
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&super::unparse::value_to_string(self))
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<f64> for Value {
    fn from(r: f64) -> Value {
        Value::Real(r)
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::Str(Str::from(s))
    }
}

impl From<ClassAd> for Value {
    fn from(ad: ClassAd) -> Value {
        Value::Ad(AdValue::new(ad))
    }
}
