//! Built-in functions, one module per family.
//!
//! Names are matched without regard to case when an expression is parsed;
//! a call to an unknown name evaluates to `error`. Each function takes its
//! argument *expressions* and evaluates them itself, because several are
//! lazy (`ifThenElse`, `strcat` stops at the first `undefined`).

mod conv;
mod env;
mod list;
mod math;
mod regex;
mod string;
mod stringlist;
mod time;
mod unresolved;

use super::ast::{Call, Expr};
use super::eval::{Evaluator, R};
use super::value::{Frame, Value};

/// A built-in function.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(missing_docs)]
pub enum Builtin {
    // type predicates
    IsUndefined,
    IsError,
    IsString,
    IsInteger,
    IsReal,
    IsList,
    IsClassAd,
    IsBoolean,
    IsAbsTime,
    IsRelTime,
    // conversions and control
    Int,
    Real,
    String,
    Bool,
    AbsTime,
    RelTime,
    IfThenElse,
    Eval,
    Unparse,
    Unresolved,
    Debug,
    // lists
    Member,
    IdenticalMember,
    Size,
    Sum,
    Avg,
    Min,
    Max,
    AnyCompare,
    AllCompare,
    EvalInEachContext,
    CountMatches,
    // strings
    Strcat,
    Join,
    ToUpper,
    ToLower,
    Substr,
    Strcmp,
    Stricmp,
    VersionCmp,
    VersionLE,
    VersionLT,
    VersionGE,
    VersionGT,
    VersionEQ,
    VersionInRange,
    Split,
    SplitUserName,
    SplitSlotName,
    // string lists
    StringListSize,
    StringListSum,
    StringListAvg,
    StringListMin,
    StringListMax,
    StringListMember,
    StringListIMember,
    StringListSubsetMatch,
    StringListISubsetMatch,
    StringListsIntersect,
    StringListRegexpMember,
    // regular expressions
    Regexp,
    RegexpMember,
    Regexps,
    Replace,
    ReplaceAll,
    // math
    Floor,
    Ceiling,
    Round,
    Pow,
    Quantize,
    Random,
    // time
    Time,
    CurrentTime,
    TimeZoneOffset,
    DayTime,
    GetYear,
    GetMonth,
    GetDayOfYear,
    GetDayOfMonth,
    GetDayOfWeek,
    GetDays,
    GetHours,
    GetMinutes,
    GetSeconds,
    SplitTime,
    FormatTime,
    Interval,
    // environment and arguments
    EnvV1ToV2,
    MergeEnvironment,
    ListToArgs,
    ArgsToList,
    UserHome,
    UserMap,
}

const TABLE: &[(&str, Builtin)] = &[
    ("isundefined", Builtin::IsUndefined),
    ("iserror", Builtin::IsError),
    ("isstring", Builtin::IsString),
    ("isinteger", Builtin::IsInteger),
    ("isreal", Builtin::IsReal),
    ("islist", Builtin::IsList),
    ("isclassad", Builtin::IsClassAd),
    ("isboolean", Builtin::IsBoolean),
    ("isabstime", Builtin::IsAbsTime),
    ("isreltime", Builtin::IsRelTime),
    ("int", Builtin::Int),
    ("real", Builtin::Real),
    ("string", Builtin::String),
    ("bool", Builtin::Bool),
    ("abstime", Builtin::AbsTime),
    ("reltime", Builtin::RelTime),
    ("ifthenelse", Builtin::IfThenElse),
    ("eval", Builtin::Eval),
    ("unparse", Builtin::Unparse),
    ("unresolved", Builtin::Unresolved),
    ("debug", Builtin::Debug),
    ("member", Builtin::Member),
    ("identicalmember", Builtin::IdenticalMember),
    ("size", Builtin::Size),
    ("sum", Builtin::Sum),
    ("avg", Builtin::Avg),
    ("min", Builtin::Min),
    ("max", Builtin::Max),
    ("anycompare", Builtin::AnyCompare),
    ("allcompare", Builtin::AllCompare),
    ("evalineachcontext", Builtin::EvalInEachContext),
    ("countmatches", Builtin::CountMatches),
    ("strcat", Builtin::Strcat),
    ("join", Builtin::Join),
    ("toupper", Builtin::ToUpper),
    ("tolower", Builtin::ToLower),
    ("substr", Builtin::Substr),
    ("strcmp", Builtin::Strcmp),
    ("stricmp", Builtin::Stricmp),
    ("versioncmp", Builtin::VersionCmp),
    ("versionle", Builtin::VersionLE),
    ("versionlt", Builtin::VersionLT),
    ("versionge", Builtin::VersionGE),
    ("versiongt", Builtin::VersionGT),
    ("versioneq", Builtin::VersionEQ),
    ("version_in_range", Builtin::VersionInRange),
    ("split", Builtin::Split),
    ("splitusername", Builtin::SplitUserName),
    ("splitslotname", Builtin::SplitSlotName),
    ("stringlistsize", Builtin::StringListSize),
    ("stringlistsum", Builtin::StringListSum),
    ("stringlistavg", Builtin::StringListAvg),
    ("stringlistmin", Builtin::StringListMin),
    ("stringlistmax", Builtin::StringListMax),
    ("stringlistmember", Builtin::StringListMember),
    ("stringlistimember", Builtin::StringListIMember),
    ("stringlistsubsetmatch", Builtin::StringListSubsetMatch),
    ("stringlistisubsetmatch", Builtin::StringListISubsetMatch),
    ("stringlistsintersect", Builtin::StringListsIntersect),
    ("stringlist_regexpmember", Builtin::StringListRegexpMember),
    ("regexp", Builtin::Regexp),
    ("regexpmember", Builtin::RegexpMember),
    ("regexps", Builtin::Regexps),
    ("replace", Builtin::Replace),
    ("replaceall", Builtin::ReplaceAll),
    ("floor", Builtin::Floor),
    ("ceil", Builtin::Ceiling),
    ("ceiling", Builtin::Ceiling),
    ("round", Builtin::Round),
    ("pow", Builtin::Pow),
    ("quantize", Builtin::Quantize),
    ("random", Builtin::Random),
    ("time", Builtin::Time),
    ("currenttime", Builtin::CurrentTime),
    ("timezoneoffset", Builtin::TimeZoneOffset),
    ("daytime", Builtin::DayTime),
    ("getyear", Builtin::GetYear),
    ("getmonth", Builtin::GetMonth),
    ("getdayofyear", Builtin::GetDayOfYear),
    ("getdayofmonth", Builtin::GetDayOfMonth),
    ("getdayofweek", Builtin::GetDayOfWeek),
    ("getdays", Builtin::GetDays),
    ("gethours", Builtin::GetHours),
    ("getminutes", Builtin::GetMinutes),
    ("getseconds", Builtin::GetSeconds),
    ("splittime", Builtin::SplitTime),
    ("formattime", Builtin::FormatTime),
    ("interval", Builtin::Interval),
    ("envv1tov2", Builtin::EnvV1ToV2),
    ("mergeenvironment", Builtin::MergeEnvironment),
    ("listtoargs", Builtin::ListToArgs),
    ("argstolist", Builtin::ArgsToList),
    ("userhome", Builtin::UserHome),
    ("usermap", Builtin::UserMap),
];

impl Builtin {
    /// The builtin named `name` (case-insensitive).
    pub fn lookup(name: &str) -> Option<Builtin> {
        TABLE
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, b)| *b)
    }

    /// Every builtin name, in lower case.
    pub fn names() -> impl Iterator<Item = &'static str> {
        TABLE.iter().map(|(n, _)| *n)
    }
}

/// Arguments of one call: evaluated on demand.
pub(crate) struct Args<'c> {
    pub(crate) exprs: &'c [Expr],
    pub(crate) frame: &'c Frame,
}

impl Args<'_> {
    pub(crate) fn len(&self) -> usize {
        self.exprs.len()
    }

    /// Evaluates argument `i` (which must exist).
    pub(crate) fn eval(&self, ev: &mut Evaluator<'_>, i: usize) -> R<Value> {
        match self.exprs.get(i) {
            Some(e) => ev.eval(e, self.frame),
            None => Ok(Value::Undefined),
        }
    }

    /// Evaluates every argument, in order.
    pub(crate) fn eval_all(&self, ev: &mut Evaluator<'_>) -> R<Vec<Value>> {
        self.exprs.iter().map(|e| ev.eval(e, self.frame)).collect()
    }
}

/// Calls a function.
pub(crate) fn call(ev: &mut Evaluator<'_>, call: &Call, frame: &Frame) -> R<Value> {
    let Some(func) = call.func else {
        return Ok(Value::Error);
    };
    let args = Args {
        exprs: &call.args,
        frame,
    };
    use Builtin as B;
    match func {
        B::IsUndefined
        | B::IsError
        | B::IsString
        | B::IsInteger
        | B::IsReal
        | B::IsList
        | B::IsClassAd
        | B::IsBoolean
        | B::IsAbsTime
        | B::IsRelTime => conv::is_type(ev, func, &args),
        B::Int => conv::int(ev, &args),
        B::Real => conv::real(ev, &args),
        B::String => conv::string(ev, &args),
        B::Bool => conv::bool_(ev, &args),
        B::AbsTime | B::RelTime => time::conv_time(ev, func, &args),
        B::IfThenElse => conv::if_then_else(ev, &args),
        B::Eval => conv::eval(ev, &args),
        B::Unparse => conv::unparse(ev, &args),
        B::Unresolved => unresolved::unresolved(ev, &args),
        B::Debug => conv::debug(ev, &args),
        B::Member | B::IdenticalMember => list::member(ev, func == B::IdenticalMember, &args),
        B::Size => list::size(ev, &args),
        B::Sum | B::Avg => list::sum_avg(ev, func == B::Avg, &args),
        B::Min | B::Max => list::min_max(ev, func == B::Min, &args),
        B::AnyCompare | B::AllCompare => list::list_compare(ev, func == B::AllCompare, &args),
        B::EvalInEachContext | B::CountMatches => {
            list::eval_in_each(ev, func == B::CountMatches, &args)
        }
        B::Strcat => string::strcat(ev, &args),
        B::Join => string::join(ev, &args),
        B::ToUpper | B::ToLower => string::change_case(ev, func == B::ToUpper, &args),
        B::Substr => string::substr(ev, &args),
        B::Strcmp | B::Stricmp => string::compare(ev, func == B::Stricmp, &args),
        B::VersionCmp
        | B::VersionLE
        | B::VersionLT
        | B::VersionGE
        | B::VersionGT
        | B::VersionEQ => string::version_compare(ev, func, &args),
        B::VersionInRange => string::version_in_range(ev, &args),
        B::Split => string::split(ev, &args),
        B::SplitUserName | B::SplitSlotName => {
            string::split_at(ev, func == B::SplitSlotName, &args)
        }
        B::StringListSize => stringlist::size(ev, &args),
        B::StringListSum | B::StringListAvg | B::StringListMin | B::StringListMax => {
            stringlist::summarize(ev, func, &args)
        }
        B::StringListMember
        | B::StringListIMember
        | B::StringListSubsetMatch
        | B::StringListISubsetMatch => stringlist::member(ev, func, &args),
        B::StringListsIntersect => stringlist::intersect(ev, &args),
        B::StringListRegexpMember => stringlist::regexp_member(ev, &args),
        B::Regexp => regex::regexp(ev, &args),
        B::RegexpMember => regex::regexp_member(ev, &args),
        B::Regexps | B::Replace | B::ReplaceAll => regex::substitute(ev, func, &args),
        B::Floor | B::Ceiling | B::Round => math::round(ev, func, &args),
        B::Pow => math::pow(ev, &args),
        B::Quantize => math::quantize(ev, &args),
        B::Random => math::random(ev, &args),
        B::Time => time::time(ev, &args),
        B::CurrentTime => time::current_time(ev, &args),
        B::TimeZoneOffset => time::time_zone_offset(ev, &args),
        B::DayTime => time::day_time(ev, &args),
        B::GetYear
        | B::GetMonth
        | B::GetDayOfYear
        | B::GetDayOfMonth
        | B::GetDayOfWeek
        | B::GetDays
        | B::GetHours
        | B::GetMinutes
        | B::GetSeconds => time::get_field(ev, func, &args),
        B::SplitTime => time::split_time(ev, &args),
        B::FormatTime => time::format_time(ev, &args),
        B::Interval => time::interval(ev, &args),
        B::EnvV1ToV2 => env::env_v1_to_v2(ev, &args),
        B::MergeEnvironment => env::merge_environment(ev, &args),
        B::ListToArgs => env::list_to_args(ev, &args),
        B::ArgsToList => env::args_to_list(ev, &args),
        B::UserHome => env::user_home(ev, &args),
        B::UserMap => env::user_map(ev, &args),
    }
}
