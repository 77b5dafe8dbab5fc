//! The environment a job gets for the devices of its slot: for each custom
//! resource of the machine, `_CONDOR_Assigned<name>` with the slot's device
//! ids (`Assigned<name>` in its ad) and the variables that
//! `ENVIRONMENT_FOR_Assigned<name>` names, each id edited by the variable's
//! Perl-style `/regex/replacement/` (`CUDA_VISIBLE_DEVICES` alone gets
//! `/CUDA//`, as in HTCondor); a slot without the resource's devices sets
//! them all to `ENVIRONMENT_VALUE_FOR_UnAssigned<name>` when that is set
//! (HTCondor's default for GPUs is 10000, so a job that asked for no GPU
//! sees none). Pure: read once with the daemon's other knobs.

use std::collections::BTreeMap;

use super::{Config, TypeError};
use crate::classad::{ClassAd, FixedEnv, Value};

const FOR: &str = "ENVIRONMENT_FOR_ASSIGNED";
const UNASSIGNED: &str = "ENVIRONMENT_VALUE_FOR_UNASSIGNED";

/// One variable of `ENVIRONMENT_FOR_Assigned<name>`.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Var {
    name: String,
    edit: Option<Edit>,
}

/// `/regex/replacement/`: the first match in each id is replaced (the
/// regex compiled once, when the knob is read).
#[derive(Clone, Debug)]
struct Edit {
    re: pcre2::bytes::Regex,
    with: String,
}

impl PartialEq for Edit {
    fn eq(&self, other: &Edit) -> bool {
        self.re.as_str() == other.re.as_str() && self.with == other.with
    }
}

impl Eq for Edit {}

/// What one resource's knobs say.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
struct Rule {
    vars: Vec<Var>,
    unassigned: Option<String>,
}

/// The device environment rules of a configuration, by resource name in
/// upper case.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DeviceEnv(BTreeMap<String, Rule>);

impl DeviceEnv {
    /// Every `ENVIRONMENT_FOR_Assigned<name>` and
    /// `ENVIRONMENT_VALUE_FOR_UnAssigned<name>` of `config` (with the GPU
    /// defaults of HTCondor's parameter table); a variable whose edit is
    /// not `/regex/replacement/` or whose regex does not compile is an
    /// error naming the knob.
    pub fn read(config: &Config) -> Result<DeviceEnv, TypeError> {
        let mut names: Vec<String> = vec![
            "ENVIRONMENT_FOR_AssignedGPUs".into(),
            "ENVIRONMENT_VALUE_FOR_UnAssignedGPUs".into(),
        ];
        for m in config.table().iter() {
            let name = m.name.rsplit('.').next().unwrap_or(&m.name);
            let upper = name.to_ascii_uppercase();
            if (upper.starts_with(FOR) && upper.len() > FOR.len())
                || (upper.starts_with(UNASSIGNED) && upper.len() > UNASSIGNED.len())
            {
                names.push(name.to_string());
            }
        }
        let mut rules: BTreeMap<String, Rule> = BTreeMap::new();
        for name in names {
            let Some(value) = config.text(&name)? else {
                continue;
            };
            let upper = name.to_ascii_uppercase();
            if let Some(res) = upper.strip_prefix(FOR) {
                let vars = parse_vars(&value)
                    .map_err(|why| config.type_error(&name, &value, &why.to_string()))?;
                rules.entry(res.to_string()).or_default().vars = vars;
            } else if let Some(res) = upper.strip_prefix(UNASSIGNED) {
                rules.entry(res.to_string()).or_default().unassigned = Some(value);
            }
        }
        Ok(DeviceEnv(rules))
    }

    /// The variables for a job in the slot whose ad is `machine`.
    pub fn env(&self, machine: &ClassAd) -> Vec<(String, String)> {
        let env = FixedEnv::new(0);
        let text = |attr: &str| match machine.eval_attr(attr, &env) {
            Value::Str(s) => Some(s.to_string_lossy()),
            _ => None,
        };
        let Some(resources) = text("MachineResources") else {
            return Vec::new();
        };
        let mut out = Vec::new();
        for res in resources.split_whitespace() {
            if ["Cpus", "Memory", "Disk", "Swap"]
                .iter()
                .any(|s| s.eq_ignore_ascii_case(res))
            {
                continue;
            }
            let rule = self.0.get(&res.to_ascii_uppercase());
            let ids: Vec<String> = text(&format!("Assigned{res}"))
                .map(|a| {
                    (a.split(',').map(str::trim))
                        .filter(|i| !i.is_empty())
                        .map(str::to_string)
                        .collect()
                })
                .unwrap_or_default();
            let own = format!("_CONDOR_Assigned{res}");
            if ids.is_empty() {
                if let Some(v) = rule.and_then(|r| r.unassigned.as_ref()) {
                    out.push((own, v.clone()));
                    for var in rule.map_or(&[][..], |r| &r.vars) {
                        out.push((var.name.clone(), v.clone()));
                    }
                }
                continue;
            }
            out.push((own, ids.join(",")));
            for var in rule.map_or(&[][..], |r| &r.vars) {
                let edited: Vec<String> = ids.iter().map(|i| var.apply(i)).collect();
                out.push((var.name.clone(), edited.join(",")));
            }
        }
        out
    }
}

impl Var {
    fn apply(&self, id: &str) -> String {
        let Some(Edit { re, with }) = &self.edit else {
            return id.to_string();
        };
        match re.find(id.as_bytes()) {
            Ok(Some(m)) => format!("{}{with}{}", &id[..m.start()], &id[m.end()..]),
            _ => id.to_string(),
        }
    }
}

/// Why a variable of `ENVIRONMENT_FOR_Assigned<name>` does not read.
#[derive(Debug, thiserror::Error)]
enum BadVar {
    #[error("variables, each NAME or NAME=/regex/replacement/ (not \"{0}\")")]
    Form(String),
    #[error("variables with regexes that compile ({re}: {source})")]
    Regex { re: String, source: pcre2::Error },
}

/// `NAME` or `NAME=/regex/replacement/`, separated by white space.
fn parse_vars(value: &str) -> Result<Vec<Var>, BadVar> {
    let edit = |re: &str, with: &str| match pcre2::bytes::Regex::new(re) {
        Ok(re) => Ok(Some(Edit {
            re,
            with: with.to_string(),
        })),
        Err(source) => Err(BadVar::Regex {
            re: re.to_string(),
            source,
        }),
    };
    let mut vars = Vec::new();
    for item in value.split_whitespace() {
        let (name, edit) = match item.split_once('=') {
            None if item.eq_ignore_ascii_case("CUDA_VISIBLE_DEVICES") => (item, edit("CUDA", "")?),
            None => (item, None),
            Some((name, e)) => {
                let parts: Vec<&str> = e.split('/').collect();
                let [_, re, with, _] = parts[..] else {
                    return Err(BadVar::Form(item.to_string()));
                };
                (name, edit(re, with)?)
            }
        };
        if name.is_empty() {
            return Err(BadVar::Form(item.to_string()));
        }
        vars.push(Var {
            name: name.to_string(),
            edit,
        });
    }
    Ok(vars)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{Scope, load_text};

    fn read(text: &str) -> Result<DeviceEnv, TypeError> {
        let scope = Scope {
            subsys: Some("STARTD".into()),
            localname: None,
        };
        let c = load_text("/etc/condor/condor_config", text, scope, vec![]).expect("reads");
        DeviceEnv::read(&c)
    }

    fn slot(attrs: &str) -> ClassAd {
        crate::classad::parse_ad(&format!(
            "[ MachineResources = \"Cpus Memory Disk Swap GPUs Cogs\"; {attrs} ]"
        ))
        .expect("ad")
    }

    #[test]
    fn gpus_get_htcondors_default_variables_and_the_unassigned_value() {
        let d = read("").expect("defaults read");
        assert_eq!(
            d.env(&slot("AssignedGPUs = \"CUDA1,OCL2\"")),
            [
                ("_CONDOR_AssignedGPUs".into(), "CUDA1,OCL2".into()),
                ("GPU_DEVICE_ORDINAL".into(), "1,2".into()),
                ("CUDA_VISIBLE_DEVICES".into(), "1,OCL2".into()),
            ]
        );
        assert_eq!(
            d.env(&slot("")),
            [
                ("_CONDOR_AssignedGPUs".into(), "10000".into()),
                ("GPU_DEVICE_ORDINAL".into(), "10000".into()),
                ("CUDA_VISIBLE_DEVICES".into(), "10000".into()),
            ]
        );
    }

    #[test]
    fn a_site_names_its_own_variables_and_edits() {
        let d = read(
            "ENVIRONMENT_FOR_AssignedGPUs = CUDA_VISIBLE_DEVICES\n\
             ENVIRONMENT_VALUE_FOR_UnAssignedGPUs =\n\
             ENVIRONMENT_FOR_AssignedCogs = VISIBLE_COGS=/^/cog:/ RAW\n",
        )
        .expect("reads");
        assert_eq!(
            d.env(&slot("AssignedGPUs = \"CUDA0\"; AssignedCogs = \"c1, c2\"")),
            [
                ("_CONDOR_AssignedGPUs".into(), "CUDA0".into()),
                ("CUDA_VISIBLE_DEVICES".into(), "0".into()),
                ("_CONDOR_AssignedCogs".into(), "c1,c2".into()),
                ("VISIBLE_COGS".into(), "cog:c1,cog:c2".into()),
                ("RAW".into(), "c1,c2".into()),
            ]
        );
        // No unassigned value: a slot without devices sets nothing.
        assert!(d.env(&slot("")).is_empty());
    }

    #[test]
    fn a_malformed_edit_names_the_knob() {
        let e = read("ENVIRONMENT_FOR_AssignedGPUs = X=CUDA\n").expect_err("refused");
        assert!(
            e.to_string().contains("ENVIRONMENT_FOR_AssignedGPUs"),
            "{e}"
        );
        let e = read("ENVIRONMENT_FOR_AssignedCogs = X=/(/x/\n").expect_err("refused");
        assert!(e.to_string().contains("regexes that compile"), "{e}");
    }
}
