//! The hot paths of SPEC §11 as fixed workloads, for instruction counts under callgrind
//! (`scripts/bench/callgrind.sh`): wall time is noisy on a shared machine, instruction counts
//! are not. `hotpaths WORKLOAD N` runs one workload N times inside `measure` (the function
//! callgrind is told to count); without arguments (as `cargo bench` runs it) every workload
//! runs once, a smoke test that the workloads still work.
use std::hint::black_box;

use benchaudit_agents::{EpisodeSpec, Level, RuleKind, RulePolicy, RunOptions, run_episode};
use benchaudit_comtrade::{Episode, EpisodeOptions, FetchPageArgs, Generator, Submission, task};
use benchaudit_scoring::{JudgeContext, Scores, f1, judge};

const WORKLOADS: [&str; 10] = [
    "page_t1",
    "page_t2",
    "page_t3",
    "page_t6",
    "page_t7",
    "truth_t2",
    "judge_t2",
    "f1_t2",
    "both_t2",
    "episode_t2",
];

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    match args.first().map(String::as_str) {
        Some(name) if WORKLOADS.contains(&name) => {
            let n = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(1);
            println!("{name} x{n}: {}", run(name, n));
        }
        _ => {
            for name in WORKLOADS {
                println!("{name}: {}", run(name, 1));
            }
        }
    }
}

/// The correct T2_multi_page submission, as the scorer benchmarks build it.
#[path = "../../scoring/benches/common/mod.rs"]
mod common;
use common::correct_t2;

/// What one workload needs, built outside the counted region.
enum Setup {
    Page(Episode),
    Truth(Generator),
    Submission(Submission),
    Episode(EpisodeSpec),
}

fn run(name: &str, n: u32) -> u64 {
    let t2 = task("T2_multi_page").expect("registry");
    let setup = match name {
        "page_t1" | "page_t2" | "page_t3" | "page_t6" | "page_t7" => {
            let id = match name {
                "page_t1" => "T1_single_page",
                "page_t2" => "T2_multi_page",
                "page_t3" => "T3_duplicates",
                "page_t6" => "T6_page_drift",
                _ => "T7_totals_trap",
            };
            let options = EpisodeOptions {
                max_requests: Some(u32::MAX),
                ..EpisodeOptions::default()
            };
            Setup::Page(Episode::new(task(id).expect("registry"), 0, options))
        }
        "truth_t2" => Setup::Truth(Generator::new(t2, 0)),
        "episode_t2" => Setup::Episode(EpisodeSpec {
            task: t2,
            seed: 0,
            level: Level::L2,
            options: RunOptions::default(),
        }),
        _ => Setup::Submission(correct_t2()),
    };
    measure(name, setup, n)
}

/// The counted region: `n` repetitions of the workload.
#[inline(never)]
fn measure(name: &str, mut setup: Setup, n: u32) -> u64 {
    let t2 = task("T2_multi_page").expect("registry");
    let mut acc = 0u64;
    for _ in 0..n {
        acc += match (&mut setup, name) {
            (Setup::Page(ep), _) => {
                let task = ep.task();
                let page = ep
                    .fetch_page(FetchPageArgs {
                        page: black_box(1),
                        page_size: None,
                    })
                    .expect("served");
                black_box(page_bytes(task, &page)).len() as u64
            }
            (Setup::Truth(g), _) => black_box(g.truth().map(|r| r.qty).sum::<u64>()),
            (Setup::Submission(sub), "judge_t2") => {
                judge::judge(&JudgeContext::for_task(t2), black_box(sub)).total as u64
            }
            (Setup::Submission(sub), "f1_t2") => f1::f1_of_data(
                &Generator::new(t2, 0),
                black_box(sub.data_jsonl.as_deref().unwrap_or("")),
            )
            .true_unique
            .into(),
            (Setup::Submission(sub), _) => {
                Scores::compute(t2, 0, black_box(sub)).true_unique.into()
            }
            (Setup::Episode(spec), _) => {
                let run = run_episode(black_box(spec), &mut RulePolicy::new(RuleKind::Oracle));
                run.record.scores.map_or(0, |s| s.true_unique.into())
            }
        };
    }
    acc
}

/// The REST body of a served page, as `benchaudit serve` writes it.
fn page_bytes(
    task: &'static benchaudit_comtrade::TaskSpec,
    page: &benchaudit_comtrade::PageResponse,
) -> Vec<u8> {
    let mut out = Vec::new();
    page.write_json(task, &mut out);
    out
}
