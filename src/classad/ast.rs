//! The expression tree.
//!
//! The tree keeps what the source said, including parentheses, so that
//! printing an expression gives back what HTCondor would print for it.
//! Attribute names carry their interned symbol ([`Name`]); function calls
//! carry the builtin they resolved to when parsed.

use std::sync::Arc;

use super::ad::ClassAd;
use super::builtins::Builtin;
use super::name::Name;
use super::value::{AbsTime, Value};

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnOp {
    /// `-`
    Neg,
    /// `+`
    Plus,
    /// `!`
    Not,
    /// `~`
    BitNot,
}

/// Binary operators, in HTCondor's precedence groups.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    /// `||`
    Or,
    /// `&&`
    And,
    /// `|`
    BitOr,
    /// `^`
    BitXor,
    /// `&`
    BitAnd,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `=?=` or `is`
    Is,
    /// `=!=` or `isnt`
    Isnt,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `<<`
    Shl,
    /// `>>`
    Shr,
    /// `>>>`
    Ushr,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Mod,
}

impl BinOp {
    /// Binding strength; higher binds tighter. All binary operators are left
    /// associative.
    pub fn precedence(self) -> u8 {
        match self {
            BinOp::Or => 1,
            BinOp::And => 2,
            BinOp::BitOr => 3,
            BinOp::BitXor => 4,
            BinOp::BitAnd => 5,
            BinOp::Eq | BinOp::Ne | BinOp::Is | BinOp::Isnt => 6,
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => 7,
            BinOp::Shl | BinOp::Shr | BinOp::Ushr => 8,
            BinOp::Add | BinOp::Sub => 9,
            BinOp::Mul | BinOp::Div | BinOp::Mod => 10,
        }
    }
}

/// A function call.
#[derive(Clone, Debug)]
pub struct Call {
    /// The name as written.
    pub name: Arc<str>,
    /// The builtin it names, if any; calls to unknown functions evaluate to
    /// `error`.
    pub func: Option<Builtin>,
    /// The arguments.
    pub args: Vec<Expr>,
}

/// A binary operation, with the parentheses written around it: `(a + b)`
/// is one node with `parens == 1`, so the most common parenthesized form
/// costs no node of its own.
#[derive(Clone, Debug)]
pub struct Binary {
    /// The operator.
    pub op: BinOp,
    /// Pairs of parentheses around the operation.
    pub parens: u8,
    /// The left operand.
    pub lhs: Expr,
    /// The right operand.
    pub rhs: Expr,
}

/// A ClassAd expression.
#[derive(Clone, Debug)]
pub enum Expr {
    /// A literal value.
    Lit(Value),
    /// `relTime("...")` folded when parsed. HTCondor evaluates such a
    /// literal to a real number of seconds but prints it in its source form.
    RelTimeLit(f64),
    /// `absTime("...")` folded when parsed.
    AbsTimeLit(AbsTime),
    /// An attribute reference `name`.
    Attr(Name),
    /// An absolute reference `.name` (looked up in the root ad).
    AbsAttr(Name),
    /// A selection `expr.name`.
    Select(Box<Expr>, Name),
    /// A unary operation.
    Unary(UnOp, Box<Expr>),
    /// A binary operation.
    Binary(Box<Binary>),
    /// `c ? a : b`
    Cond(Box<Expr>, Box<Expr>, Box<Expr>),
    /// `a ?: b`
    Elvis(Box<Expr>, Box<Expr>),
    /// `( e )`, kept so printing reproduces the source. (Parentheses around
    /// a binary operation are counted in its node instead.)
    Paren(Box<Expr>),
    /// `l[i]`
    Index(Box<Expr>, Box<Expr>),
    /// A function call.
    Call(Box<Call>),
    /// A list literal `{ ... }`.
    List(Arc<[Expr]>),
    /// An ad literal `[ ... ]`.
    Ad(ClassAd),
}

impl Expr {
    /// The literal expression for a value.
    pub fn from_value(v: Value) -> Expr {
        match v {
            Value::List(l) => Expr::List(l.items),
            Value::Ad(a) => match a.classad() {
                Some(ad) => Expr::Ad(ad.clone()),
                None => Expr::Lit(Value::Ad(a)),
            },
            v => Expr::Lit(v),
        }
    }

    /// A reference to the attribute `name`.
    pub fn attr(name: &str) -> Expr {
        Expr::Attr(Name::new(name))
    }

    /// A binary operation.
    pub fn binary(op: BinOp, l: Expr, r: Expr) -> Expr {
        Expr::Binary(Box::new(Binary {
            op,
            parens: 0,
            lhs: l,
            rhs: r,
        }))
    }

    /// `( self )`.
    pub fn parenthesized(self) -> Expr {
        match self {
            Expr::Binary(mut b) if b.parens < u8::MAX => {
                b.parens += 1;
                Expr::Binary(b)
            }
            e => Expr::Paren(Box::new(e)),
        }
    }

    /// The literal value, if this expression is a literal (not a list or ad).
    pub fn as_literal(&self) -> Option<&Value> {
        match self {
            Expr::Lit(v) => Some(v),
            _ => None,
        }
    }
}

impl From<Value> for Expr {
    fn from(v: Value) -> Expr {
        Expr::from_value(v)
    }
}
