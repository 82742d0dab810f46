//! Replay: every player of the audit, models included, must reproduce its episodes: the same
//! (task, seed, policy, options) gives the same record — every field outside `timing`.
//!
//! Rule players are re-run (their decisions are a function of the seed). A model is never
//! asked twice (a second call to a sampling model proves nothing): its recorded provider
//! responses, taken from the first run's transcript, are served in order by a loopback
//! endpoint and replayed through the same harness, LLM policy and HTTP client, and the record
//! must come out identical.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use benchaudit_agents::llm::{ChatClient, ClientConfig, LlmPolicy, ModelConfig, RetryPolicy};
use benchaudit_agents::{EpisodeRecord, EpisodeSpec, Level, Outcome, run_episode};
use benchaudit_comtrade::TaskSpec;
use benchaudit_runs::{Plan, Player, collect};
use serde::Serialize;
use serde_json::{Value, json};

use crate::card::{Cell, Status};

/// The replay verdict.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Replay {
    /// Players replayed (rule players and models), in audit order.
    pub players: Vec<String>,
    /// Episodes replayed.
    pub episodes: usize,
    /// Of those, rule-player episodes re-run.
    pub rule_episodes: usize,
    /// Of those, model episodes replayed from their recorded provider responses.
    pub model_episodes: usize,
    /// Model episodes not replayable: an infrastructure error is not a model outcome, and its
    /// provider exchange was not answered.
    pub not_replayed: Vec<String>,
    /// Episodes whose records differed outside timing.
    pub mismatches: Vec<String>,
}

fn comparable(r: &EpisodeRecord) -> String {
    let mut v = serde_json::to_value(r).unwrap_or_default();
    if let Some(o) = v.as_object_mut() {
        o.remove("timing");
    }
    v.to_string()
}

fn name(r: &EpisodeRecord) -> String {
    format!(
        "{} {} {} seed {}",
        r.key.policy, r.key.level, r.key.task_id, r.key.seed
    )
}

/// A model's episode from the first run, to be replayed.
#[derive(Debug, Clone)]
pub struct RecordedEpisode {
    /// The model's configuration (as the first run used it).
    pub config: ModelConfig,
    /// What was run.
    pub spec: EpisodeSpec,
    /// The first run's record.
    pub record: EpisodeRecord,
    /// The policy's transcript log of the first run (`Transcript::messages`).
    pub log: Option<Value>,
}

/// What a recorded request's provider answered, in order: the response body, or the error the
/// client met (no body).
fn exchanges(log: &Value) -> Vec<Result<Value, String>> {
    log.get("requests")
        .and_then(Value::as_array)
        .map(|rs| {
            rs.iter()
                .map(|r| match r.get("response") {
                    Some(body) => Ok(body.clone()),
                    None => Err(r
                        .get("error")
                        .and_then(Value::as_str)
                        .unwrap_or("no response recorded")
                        .to_string()),
                })
                .collect()
        })
        .unwrap_or_default()
}

/// One HTTP reply of the replay endpoint.
fn reply(stream: &mut TcpStream, status: u16, body: &str) -> std::io::Result<()> {
    let reason = if status == 200 { "OK" } else { "Bad Request" };
    write!(
        stream,
        "HTTP/1.1 {status} {reason}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )?;
    stream.flush()
}

/// Reads one request (headers, then the body its Content-Length announces) and discards it.
fn read_request(stream: &TcpStream) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream);
    let mut length = 0usize;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':')
            && k.eq_ignore_ascii_case("content-length")
        {
            length = v.trim().parse().unwrap_or(0);
        }
    }
    let mut body = vec![0u8; length];
    reader.read_exact(&mut body)
}

/// Serves `answers` in order on a loopback port until `stop` is set; a request beyond them is
/// refused (400), which ends the replayed episode differently and so shows as a mismatch.
fn serve(listener: TcpListener, answers: Vec<Result<Value, String>>, stop: Arc<AtomicBool>) {
    let mut answers = answers.into_iter();
    for stream in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            break;
        }
        let Ok(mut stream) = stream else { continue };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(30)));
        if read_request(&stream).is_err() {
            continue;
        }
        let _ = match answers.next() {
            Some(Ok(body)) => reply(&mut stream, 200, &body.to_string()),
            // A recorded provider error that was a model outcome (context overflow) is
            // answered as the provider phrased it; anything else is refused.
            Some(Err(e)) => reply(
                &mut stream,
                400,
                &json!({"error": {"message": e, "code": if e.contains("context") { "context_length_exceeded" } else { "replay_error" }}})
                    .to_string(),
            ),
            None => reply(
                &mut stream,
                400,
                &json!({"error": {"message": "replay: the first run made no further request", "code": "replay_exhausted"}}).to_string(),
            ),
        };
    }
}

/// Replays one model episode from its recorded provider responses; `None` when it cannot be
/// replayed (an infrastructure error, or no transcript log).
fn replay_model(e: &RecordedEpisode) -> Result<Option<EpisodeRecord>, String> {
    if e.record.outcome == Outcome::InfraError {
        return Ok(None);
    }
    let Some(log) = &e.log else { return Ok(None) };
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|err| format!("replay: {err}"))?;
    let addr = listener
        .local_addr()
        .map_err(|err| format!("replay: {err}"))?;
    let stop = Arc::new(AtomicBool::new(false));
    let answers = exchanges(log);
    let server = {
        let stop = Arc::clone(&stop);
        std::thread::spawn(move || serve(listener, answers, stop))
    };
    let mut client = ClientConfig::new(&format!("http://{addr}/v1"), None);
    // One attempt: the recorded exchange already holds the first run's retries' outcome.
    client.retry = RetryPolicy {
        max_attempts: 1,
        ..RetryPolicy::default()
    };
    let client = ChatClient::new(client).map_err(|err| format!("replay client: {err}"))?;
    let mut policy = LlmPolicy::new(Arc::new(e.config.clone()), Arc::new(client));
    let run = run_episode(&e.spec, &mut policy);
    stop.store(true, Ordering::SeqCst);
    // Wake the accept loop so it sees `stop`.
    let _ = TcpStream::connect(addr);
    let _ = server.join();
    Ok(Some(run.record))
}

/// The rule players' episodes replay re-runs: every player × level × task × seed, default
/// options.
pub fn plan(
    rule_players: Vec<Player>,
    levels: &[Level],
    tasks: &[&'static TaskSpec],
    seeds: &[u64],
) -> Plan {
    Plan::new(
        rule_players,
        levels.to_vec(),
        tasks.to_vec(),
        seeds.to_vec(),
    )
}

/// Runs every episode of the rule players × levels × tasks × seeds twice (on `threads`
/// workers, then on one) and replays every recorded model episode from its provider
/// responses; compares each pair outside timing.
///
/// # Errors
/// The loopback replay endpoint could not be opened.
pub fn run(
    rule_players: Vec<Player>,
    levels: &[Level],
    tasks: &[&'static TaskSpec],
    seeds: &[u64],
    threads: usize,
    models: &[RecordedEpisode],
) -> Result<Replay, String> {
    let plan = plan(rule_players, levels, tasks, seeds);
    let jobs = plan.jobs();
    let first = collect(&jobs, threads);
    let second = collect(&jobs, 1);
    compare(plan.player_names(), &first, &second, models)
}

/// The verdict on two runs of the rule players' episodes of a [`plan`] — `first` as an earlier
/// stage played them (the audit's episode pool, on its workers), `second` a re-run of the same
/// jobs on one worker, both in job order — and on every recorded model episode, replayed here
/// from its provider responses. `players` are the rule players' names.
///
/// # Errors
/// The loopback replay endpoint could not be opened.
pub fn compare(
    players: Vec<String>,
    first: &[EpisodeRecord],
    second: &[EpisodeRecord],
    models: &[RecordedEpisode],
) -> Result<Replay, String> {
    let mut players = players;
    let mut mismatches: Vec<String> = first
        .iter()
        .zip(second)
        .filter(|(a, b)| comparable(a) != comparable(b))
        .map(|(a, _)| name(a))
        .collect();
    if first.len() != second.len() {
        mismatches.push(format!(
            "{} episodes in the first run, {} in the second",
            first.len(),
            second.len()
        ));
    }
    let mut not_replayed = Vec::new();
    let mut model_episodes = 0;
    for e in models {
        if !players.contains(&e.record.key.policy) {
            players.push(e.record.key.policy.clone());
        }
        match replay_model(e)? {
            None => not_replayed.push(name(&e.record)),
            Some(again) => {
                model_episodes += 1;
                if comparable(&again) != comparable(&e.record) {
                    mismatches.push(name(&e.record));
                }
            }
        }
    }
    Ok(Replay {
        players,
        episodes: first.len() + model_episodes,
        rule_episodes: first.len(),
        model_episodes,
        not_replayed,
        mismatches,
    })
}

/// The replay cell of the card.
pub fn cell(r: &Replay) -> Cell {
    let models = if r.model_episodes > 0 || !r.not_replayed.is_empty() {
        format!(
            " ({} rule-player episodes re-run; {} model episodes replayed from their recorded provider responses{})",
            r.rule_episodes,
            r.model_episodes,
            if r.not_replayed.is_empty() {
                String::new()
            } else {
                format!(
                    "; {} infrastructure-error episodes not replayable",
                    r.not_replayed.len()
                )
            }
        )
    } else {
        String::new()
    };
    if r.mismatches.is_empty() {
        Cell {
            status: Status::Pass,
            evidence: format!(
                "{} episodes of {} players replayed bit-for-bit (records outside timing identical){models}.",
                r.episodes,
                r.players.len()
            ),
        }
    } else {
        Cell {
            status: Status::Fail,
            evidence: format!(
                "{} of {} episodes differ on replay{models}: {}",
                r.mismatches.len(),
                r.episodes,
                r.mismatches.join("; ")
            ),
        }
    }
}
