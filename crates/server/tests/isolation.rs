//! 1 000 episodes at once over HTTP stay isolated: every one scores exactly as its own policy
//! scores on a private, in-process episode of the same (task, seed, options).
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

use std::sync::Arc;

use benchaudit_comtrade::{EpisodeOptions, tasks};
use benchaudit_server::ServerConfig;
use common::{InProcess, Policy, Rest, TestServer, client, create, run_policy};
use serde_json::json;
use tokio::sync::Barrier;

const EPISODES: usize = 1000;

fn plan(i: usize) -> (&'static str, u64, Policy) {
    let all = tasks();
    let t = &all[i % all.len()];
    let policy = match i % 3 {
        0 => Policy::Oracle,
        1 => Policy::NoDedup,
        _ => Policy::Empty,
    };
    (t.task_id, 1000 + i as u64, policy)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_thousand_concurrent_episodes_each_score_as_their_own_policy() {
    let server = Arc::new(TestServer::start(ServerConfig::default()).await);
    let http = client();
    // Open every episode first, then start all policies together so their requests interleave.
    let barrier = Arc::new(Barrier::new(EPISODES));
    let mut runs = Vec::with_capacity(EPISODES);
    for i in 0..EPISODES {
        let (server, http, barrier) = (Arc::clone(&server), http.clone(), Arc::clone(&barrier));
        runs.push(tokio::spawn(async move {
            let (task_id, seed, policy) = plan(i);
            let id = create(&http, &server, json!({"task_id": task_id, "seed": seed})).await;
            barrier.wait().await;
            let answer = run_policy(&mut Rest::new(http, &server, &id), policy).await;
            (i, answer)
        }));
    }
    let mut oracle_f1_one = 0;
    let mut no_dedup_below_one = 0;
    for run in runs {
        let (i, answer) = run.await.unwrap();
        let (task_id, seed, policy) = plan(i);
        let reference = run_policy(
            &mut InProcess::new(task_id, seed, EpisodeOptions::default()),
            policy,
        )
        .await;
        assert_eq!(
            answer, reference,
            "episode {i} ({task_id}, seed {seed}, {policy:?}) was disturbed by its neighbours"
        );
        let f1 = answer["scores"]["f1"].as_f64().unwrap();
        let precision = answer["scores"]["precision"].as_f64().unwrap();
        match policy {
            Policy::Oracle => {
                oracle_f1_one += usize::from(f1 == 1.0);
            }
            Policy::Empty => assert_eq!(f1, 0.0),
            Policy::NoDedup => {
                let t = benchaudit_comtrade::task(task_id).unwrap();
                if t.fault.duplicate_rates().is_some() {
                    assert!(
                        precision < 1.0,
                        "{task_id}: duplicates kept, yet precision {precision}"
                    );
                    no_dedup_below_one += 1;
                }
            }
        }
    }
    // Page drift may, rarely, beat the oracle's budget; everything else is solvable.
    assert!(
        oracle_f1_one >= EPISODES / 3 - 1,
        "only {oracle_f1_one} oracle episodes scored 1"
    );
    assert!(no_dedup_below_one > 50);
    let metrics = common::metrics(&http, &server).await;
    metrics.assert_line(format!("benchaudit_episodes_open {EPISODES}"));
    metrics.assert_line(format!("benchaudit_submissions_total {EPISODES}"));
    match Arc::try_unwrap(server) {
        Ok(server) => server.shutdown().await,
        Err(_) => panic!("server still shared"),
    }
}
