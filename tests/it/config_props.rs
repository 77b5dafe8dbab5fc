//! Properties of the configuration reader on arbitrary input: loading and
//! expanding never panic and never hang, whatever the files say.

use std::collections::HashMap;

use proptest::prelude::*;
use roost::config::{Files, LoadInput, Root, Scope, SourceError, load};

/// Files held in memory; `include`s of each other may recurse.
struct MemFiles(HashMap<String, String>);

impl Files for MemFiles {
    fn read(&self, path: &str) -> Result<Vec<u8>, SourceError> {
        self.0
            .get(path)
            .map(|s| s.as_bytes().to_vec())
            .ok_or(SourceError::Unavailable("no such file"))
    }
    fn run(&self, command: &str) -> Result<Vec<u8>, SourceError> {
        self.read(command)
    }
    fn list_dir(&self, path: &str) -> Result<Vec<String>, SourceError> {
        Ok(self
            .0
            .keys()
            .filter(|k| k.starts_with(&format!("{path}/")))
            .cloned()
            .collect())
    }
}

const TOKENS: &[&str] = &[
    "A",
    "B",
    "c",
    "START",
    "X.Y",
    "=",
    " = ",
    ":",
    " : ",
    "@=",
    "@end",
    "end",
    "$(",
    ")",
    "$(A)",
    "$(B:",
    "$(X:$(A))",
    "$$(",
    "$(DOLLAR)",
    "$ENV(HOME",
    "$INT(",
    "$REAL(",
    "$STRING(",
    "$EVAL(",
    "$SUBSTR(",
    "$CHOICE(",
    "$RANDOM_CHOICE(",
    "$RANDOM_INTEGER(",
    "$Fpnx(",
    "$BASENAME(",
    ",",
    "1",
    "-3",
    "2.5",
    "%d",
    "%s",
    "\\",
    "#",
    "if ",
    "elif ",
    "else",
    "endif",
    "defined ",
    "version ",
    ">= 8.1",
    "!",
    "true",
    "use ",
    "POLICY",
    "FEATURE : ",
    "Desktop",
    "Limit_Job_Runtimes(",
    "include : ",
    "include ifexist : ",
    "inc",
    " |",
    "error : ",
    "warning : ",
    "LOCAL_CONFIG_FILE",
    "LOCAL_CONFIG_DIR",
    "AUTO_USE_POLICY_DESKTOP",
    "é",
    "\t",
    " ",
    "\n",
    "\n",
    "\n",
    "\r\n",
];

fn config_text() -> impl Strategy<Value = String> {
    prop::collection::vec(prop::sample::select(TOKENS), 0..120).prop_map(|t| t.concat())
}

fn input() -> LoadInput {
    LoadInput {
        root: Root::File("root".into()),
        scope: Scope {
            subsys: Some("STARTD".into()),
            localname: None,
        },
        attributes: vec![],
        specials: vec![("HOSTNAME".into(), "h".into())],
        env: vec![
            ("HOME".into(), "/home/x".into()),
            ("_CONDOR_A".into(), "$(B) env".into()),
        ],
        now: 0,
    }
}

fn exercise(files: HashMap<String, String>) {
    let files = MemFiles(files);
    if let Ok(config) = load(&input(), &files) {
        let names: Vec<String> = config.dump().iter().map(|m| m.name.clone()).collect();
        for n in names
            .iter()
            .map(String::as_str)
            .chain(["START", "A", "B", "NOPE"])
        {
            let _ = config.get(n);
            let _ = config.int(n);
            let _ = config.bool(n);
            let _ = config.expr(n);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn token_soup_never_panics(root in config_text(), inc in config_text(), local in config_text()) {
        exercise(HashMap::from([
            ("root".to_string(), root),
            ("inc".to_string(), inc),
            ("LOCAL_CONFIG_FILE".to_string(), local),
        ]));
    }

    #[test]
    fn arbitrary_text_never_panics(root in ".{0,400}") {
        exercise(HashMap::from([("root".to_string(), root)]));
    }
}

#[test]
fn self_including_files_stop_at_the_nesting_limit() {
    let files = HashMap::from([("root".to_string(), "A = 1\ninclude : root\n".to_string())]);
    let err = load(&input(), &MemFiles(files)).expect_err("endless include");
    assert!(err.message.contains("nested too deep"), "{err}");
}

#[test]
fn a_value_that_doubles_at_every_level_is_cut_off() {
    let mut text = String::from("K0 = xxxxxxxxxxxxxxxx\n");
    for i in 1..60 {
        text.push_str(&format!("K{i} = $(K{})$(K{})\n", i - 1, i - 1));
    }
    let config = load(
        &input(),
        &MemFiles(HashMap::from([("root".to_string(), text)])),
    )
    .expect("loads: expansion is lazy");
    assert!(config.get("K59").is_err(), "2^59 bytes must be refused");
    assert_eq!(config.get("K2").expect("small").expect("defined").len(), 64);
}
