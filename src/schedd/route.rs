//! The job router's routes: `JOB_ROUTER_ROUTE_<name>` in HTCondor's
//! transform language, read into a [`Route`] and applied to a job ad.
//!
//! A route is a sequence of lines, run top to bottom: `var = value`
//! (a temporary macro; `MaxJobs`, `MaxIdleJobs` and `GridResource` also
//! steer the router), `REQUIREMENTS expr` (which jobs the route takes),
//! `UNIVERSE name|number` (the routed copy's universe, default 9, grid),
//! `SET`, `DEFAULT`, `EVALSET`, `EVALMACRO`, `COPY`, `RENAME`, `DELETE`
//! (the last three also with `/regex/`), and `if` / `elif` / `else` /
//! `endif`. `$(var)`, `$(var:default)`, the `$` functions and
//! `$(MY.attr)` (the attribute of the ad being transformed; a string
//! without its quotes) are expanded in each statement when it runs, with
//! the values defined so far; a name the route does not define is looked
//! up in the configuration. Lines are numbered from the knob's first
//! line, so an error names the route and the line.

use crate::classad::unparse::{expr_to_string, value_to_string};
use crate::classad::{ClassAd, Env, Expr, Value, parse_expr};
use crate::config::{Config, MacroTable, Origin};

/// HTCondor's default `MaxJobs` of a route.
pub const DEFAULT_MAX_JOBS: i64 = 100;
/// HTCondor's default `MaxIdleJobs` of a route.
pub const DEFAULT_MAX_IDLE_JOBS: i64 = 50;
/// The grid universe: a route's target universe unless it says otherwise.
pub const GRID_UNIVERSE: i64 = 9;

/// A route that cannot be read, or cannot be applied to a job.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("route {route}, line {line}: {message}")]
pub struct RouteError {
    /// The route's name.
    pub route: String,
    /// The line of `JOB_ROUTER_ROUTE_<name>` (from 1).
    pub line: usize,
    /// What is wrong.
    pub message: String,
}

/// An attribute name or a `/regex/`.
#[derive(Clone, Debug)]
enum Pattern {
    Name(String),
    Regex(pcre2::bytes::Regex),
}

#[derive(Clone, Debug)]
enum Stmt {
    Macro(String, String),
    Requirements,
    Universe,
    Set(String, String),
    Default(String, String),
    EvalSet(String, String),
    EvalMacro(String, String),
    Copy(Pattern, String),
    Rename(Pattern, String),
    Delete(Pattern),
    If(String),
    Elif(String),
    Else,
    Endif,
}

/// One route.
#[derive(Clone, Debug)]
pub struct Route {
    /// Its name (the `<name>` of its knob).
    pub name: String,
    /// Which jobs it takes (`REQUIREMENTS`); `None`: every job the
    /// router's own constraint lets through.
    pub requirements: Option<Expr>,
    /// `TargetUniverse`: the routed copy's `JobUniverse`.
    pub universe: i64,
    /// `GridResource`, when the route sets it.
    pub grid_resource: Option<String>,
    /// At most this many of its jobs at once.
    pub max_jobs: i64,
    /// No new job while this many of its routed copies are idle.
    pub max_idle_jobs: i64,
    stmts: Vec<(usize, Stmt)>,
    base: MacroTable,
}

fn keyword(word: &str) -> Option<&'static str> {
    const WORDS: [&str; 13] = [
        "REQUIREMENTS",
        "UNIVERSE",
        "SET",
        "DEFAULT",
        "EVALSET",
        "EVALMACRO",
        "COPY",
        "RENAME",
        "DELETE",
        "IF",
        "ELIF",
        "ELSE",
        "ENDIF",
    ];
    WORDS.into_iter().find(|w| w.eq_ignore_ascii_case(word))
}

fn is_name(s: &str) -> bool {
    let mut b = s.bytes();
    b.next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == b'_')
        && b.all(|c| c.is_ascii_alphanumeric() || c == b'_' || c == b'.')
}

/// `JobUniverse` of a universe name or number.
pub fn universe_number(text: &str) -> Option<i64> {
    if let Ok(n) = text.trim().parse::<i64>() {
        return Some(n);
    }
    Some(match text.trim().to_ascii_lowercase().as_str() {
        "standard" => 1,
        "vanilla" | "docker" | "container" => 5,
        "scheduler" => 7,
        "grid" => 9,
        "java" => 10,
        "parallel" => 11,
        "local" => 12,
        "vm" => 13,
        _ => return None,
    })
}

fn pattern(route: &str, line: usize, text: &str) -> Result<(Pattern, String), RouteError> {
    let err = |message: String| RouteError {
        route: route.to_string(),
        line,
        message,
    };
    let text = text.trim();
    if let Some(rest) = text.strip_prefix('/') {
        let end = rest.find('/').ok_or_else(|| {
            err(format!(
                "the regular expression of '{text}' has no closing /"
            ))
        })?;
        let re = pcre2::bytes::RegexBuilder::new()
            .caseless(true)
            .build(&rest[..end])
            .map_err(|e| err(format!("bad regular expression /{}/: {e}", &rest[..end])))?;
        return Ok((
            Pattern::Regex(re),
            skip_separator(&rest[end + 1..]).to_string(),
        ));
    }
    let (name, rest) = first_argument(text);
    Ok((Pattern::Name(name.to_string()), rest.to_string()))
}

/// A two-argument statement's first argument and the rest of its line,
/// read as HTCondor's transform reader reads them: the first word, less
/// one trailing `,` or `=`; then a lone `=` or `,` between the two
/// arguments is skipped (`SET A 1`, `SET A = 1`, `SET A, 1`, `SET A= 1`
/// all set `A`).
fn first_argument(text: &str) -> (&str, &str) {
    let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let word = word
        .strip_suffix([',', '='])
        .filter(|w| !w.is_empty())
        .unwrap_or(word);
    (word, skip_separator(rest))
}

/// `rest` without a lone `=` or `,` word at its start.
fn skip_separator(rest: &str) -> &str {
    let rest = rest.trim();
    match rest.split_once(char::is_whitespace) {
        Some((sep, after)) if sep == "=" || sep == "," => after.trim(),
        None if rest == "=" || rest == "," => "",
        _ => rest,
    }
}

fn statement(route: &str, line: usize, text: &str) -> Result<Option<Stmt>, RouteError> {
    let err = |message: String| RouteError {
        route: route.to_string(),
        line,
        message,
    };
    let text = text.trim();
    if text.is_empty() || text.starts_with('#') {
        return Ok(None);
    }
    let (word, rest) = text.split_once(char::is_whitespace).unwrap_or((text, ""));
    let rest = rest.trim();
    if let Some((name, value)) = text.split_once('=')
        && is_name(name.trim())
    {
        return Ok(Some(Stmt::Macro(
            name.trim().to_string(),
            value.trim().to_string(),
        )));
    }
    let Some(kw) = keyword(word) else {
        return Err(err(format!("'{word}' is not a transform statement")));
    };
    let attr_and_expr = |rest: &str| -> Result<(String, String), RouteError> {
        let (attr, expr) = first_argument(rest);
        if !is_name(attr) {
            return Err(err(format!("{kw} needs an attribute name, found '{attr}'")));
        }
        if expr.trim().is_empty() {
            return Err(err(format!("{kw} {attr} has no expression")));
        }
        Ok((attr.to_string(), expr.trim().to_string()))
    };
    Ok(Some(match kw {
        "REQUIREMENTS" => Stmt::Requirements,
        "UNIVERSE" => Stmt::Universe,
        "SET" => {
            let (a, e) = attr_and_expr(rest)?;
            Stmt::Set(a, e)
        }
        "DEFAULT" => {
            let (a, e) = attr_and_expr(rest)?;
            Stmt::Default(a, e)
        }
        "EVALSET" => {
            let (a, e) = attr_and_expr(rest)?;
            Stmt::EvalSet(a, e)
        }
        "EVALMACRO" => {
            let (a, e) = attr_and_expr(rest)?;
            Stmt::EvalMacro(a, e)
        }
        "COPY" | "RENAME" => {
            let (p, to) = pattern(route, line, rest)?;
            if to.is_empty() {
                return Err(err(format!("{kw} needs a new name")));
            }
            if kw == "COPY" {
                Stmt::Copy(p, to)
            } else {
                Stmt::Rename(p, to)
            }
        }
        "DELETE" => Stmt::Delete(pattern(route, line, rest)?.0),
        "IF" => Stmt::If(rest.to_string()),
        "ELIF" => Stmt::Elif(rest.to_string()),
        "ELSE" => Stmt::Else,
        _ => Stmt::Endif,
    }))
}

/// `if` nesting: whether each level runs, and whether a branch of it ran.
#[derive(Default)]
struct Conditions {
    levels: Vec<(bool, bool)>,
}

impl Conditions {
    fn active(&self) -> bool {
        self.levels.iter().all(|l| l.0)
    }
}

/// What running a route's statements needs: the macros defined so far.
struct Run<'a> {
    route: &'a Route,
    locals: Vec<(String, String)>,
    now: i64,
}

fn origin() -> Origin {
    Origin {
        source: 0,
        line: 0,
        template: None,
    }
}

/// `$(MY.attr)`'s text: a string without its quotes, else the expression.
fn my_value(e: &Expr) -> String {
    match e {
        Expr::Lit(Value::Str(s)) => s.to_string_lossy(),
        other => expr_to_string(other),
    }
}

impl Run<'_> {
    fn err(&self, line: usize, message: String) -> RouteError {
        RouteError {
            route: self.route.name.clone(),
            line,
            message,
        }
    }

    /// The configuration, the route's macros so far, and `MY.` of `ad`.
    fn table(&self, ad: &ClassAd) -> MacroTable {
        let mut t = self.route.base.clone();
        for (name, value) in &self.locals {
            t.insert(name, value.clone(), origin());
        }
        for (name, e) in ad.iter() {
            t.insert(&format!("MY.{}", name.as_str()), my_value(e), origin());
        }
        t
    }

    fn local(&self, name: &str) -> Option<&str> {
        self.locals
            .iter()
            .rev()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    fn expand(&self, line: usize, text: &str, ad: &ClassAd) -> Result<String, RouteError> {
        if !text.contains('$') {
            return Ok(text.to_string());
        }
        Config::expand_in(&self.table(ad), text, self.now)
            .map_err(|e| self.err(line, e.to_string()))
    }

    fn define(&mut self, name: &str, value: String) {
        self.locals.push((name.to_string(), value));
    }

    fn expr(&self, line: usize, text: &str, ad: &ClassAd) -> Result<Expr, RouteError> {
        let text = self.expand(line, text, ad)?;
        parse_expr(&text).map_err(|e| self.err(line, format!("'{text}' does not parse: {e}")))
    }

    fn condition(
        &self,
        line: usize,
        text: &str,
        ad: &ClassAd,
        env: &dyn Env,
    ) -> Result<bool, RouteError> {
        let text = self.expand(line, text, ad)?;
        let t = text.trim();
        let (negate, t) = match t.strip_prefix('!') {
            Some(r) => (true, r.trim()),
            None => (false, t),
        };
        let (word, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
        let value = if word.eq_ignore_ascii_case("defined") {
            let name = rest.trim();
            match name.get(..3) {
                Some(p) if p.eq_ignore_ascii_case("MY.") => ad.contains(&name[3..]),
                _ => self
                    .local(name)
                    .map(str::to_string)
                    .or_else(|| self.route.base.get(name).map(|m| m.value.clone()))
                    .is_some_and(|v| !v.is_empty()),
            }
        } else {
            let e = parse_expr(t).map_err(|e| self.err(line, format!("if '{t}': {e}")))?;
            match ad.eval(&e, env) {
                Value::Bool(b) => b,
                Value::Int(n) => n != 0,
                Value::Real(r) => r != 0.0,
                other => {
                    return Err(self.err(
                        line,
                        format!("if '{t}' is {}, not a truth value", value_to_string(&other)),
                    ));
                }
            }
        };
        Ok(value != negate)
    }

    fn names_matching(ad: &ClassAd, p: &Pattern) -> Vec<(String, Vec<String>)> {
        match p {
            Pattern::Name(n) => ad
                .names()
                .find(|m| m.as_str().eq_ignore_ascii_case(n))
                .map(|m| vec![(m.as_str().to_string(), vec![m.as_str().to_string()])])
                .unwrap_or_default(),
            Pattern::Regex(re) => ad
                .names()
                .filter_map(|n| {
                    let caps = re.captures(n.as_str().as_bytes()).ok()??;
                    let groups = (0..caps.len())
                        .map(|i| {
                            caps.get(i)
                                .map(|m| String::from_utf8_lossy(m.as_bytes()).into_owned())
                                .unwrap_or_default()
                        })
                        .collect();
                    Some((n.as_str().to_string(), groups))
                })
                .collect(),
        }
    }

    fn copy(ad: &mut ClassAd, p: &Pattern, to: &str, delete: bool) {
        for (name, groups) in Self::names_matching(ad, p) {
            let mut new = to.to_string();
            if matches!(p, Pattern::Regex(_)) {
                for (i, g) in groups.iter().enumerate().rev() {
                    new = new.replace(&format!("\\{i}"), g);
                }
            }
            if let Some(e) = ad.lookup(&name).cloned() {
                if delete {
                    ad.remove(&name);
                }
                ad.insert(new.as_str(), e);
            }
        }
    }

    fn step(
        &mut self,
        line: usize,
        stmt: &Stmt,
        ad: &mut ClassAd,
        env: &dyn Env,
    ) -> Result<(), RouteError> {
        match stmt {
            Stmt::Macro(name, value) => {
                let v = self.expand(line, value, ad)?;
                self.define(name, v);
            }
            Stmt::Requirements | Stmt::Universe => {}
            Stmt::Set(attr, text) => {
                let e = self.expr(line, text, ad)?;
                ad.insert(attr.as_str(), e);
            }
            Stmt::Default(attr, text) => {
                let missing = match ad.lookup(attr) {
                    None => true,
                    Some(e) => matches!(ad.eval(e, env), Value::Undefined),
                };
                if missing {
                    let e = self.expr(line, text, ad)?;
                    ad.insert(attr.as_str(), e);
                }
            }
            Stmt::EvalSet(attr, text) => {
                let e = self.expr(line, text, ad)?;
                let v = ad.eval(&e, env);
                ad.insert_value(attr.as_str(), v);
            }
            Stmt::EvalMacro(var, text) => {
                let e = self.expr(line, text, ad)?;
                let v = match ad.eval(&e, env) {
                    Value::Str(s) => s.to_string_lossy(),
                    other => value_to_string(&other),
                };
                self.define(var, v);
            }
            Stmt::Copy(p, to) => {
                let to = self.expand(line, to, ad)?;
                Self::copy(ad, p, &to, false);
            }
            Stmt::Rename(p, to) => {
                let to = self.expand(line, to, ad)?;
                Self::copy(ad, p, &to, true);
            }
            Stmt::Delete(p) => {
                for (name, _) in Self::names_matching(ad, p) {
                    ad.remove(&name);
                }
            }
            Stmt::If(_) | Stmt::Elif(_) | Stmt::Else | Stmt::Endif => {}
        }
        Ok(())
    }
}

impl Route {
    /// Reads `JOB_ROUTER_ROUTE_<name>` (its unexpanded text) with the
    /// configuration it expands against.
    pub fn parse(name: &str, text: &str, config: &Config) -> Result<Route, RouteError> {
        let mut stmts = Vec::new();
        let mut depth = 0usize;
        for (i, line) in text.lines().enumerate() {
            let Some(s) = statement(name, i + 1, line).map_err(|mut e| {
                e.message = format!("{} (in '{}')", e.message, line.trim());
                e
            })?
            else {
                continue;
            };
            match &s {
                Stmt::If(_) => depth += 1,
                Stmt::Elif(_) | Stmt::Else | Stmt::Endif if depth == 0 => {
                    return Err(RouteError {
                        route: name.to_string(),
                        line: i + 1,
                        message: "elif, else or endif without an if".into(),
                    });
                }
                Stmt::Endif => depth -= 1,
                _ => {}
            }
            stmts.push((i + 1, s));
        }
        if depth > 0 {
            return Err(RouteError {
                route: name.to_string(),
                line: text.lines().count(),
                message: "an if has no endif".into(),
            });
        }
        let mut route = Route {
            name: name.to_string(),
            requirements: None,
            universe: GRID_UNIVERSE,
            grid_resource: None,
            max_jobs: config
                .int("JOB_ROUTER_DEFAULT_MAX_JOBS_PER_ROUTE")
                .ok()
                .flatten()
                .unwrap_or(DEFAULT_MAX_JOBS),
            max_idle_jobs: config
                .int("JOB_ROUTER_DEFAULT_MAX_IDLE_JOBS_PER_ROUTE")
                .ok()
                .flatten()
                .unwrap_or(DEFAULT_MAX_IDLE_JOBS),
            stmts,
            base: config.table().clone(),
        };
        route.settle(text)?;
        Ok(route)
    }

    /// Reads what steers the router: the macros `MaxJobs`, `MaxIdleJobs`
    /// and `GridResource`, `REQUIREMENTS` and `UNIVERSE` (expanded with the
    /// macros defined before them, outside any `if`).
    fn settle(&mut self, text: &str) -> Result<(), RouteError> {
        let lines: Vec<&str> = text.lines().collect();
        let empty = ClassAd::new();
        let mut run = Run {
            route: self,
            locals: Vec::new(),
            now: 0,
        };
        let mut requirements = None;
        let mut universe = None;
        let mut depth = 0usize;
        for (line, stmt) in &self.stmts {
            let body = |kw: &str| {
                let t = lines[line - 1].trim();
                t.get(kw.len()..).unwrap_or("").trim().to_string()
            };
            match stmt {
                Stmt::If(_) => depth += 1,
                Stmt::Endif => depth -= 1,
                Stmt::Macro(name, value) if depth == 0 => {
                    let v = run.expand(*line, value, &empty)?;
                    run.define(name, v);
                }
                Stmt::Requirements => {
                    requirements = Some(run.expr(*line, &body("REQUIREMENTS"), &empty)?);
                }
                Stmt::Universe => {
                    let t = run.expand(*line, &body("UNIVERSE"), &empty)?;
                    universe = Some(
                        universe_number(&t)
                            .ok_or_else(|| run.err(*line, format!("'{t}' is not a universe")))?,
                    );
                }
                Stmt::Set(_, t) | Stmt::Default(_, t) | Stmt::EvalSet(_, t) if !t.contains('$') => {
                    run.expr(*line, t, &empty)?;
                }
                _ => {}
            }
        }
        let int = |name: &str| -> Result<Option<i64>, RouteError> {
            let Some(v) = run.local(name) else {
                return Ok(None);
            };
            v.trim().parse::<i64>().map(Some).map_err(|_| RouteError {
                route: self.name.clone(),
                line: 0,
                message: format!("{name} is '{v}', not an integer"),
            })
        };
        let max_jobs = int("MaxJobs")?;
        let max_idle = int("MaxIdleJobs")?;
        let grid = run
            .local("GridResource")
            .filter(|v| !v.is_empty())
            .map(str::to_string);
        self.requirements = requirements;
        if let Some(u) = universe {
            self.universe = u;
        }
        self.max_jobs = max_jobs.unwrap_or(self.max_jobs);
        self.max_idle_jobs = max_idle.unwrap_or(self.max_idle_jobs);
        self.grid_resource = grid;
        Ok(())
    }

    /// Whether the route takes `job`.
    pub fn matches(&self, job: &ClassAd, env: &dyn Env) -> bool {
        self.requirements
            .as_ref()
            .is_none_or(|r| matches!(job.eval(r, env), Value::Bool(true)))
    }

    /// The route as its hooks see it (HTCondor's `RouteDescription`): a
    /// one-line new-syntax ad of `Name`, `TargetUniverse` and
    /// `GridResource` when set.
    pub fn description(&self) -> String {
        let mut ad = ClassAd::new();
        ad.insert_value("Name", self.name.as_str());
        ad.insert_value("TargetUniverse", self.universe);
        if let Some(g) = &self.grid_resource {
            ad.insert_value("GridResource", g.as_str());
        }
        crate::classad::unparse::ad_to_string(&ad)
    }

    /// Runs the route's statements on `ad` (the routed copy), in order.
    pub fn apply(&self, ad: &mut ClassAd, env: &dyn Env, now: i64) -> Result<(), RouteError> {
        let mut run = Run {
            route: self,
            locals: Vec::new(),
            now,
        };
        let mut cond = Conditions::default();
        for (line, stmt) in &self.stmts {
            match stmt {
                Stmt::If(c) => {
                    let take = cond.active() && run.condition(*line, c, ad, env)?;
                    cond.levels.push((take, take));
                }
                Stmt::Elif(c) => {
                    let last = cond.levels.len() - 1;
                    let ran = cond.levels[last].1;
                    let take = !ran
                        && cond.levels[..last].iter().all(|l| l.0)
                        && run.condition(*line, c, ad, env)?;
                    cond.levels[last] = (take, ran || take);
                }
                Stmt::Else => {
                    let last = cond.levels.len() - 1;
                    let ran = cond.levels[last].1;
                    cond.levels[last] = (!ran, true);
                }
                Stmt::Endif => {
                    cond.levels.pop();
                }
                s if cond.active() => run.step(*line, s, ad, env)?,
                _ => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::classad::unparse::ad_to_string;
    use crate::classad::{FixedEnv, parse_ad};
    use crate::config::{Scope, load_text};

    fn config(text: &str) -> Config {
        load_text("/etc/condor/condor_config", text, Scope::default(), vec![]).expect("reads")
    }

    fn route(body: &str, extra: &str) -> Result<Route, RouteError> {
        let c = config(&format!(
            "{extra}\nJOB_ROUTER_ROUTE_Site @=end\n{body}\n@end\n"
        ));
        let text = c.raw("JOB_ROUTER_ROUTE_Site").expect("defined").to_string();
        Route::parse("Site", &text, &c)
    }

    fn routed(body: &str, job: &str) -> String {
        let r = route(body, "").expect("route reads");
        let mut ad = parse_ad(job).expect("job");
        r.apply(&mut ad, &FixedEnv::new(0), 0).expect("applies");
        ad_to_string(&ad)
    }

    #[test]
    fn a_route_reads_its_steering_macros_and_statements() {
        let r = route(
            "# site one\nMaxJobs = 3\nMaxIdleJobs = $(IDLE)\nGridResource = batch slurm\n\
             UNIVERSE vanilla\nREQUIREMENTS Owner == \"alice\"",
            "IDLE = 2",
        )
        .expect("reads");
        assert_eq!((r.max_jobs, r.max_idle_jobs, r.universe), (3, 2, 5));
        assert_eq!(r.grid_resource.as_deref(), Some("batch slurm"));
        let env = FixedEnv::new(0);
        assert!(r.matches(&parse_ad("[Owner = \"alice\"]").expect("ad"), &env));
        assert!(!r.matches(&parse_ad("[Owner = \"bob\"]").expect("ad"), &env));
        assert_eq!(
            r.description(),
            "[ Name = \"Site\"; GridResource = \"batch slurm\"; TargetUniverse = 5 ]"
        );
        let d = route("SET A 1", "").expect("reads");
        assert_eq!((d.max_jobs, d.max_idle_jobs, d.universe), (100, 50, 9));
    }

    #[test]
    fn statements_run_in_order_with_macros_of_the_time() {
        let out = routed(
            "V = first\nSET A \"$(V)\"\nV = second\nSET B \"$(V)-$(MY.Owner)\"\n\
             DEFAULT C 3\nDEFAULT D 4\nEVALSET E 2 * 21\nEVALMACRO M strcat(\"x\", \"y\")\n\
             SET F \"$(M)\"\nCOPY /^Resource(.+)$/ Original\\1\nRENAME G H\nDELETE /^tmp/",
            "[Owner = \"alice\"; D = 9; C = undefined; ResourceCpus = 2; G = 7; TmpA = 1; tmpB = 2]",
        );
        for want in [
            "A = \"first\"",
            "B = \"second-alice\"",
            "C = 3",
            "D = 9",
            "E = 42",
            "F = \"xy\"",
            "OriginalCpus = 2",
            "ResourceCpus = 2",
            "H = 7",
        ] {
            assert!(out.contains(want), "{want} in {out}");
        }
        for gone in ["TmpA", "tmpB", "G = "] {
            assert!(!out.contains(gone), "{gone} in {out}");
        }
    }

    #[test]
    fn an_equals_sign_or_comma_between_the_arguments_is_skipped() {
        let out = routed(
            "SET A = \"a\"\nSET B, 2\nSET C= 3\nDEFAULT D = 4\nEVALSET E = 2 * 3\n\
             EVALMACRO M = 7\nSET F = $(M)\nCOPY G = H\nRENAME I, J\nCOPY /^K(.*)$/ = L\\1\n\
             SET Eq = 1 == 1",
            "[G = 1; I = 2; Kx = 3]",
        );
        for want in [
            "A = \"a\"",
            "B = 2",
            "C = 3",
            "D = 4",
            "E = 6",
            "F = 7",
            "H = 1",
            "J = 2",
            "Lx = 3",
            "Eq = 1 == 1",
        ] {
            assert!(out.contains(want), "{want} in {out}");
        }
        // Only a lone `=` is skipped, as HTCondor's reader skips it.
        assert_eq!(route("SET A =1", "").expect_err("refused").line, 1);
    }

    #[test]
    fn if_else_picks_one_branch() {
        let body = "if defined MY.Fast\n  SET Lane \"fast\"\nelif $(MY.Size:0) > 10\n  SET Lane \"big\"\n\
                    else\n  SET Lane \"slow\"\nendif";
        assert!(routed(body, "[Fast = true]").contains("Lane = \"fast\""));
        assert!(routed(body, "[Size = 20]").contains("Lane = \"big\""));
        assert!(routed(body, "[Size = 2]").contains("Lane = \"slow\""));
    }

    #[test]
    fn a_bad_route_names_its_line() {
        let line = |body: &str| route(body, "").expect_err("refused").line;
        assert_eq!(line("SET A 1\nFROBNICATE x"), 2);
        assert_eq!(line("SET A 1\nSET B"), 2);
        assert_eq!(line("DELETE /(/"), 1);
        assert_eq!(line("UNIVERSE nowhere"), 1);
        assert_eq!(line("SET A (1 +"), 1);
        assert!(route("if true\nSET A 1", "").is_err());
        assert!(route("endif", "").is_err());
        let e = route("MaxJobs = many", "").expect_err("refused");
        assert!(e.to_string().contains("MaxJobs"), "{e}");
    }
}
