//! The assist layers measured (paper A.12): each layer against references shipped in the
//! repository (`data/references.toml`), over N seeded runs, reporting the mean and the worst
//! run. Discovery is scored against the declared ownership maps of ComtradeBench's L0, L1 and
//! L2 (5 decisions a level); probe design against each audited scorer's kind and human battery
//! under a fixed keyword rubric; narration by whether the number guard accepts it. A run whose
//! answer is unusable scores 0 and keeps its error: the eval measures the model, and a model
//! that answers garbage is measured as such.

use std::collections::BTreeMap;
use std::path::Path;

use benchaudit_agents::{Level, OwnershipMap};
use benchaudit_audit::comtrade_target::decision_name;
use benchaudit_audit::external::ProbeFamily;
use benchaudit_audit::target::ScorerKind;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::chat::Chat;
use crate::discover::{self, Ask};
use crate::narrate;
use crate::probes;
use crate::source::Source;
use crate::{Error, excerpt};

/// The references, as shipped.
pub const REFERENCES: &str = include_str!("../data/references.toml");

/// Which references a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Slice {
    /// Every reference at full size (a capable model).
    Full,
    /// Excerpts that fit a small local model's context (CI: plumbing and recording).
    Small,
}

/// The reference file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct References {
    /// Human probe → keywords.
    pub rubric: BTreeMap<String, Vec<String>>,
    /// Discovery references.
    pub discover: Vec<DiscoverRef>,
    /// Probe-design references.
    pub probes: Vec<ProbesRef>,
    /// Narration references.
    pub narrate: Vec<NarrateRef>,
}

/// A harness whose declared map is known.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiscoverRef {
    /// Name.
    pub name: String,
    /// Slice.
    pub slice: Slice,
    /// Source files (ranges allowed).
    pub sources: Vec<String>,
    /// Levels asked about; the answer is `OwnershipMap::declared` at them.
    pub levels: Vec<String>,
}

/// A scorer whose kind and human battery are known.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ProbesRef {
    /// Name.
    pub name: String,
    /// Slice.
    pub slice: Slice,
    /// Source files.
    pub sources: Vec<String>,
    /// The probe family the battery is written for.
    pub family: ProbeFamily,
    /// The scorer's kind.
    pub kind: ScorerKind,
    /// The human battery (rubric keys).
    pub battery: Vec<String>,
}

/// A card to narrate.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NarrateRef {
    /// Name.
    pub name: String,
    /// Slice.
    pub slice: Slice,
    /// An audit document (audit.json) under the root.
    #[serde(default)]
    pub audit: Option<String>,
    /// Or: the key-free self-audit over this many seeds, computed in-process.
    #[serde(default)]
    pub self_audit_seeds: Option<u64>,
    /// Bound of the facts sent.
    #[serde(default)]
    pub max_fact_bytes: Option<usize>,
}

impl References {
    /// The shipped references.
    pub fn shipped() -> Result<References, Error> {
        let r: References = toml::from_str(REFERENCES)
            .map_err(|e| Error::Input(format!("data/references.toml: {e}")))?;
        for p in &r.probes {
            if let Some(missing) = p.battery.iter().find(|b| !r.rubric.contains_key(*b)) {
                return Err(Error::Input(format!(
                    "data/references.toml: {} names `{missing}`, which has no rubric keywords",
                    p.name
                )));
            }
        }
        Ok(r)
    }
}

/// How to run the eval.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Seeded runs per reference (seeds 0..runs).
    pub runs: u64,
    /// Which references.
    pub slice: Slice,
    /// Layers to run (`discover`, `probes`, `narrate`); empty = all.
    pub layers: Vec<String>,
    /// The repository root the sources are read under.
    pub root: std::path::PathBuf,
    /// Bound of the source of one request.
    pub max_source_bytes: u64,
}

/// One discovery run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct DiscoverRun {
    /// Request seed.
    pub seed: u64,
    /// Decisions classified as declared.
    pub correct: usize,
    /// Decisions in the reference.
    pub of: usize,
    /// Decisions classified otherwise (or not answered), with the proposal's owner.
    pub misses: Vec<String>,
    /// Citations that do not exist.
    pub bad_citations: usize,
    /// Why the run has no proposal (scored 0).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One probe-design run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbesRun {
    /// Request seed.
    pub seed: u64,
    /// The predicted kind (`None` without a proposal).
    pub kind: Option<ScorerKind>,
    /// Whether it is the reference's kind.
    pub kind_right: bool,
    /// Human probes reproduced.
    pub covered: Vec<String>,
    /// Of the human battery's size.
    pub of: usize,
    /// Proposed probes matching no human probe: probes the humans lacked (or noise; a
    /// person reads them in the recording).
    pub beyond: Vec<String>,
    /// Proposed probes a family builds.
    pub runnable: usize,
    /// Why the run has no proposal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// One narration run.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct NarrateRun {
    /// Request seed.
    pub seed: u64,
    /// The guard accepted every figure.
    pub passed: bool,
    /// Figures checked.
    pub checked: usize,
    /// Of which checked at their tagged path.
    pub tagged: usize,
    /// Figures rejected.
    pub violations: usize,
    /// Why the run has no narration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// A layer's result on one reference.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RefResult<R> {
    /// The reference.
    pub reference: String,
    /// Its score's denominator (decisions, battery size, 1 for narration).
    pub of: usize,
    /// Mean score over the runs.
    pub mean: f64,
    /// The worst run's score.
    pub worst: usize,
    /// The runs.
    pub runs: Vec<R>,
}

/// A reference left out, and why.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skipped {
    /// The reference.
    pub reference: String,
    /// Why.
    pub why: String,
}

/// What `assist eval` writes (`eval.json`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct EvalReport {
    /// `provider:model`.
    pub model: String,
    /// Seeded runs per reference.
    pub runs: u64,
    /// The slice.
    pub slice: Slice,
    /// Discovery: decisions right per run.
    pub discover: Vec<RefResult<DiscoverRun>>,
    /// Probe design: human probes reproduced per run (and the kind, per run).
    pub probes: Vec<RefResult<ProbesRun>>,
    /// Probe design: runs whose kind is right, per reference.
    pub kind_right: Vec<(String, usize)>,
    /// Narration: 1 when the guard passed, per run.
    pub narrate: Vec<RefResult<NarrateRun>>,
    /// References not evaluated.
    pub skipped: Vec<Skipped>,
}

/// `${VAR}` from the environment; `Err` names the unset variable.
fn expand(spec: &str) -> Result<String, String> {
    match spec.strip_prefix("${").and_then(|s| s.split_once('}')) {
        Some((var, rest)) => match std::env::var(var) {
            Ok(v) if !v.is_empty() => Ok(format!("{v}{rest}")),
            _ => Err(format!(
                "{var} is not set (it names a source that is not in the repository)"
            )),
        },
        None => Ok(spec.to_string()),
    }
}

fn sources_of(specs: &[String], root: &Path) -> Result<Vec<String>, String> {
    specs
        .iter()
        .map(|s| {
            let s = expand(s)?;
            Ok(if Path::new(&s).is_absolute() {
                s
            } else {
                root.join(&s).display().to_string()
            })
        })
        .collect()
}

fn summarise<R>(
    reference: &str,
    of: usize,
    runs: Vec<R>,
    score: impl Fn(&R) -> usize,
) -> RefResult<R> {
    let scores: Vec<usize> = runs.iter().map(&score).collect();
    let mean = if scores.is_empty() {
        0.0
    } else {
        scores.iter().sum::<usize>() as f64 / scores.len() as f64
    };
    RefResult {
        reference: reference.to_string(),
        of,
        mean,
        worst: scores.iter().copied().min().unwrap_or(0),
        runs,
    }
}

fn wants(settings: &Settings, layer: &str) -> bool {
    settings.layers.is_empty() || settings.layers.iter().any(|l| l == layer)
}

fn level_of(name: &str) -> Option<Level> {
    Level::ALL.into_iter().find(|l| l.to_string() == name)
}

/// Runs the eval. Only a provider or replay failure stops it (the recording so far is kept by
/// the caller); an unusable answer is a run scored 0.
pub fn run(chat: &mut Chat, refs: &References, settings: &Settings) -> Result<EvalReport, Error> {
    let mut report = EvalReport {
        model: chat.model().to_string(),
        runs: settings.runs,
        slice: settings.slice,
        discover: Vec::new(),
        probes: Vec::new(),
        kind_right: Vec::new(),
        narrate: Vec::new(),
        skipped: Vec::new(),
    };
    let declared = OwnershipMap::declared();
    if wants(settings, "discover") {
        for r in refs.discover.iter().filter(|r| r.slice == settings.slice) {
            let loaded = sources_of(&r.sources, &settings.root).and_then(|s| {
                Source::load(&s, settings.max_source_bytes)
                    .map(|src| (s, src))
                    .map_err(|e| e.to_string())
            });
            let (names, source) = match loaded {
                Ok(x) => x,
                Err(why) => {
                    report.skipped.push(Skipped {
                        reference: r.name.clone(),
                        why,
                    });
                    continue;
                }
            };
            let ask = Ask {
                levels: r.levels.clone(),
                scored_level: r.levels.first().cloned().unwrap_or_default(),
                claimed: discover::standard_decisions(),
            };
            let mut truth = Vec::new();
            for l in &r.levels {
                let level = level_of(l).ok_or_else(|| {
                    Error::Input(format!(
                        "data/references.toml: {}: unknown level {l}",
                        r.name
                    ))
                })?;
                for (lv, d, o) in &declared.entries {
                    if *lv == level {
                        truth.push((l.clone(), decision_name(*d).to_string(), *o));
                    }
                }
            }
            let mut runs = Vec::new();
            for seed in 0..settings.runs {
                let purpose = format!("eval discover {} seed {seed}", r.name);
                let mut run = DiscoverRun {
                    seed,
                    correct: 0,
                    of: truth.len(),
                    misses: Vec::new(),
                    bad_citations: 0,
                    error: None,
                };
                match discover::discover(chat, &source, &names, &ask, &purpose, seed) {
                    Ok(p) => {
                        run.bad_citations = p.bad_citations();
                        for (l, d, o) in &truth {
                            let got = p
                                .entries
                                .iter()
                                .find(|e| &e.level == l && &e.decision == d)
                                .map(|e| e.owner);
                            if got == Some(*o) {
                                run.correct += 1;
                            } else {
                                run.misses.push(format!(
                                    "{l} {d}: proposed {}, declared {}",
                                    got.map_or("nothing", owner_name),
                                    owner_name(*o)
                                ));
                            }
                        }
                    }
                    Err(e @ (Error::Garbage { .. } | Error::Provider(_))) => {
                        run.error = Some(e.to_string())
                    }
                    Err(e) => return Err(e),
                }
                runs.push(run);
            }
            report
                .discover
                .push(summarise(&r.name, truth.len(), runs, |r| r.correct));
        }
    }
    if wants(settings, "probes") {
        for r in refs.probes.iter().filter(|r| r.slice == settings.slice) {
            let loaded = sources_of(&r.sources, &settings.root).and_then(|s| {
                Source::load(&s, settings.max_source_bytes)
                    .map(|src| (s, src))
                    .map_err(|e| e.to_string())
            });
            let (names, source) = match loaded {
                Ok(x) => x,
                Err(why) => {
                    report.skipped.push(Skipped {
                        reference: r.name.clone(),
                        why,
                    });
                    continue;
                }
            };
            let mut runs = Vec::new();
            for seed in 0..settings.runs {
                let purpose = format!("eval probes {} seed {seed}", r.name);
                let mut run = ProbesRun {
                    seed,
                    kind: None,
                    kind_right: false,
                    covered: Vec::new(),
                    of: r.battery.len(),
                    beyond: Vec::new(),
                    runnable: 0,
                    error: None,
                };
                match probes::design(chat, &source, &names, r.family, &purpose, seed) {
                    Ok(p) => {
                        run.kind = Some(p.scorer_kind);
                        run.kind_right = p.scorer_kind == r.kind;
                        run.runnable = p.runnable();
                        let texts: Vec<String> = p
                            .battery
                            .iter()
                            .map(|b| format!("{} {}", b.name, b.description).to_lowercase())
                            .collect();
                        let hits = |text: &str, human: &str| {
                            refs.rubric.get(human).is_some_and(|kw| {
                                kw.iter().any(|k| text.contains(&k.to_lowercase()))
                            })
                        };
                        for human in &r.battery {
                            if texts.iter().any(|t| hits(t, human)) {
                                run.covered.push(human.clone());
                            }
                        }
                        for (b, t) in p.battery.iter().zip(&texts) {
                            if !r.battery.iter().any(|h| hits(t, h)) {
                                run.beyond.push(b.name.clone());
                            }
                        }
                    }
                    Err(e @ (Error::Garbage { .. } | Error::Provider(_))) => {
                        run.error = Some(e.to_string())
                    }
                    Err(e) => return Err(e),
                }
                runs.push(run);
            }
            let right = runs.iter().filter(|r| r.kind_right).count();
            report.kind_right.push((r.name.clone(), right));
            report
                .probes
                .push(summarise(&r.name, r.battery.len(), runs, |r| {
                    r.covered.len()
                }));
        }
    }
    if wants(settings, "narrate") {
        for r in refs.narrate.iter().filter(|r| r.slice == settings.slice) {
            let audit: Value = match audit_document(r, &settings.root) {
                Ok(v) => v,
                Err(why) => {
                    report.skipped.push(Skipped {
                        reference: r.name.clone(),
                        why,
                    });
                    continue;
                }
            };
            let mut runs = Vec::new();
            for seed in 0..settings.runs {
                let purpose = format!("eval narrate {} seed {seed}", r.name);
                let max = r.max_fact_bytes.unwrap_or(narrate::DEFAULT_MAX_FACT_BYTES);
                let run = match narrate::narrate(chat, &audit, max, &purpose, seed) {
                    Ok(n) => NarrateRun {
                        seed,
                        passed: n.passed(),
                        checked: n.guard.checked,
                        tagged: n.guard.tagged,
                        violations: n.guard.violations.len(),
                        error: None,
                    },
                    Err(e @ (Error::Garbage { .. } | Error::Provider(_))) => NarrateRun {
                        seed,
                        passed: false,
                        checked: 0,
                        tagged: 0,
                        violations: 0,
                        error: Some(e.to_string()),
                    },
                    Err(e) => return Err(e),
                };
                runs.push(run);
            }
            report
                .narrate
                .push(summarise(&r.name, 1, runs, |r| usize::from(r.passed)));
        }
    }
    Ok(report)
}

/// The document a narration reference names: a file under the root, or the self-audit.
fn audit_document(r: &NarrateRef, root: &Path) -> Result<Value, String> {
    if let Some(seeds) = r.self_audit_seeds {
        let config = benchaudit_audit::AuditConfig::key_free(seeds, 2);
        let options = benchaudit_audit::TargetOptions::default();
        return benchaudit_audit::audit_all(&config, &[], &options)
            .map(|a| a.document())
            .map_err(|e| format!("the self-audit failed: {e}"));
    }
    let Some(rel) = &r.audit else {
        return Err("names neither `audit` nor `self_audit_seeds`".into());
    };
    let path = root.join(rel);
    let text =
        benchaudit_runs::files::read_text_bounded(&path, benchaudit_runs::files::limits::GUARD)
            .map_err(|e| e.to_string())?;
    serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

fn owner_name(o: benchaudit_agents::Owner) -> &'static str {
    match o {
        benchaudit_agents::Owner::Harness => "harness",
        benchaudit_agents::Owner::Model => "model",
    }
}

impl EvalReport {
    /// The terminal summary: per layer and reference, the mean, the worst run and the runs.
    pub fn text(&self) -> String {
        let mut out = format!(
            "assist eval of {} ({} run{} per reference, {} slice)\n",
            self.model,
            self.runs,
            if self.runs == 1 { "" } else { "s" },
            match self.slice {
                Slice::Full => "full",
                Slice::Small => "small",
            }
        );
        for r in &self.discover {
            let errors = r.runs.iter().filter(|x| x.error.is_some()).count();
            out.push_str(&format!(
                "  discover  {}: decisions right, mean {:.2} of {}, worst run {} of {}{}\n",
                r.reference,
                r.mean,
                r.of,
                r.worst,
                r.of,
                unusable(errors)
            ));
        }
        for r in &self.probes {
            let errors = r.runs.iter().filter(|x| x.error.is_some()).count();
            let right = r.runs.iter().filter(|x| x.kind_right).count();
            let beyond: usize = r.runs.iter().map(|x| x.beyond.len()).sum();
            out.push_str(&format!(
                "  probes    {}: kind right in {right} of {} runs; human probes reproduced, mean {:.2} of {}, worst run {} of {}; {beyond} proposed probes beyond the human battery{}\n",
                r.reference,
                r.runs.len(),
                r.mean,
                r.of,
                r.worst,
                r.of,
                unusable(errors)
            ));
        }
        for r in &self.narrate {
            let errors = r.runs.iter().filter(|x| x.error.is_some()).count();
            let passed = r.runs.iter().filter(|x| x.passed).count();
            out.push_str(&format!(
                "  narrate   {}: the number guard passed {passed} of {} narrations{}\n",
                r.reference,
                r.runs.len(),
                unusable(errors)
            ));
        }
        for s in &self.skipped {
            out.push_str(&format!(
                "  not evaluated: {}: {}\n",
                s.reference,
                excerpt(&s.why)
            ));
        }
        out
    }
}

fn unusable(errors: usize) -> String {
    if errors == 0 {
        String::new()
    } else {
        format!(
            " ({errors} run{} without a usable answer)",
            if errors == 1 { "" } else { "s" }
        )
    }
}
