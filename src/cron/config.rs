//! The cron jobs a configuration defines, read as HTCondor reads them:
//! `<MGR>_JOBLIST` (names split at blanks and commas), and per job
//! `<MGR>_<NAME>_EXECUTABLE`, `_ARGS` and `_ENV` (V1 raw or V2 in double
//! quotes), `_CWD`, `_MODE`, `_PERIOD` (`<n>` with an optional `s`, `m` or
//! `h`), `_PREFIX`, `_SLOTS`, `_KILL`, `_RECONFIG`, `_RECONFIG_RERUN`,
//! `_JOB_LOAD`, `_CONDITION` and `_METRICS` (and Roost's `_TIMEOUT`); and the manager's
//! `<MGR>_MAX_JOB_LOAD`, `<MGR>_AUTOPUBLISH` and `<MGR>_CONFIG_VAL`. As in
//! HTCondor, a job whose knobs do not read is skipped (with the reason)
//! and the others run. Pure.

use std::path::PathBuf;

use crate::classad::Expr;
use crate::classad::argenv::{ArgError, EnvList, split_v1, split_v2};
use crate::config::Config;

/// When a job runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every period, measured from one start to the next.
    Periodic,
    /// Again a period after each run exits.
    WaitForExit,
    /// Once at start-up (and at a reconfig with `_RECONFIG_RERUN`).
    OneShot,
    /// When asked (benchmarks, the admin socket).
    OnDemand,
}

/// Which daemon's jobs: the knobs' prefix and its defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Manager {
    /// `STARTD_CRON_*`.
    StartdCron,
    /// `BENCHMARKS_*`.
    Benchmarks,
    /// `SCHEDD_CRON_*`.
    ScheddCron,
}

impl Manager {
    /// The knobs' prefix.
    pub fn prefix(self) -> &'static str {
        match self {
            Manager::StartdCron => "STARTD_CRON",
            Manager::Benchmarks => "BENCHMARKS",
            Manager::ScheddCron => "SCHEDD_CRON",
        }
    }

    fn default_mode(self) -> Mode {
        match self {
            Manager::StartdCron | Manager::ScheddCron => Mode::Periodic,
            Manager::Benchmarks => Mode::OnDemand,
        }
    }

    fn default_joblist(self) -> &'static str {
        match self {
            Manager::StartdCron | Manager::ScheddCron => "",
            Manager::Benchmarks => "MIPS KFLOPS",
        }
    }

    fn default_max_load(self) -> f64 {
        match self {
            Manager::StartdCron | Manager::ScheddCron => 0.1,
            Manager::Benchmarks => 1.0,
        }
    }
}

/// When a run's ads are sent to the collector at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AutoPublish {
    /// Only when the output asks (`update:true`).
    Never,
    /// After every run.
    Always,
    /// When an ad changed (its `LastUpdate` aside).
    IfChanged,
}

/// A resource-monitor metric (`_METRICS`): the attribute it aggregates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Metric {
    /// `SUM:<res>`: `Uptime<res>Seconds`, summed.
    Sum(String),
    /// `PEAK:<res>`: `Uptime<res>PeakUsage`, the largest.
    Peak(String),
}

/// One cron job.
#[derive(Clone, Debug)]
pub struct CronJob {
    /// Its name as the job list gives it.
    pub name: String,
    /// The program.
    pub executable: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Its environment (added to the daemon's hook environment).
    pub env: EnvList,
    /// Where it runs (`None`: the daemon's choice).
    pub cwd: Option<PathBuf>,
    /// When it runs.
    pub mode: Mode,
    /// Seconds (0 for `OneShot` and `OnDemand`).
    pub period: u64,
    /// Put before every attribute it prints.
    pub prefix: String,
    /// The slot numbers its ads go to (empty: all).
    pub slots: Vec<u32>,
    /// A `Periodic` run still going at its next start is killed.
    pub kill: bool,
    /// Sent SIGHUP at a reconfig.
    pub reconfig: bool,
    /// A `OneShot` job runs again at a reconfig.
    pub reconfig_rerun: bool,
    /// Its share of the manager's job load.
    pub job_load: f64,
    /// Runs only while this is true (`_CONDITION`).
    pub condition: Option<Expr>,
    /// It is a resource monitor of these metrics.
    pub metrics: Vec<Metric>,
    /// Roost kills a run that goes on this many seconds (`_TIMEOUT`,
    /// Roost's own knob; `None`: never). By default a `Periodic` run may
    /// take two periods (at least a minute), a `OneShot` or `OnDemand`
    /// run ten minutes, and a `WaitForExit` run, meant to run on, has none.
    pub timeout: Option<u64>,
    /// Roost's own program stands in for HTCondor's default benchmark
    /// executable (`BENCHMARKS_MIPS_EXECUTABLE` or `_KFLOPS_` not set).
    pub builtin: Option<Builtin>,
}

/// Roost's own benchmarks (`roost benchmark mips|kflops`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Builtin {
    /// Integer operations: `Mips`.
    Mips,
    /// Floating-point operations: `KFlops`.
    Kflops,
}

impl Builtin {
    /// The benchmark a job of this name is, if any.
    pub fn of(name: &str) -> Option<Builtin> {
        if name.eq_ignore_ascii_case("mips") {
            Some(Builtin::Mips)
        } else if name.eq_ignore_ascii_case("kflops") {
            Some(Builtin::Kflops)
        } else {
            None
        }
    }

    /// Its word on `roost benchmark`'s command line.
    pub fn word(self) -> &'static str {
        match self {
            Builtin::Mips => "mips",
            Builtin::Kflops => "kflops",
        }
    }
}

/// A manager's jobs and settings.
#[derive(Clone, Debug)]
pub struct CronSettings {
    /// Which manager.
    pub manager: Manager,
    /// The jobs that read, in job-list order.
    pub jobs: Vec<CronJob>,
    /// Jobs skipped and warnings, one line each naming the knob.
    pub problems: Vec<String>,
    /// `<MGR>_MAX_JOB_LOAD`.
    pub max_job_load: f64,
    /// `<MGR>_AUTOPUBLISH` (startd cron).
    pub autopublish: AutoPublish,
    /// `<MGR>_CONFIG_VAL`: the program scripts are told to read the
    /// configuration with (`None`: Roost's own).
    pub config_val: Option<String>,
}

/// Reads `manager`'s jobs from `config`.
pub fn read(config: &Config, manager: Manager) -> CronSettings {
    let mgr = manager.prefix();
    let mut problems = Vec::new();
    let mut text = |name: &str| -> Option<String> {
        match config.text(name) {
            Ok(v) => v,
            Err(e) => {
                problems.push(format!("{name} {}", e.message));
                None
            }
        }
    };
    let list = text(&format!("{mgr}_JOBLIST")).unwrap_or_else(|| manager.default_joblist().into());
    let max_job_load = text(&format!("{mgr}_MAX_JOB_LOAD"))
        .and_then(|t| t.parse::<f64>().ok())
        .unwrap_or(manager.default_max_load());
    let autopublish = match text(&format!("{mgr}_AUTOPUBLISH")).map(|t| t.to_ascii_lowercase()) {
        Some(t) if t == "always" => AutoPublish::Always,
        Some(t) if t == "if_changed" => AutoPublish::IfChanged,
        _ => AutoPublish::Never,
    };
    let config_val = text(&format!("{mgr}_CONFIG_VAL"));
    let mut jobs: Vec<CronJob> = Vec::new();
    for name in list.split([' ', '\t', ',']).filter(|n| !n.is_empty()) {
        if jobs.iter().any(|j| j.name.eq_ignore_ascii_case(name)) {
            continue;
        }
        match job(config, manager, name) {
            Ok((job, warnings)) => {
                problems.extend(warnings);
                jobs.push(job);
            }
            Err(e) => problems.push(format!("{mgr} job {name}: {e}; skipped")),
        }
    }
    CronSettings {
        manager,
        jobs,
        problems,
        max_job_load,
        autopublish,
        config_val,
    }
}

/// Why a cron job is skipped: the knob, and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{knob} {why}")]
pub struct KnobError {
    /// The knob.
    pub knob: String,
    /// What is wrong (`is not set`, `is not a period: 5d`, ...).
    pub why: String,
}

/// The knobs of one job: `<MGR>_<NAME>_<ITEM>`.
struct Knobs<'c> {
    config: &'c Config,
    base: String,
}

impl Knobs<'_> {
    fn name(&self, item: &str) -> String {
        format!("{}_{item}", self.base)
    }

    fn error(&self, item: &str, why: impl Into<String>) -> KnobError {
        KnobError {
            knob: self.name(item),
            why: why.into(),
        }
    }

    fn text(&self, item: &str) -> Result<Option<String>, KnobError> {
        (self.config.text(&self.name(item))).map_err(|e| self.error(item, e.message))
    }

    fn flag(&self, item: &str) -> Result<bool, KnobError> {
        (self.config.bool(&self.name(item)))
            .map(|b| b.unwrap_or(false))
            .map_err(|e| self.error(item, e.message))
    }

    /// The job's mode and period (seconds), and a warning.
    fn schedule(&self, default: Mode) -> Result<(Mode, u64, Option<String>), KnobError> {
        let mode = match self.text("MODE")? {
            None => default,
            Some(m) => {
                mode(&m).ok_or_else(|| self.error("MODE", format!("is not a job mode: {m}")))?
            }
        };
        let period = match (mode, self.text("PERIOD")?) {
            (Mode::OneShot | Mode::OnDemand, p) => {
                let warning =
                    p.map(|_| format!("{} is ignored for a {mode:?} job", self.name("PERIOD")));
                return Ok((mode, 0, warning));
            }
            (_, None) => return Err(self.error("PERIOD", "is not set")),
            (_, Some(p)) => {
                period(&p).ok_or_else(|| self.error("PERIOD", format!("is not a period: {p}")))?
            }
        };
        if mode == Mode::Periodic && period == 0 {
            return Err(self.error("PERIOD", "must not be 0 for a Periodic job"));
        }
        Ok((mode, period, None))
    }

    /// The job's arguments and environment.
    fn command(&self) -> Result<(Vec<String>, EnvList), KnobError> {
        let args = match self.text("ARGS")? {
            None => Vec::new(),
            Some(a) => v1_raw_or_v2_quoted(&a).map_err(|e| self.error("ARGS", e.to_string()))?,
        };
        let mut env = EnvList::new();
        if let Some(e) = self.text("ENV")? {
            let merged = match v2_quoted(&e) {
                Some(inner) => env.merge_v2(&inner),
                None => env.merge_v1(&e),
            };
            merged.map_err(|err| self.error("ENV", err.to_string()))?;
        }
        Ok((args, env))
    }

    /// `_SLOTS`, `_JOB_LOAD` and `_METRICS`, with warnings for what is
    /// ignored of them.
    fn extras(
        &self,
        warnings: &mut Vec<String>,
    ) -> Result<(Vec<u32>, f64, Vec<Metric>), KnobError> {
        let words = |t: &str| {
            t.split([' ', '\t', ','])
                .filter(|x| !x.is_empty())
                .map(str::to_string)
                .collect::<Vec<_>>()
        };
        let slots = match self.text("SLOTS")? {
            None => Vec::new(),
            Some(s) => {
                let numbers: Option<Vec<u32>> =
                    words(&s).iter().map(|x| leading_number(x)).collect();
                numbers.unwrap_or_else(|| {
                    warnings.push(format!(
                        "{} has an entry that is not a slot number: all slots",
                        self.name("SLOTS")
                    ));
                    Vec::new()
                })
            }
        };
        let job_load = match self.text("JOB_LOAD")? {
            None => 0.01,
            Some(l) => match l.parse::<f64>() {
                Ok(v) if (0.0..=100.0).contains(&v) => v,
                _ => {
                    warnings.push(format!(
                        "{} is not a load from 0 to 100: {l}; 0.01 used",
                        self.name("JOB_LOAD")
                    ));
                    0.01
                }
            },
        };
        let mut metrics = Vec::new();
        for m in words(&self.text("METRICS")?.unwrap_or_default()) {
            match m.split_once(':') {
                Some((kind, res)) if kind.eq_ignore_ascii_case("SUM") => {
                    metrics.push(Metric::Sum(res.into()))
                }
                Some((kind, res)) if kind.eq_ignore_ascii_case("PEAK") => {
                    metrics.push(Metric::Peak(res.into()))
                }
                _ => warnings.push(format!(
                    "{} has an entry that is not SUM:<res> or PEAK:<res>: {m}",
                    self.name("METRICS")
                )),
            }
        }
        Ok((slots, job_load, metrics))
    }
}

/// Job `name`'s knobs, and warnings; `Err`: why it is skipped.
fn job(config: &Config, manager: Manager, name: &str) -> Result<(CronJob, Vec<String>), KnobError> {
    let k = Knobs {
        config,
        base: format!("{}_{name}", manager.prefix()),
    };
    let executable = k
        .text("EXECUTABLE")?
        .ok_or_else(|| k.error("EXECUTABLE", "is not set"))?;
    let (mode, period, warning) = k.schedule(manager.default_mode())?;
    let mut warnings: Vec<String> = warning.into_iter().collect();
    let (args, env) = k.command()?;
    let (slots, job_load, metrics) = k.extras(&mut warnings)?;
    let condition = match k.text("CONDITION")? {
        None => None,
        Some(c) => Some(
            (config.parse_knob_expr(&k.name("CONDITION"), &c))
                .map_err(|e| k.error("CONDITION", e.message))?,
        ),
    };
    let prefix = config
        .expanded(&k.name("PREFIX"))
        .ok()
        .flatten()
        .unwrap_or_default();
    let timeout = match k.text("TIMEOUT")? {
        Some(t) => self::period(&t)
            .ok_or_else(|| k.error("TIMEOUT", format!("is not a number of seconds: {t}")))?,
        None => match mode {
            Mode::Periodic => period.saturating_mul(2).max(60),
            Mode::OneShot | Mode::OnDemand => 600,
            Mode::WaitForExit => 0,
        },
    };
    let builtin = (manager == Manager::Benchmarks)
        .then(|| {
            let set = config
                .lookup(&k.name("EXECUTABLE"))
                .is_some_and(|l| l.origin.is_some());
            if set { None } else { Builtin::of(name) }
        })
        .flatten();
    Ok((
        CronJob {
            name: name.to_string(),
            executable: PathBuf::from(executable),
            args,
            env,
            cwd: k.text("CWD")?.map(PathBuf::from),
            mode,
            period,
            prefix: prefix.trim().to_string(),
            slots,
            kill: k.flag("KILL")?,
            reconfig: k.flag("RECONFIG")?,
            reconfig_rerun: k.flag("RECONFIG_RERUN")?,
            job_load,
            condition,
            metrics,
            timeout: (timeout > 0).then_some(timeout),
            builtin,
        },
        warnings,
    ))
}

/// A job mode's name, in any case.
fn mode(text: &str) -> Option<Mode> {
    [
        ("Periodic", Mode::Periodic),
        ("WaitForExit", Mode::WaitForExit),
        ("OneShot", Mode::OneShot),
        ("OnDemand", Mode::OnDemand),
    ]
    .into_iter()
    .find(|(n, _)| n.eq_ignore_ascii_case(text))
    .map(|(_, m)| m)
}

/// `<n>` seconds, or `<n>s`, `<n>m`, `<n>h` (any case); what follows the
/// unit is ignored, as HTCondor's reader does.
fn period(text: &str) -> Option<u64> {
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let n: u64 = text[..digits].parse().ok()?;
    let scale = match text[digits..]
        .chars()
        .next()
        .map(|c| c.to_ascii_uppercase())
    {
        None | Some('S') => 1,
        Some('M') => 60,
        Some('H') => 3600,
        Some(_) => return None,
    };
    n.checked_mul(scale)
}

/// The number a slot-list entry starts with (`None`: it does not start
/// with a digit).
fn leading_number(item: &str) -> Option<u32> {
    let digits = item.len() - item.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits == 0 {
        return None;
    }
    Some(item[..digits].parse().unwrap_or(u32::MAX))
}

/// The inside of a V2 string in double quotes (`""` standing for `"`), or
/// `None` when `text` is not one.
fn v2_quoted(text: &str) -> Option<String> {
    let inner = text.strip_prefix('"')?.strip_suffix('"')?;
    Some(inner.replace("\"\"", "\""))
}

/// Arguments in V1 raw syntax, or V2 in double quotes.
fn v1_raw_or_v2_quoted(text: &str) -> Result<Vec<String>, ArgError> {
    match v2_quoted(text) {
        Some(inner) => split_v2(&inner),
        None => Ok(split_v1(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Scope, load_text};

    fn read_text(text: &str, manager: Manager) -> CronSettings {
        let scope = Scope {
            subsys: Some("STARTD".into()),
            localname: None,
        };
        let config = load_text("/etc/condor/condor_config", text, scope, vec![]).expect("reads");
        read(&config, manager)
    }

    #[test]
    fn the_manuals_example_reads() {
        let s = read_text(
            "MODULES = /opt/modules\n\
             STARTD_CRON_MAX_JOB_LOAD = 0.2\n\
             STARTD_CRON_JOBLIST =\n\
             STARTD_CRON_JOBLIST = $(STARTD_CRON_JOBLIST) test\n\
             STARTD_CRON_TEST_MODE = OneShot\n\
             STARTD_CRON_TEST_RECONFIG_RERUN = True\n\
             STARTD_CRON_TEST_PREFIX = test_\n\
             STARTD_CRON_TEST_EXECUTABLE = $(MODULES)/test\n\
             STARTD_CRON_TEST_KILL = True\n\
             STARTD_CRON_TEST_ARGS = abc 123\n\
             STARTD_CRON_TEST_SLOTS = 1\n\
             STARTD_CRON_TEST_JOB_LOAD = 0.01\n\
             STARTD_CRON_JOBLIST = $(STARTD_CRON_JOBLIST) date\n\
             STARTD_CRON_DATE_MODE = Periodic\n\
             STARTD_CRON_DATE_EXECUTABLE = $(MODULES)/date\n\
             STARTD_CRON_DATE_PERIOD = 15s\n\
             STARTD_CRON_JOBLIST = $(STARTD_CRON_JOBLIST) foo\n\
             STARTD_CRON_FOO_EXECUTABLE = $(MODULES)/foo\n\
             STARTD_CRON_FOO_PREFIX = Foo\n\
             STARTD_CRON_FOO_MODE = Periodic\n\
             STARTD_CRON_FOO_PERIOD = 10m\n\
             STARTD_CRON_FOO_JOB_LOAD = 0.2\n",
            Manager::StartdCron,
        );
        assert!(s.problems.is_empty(), "{:?}", s.problems);
        assert_eq!(s.max_job_load, 0.2);
        assert_eq!(s.autopublish, AutoPublish::Never);
        let names: Vec<_> = s.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["test", "date", "foo"]);
        let test = &s.jobs[0];
        assert_eq!(test.mode, Mode::OneShot);
        assert!(test.reconfig_rerun && test.kill && !test.reconfig);
        assert_eq!(test.prefix, "test_");
        assert_eq!(test.executable, PathBuf::from("/opt/modules/test"));
        assert_eq!(test.args, ["abc", "123"]);
        assert_eq!(test.slots, [1]);
        assert_eq!((s.jobs[1].mode, s.jobs[1].period), (Mode::Periodic, 15));
        assert_eq!((s.jobs[2].period, s.jobs[2].job_load), (600, 0.2));
    }

    #[test]
    fn schedd_cron_reads_as_startd_cron_does() {
        let s = read_text(
            "SCHEDD_CRON_JOBLIST = queue_depth\n\
             SCHEDD_CRON_QUEUE_DEPTH_EXECUTABLE = /usr/local/bin/depth\n\
             SCHEDD_CRON_QUEUE_DEPTH_PERIOD = 1m\n\
             SCHEDD_CRON_QUEUE_DEPTH_PREFIX = Q_\n\
             STARTD_CRON_JOBLIST = other\n",
            Manager::ScheddCron,
        );
        assert!(s.problems.is_empty(), "{:?}", s.problems);
        assert_eq!(s.max_job_load, 0.1);
        let names: Vec<_> = s.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["queue_depth"]);
        let j = &s.jobs[0];
        assert_eq!(
            (j.mode, j.period, j.prefix.as_str()),
            (Mode::Periodic, 60, "Q_")
        );
    }

    #[test]
    fn bad_jobs_are_skipped_naming_the_knob_and_the_rest_run() {
        let s = read_text(
            "STARTD_CRON_JOBLIST = a, b c d e a\n\
             STARTD_CRON_A_EXECUTABLE = /bin/a\n\
             STARTD_CRON_A_PERIOD = 2H\n\
             STARTD_CRON_A_ARGS = \"one 'two three'\"\n\
             STARTD_CRON_A_ENV = \"X=1 Y='a b'\"\n\
             STARTD_CRON_A_SLOTS = 1, two\n\
             STARTD_CRON_B_PERIOD = 5\n\
             STARTD_CRON_C_EXECUTABLE = /bin/c\n\
             STARTD_CRON_C_PERIOD = 5d\n\
             STARTD_CRON_D_EXECUTABLE = /bin/d\n\
             STARTD_CRON_D_MODE = Sometimes\n\
             STARTD_CRON_E_EXECUTABLE = /bin/e\n\
             STARTD_CRON_E_MODE = wAITfOReXIT\n",
            Manager::StartdCron,
        );
        let names: Vec<_> = s.jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(names, ["a"]);
        let a = &s.jobs[0];
        assert_eq!(a.period, 7200);
        assert_eq!(a.args, ["one", "two three"]);
        assert_eq!(
            a.env.entries(),
            [("X".into(), "1".into()), ("Y".into(), "a b".into())]
        );
        assert!(a.slots.is_empty());
        let text = s.problems.join("\n");
        for want in [
            "STARTD_CRON_a_SLOTS has an entry that is not a slot number",
            "job b: STARTD_CRON_b_EXECUTABLE is not set; skipped",
            "STARTD_CRON_c_PERIOD is not a period: 5d",
            "STARTD_CRON_d_MODE is not a job mode: Sometimes",
            "job e: STARTD_CRON_e_PERIOD is not set; skipped",
        ] {
            assert!(text.contains(want), "{want} in\n{text}");
        }
    }

    #[test]
    fn benchmarks_default_to_mips_and_kflops_on_demand() {
        // The job list comes from the configuration's defaults (as HTCondor's).
        let s = read_text(
            "BENCHMARKS_MIPS_EXECUTABLE = /x/mips\nBENCHMARKS_KFLOPS_EXECUTABLE = /x/kflops\n",
            Manager::Benchmarks,
        );
        assert!(s.problems.is_empty(), "{:?}", s.problems);
        let got: Vec<_> = s.jobs.iter().map(|j| (j.name.as_str(), j.mode)).collect();
        assert_eq!(got, [("mips", Mode::OnDemand), ("kflops", Mode::OnDemand)]);
        assert_eq!(s.max_job_load, 1.0);
        // Set by the admin: their program, not Roost's own.
        assert!(s.jobs.iter().all(|j| j.builtin.is_none()));
        // Left at HTCondor's default (`$(LIBEXEC)/condor_mips`): Roost's.
        let s = read_text("", Manager::Benchmarks);
        let got: Vec<_> = s.jobs.iter().map(|j| j.builtin).collect();
        assert_eq!(got, [Some(Builtin::Mips), Some(Builtin::Kflops)]);
    }

    #[test]
    fn a_run_times_out_by_mode_unless_told_otherwise() {
        let s = read_text(
            "STARTD_CRON_JOBLIST = p o w t n bad\n\
             STARTD_CRON_P_EXECUTABLE = /x\nSTARTD_CRON_P_PERIOD = 5m\n\
             STARTD_CRON_O_EXECUTABLE = /x\nSTARTD_CRON_O_MODE = OneShot\n\
             STARTD_CRON_W_EXECUTABLE = /x\nSTARTD_CRON_W_MODE = WaitForExit\nSTARTD_CRON_W_PERIOD = 1\n\
             STARTD_CRON_T_EXECUTABLE = /x\nSTARTD_CRON_T_PERIOD = 10\nSTARTD_CRON_T_TIMEOUT = 2m\n\
             STARTD_CRON_N_EXECUTABLE = /x\nSTARTD_CRON_N_PERIOD = 10\nSTARTD_CRON_N_TIMEOUT = 0\n\
             STARTD_CRON_BAD_EXECUTABLE = /x\nSTARTD_CRON_BAD_PERIOD = 10\nSTARTD_CRON_BAD_TIMEOUT = soon\n",
            Manager::StartdCron,
        );
        let got: Vec<_> = s
            .jobs
            .iter()
            .map(|j| (j.name.as_str(), j.timeout))
            .collect();
        assert_eq!(
            got,
            [
                ("p", Some(600)),
                ("o", Some(600)),
                ("w", None),
                ("t", Some(120)),
                ("n", None)
            ]
        );
        assert!(
            s.problems
                .iter()
                .any(|p| p.contains("STARTD_CRON_bad_TIMEOUT is not a number of seconds: soon")),
            "{:?}",
            s.problems
        );
    }
}
