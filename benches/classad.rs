//! ClassAd speed: parsing a policy expression, evaluating a job/machine
//! pair, and matchmaking. Results and the HTCondor comparison are in
//! `docs/performance.md`; `tools/bench_classad.sh` runs both sides.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use roost::classad::matchmaking::{rank, requirements_met};
use roost::classad::{ClassAd, Evaluator, FixedEnv, Name, parse_ad, parse_expr};

/// A 100-character START policy.
pub const POLICY: &str =
    "(KeyboardIdle > 15 * 60) && (LoadAvg - CondorLoadAvg <= 0.30) && (TARGET.RequestMemory <= MY.Memory)";

/// A typical execute-node slot ad.
pub const MACHINE: &str = r#"[
  Name = "slot1@node042.example.org"; Machine = "node042.example.org"; SlotID = 1;
  Arch = "X86_64"; OpSys = "LINUX"; OpSysAndVer = "AlmaLinux9"; Cpus = 8; Memory = 32768;
  Disk = 104857600; KFlops = 2500000; Mips = 30000; LoadAvg = 0.1; CondorLoadAvg = 0.0;
  KeyboardIdle = 3600; ConsoleIdle = 3600; State = "Unclaimed"; Activity = "Idle";
  HasFileTransfer = true; HasDocker = false; TotalCpus = 8; TotalMemory = 32768;
  StartdIpAddr = "<10.0.0.42:9618>"; CondorVersion = "$CondorVersion: 23.9.6 $";
  START = (KeyboardIdle > 15 * 60) && (LoadAvg - CondorLoadAvg <= 0.3) &&
          (TARGET.RequestMemory <= Memory) && (TARGET.RequestCpus <= Cpus) &&
          (TARGET.Owner =!= "nobody");
  Requirements = START; Rank = 0.0; CurrentRank = 0.0
]"#;

/// A typical job ad.
pub const JOB: &str = r#"[
  Owner = "alice"; User = "alice@example.org"; ClusterId = 1234; ProcId = 0;
  Cmd = "/home/alice/analysis"; Args = "--input data.root"; JobUniverse = 5;
  RequestCpus = 1; RequestMemory = 2048; RequestDisk = 1048576; ImageSize = 1000;
  DiskUsage = 1000; JobPrio = 0; NumJobStarts = 0; WantRemoteIO = false;
  Requirements = (TARGET.Arch == "X86_64") && (TARGET.OpSys == "LINUX") &&
                 (TARGET.Disk >= RequestDisk) && (TARGET.Memory >= RequestMemory) &&
                 (TARGET.HasFileTransfer);
  Rank = TARGET.Memory + TARGET.KFlops / 1000
]"#;

fn bench_parse(c: &mut Criterion) {
    assert_eq!(POLICY.len(), 100);
    c.bench_function("parse 100-char policy expression", |b| {
        b.iter(|| parse_expr(black_box(POLICY)).map(drop))
    });
    c.bench_function("parse machine ad (29 attributes)", |b| {
        b.iter(|| parse_ad(black_box(MACHINE)).map(drop))
    });
}

fn bench_eval(c: &mut Criterion) {
    let machine: ClassAd = parse_ad(MACHINE).expect("machine ad parses");
    let job: ClassAd = parse_ad(JOB).expect("job ad parses");
    let env = FixedEnv::new(1_700_000_000);
    let start = Name::new("START");
    let requirements = Name::new("Requirements");
    let rank_name = Name::new("Rank");
    c.bench_function("evaluate pair (machine START, job Requirements, job Rank)", |b| {
        b.iter(|| {
            let s = Evaluator::new(Some(&machine), Some(&job), &env).eval_attr(&start);
            let mut ev = Evaluator::new(Some(&job), Some(&machine), &env);
            let r = ev.eval_attr(&requirements);
            let k = ev.eval_attr(&rank_name);
            black_box((s, r, k))
        })
    });
    c.bench_function("matchmaking pair (symmetric match + rank)", |b| {
        b.iter(|| {
            let m = requirements_met(&job, &machine, &env) && requirements_met(&machine, &job, &env);
            black_box((m, rank(&job, &machine, &env)))
        })
    });
}

criterion_group!(benches, bench_parse, bench_eval);
criterion_main!(benches);
