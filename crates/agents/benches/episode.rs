//! SPEC §11: one full in-process L2 oracle episode on T2_multi_page, both scorers included
//! (target ≤ 2 ms).
use benchaudit_agents::{EpisodeSpec, Level, RuleKind, RulePolicy, RunOptions, run_episode};
use benchaudit_comtrade::task;

fn main() {
    divan::main();
}

#[divan::bench]
fn l2_oracle_episode_t2() -> f64 {
    let spec = EpisodeSpec {
        task: task("T2_multi_page").expect("registry"),
        seed: divan::black_box(0),
        level: Level::L2,
        options: RunOptions::default(),
    };
    let run = run_episode(&spec, &mut RulePolicy::new(RuleKind::Oracle));
    run.record.scores.map_or(0.0, |s| s.f1 + s.judge_total)
}
