//! The evaluator.
//!
//! Evaluation happens in a context of up to two ads: MY (the scope) and, in
//! a match, TARGET. Names resolve as in HTCondor's default (non-strict)
//! mode:
//!
//! * an unqualified name is looked up in the current ad, then its lexical
//!   parents up to the root; in a match, the MY ad's parent is a helper ad
//!   binding `target`/`other` to the other ad and `my`/`ad` to itself, whose
//!   parent is the match ad (`symmetricMatch`, `LEFT`, `RIGHT`, ...);
//! * if that fails and the name was unqualified in a top-level ad of a
//!   match, it is looked up in the other ad (HTCondor's "alternate scope");
//! * `MY`/`SELF`, `PARENT`, `ROOT`/`TOPLEVEL` and `CurrentTime` have their
//!   own meaning unless the ad defines them.
//!
//! A reference back to an attribute that is being evaluated (a cycle) is
//! `undefined`, as in HTCondor; the attribute an entry point is asked for is
//! evaluated directly, so it is not yet "being evaluated" for the first
//! reference back to it (HTCondor's `EvaluateAttr` against its `ExprTree`
//! evaluation).
//!
//! Evaluation never fails with a Rust error. HTCondor distinguishes a
//! *failed* evaluation (more than 400 nested attribute evaluations, an
//! absolute reference without a root) from the `error`
//! value (Roost adds one cause HTCondor lacks: more than
//! [`MAX_EVAL_STEPS`] expression nodes evaluated by one evaluator, which only
//! attributes referencing each other exponentially often reach); inside the
//! evaluator that is [`Fail`], which propagates like
//! HTCondor's failure does, and the public entry points turn it into
//! `error`. Deep recursion runs on a heap-grown stack, so no input can
//! overflow the thread's stack.

use std::cell::Cell;
use std::sync::{Arc, OnceLock};

use smallvec::SmallVec;

use super::ad::ClassAd;
use super::ast::{BinOp, Expr};
use super::builtins;
use super::limits::{MAX_ATTR_RECURSION, MAX_EVAL_STEPS};
use super::name::{Name, Special};
use super::ops;
use super::parser::parse_ad;
use super::value::{AdValue, Frame, ListValue, Nested, Side, Value};

/// What the evaluator needs from the world. The ClassAd core reads no clock
/// and no system state itself; the daemon and tools pass the real ones,
/// tests pass fixed ones.
pub trait Env {
    /// Seconds since the epoch (`time()`).
    fn now(&self) -> i64;
    /// Offset of local time from UTC at `t`, in seconds east.
    fn local_offset(&self, t: i64) -> i32;
    /// Time-zone abbreviation at `t` (for `formatTime`'s `%Z`).
    fn zone_name(&self, t: i64) -> String;
    /// A random integer in `0..2^31` (`random()`).
    fn random_u31(&self) -> u32;
    /// The home directory of a user (`userHome()`), if known.
    fn user_home(&self, user: &str) -> Option<String>;
}

/// A deterministic environment: a fixed clock, UTC, a seeded generator and
/// no users. For tests, replays and simulations.
#[derive(Debug)]
pub struct FixedEnv {
    /// What `time()` returns.
    pub now: i64,
    /// The local offset from UTC in seconds.
    pub offset: i32,
    seed: Cell<u64>,
}

impl FixedEnv {
    /// A fixed environment at time `now`, in UTC.
    pub fn new(now: i64) -> FixedEnv {
        FixedEnv {
            now,
            offset: 0,
            seed: Cell::new(0x2545_f491_4f6c_dd1d),
        }
    }
}

impl Default for FixedEnv {
    fn default() -> FixedEnv {
        FixedEnv::new(0)
    }
}

impl Env for FixedEnv {
    fn now(&self) -> i64 {
        self.now
    }
    fn local_offset(&self, _t: i64) -> i32 {
        self.offset
    }
    fn zone_name(&self, _t: i64) -> String {
        if self.offset == 0 {
            "UTC".into()
        } else {
            String::new()
        }
    }
    fn random_u31(&self) -> u32 {
        // xorshift64*
        let mut x = self.seed.get();
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.seed.set(x);
        u32::try_from(x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33).unwrap_or(0)
    }
    fn user_home(&self, _user: &str) -> Option<String> {
        None
    }
}

/// A failed evaluation (see the module documentation).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fail;

pub(crate) type R<T> = Result<T, Fail>;

/// Where an attribute name resolved to.
pub(crate) enum Found {
    /// Entry `usize` of the ad of the frame; evaluate it in that frame.
    Entry(Frame, usize),
    /// A value (special names).
    Value(Value),
    Undefined,
}

/// One evaluation: the context ads, the environment and the recursion
/// counters.
pub struct Evaluator<'a> {
    left: Option<&'a ClassAd>,
    right: Option<&'a ClassAd>,
    matching: bool,
    pub(crate) env: &'a dyn Env,
    depth_remaining: u32,
    level: u32,
    steps_remaining: u64,
    /// The attribute expressions being evaluated, by address (a reference
    /// back to one is a cycle: `undefined`); inline, so a pair allocates
    /// nothing.
    active: SmallVec<[usize; 8]>,
}

/// The helper ads HTCondor puts around the two ads of a match.
struct MatchAds {
    lctx: ClassAd,
    rctx: ClassAd,
    matchad: ClassAd,
}

fn match_ads() -> &'static MatchAds {
    static ADS: OnceLock<MatchAds> = OnceLock::new();
    ADS.get_or_init(|| {
        let parse = |s: &str| parse_ad(s).unwrap_or_default();
        MatchAds {
            lctx: parse("[other=.RIGHT;target=.RIGHT;my=.LEFT;ad=.LEFT]"),
            rctx: parse("[other=.LEFT;target=.LEFT;my=.RIGHT;ad=.RIGHT]"),
            matchad: parse(
                "[symmetricMatch = RIGHT.requirements && LEFT.requirements ;\
                 leftMatchesRight = RIGHT.requirements ;\
                 rightMatchesLeft = LEFT.requirements ;\
                 leftRankValue = LEFT.rank ;\
                 rightRankValue = RIGHT.rank]",
            ),
        }
    })
}

impl<'a> Evaluator<'a> {
    /// An evaluator for expressions of `my` (which may be absent), in a
    /// match against `target` if one is given.
    pub fn new(
        my: Option<&'a ClassAd>,
        target: Option<&'a ClassAd>,
        env: &'a dyn Env,
    ) -> Evaluator<'a> {
        let matching = my.is_some() && target.is_some() && {
            match (my, target) {
                (Some(a), Some(b)) => !ClassAd::ptr_eq(a, b),
                _ => false,
            }
        };
        Evaluator {
            left: my,
            right: if matching { target } else { None },
            matching,
            env,
            depth_remaining: MAX_ATTR_RECURSION,
            level: 0,
            steps_remaining: MAX_EVAL_STEPS,
            active: SmallVec::new(),
        }
    }

    /// Evaluates a free-standing expression whose scope is MY.
    pub fn eval_expr(&mut self, e: &Expr) -> Value {
        let frame = self.top_frame();
        let v = self.eval(e, &frame).unwrap_or(Value::Error);
        self.detach(v)
    }

    /// Evaluates a free-standing expression; `None` when the evaluation
    /// fails (what HTCondor reports as an evaluation failure rather than the
    /// `error` value: attributes nested more than 400
    /// deep, an absolute reference with no root ad).
    pub fn try_eval_expr(&mut self, e: &Expr) -> Option<Value> {
        let frame = self.top_frame();
        let v = self.eval(e, &frame).ok()?;
        Some(self.detach(v))
    }

    /// Evaluates MY's attribute `name` (`undefined` if it has none). As in
    /// HTCondor, the name itself is looked up in MY's scope only; TARGET is
    /// consulted for unqualified names *inside* the expression.
    pub fn eval_attr(&mut self, name: &Name) -> Value {
        let frame = self.top_frame();
        let v = match self.lookup(name, &frame, false) {
            Ok(found) => self.eval_found_as(found, false).unwrap_or(Value::Error),
            Err(Fail) => Value::Error,
        };
        self.detach(v)
    }

    /// Evaluates TARGET's attribute `name`, in TARGET's scope with MY as its
    /// target (how a match evaluates the other side's `Requirements`).
    pub fn eval_target_attr(&mut self, name: &Name) -> Value {
        if !self.matching {
            return Value::Undefined;
        }
        let frame = Frame::Top(Side::Right);
        let v = match self.lookup(name, &frame, false) {
            Ok(found) => self.eval_found_as(found, false).unwrap_or(Value::Error),
            Err(Fail) => Value::Error,
        };
        self.detach(v)
    }

    fn top_frame(&self) -> Frame {
        if self.left.is_some() {
            Frame::Top(Side::Left)
        } else {
            Frame::Empty
        }
    }

    /// The root scope: the match ad in a match, else MY.
    pub(crate) fn root(&self) -> Option<Frame> {
        if self.matching {
            Some(Frame::Match)
        } else if self.left.is_some() {
            Some(Frame::Top(Side::Left))
        } else {
            None
        }
    }

    fn is_root(&self, f: &Frame) -> bool {
        match f {
            Frame::Match => true,
            Frame::Top(Side::Left) => !self.matching,
            _ => false,
        }
    }

    fn parent(&self, f: &Frame) -> Option<Frame> {
        match f {
            Frame::Empty | Frame::Match => None,
            Frame::Top(side) => self.matching.then_some(Frame::Ctx(*side)),
            Frame::Ctx(_) => Some(Frame::Match),
            Frame::Nested(n) => n.parent.clone(),
        }
    }

    /// The ad a frame stands for.
    pub(crate) fn frame_ad<'f>(&'f self, f: &'f Frame) -> Option<&'f ClassAd> {
        frame_ad(self.left, self.right, f)
    }

    /// Resolves `name` starting at `start` (see the module documentation).
    pub(crate) fn lookup(&self, name: &Name, start: &Frame, alternate: bool) -> R<Found> {
        if matches!(start, Frame::Empty) {
            return Ok(Found::Undefined);
        }
        let mut cur = start.clone();
        loop {
            if let Some(found) = self.lookup_here(name, &cur) {
                return Ok(found);
            }
            match name.special() {
                Special::Root | Special::TopLevel => {
                    return match self.root() {
                        Some(r) => Ok(Found::Value(Value::Ad(AdValue(r)))),
                        None => Err(Fail),
                    };
                }
                Special::My | Special::SelfName => {
                    return Ok(Found::Value(Value::Ad(AdValue(cur))));
                }
                Special::Parent => {
                    return Ok(match self.parent(&cur) {
                        Some(p) => Found::Value(Value::Ad(AdValue(p))),
                        None => Found::Undefined,
                    });
                }
                Special::CurrentTime => return Ok(Found::Value(Value::Int(self.env.now()))),
                _ => {}
            }
            if self.is_root(&cur) {
                break;
            }
            match self.parent(&cur) {
                Some(p) => cur = p,
                None => break,
            }
        }
        if alternate
            && self.matching
            && let Frame::Top(side) = start
        {
            return self.lookup(name, &Frame::Top(side.other()), false);
        }
        Ok(Found::Undefined)
    }

    /// Looks `name` up in the frame's own attributes.
    fn lookup_here(&self, name: &Name, f: &Frame) -> Option<Found> {
        match f {
            Frame::Ctx(side) => match name.special() {
                Special::Target | Special::Other => {
                    Some(Found::Value(Value::Ad(AdValue(Frame::Top(side.other())))))
                }
                Special::My | Special::Ad => {
                    Some(Found::Value(Value::Ad(AdValue(Frame::Top(*side)))))
                }
                _ => None,
            },
            Frame::Match => match name.special() {
                Special::Left => Some(Found::Value(Value::Ad(AdValue(Frame::Top(Side::Left))))),
                Special::Right => Some(Found::Value(Value::Ad(AdValue(Frame::Top(Side::Right))))),
                Special::LCtx => Some(Found::Value(Value::Ad(AdValue(Frame::Ctx(Side::Left))))),
                Special::RCtx => Some(Found::Value(Value::Ad(AdValue(Frame::Ctx(Side::Right))))),
                _ => {
                    let ad = &match_ads().matchad;
                    ad.index_of(name).map(|i| Found::Entry(Frame::Match, i))
                }
            },
            _ => {
                let ad = self.frame_ad(f)?;
                ad.index_of(name).map(|i| Found::Entry(f.clone(), i))
            }
        }
    }

    /// MY (left) or TARGET (right).
    #[inline]
    fn side_ad(&self, side: Side) -> Option<&'a ClassAd> {
        match side {
            Side::Left => self.left,
            Side::Right => self.right,
        }
    }

    /// The side `base` names when it is `MY`/`SELF`, or `TARGET`/`OTHER` in
    /// a match, written in a top-level ad that does not define that name
    /// itself: the common `TARGET.Memory` resolved without building an ad
    /// value. `None` for anything else.
    #[inline]
    fn scope_of(&self, base: &Expr, frame: &Frame) -> Option<Side> {
        let (Expr::Attr(b), Frame::Top(side)) = (base, frame) else {
            return None;
        };
        let to = match b.special() {
            Special::Target | Special::Other if self.matching => side.other(),
            Special::My | Special::SelfName => *side,
            _ => return None,
        };
        match self.side_ad(*side)?.index_of(b) {
            Some(_) => None,
            None => Some(to),
        }
    }

    /// The expression `name` is bound to in the frame's own ad, for the
    /// frames whose ad is at hand (MY, TARGET, nested ads): the first place
    /// a lookup looks, without building a [`Found`].
    #[inline(always)]
    fn own_entry<'f>(&self, name: &Name, frame: &'f Frame) -> Option<&'f Expr>
    where
        'a: 'f,
    {
        let ad: &'f ClassAd = match frame {
            Frame::Top(side) => self.side_ad(*side)?,
            Frame::Nested(n) => &n.ad,
            _ => return None,
        };
        ad.get(name)
    }

    /// Evaluates an attribute's expression in `frame`, one attribute level
    /// deeper.
    #[inline(always)]
    fn eval_bound(&mut self, expr: &Expr, frame: &Frame) -> R<Value> {
        if self.depth_remaining == 0 {
            return Err(Fail);
        }
        match expr {
            // Most attributes are literals: no need to go deeper.
            Expr::Lit(v) => Ok(v.clone()),
            _ => self.eval_marked(expr, frame, true),
        }
    }

    /// Evaluates an attribute's expression one level deeper; when `mark`, a
    /// reference back to it meanwhile is a cycle (`undefined`). What an entry
    /// point is asked for is not marked (HTCondor's `EvaluateAttr`).
    fn eval_marked(&mut self, expr: &Expr, frame: &Frame, mark: bool) -> R<Value> {
        let key = std::ptr::from_ref(expr) as usize;
        if mark && self.active.contains(&key) {
            return Ok(Value::Undefined);
        }
        if mark {
            self.active.push(key);
        }
        self.depth_remaining -= 1;
        let r = self.eval(expr, frame);
        self.depth_remaining += 1;
        if mark {
            self.active.pop();
        }
        r
    }

    /// Evaluates what a lookup found (a reference: marked, see
    /// [`Evaluator::eval_marked`]).
    pub(crate) fn eval_found(&mut self, found: Found) -> R<Value> {
        self.eval_found_as(found, true)
    }

    fn eval_found_as(&mut self, found: Found, mark: bool) -> R<Value> {
        match found {
            Found::Undefined => Ok(Value::Undefined),
            Found::Value(v) => Ok(v),
            Found::Entry(frame, i) => {
                if self.depth_remaining == 0 {
                    return Err(Fail);
                }
                // The expression borrows from the frame's ad (owned by
                // `frame` or by the caller), not from `self`.
                let (left, right) = (self.left, self.right);
                match frame_ad(left, right, &frame).and_then(|ad| ad.entry(i)) {
                    Some((_, expr)) => self.eval_marked(expr, &frame, mark),
                    None => Ok(Value::Undefined),
                }
            }
        }
    }

    /// Runs `f` one attribute-evaluation level deeper (failing past the
    /// limit), as `eval()` does.
    pub(crate) fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> R<T>) -> R<T> {
        if self.depth_remaining == 0 {
            return Err(Fail);
        }
        self.depth_remaining -= 1;
        let r = f(self);
        self.depth_remaining += 1;
        r
    }

    /// Evaluates `e` with `frame` as the current scope.
    #[inline]
    pub(crate) fn eval(&mut self, e: &Expr, frame: &Frame) -> R<Value> {
        if self.steps_remaining == 0 {
            return Err(Fail);
        }
        self.steps_remaining -= 1;
        self.level += 1;
        let r = if self.level.is_multiple_of(16) {
            stacker::maybe_grow(256 * 1024, 2 * 1024 * 1024, || self.eval_node(e, frame))
        } else {
            self.eval_node(e, frame)
        };
        self.level -= 1;
        r
    }

    fn eval_node(&mut self, mut e: &Expr, frame: &Frame) -> R<Value> {
        // Parentheses only matter for printing.
        while let Expr::Paren(x) = e {
            e = x;
        }
        match e {
            Expr::Lit(v) => Ok(v.clone()),
            Expr::RelTimeLit(r) => Ok(Value::Real(*r)),
            Expr::AbsTimeLit(t) => Ok(Value::AbsTime(*t)),
            Expr::Attr(name) => {
                if let Some(x) = self.own_entry(name, frame) {
                    return self.eval_bound(x, frame);
                }
                let found = self.lookup(name, frame, true)?;
                self.eval_found(found)
            }
            Expr::AbsAttr(name) => {
                let Some(root) = self.root() else {
                    return Err(Fail);
                };
                let found = self.lookup(name, &root, false)?;
                self.eval_found(found)
            }
            Expr::Select(base, name) => {
                if let Some(side) = self.scope_of(base, frame) {
                    let top = Frame::Top(side);
                    if let Some(x) = self.own_entry(name, &top) {
                        return self.eval_bound(x, &top);
                    }
                    return self.select(Value::Ad(AdValue(top)), name);
                }
                // `b.name` with `b` bound in this ad to an ad literal and
                // `name` to a literal there: no ad value needs building.
                if let Expr::Attr(b) = &**base
                    && self.depth_remaining >= 2
                    && let Some(Expr::Ad(inner)) = self.own_entry(b, frame)
                    && let Some(Expr::Lit(v)) = inner.get(name)
                {
                    return Ok(v.clone());
                }
                let b = self.eval(base, frame)?;
                self.select(b, name)
            }
            Expr::Unary(op, x) => {
                let v = self.eval(x, frame)?;
                Ok(ops::unary(*op, &v))
            }
            Expr::Binary(b) => self.binary(b.op, &b.lhs, &b.rhs, frame),
            Expr::Cond(c, a, b) => {
                let cv = self.eval(c, frame)?;
                match cv.as_bool_equiv() {
                    Some(true) => self.eval(a, frame),
                    Some(false) => self.eval(b, frame),
                    None if cv.is_undefined() => Ok(Value::Undefined),
                    None => Ok(Value::Error),
                }
            }
            Expr::Elvis(a, b) => {
                let av = self.eval(a, frame)?;
                if av.is_undefined() {
                    self.eval(b, frame)
                } else {
                    Ok(av)
                }
            }
            Expr::Paren(x) => self.eval(x, frame),
            Expr::Index(l, i) => {
                let lv = self.eval(l, frame)?;
                let iv = self.eval(i, frame)?;
                self.index(lv, &iv)
            }
            Expr::Call(c) => builtins::call(self, c, frame),
            Expr::List(items) => Ok(Value::List(ListValue {
                items: Arc::clone(items),
                frame: Some(frame.clone()),
            })),
            Expr::Ad(ad) => Ok(Value::Ad(AdValue(Frame::Nested(Arc::new(Nested {
                ad: ad.clone(),
                parent: Some(frame.clone()),
            }))))),
        }
    }

    /// Evaluates an operand, sparing literals and attributes of the
    /// current ad that are bound to literals a call.
    #[inline(always)]
    fn operand(&mut self, e: &Expr, frame: &Frame) -> R<Value> {
        match e {
            Expr::Lit(v) => Ok(v.clone()),
            Expr::Attr(name) => match self.own_entry(name, frame) {
                Some(x) => self.eval_bound(x, frame),
                None => self.eval(e, frame),
            },
            _ => self.eval(e, frame),
        }
    }

    fn binary(&mut self, op: BinOp, l: &Expr, r: &Expr, frame: &Frame) -> R<Value> {
        match op {
            BinOp::And | BinOp::Or => {
                let lv = self.eval(l, frame)?;
                let is_or = op == BinOp::Or;
                if let Value::Bool(b) = lv {
                    if b == is_or {
                        return Ok(lv);
                    }
                } else if lv.as_bool_equiv() == Some(is_or) {
                    return Ok(Value::Bool(is_or));
                }
                let rv = self.eval(r, frame)?;
                if let (Value::Bool(_), &Value::Bool(b)) = (&lv, &rv) {
                    // Booleans own nothing: skip the drop glue.
                    std::mem::forget(lv);
                    std::mem::forget(rv);
                    return Ok(Value::Bool(b));
                }
                Ok(logical(is_or, &lv, &rv))
            }
            _ => {
                let lv = self.operand(l, frame)?;
                let rv = self.operand(r, frame)?;
                if let Some(v) = ops::binary_fast(op, &lv, &rv) {
                    // The fast path only takes numbers, which own nothing:
                    // skip the drop glue.
                    std::mem::forget(lv);
                    std::mem::forget(rv);
                    return Ok(v);
                }
                Ok(ops::binary(op, &lv, &rv))
            }
        }
    }

    /// `base.name`.
    pub(crate) fn select(&mut self, base: Value, name: &Name) -> R<Value> {
        match base {
            Value::Undefined => Ok(Value::Undefined),
            Value::Ad(AdValue(f)) => {
                let found = self.lookup(name, &f, false)?;
                self.eval_found(found)
            }
            Value::List(list) => {
                let mut out = Vec::with_capacity(list.items.len());
                let lf = list.frame.clone().unwrap_or(Frame::Empty);
                for item in list.items.iter() {
                    let v = self.eval(item, &lf)?;
                    let s = self.select(v, name)?;
                    out.push(self.detach(s));
                }
                Ok(Value::List(ListValue::from_values(out)))
            }
            _ => Ok(Value::Error),
        }
    }

    /// `l[i]`.
    fn index(&mut self, l: Value, i: &Value) -> R<Value> {
        if l.is_error() || i.is_error() {
            return Ok(Value::Error);
        }
        if l.is_undefined() || i.is_undefined() {
            return Ok(Value::Undefined);
        }
        match (&l, i) {
            (Value::Ad(AdValue(f)), Value::Str(s)) => {
                let name = Name::new(&s.to_string_lossy());
                match self.frame_ad(f).and_then(|ad| ad.index_of(&name)) {
                    None => Ok(Value::Undefined),
                    Some(_) => {
                        let found = self.lookup(&name, f, false)?;
                        Ok(self.eval_found(found).unwrap_or(Value::Error))
                    }
                }
            }
            (Value::List(list), Value::Int(n)) => {
                // HTCondor indexes with a C int.
                #[allow(clippy::cast_possible_truncation)]
                let n = *n as i32;
                let Some(item) = usize::try_from(n).ok().and_then(|n| list.items.get(n)) else {
                    return Ok(Value::Error);
                };
                let lf = list.frame.clone().unwrap_or(Frame::Empty);
                Ok(self.eval(item, &lf).unwrap_or(Value::Error))
            }
            _ => Ok(Value::Error),
        }
    }

    /// Evaluates element `i` of a list value.
    pub(crate) fn eval_item(&mut self, list: &ListValue, i: usize) -> R<Value> {
        let lf = list.frame.clone().unwrap_or(Frame::Empty);
        match list.items.get(i) {
            Some(e) => self.eval(e, &lf),
            None => Ok(Value::Undefined),
        }
    }

    /// The expression an attribute reference names, if it names one.
    pub(crate) fn deref(&mut self, e: &Expr, frame: &Frame) -> R<Option<Expr>> {
        let found = match e {
            Expr::Attr(name) => self.lookup(name, frame, true)?,
            Expr::AbsAttr(name) => match self.root() {
                Some(root) => self.lookup(name, &root, false)?,
                None => return Ok(None),
            },
            Expr::Select(base, name) => match self.eval(base, frame)? {
                Value::Ad(AdValue(f)) => self.lookup(name, &f, false)?,
                _ => return Ok(None),
            },
            _ => return Ok(None),
        };
        Ok(match found {
            Found::Entry(f, i) => self
                .frame_ad(&f)
                .and_then(|ad| ad.entry(i))
                .map(|(_, e)| e.clone()),
            _ => None,
        })
    }

    /// Evaluates `e` with `ad` as MY in a fresh scope (for functions that
    /// evaluate an expression in the context of other ads).
    pub(crate) fn eval_in_ad(&mut self, e: &Expr, ad: &AdValue) -> R<Value> {
        self.eval(e, &ad.0)
    }

    /// Turns a value into one that means the same outside this evaluation:
    /// ads of the context become free-standing ads, and lists lose the scope
    /// their unevaluated elements would have been evaluated in.
    pub(crate) fn detach(&self, v: Value) -> Value {
        match v {
            Value::Ad(AdValue(f)) => match f {
                Frame::Nested(n) if n.parent.is_none() => Value::Ad(AdValue(Frame::Nested(n))),
                Frame::Nested(n) => Value::Ad(AdValue::new(n.ad.clone())),
                other => match self.frame_ad(&other) {
                    Some(ad) => Value::Ad(AdValue::new(ad.clone())),
                    None => Value::Undefined,
                },
            },
            Value::List(l) => Value::List(ListValue {
                items: l.items,
                frame: None,
            }),
            other => other,
        }
    }
}

/// `&&` and `||` after the left operand did not decide the result.
fn logical(is_or: bool, l: &Value, r: &Value) -> Value {
    let norm = |v: &Value| -> Option<Value> {
        match v {
            Value::Undefined | Value::Error | Value::Bool(_) => Some(v.clone()),
            other => other.as_bool_equiv().map(Value::Bool),
        }
    };
    let (Some(l), Some(r)) = (norm(l), norm(r)) else {
        return Value::Error;
    };
    match (l, r) {
        (Value::Error, _) => Value::Error,
        (Value::Bool(_), r) => r,
        (Value::Undefined, Value::Bool(b)) if b == is_or => Value::Bool(is_or),
        (Value::Undefined, Value::Bool(_)) => Value::Undefined,
        (Value::Undefined, r) => r,
        _ => Value::Error,
    }
}

/// The ad a frame stands for, given the context's two ads.
fn frame_ad<'f>(
    left: Option<&'f ClassAd>,
    right: Option<&'f ClassAd>,
    f: &'f Frame,
) -> Option<&'f ClassAd> {
    match f {
        Frame::Empty => None,
        Frame::Top(Side::Left) => left,
        Frame::Top(Side::Right) => right,
        Frame::Ctx(Side::Left) => Some(&match_ads().lctx),
        Frame::Ctx(Side::Right) => Some(&match_ads().rctx),
        Frame::Match => Some(&match_ads().matchad),
        Frame::Nested(n) => Some(&n.ad),
    }
}

/// Evaluates `expr` with `my` as its scope, in a match against `target` if
/// given, with a fixed environment at time `now`.
pub fn eval_expr_in(
    expr: &Expr,
    my: Option<&ClassAd>,
    target: Option<&ClassAd>,
    env: &dyn Env,
) -> Value {
    Evaluator::new(my, target, env).eval_expr(expr)
}

impl ClassAd {
    /// Evaluates the attribute `name` of this ad.
    pub fn eval_attr(&self, name: &str, env: &dyn Env) -> Value {
        Evaluator::new(Some(self), None, env).eval_attr(&Name::new(name))
    }

    /// Evaluates an expression with this ad as its scope.
    pub fn eval(&self, expr: &Expr, env: &dyn Env) -> Value {
        Evaluator::new(Some(self), None, env).eval_expr(expr)
    }
}
