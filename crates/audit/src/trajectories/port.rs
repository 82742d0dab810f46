//! Port fidelity: the same forged runs scored by the benchmark's own evaluator and by a port of
//! it (τ²'s in `inspect-evals`), and where the two disagree.
//!
//! A leaderboard that reports a port's number reports the port's scorer, not the original's.
//! The audit already holds runs the original scored, with their trajectories; the `port` hook
//! plays each one again through the port's own task and scorer and answers a score per run.
//! Nothing here judges either side right: a disagreement is a fact about the two scorers, shown
//! on the card beside the run that shows it, and it changes no cell of the original's card.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::table::{Benchmark, Forgery};
use super::{HookStderr, RunRecord, TrajectoriesConfig, TrajectoryPlayer, Unit};

/// Most notes kept per run, and bytes per note (the hook is untrusted).
const MAX_NOTES: usize = 8;
const MAX_NOTE_BYTES: usize = 400;

/// One forged run, as the original and the port scored it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortRun {
    /// Group (domain).
    pub group: String,
    /// Unit (task).
    pub unit: String,
    /// Forgery.
    pub forgery: Forgery,
    /// How the original's run ended.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub termination: Option<String>,
    /// The original's headline score.
    pub original: Option<f64>,
    /// The port's score.
    pub port: Option<f64>,
    /// Both scored it and the scores are equal (within the scorer's resolution).
    pub agree: bool,
    /// What the port's replay noticed (turns the port asked for that the run lacks, turns it
    /// left unplayed).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
    /// The port raised or could not play the run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Port fidelity over the runs of the chosen units.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct PortFidelity {
    /// The port as its hook describes it (package, version, tasks, scorer).
    pub port: Value,
    /// Units per group whose runs the port scored (the first ones by the replay rule).
    pub units: usize,
    /// Runs sent to the port.
    pub runs: usize,
    /// Runs both scored equally.
    pub agree: usize,
    /// Runs both scored, differently.
    pub disagree: usize,
    /// Runs one side could not score.
    pub unscored: usize,
    /// Every run.
    pub results: Vec<PortRun>,
    /// Why the comparison did not run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_probed: Option<String>,
}

#[derive(Deserialize)]
struct Answer {
    #[serde(default)]
    port: Value,
    results: Vec<PortAnswer>,
}

#[derive(Deserialize)]
struct PortAnswer {
    #[serde(default)]
    score: Option<f64>,
    #[serde(default)]
    notes: Vec<String>,
    #[serde(default)]
    error: Option<String>,
}

impl PortFidelity {
    fn not_probed(units: usize, why: String) -> Self {
        Self {
            port: Value::Null,
            units,
            runs: 0,
            agree: 0,
            disagree: 0,
            unscored: 0,
            results: Vec::new(),
            not_probed: Some(why),
        }
    }
}

fn clip(s: &str) -> String {
    if s.len() <= MAX_NOTE_BYTES {
        return s.to_string();
    }
    let mut end = MAX_NOTE_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// Scores the built runs of the first `config.port` units of each group (by the replay rule)
/// with the port. `None` when the target has no port hook or the config asks for none.
pub fn measure(
    player: &dyn TrajectoryPlayer,
    benchmark: Benchmark,
    probed: &[(String, Vec<Unit>, usize)],
    records: &[RunRecord],
    config: &TrajectoriesConfig,
) -> Option<(PortFidelity, Option<HookStderr>)> {
    if config.port == 0 {
        return None;
    }
    let headline = benchmark.components().iter().find(|c| c.headline)?.name;
    let chosen: Vec<&RunRecord> = records
        .iter()
        .filter(|r| r.built && r.error.is_none() && !r.trajectory.is_null())
        .filter(|r| {
            probed.iter().any(|(g, units, _)| {
                g == &r.group
                    && super::seeded_units(g, units, config, config.port).contains(&r.unit.as_str())
            })
        })
        .collect();
    let request = json!({
        "benchmark": benchmark.name(),
        "runs": chosen.iter().map(|r| json!({
            "group": r.group, "unit": r.unit, "forgery": r.forgery.name(), "trajectory": r.trajectory,
        })).collect::<Vec<_>>(),
    });
    let answer = match player.port(&request)? {
        Err(f) => {
            let why = super::failure_text("port", &f);
            let stderr = HookStderr {
                stage: "port".into(),
                tail: f.stderr_tail,
            };
            return Some((PortFidelity::not_probed(config.port, why), Some(stderr)));
        }
        Ok(v) => v,
    };
    let answer = match serde_json::from_value::<Answer>(answer) {
        Ok(a) if a.results.len() == chosen.len() => a,
        Ok(a) => {
            let why = format!(
                "the port hook answered {} results for {} runs",
                a.results.len(),
                chosen.len()
            );
            return Some((PortFidelity::not_probed(config.port, why), None));
        }
        Err(e) => {
            let why = format!("the port hook's answer does not fit the protocol: {e}");
            return Some((PortFidelity::not_probed(config.port, why), None));
        }
    };
    let tolerance = config.epsilon.max(1e-9);
    let results: Vec<PortRun> = chosen
        .iter()
        .zip(answer.results)
        .map(|(r, a)| {
            let original = r.scores.get(headline).copied().flatten();
            let port = a.score.filter(|s| s.is_finite());
            let agree =
                matches!((original, port), (Some(o), Some(p)) if (o - p).abs() <= tolerance);
            PortRun {
                group: r.group.clone(),
                unit: r.unit.clone(),
                forgery: r.forgery,
                termination: r.termination.clone(),
                original,
                port,
                agree,
                notes: a.notes.iter().take(MAX_NOTES).map(|n| clip(n)).collect(),
                error: a.error.as_deref().map(clip),
            }
        })
        .collect();
    let unscored = results
        .iter()
        .filter(|r| r.original.is_none() || r.port.is_none())
        .count();
    let agree = results.iter().filter(|r| r.agree).count();
    Some((
        PortFidelity {
            port: answer.port,
            units: config.port,
            runs: results.len(),
            agree,
            disagree: results.len() - agree - unscored,
            unscored,
            results,
            not_probed: None,
        },
        None,
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_long_note_is_clipped_on_a_character_boundary() {
        let s = "é".repeat(MAX_NOTE_BYTES);
        let c = clip(&s);
        assert!(c.len() <= MAX_NOTE_BYTES + "…".len());
        assert!(c.ends_with('…'));
    }
}
