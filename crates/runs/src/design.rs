//! The stress designs of SPEC §5 as data: matched-mean A/B, quota and squeeze (with a slack
//! sweep) and constant-dose degradation — which arms a design runs, and what a run of it
//! records in its manifest. The analysis of a finished run is in [`crate::analysis`].

use benchaudit_agents::{Level, RunOptions};
use benchaudit_comtrade::{EpisodeOptions, StressConfig, TaskSpec};
use benchaudit_stress::{DEGRADATION_DOSES, QuotaConfig, Squeeze};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Value, json};

use crate::error::{Error, Result};
use crate::plan::Plan;
use crate::player::Player;

/// Intensity at which the squeeze fires and totals rows start (paper A.11: 0.70).
pub const SQUEEZE_AT: f64 = 0.7;

/// The calibration seed set when none is declared, as `--calibration-seeds` writes it: the
/// matched constant level is the escalating arm's realised mean over these seeds.
pub const DEFAULT_CALIBRATION: &str = "0..19";

/// The seeds of [`DEFAULT_CALIBRATION`].
pub fn default_calibration() -> Vec<u64> {
    (0..=19).collect()
}

/// The kind of design.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DesignKind {
    /// Escalating ramp vs constant at its realised mean; free retries.
    MatchedMean,
    /// As matched-mean, under an enforced quota with a squeeze only the escalating arm crosses.
    Quota,
    /// Constant intensity at doses 0, 0.25, 0.5, 0.75, 1.
    Degradation,
}

impl DesignKind {
    /// The design's name as written on the command line and in a pre-registration.
    pub fn name(self) -> &'static str {
        match self {
            DesignKind::MatchedMean => "matched-mean",
            DesignKind::Quota => "quota",
            DesignKind::Degradation => "degradation",
        }
    }
}

/// The quota an A/B pair of arms runs under.
///
/// Recorded in manifests as the pair `[quota, squeeze]` (`[null, null]` = free retries).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotaSetting {
    /// Enforced request quota; `None` = free retries.
    pub quota: Option<u32>,
    /// Requests the squeeze removes; `None` = no squeeze.
    pub squeeze: Option<u32>,
}

impl Serialize for QuotaSetting {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        (self.quota, self.squeeze).serialize(s)
    }
}

impl QuotaSetting {
    /// The engine's quota configuration (the squeeze fires at [`SQUEEZE_AT`]).
    pub fn config(self) -> Option<QuotaConfig> {
        quota_config(self.quota, self.squeeze)
    }

    /// Post-squeeze slack on a task of `pages` pages: `quota − squeeze − pages`.
    pub fn slack(self, pages: u32) -> Option<i64> {
        self.quota
            .map(|q| i64::from(q) - i64::from(self.squeeze.unwrap_or(0)) - i64::from(pages))
    }
}

fn quota_config(quota: Option<u32>, squeeze: Option<u32>) -> Option<QuotaConfig> {
    quota.map(|limit| QuotaConfig {
        limit,
        squeeze: squeeze.map(|by| Squeeze { at: SQUEEZE_AT, by }),
    })
}

/// The option sets of the A/B pairs: per setting the escalating arm, then the constant one.
fn ab_options(
    episode: EpisodeOptions,
    escalating: StressConfig,
    matched_level: f64,
    settings: &[QuotaSetting],
) -> Result<Vec<RunOptions>> {
    let constant = StressConfig::constant(matched_level).map_err(stress)?;
    let mut options = Vec::new();
    for s in settings {
        for side in [escalating, constant] {
            options.push(RunOptions {
                episode,
                stress: Some(side.with_quota(s.config())),
                ..RunOptions::default()
            });
        }
    }
    Ok(options)
}

/// The quota setting of one A/B arm of a design run: what `report` labels a sweep's arm by
/// (quota and post-squeeze slack), instead of its options hash.
///
/// Exists so `ab` and `report` name the same arm the same way.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct ArmSetting {
    /// Enforced request quota; `None` = free retries.
    pub quota: Option<u32>,
    /// Requests the squeeze removes; `None` = no squeeze.
    pub squeeze: Option<u32>,
    /// Post-squeeze slack (`quota − squeeze − pages`).
    pub slack: Option<i64>,
}

impl ArmSetting {
    /// `quota 8, slack 0`, or `free retries`.
    pub fn label(&self) -> String {
        match (self.quota, self.slack) {
            (Some(q), Some(s)) => format!("quota {q}, slack {s}"),
            (Some(q), None) => format!("quota {q}"),
            (None, _) => "free retries".to_string(),
        }
    }
}

/// The arms of the A/B design a run directory's manifest `config` records (as
/// [`Design::config`] writes it), by options hash: each arm's [`ArmSetting`]. `None` when the
/// configuration is not an A/B design run by `benchaudit ab` (a plain run, a degradation
/// design) or cannot be read back exactly (the recomputed constant level differs from the
/// recorded one).
///
/// The arms are recomputed from the declared calibration seeds, the recorded quota settings
/// and the episode options, exactly as `ab` computed them, so no float is read back.
pub fn arm_settings(config: &Value) -> Option<Vec<(String, ArmSetting)>> {
    if config.get("command")?.as_str()? != "ab" {
        return None;
    }
    let kind: DesignKind = serde_json::from_value(config.get("design")?.clone()).ok()?;
    if kind == DesignKind::Degradation {
        return None;
    }
    let task = benchaudit_comtrade::task(config.get("task")?.as_str()?)?;
    let calibration: Vec<u64> =
        serde_json::from_value(config.get("calibration_seeds")?.clone()).ok()?;
    let pairs: Vec<(Option<u32>, Option<u32>)> =
        serde_json::from_value(config.get("settings")?.clone()).ok()?;
    let episode: EpisodeOptions = serde_json::from_value(config.get("episode")?.clone()).ok()?;
    let recorded = config.get("matched_level")?.as_f64()?;
    let matched_level = StressConfig::matched_level(task, &calibration).ok()?;
    // The recorded level went through JSON; the recomputed one is exact.
    if (matched_level - recorded).abs() > 1e-12 {
        return None;
    }
    let settings: Vec<QuotaSetting> = pairs
        .into_iter()
        .map(|(quota, squeeze)| QuotaSetting { quota, squeeze })
        .collect();
    let escalating = StressConfig::escalating(task).ok()?;
    let options = ab_options(episode, escalating, matched_level, &settings).ok()?;
    let pages = task.total_pages();
    Some(
        options
            .iter()
            .enumerate()
            .filter_map(|(i, o)| {
                let s = settings.get(i / 2)?;
                Some((
                    o.hash(),
                    ArmSetting {
                        quota: s.quota,
                        squeeze: s.squeeze,
                        slack: s.slack(pages),
                    },
                ))
            })
            .collect(),
    )
}

/// A stress design on one task and level.
#[derive(Debug, Clone)]
pub struct Design {
    /// Which design.
    pub kind: DesignKind,
    /// The substrate task (T9_clean_ab by default).
    pub task: &'static TaskSpec,
    /// Scaffolding level: L1 or L2 (the model must own a decision).
    pub level: Level,
    /// Seeds; the two arms of a pair share a seed.
    pub seeds: Vec<u64>,
    /// The declared calibration seed set the matched constant level is computed on (never the
    /// seeds under test, so extending a run leaves the constant arm as it was).
    pub calibration: Vec<u64>,
    /// Enforced quota (quota design; optional for degradation).
    pub quota: Option<u32>,
    /// Requests removed by the squeeze (quota design).
    pub squeeze: u32,
    /// Post-squeeze slacks to sweep (quota = pages + squeeze + slack); empty = no sweep.
    pub slack_sweep: Vec<u32>,
    /// Interface and submission protocol of every episode.
    pub episode: EpisodeOptions,
}

/// The arms of a design, computed from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Arms {
    /// The constant arm's level: the escalating arm's realised mean intensity (always-retry
    /// simulation, free retries) on the calibration seeds.
    pub matched_level: f64,
    /// The quota settings of the A/B pairs (empty for degradation).
    pub settings: Vec<QuotaSetting>,
    /// The option sets to run: per setting escalating then constant; for degradation one per
    /// dose of [`DEGRADATION_DOSES`].
    pub options: Vec<RunOptions>,
}

fn stress(e: benchaudit_stress::StressError) -> Error {
    Error::Invalid(format!("stress engine: {e}"))
}

impl Design {
    /// Rejects a design that cannot measure anything (L0: the harness owns every decision).
    pub fn validate(&self) -> Result<()> {
        if self.level == Level::L0 {
            return Err(Error::Invalid(
                "the A/B designs need a model-owned decision: use --level L1 or L2".into(),
            ));
        }
        Ok(())
    }

    /// Refuses a metric this design's episodes do not record: coverage is an L0/L1 outcome.
    ///
    /// # Errors
    /// [`Error::Invalid`] for coverage at L2.
    pub fn check_metric(&self, metric: crate::Metric) -> Result<()> {
        if metric == crate::Metric::Coverage && self.level == Level::L2 {
            return Err(Error::Invalid(
                "coverage is an L0/L1 outcome; use --metric f1 or judge at L2".into(),
            ));
        }
        Ok(())
    }

    /// The quota settings of the A/B pairs: free retries (matched-mean), one quota (quota;
    /// default pages + squeeze, slack 0) or one per swept slack; none for degradation.
    pub fn settings(&self) -> Vec<QuotaSetting> {
        let pages = self.task.total_pages();
        let squeeze = Some(self.squeeze);
        match self.kind {
            DesignKind::MatchedMean => vec![QuotaSetting {
                quota: None,
                squeeze: None,
            }],
            DesignKind::Quota if self.slack_sweep.is_empty() => vec![QuotaSetting {
                quota: Some(self.quota.unwrap_or(pages.saturating_add(self.squeeze))),
                squeeze,
            }],
            DesignKind::Quota => self
                .slack_sweep
                .iter()
                .map(|slack| QuotaSetting {
                    quota: Some(pages.saturating_add(self.squeeze).saturating_add(*slack)),
                    squeeze,
                })
                .collect(),
            DesignKind::Degradation => Vec::new(),
        }
    }

    /// Computes the arms: the matched constant level from the escalating arm on the declared
    /// calibration seeds (not the seeds under test), then the option sets.
    pub fn arms(&self) -> Result<Arms> {
        if self.calibration.is_empty() {
            return Err(Error::Invalid(
                "the calibration seed set is empty: declare one, e.g. --calibration-seeds 0..19"
                    .into(),
            ));
        }
        let matched_level =
            StressConfig::matched_level(self.task, &self.calibration).map_err(stress)?;
        let escalating = StressConfig::escalating(self.task).map_err(stress)?;
        let settings = self.settings();
        let mut options = Vec::new();
        let arm = |stress: StressConfig, quota: Option<QuotaConfig>| RunOptions {
            episode: self.episode,
            stress: Some(stress.with_quota(quota)),
            ..RunOptions::default()
        };
        if self.kind == DesignKind::Degradation {
            for dose in DEGRADATION_DOSES {
                let constant = StressConfig::constant(dose).map_err(stress)?;
                options.push(arm(constant, quota_config(self.quota, None)));
            }
        } else {
            options = ab_options(self.episode, escalating, matched_level, &settings)?;
        }
        Ok(Arms {
            matched_level,
            settings,
            options,
        })
    }

    /// The plan of the design's episodes for `players`.
    pub fn plan(&self, players: Vec<Player>, arms: &Arms) -> Plan {
        Plan {
            players,
            levels: vec![self.level],
            tasks: vec![self.task],
            seeds: self.seeds.clone(),
            arms: arms.options.clone(),
            tool_text: benchaudit_comtrade::ToolText::default(),
            transcripts: crate::ledger::Transcripts::Keep,
        }
    }

    /// The configuration a run of the design records in its manifest (a resume must present
    /// the same).
    pub fn config(&self, plan: &Plan, arms: &Arms) -> Value {
        json!({
            "command": "ab",
            "design": self.kind,
            "task": self.task.task_id,
            "level": self.level,
            "policies": plan.player_names(),
            "seeds": self.seeds,
            "calibration_seeds": self.calibration,
            "settings": arms.settings,
            "quota": self.quota,
            "matched_level": arms.matched_level,
            "episode": self.episode,
            "tool_text": plan.tool_text,
        })
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use benchaudit_agents::RuleKind;

    fn design(kind: DesignKind, slack_sweep: Vec<u32>) -> Design {
        Design {
            kind,
            task: benchaudit_comtrade::task("T9_clean_ab").unwrap(),
            level: Level::L1,
            seeds: (0..4).collect(),
            calibration: default_calibration(),
            quota: None,
            squeeze: 3,
            slack_sweep,
            episode: EpisodeOptions::default(),
        }
    }

    #[test]
    fn settings_and_arms_follow_the_design() {
        // T9 has 5 pages: the quota design's default quota leaves slack 0.
        let q = design(DesignKind::Quota, Vec::new());
        let s = q.settings();
        assert_eq!(
            (s[0].quota, s[0].squeeze, s[0].slack(5)),
            (Some(8), Some(3), Some(0))
        );
        let sweep = design(DesignKind::Quota, vec![0, 2]).settings();
        assert_eq!(
            sweep.iter().map(|s| s.quota).collect::<Vec<_>>(),
            [Some(8), Some(10)]
        );
        assert_eq!(
            design(DesignKind::MatchedMean, Vec::new()).settings()[0].quota,
            None
        );
        let arms = q.arms().unwrap();
        assert_eq!(arms.options.len(), 2, "escalating, then constant");
        let deg = design(DesignKind::Degradation, Vec::new()).arms().unwrap();
        assert!(deg.settings.is_empty());
        assert_eq!(deg.options.len(), DEGRADATION_DOSES.len());
        assert!(design(DesignKind::Quota, Vec::new()).validate().is_ok());
        let l0 = Design {
            level: Level::L0,
            ..design(DesignKind::Quota, Vec::new())
        };
        assert!(matches!(l0.validate(), Err(Error::Invalid(_))));
    }

    /// The manifest configuration is what a resume compares: its shape must not drift (run
    /// directories written before must still resume; `tool_text`, added by issue 11, is read
    /// as `clarified` where a recorded configuration lacks it).
    #[test]
    fn the_manifest_configuration_keeps_its_shape() {
        let d = design(DesignKind::Quota, Vec::new());
        let arms = d.arms().unwrap();
        let plan = d.plan(vec![Player::rule(RuleKind::AlwaysRetry)], &arms);
        let config = d.config(&plan, &arms);
        let keys: Vec<&str> = config
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .collect();
        assert_eq!(
            keys,
            [
                "calibration_seeds",
                "command",
                "design",
                "episode",
                "level",
                "matched_level",
                "policies",
                "quota",
                "seeds",
                "settings",
                "task",
                "tool_text"
            ]
        );
        assert_eq!(config["settings"], json!([[8, 3]]));
        assert_eq!(config["design"], "quota");
        assert_eq!(config["policies"], json!(["always-retry"]));
        assert_eq!(
            design(DesignKind::MatchedMean, Vec::new()).settings()[0],
            QuotaSetting {
                quota: None,
                squeeze: None
            }
        );
        assert_eq!(
            serde_json::to_value(QuotaSetting {
                quota: None,
                squeeze: None
            })
            .unwrap(),
            json!([null, null])
        );
    }

    #[test]
    fn arm_settings_read_back_every_arm_of_a_sweep_by_its_hash() {
        let mut d = design(DesignKind::Quota, vec![0, 2, 5]);
        d.episode.interface = benchaudit_comtrade::InterfaceProfile::Strict;
        let arms = d.arms().unwrap();
        let plan = d.plan(vec![Player::rule(RuleKind::AlwaysRetry)], &arms);
        // What the manifest holds after a JSON round trip.
        let config: Value =
            serde_json::from_str(&serde_json::to_string(&d.config(&plan, &arms)).unwrap()).unwrap();
        let read = arm_settings(&config).unwrap();
        assert_eq!(read.len(), arms.options.len());
        for ((hash, setting), (i, options)) in read.iter().zip(arms.options.iter().enumerate()) {
            assert_eq!(*hash, options.hash());
            let s = arms.settings[i / 2];
            assert_eq!((setting.quota, setting.squeeze), (s.quota, s.squeeze));
            assert_eq!(setting.slack, s.slack(5));
        }
        assert_eq!(read[0].1.label(), "quota 8, slack 0");
        assert_eq!(read[5].1.label(), "quota 13, slack 5");
        // A matched-mean design: one free-retries pair.
        let m = design(DesignKind::MatchedMean, Vec::new());
        let arms = m.arms().unwrap();
        let plan = m.plan(vec![Player::rule(RuleKind::AlwaysRetry)], &arms);
        let read = arm_settings(&m.config(&plan, &arms)).unwrap();
        assert_eq!(read.len(), 2);
        assert_eq!(read[0].1.label(), "free retries");
        // Not an A/B design, or a recorded level that is not the recomputed one: nothing.
        let g = design(DesignKind::Degradation, Vec::new());
        let arms = g.arms().unwrap();
        let plan = g.plan(vec![Player::rule(RuleKind::AlwaysRetry)], &arms);
        assert!(arm_settings(&g.config(&plan, &arms)).is_none());
        let mut tampered = config.clone();
        tampered["matched_level"] = json!(0.5);
        assert!(arm_settings(&tampered).is_none());
        assert!(arm_settings(&json!({"command": "run"})).is_none());
    }

    #[test]
    fn one_default_metric_per_level_set() {
        use crate::Metric;
        assert_eq!(Metric::default_for_levels(&[Level::L1]), Metric::Coverage);
        assert_eq!(
            Metric::default_for_levels(&[Level::L0, Level::L1]),
            Metric::Coverage
        );
        assert_eq!(Metric::default_for_levels(&[Level::L2]), Metric::F1);
        assert_eq!(
            Metric::default_for_levels(&[Level::L1, Level::L2]),
            Metric::F1
        );
        assert_eq!(Metric::default_for(Level::L1), Metric::Coverage);
    }
}
