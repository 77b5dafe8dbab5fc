//! Configuration speed: loading a 5,000-line configuration with 200 `use`
//! templates and expanding every knob it defines. The same file is written
//! to `target/bench-data/condor_config_5000` so `tools/bench_config.sh` can
//! time HTCondor's reader on it in the same run; results are in
//! `docs/performance.md`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{Criterion, criterion_group, criterion_main};
use roost::actors::common::sysconfig::FsFiles;
use roost::config::{LoadInput, Root, Scope, load};

/// The allocator the `roost` binary uses.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const TEMPLATES: &[&str] = &[
    "POLICY : Desktop",
    "POLICY : Always_Run_Jobs",
    "POLICY : UWCS_Desktop",
    "POLICY : Limit_Job_Runtimes(3600)",
    "POLICY : Preempt_If_Memory_Exceeded",
    "POLICY : Hold_If_Memory_Exceeded",
    "POLICY : Preempt_If(Memory > 100)",
    "POLICY : Want_Hold_If(MemoryUsage > Memory, 101, too much memory)",
    "FEATURE : PartitionableSlot",
    "FEATURE : StaticSlots",
    "FEATURE : GPUs",
    "FEATURE : StartdCronPeriodic(PROBE, 60, /bin/true)",
    "ROLE : Execute",
    "SECURITY : Strong",
];

/// 5,000 lines: 200 `use` lines spread through 4,800 knob definitions with
/// references, defaults, self-appends, continuations, comments and `if`
/// blocks.
fn generate() -> String {
    let mut s = String::new();
    let mut lines = 0;
    let mut k = 0;
    while lines < 5000 {
        if lines % 25 == 0 {
            s.push_str(&format!(
                "use {}\n",
                TEMPLATES[(lines / 25) % TEMPLATES.len()]
            ));
            lines += 1;
            continue;
        }
        let line = match k % 10 {
            0 => format!("# knob group {k}\n"),
            1 => format!("Attr{k} = (TARGET.RequestMemory > {k}) && (MY.Cpus >= 1)\n"),
            2 => format!(
                "K{k} = ($(Attr{}) || $(StateTimer) > $(MINUTE) * {k})\n",
                k - 1
            ),
            3 => format!("STARTD_ATTRS = $(STARTD_ATTRS) K{}\n", k - 1),
            4 => format!("D{k} = $(UNSET_{k}:$(HOUR)) + $(K{})\n", k - 2),
            5 => format!("if defined K{}\n", k - 3),
            6 => format!("  IF{k} = $(K{}) && $(Attr{})\n", k - 4, k - 5),
            7 => "endif\n".to_string(),
            8 => format!("C{k} = first part $(D{}) \\\n", k - 4),
            _ => "    continued part\n".to_string(),
        };
        s.push_str(&line);
        lines += 1;
        k += 1;
    }
    s
}

fn bench_config(c: &mut Criterion) {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/bench-data");
    std::fs::create_dir_all(&dir).expect("bench dir");
    let path = dir.join("condor_config_5000");
    std::fs::write(&path, generate()).expect("write bench config");
    let input = LoadInput {
        root: Root::File(path.to_string_lossy().into_owned()),
        scope: Scope {
            subsys: Some("STARTD".into()),
            localname: None,
        },
        attributes: vec![],
        specials: vec![("HOSTNAME".into(), "bench".into())],
        env: vec![],
        now: 1_700_000_000,
    };
    let config = load(&input, &FsFiles).expect("bench config loads");
    let names: Vec<String> = config.dump().iter().map(|m| m.name.clone()).collect();
    std::fs::write(dir.join("condor_config_5000.names"), names.join("\n")).expect("write names");
    for n in &names {
        config.get(n).expect("every knob expands");
    }
    eprintln!("bench config: {} knobs defined", names.len());
    c.bench_function("config load 5000 lines, 200 use, expand every knob", |b| {
        b.iter(|| {
            let config = load(black_box(&input), &FsFiles).expect("loads");
            let mut bytes = 0;
            for m in config.dump() {
                bytes += config.get(&m.name).map_or(0, |v| v.map_or(0, |s| s.len()));
            }
            black_box(bytes)
        });
    });
    c.bench_function("config load 5000 lines, 200 use (no expansion)", |b| {
        b.iter(|| black_box(load(black_box(&input), &FsFiles).expect("loads")));
    });
}

criterion_group!(benches, bench_config);
criterion_main!(benches);
