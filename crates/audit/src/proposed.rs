//! A forgery battery given as data: the `probes.toml` that `benchaudit assist probes` proposes
//! from a scorer's source (or one a person writes in its format), run as a separate, explicit
//! step with `benchaudit audit --target T --battery probes.toml`.
//!
//! Why a step of its own: a proposal never scores (paper §4.5), but the forgeries it names are
//! ones a probe family builds, so running them gives ordinary measured cells. Only the
//! battery's forgeries run, with the family's anchor (the correct output every cell is read
//! against). One rule keeps a proposal from raising a claim: a battery that leaves out some of
//! the family's forgeries can fail a scorer (a forgery that scores as high as the correct
//! output is a finding whoever proposed it) but cannot pass it, so a criterion-sensitivity
//! pass on a partial battery is shown as not probed, naming the forgeries left out. And, as for
//! a proposed ownership map, a file still marked `proposed` is refused: a person reads the
//! battery and renames `proposed` to `confirmed_from` before its cells can reach a card.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::battery::Quality;
use crate::card::{Card, Cell, Status};
use crate::external::ProbeFamily;
use crate::probes::ProbeKind;

/// A battery read from a file, checked against its probe family.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedBattery {
    /// The file's name (no folders: it is shown on the card).
    pub file: String,
    /// The proposal a person confirmed it from (`confirmed_from`), when the file names one.
    pub id: Option<String>,
    /// The probe family it is written for.
    pub family: ProbeFamily,
    /// The forgeries to run, by the family's names, in the file's order, each once.
    pub forgeries: Vec<String>,
    /// Probes the file describes without a forgery the family builds: not run, listed.
    pub described: Vec<String>,
}

/// What a battery ran, as audit.json records it beside the family's cells.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BatteryRun {
    /// The file's name.
    pub file: String,
    /// The proposal's id, when the file carries one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
    /// The forgeries run, besides the anchor.
    pub run: Vec<String>,
    /// The family's forgeries the battery left out (a criterion pass is then not probed).
    pub left_out: Vec<String>,
    /// Probes described only (no forgery the family builds).
    pub described: Vec<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    proposed: Option<String>,
    #[serde(default)]
    confirmed_from: Option<String>,
    /// The proposal's predicted kind: read and not used (the declaration is the manifest's).
    #[serde(default)]
    #[allow(dead_code)]
    scorer_kind: Option<String>,
    probes: ProbeFamily,
    #[serde(default)]
    battery: Vec<Entry>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Entry {
    name: String,
    #[serde(default)]
    forgery: Option<String>,
    #[serde(default)]
    #[allow(dead_code)]
    description: Option<String>,
}

impl ProbeFamily {
    /// The forgeries the family builds, by their stable names, in battery order (the
    /// trajectory family's are every benchmark's; a benchmark plays those it has).
    pub fn forgeries(self) -> Vec<&'static str> {
        match self {
            ProbeFamily::Records => ProbeKind::ALL.iter().map(|k| k.name()).collect(),
            ProbeFamily::Calls => crate::calls::forge::Forgery::ALL
                .iter()
                .map(|f| f.name())
                .collect(),
            ProbeFamily::Answers => crate::answers::forge::Forgery::ALL
                .iter()
                .map(|f| f.name())
                .collect(),
            ProbeFamily::Trajectories => crate::trajectories::table::Forgery::ALL
                .iter()
                .map(|f| f.name())
                .collect(),
        }
    }
}

impl ProposedBattery {
    /// Reads a battery file (bounded: a small file).
    ///
    /// # Errors
    /// The file cannot be read, is not a battery, names a forgery its family does not build,
    /// or has no forgery to run.
    pub fn read(path: &Path) -> Result<Self, String> {
        let text =
            benchaudit_runs::files::read_text_bounded(path, benchaudit_runs::files::limits::SMALL)
                .map_err(|e| format!("--battery {}: {e}", path.display()))?;
        let file = path.file_name().map_or_else(
            || path.display().to_string(),
            |n| n.to_string_lossy().into(),
        );
        Self::parse(&text, &file).map_err(|e| format!("--battery {}: {e}", path.display()))
    }

    /// Parses a battery file's text.
    ///
    /// # Errors
    /// As [`ProposedBattery::read`], without the reading.
    pub fn parse(text: &str, file: &str) -> Result<Self, String> {
        let parsed: File = toml::from_str(text).map_err(|e| e.message().to_string())?;
        if let Some(id) = &parsed.proposed {
            return Err(format!(
                "a proposal (proposed = \"{id}\"), not a battery a person has read: check its probes against the scorer, then rename `proposed` to `confirmed_from` to confirm it"
            ));
        }
        let known = parsed.probes.forgeries();
        let mut forgeries: Vec<String> = Vec::new();
        let mut described = Vec::new();
        for entry in &parsed.battery {
            match entry.forgery.as_deref().map(str::trim) {
                Some(f) if known.contains(&f) => {
                    if !forgeries.iter().any(|g| g == f) {
                        forgeries.push(f.to_string());
                    }
                }
                Some(f) if !f.is_empty() => {
                    return Err(format!(
                        "probe `{}`: `{f}` is not a forgery of the {} family (it builds {})",
                        entry.name,
                        parsed.probes.name(),
                        known.join(", ")
                    ));
                }
                _ => described.push(entry.name.clone()),
            }
        }
        if forgeries.is_empty() {
            return Err(format!(
                "no probe names a forgery of the {} family, so there is nothing to run",
                parsed.probes.name()
            ));
        }
        Ok(ProposedBattery {
            file: file.to_string(),
            id: parsed.confirmed_from,
            family: parsed.probes,
            forgeries,
            described,
        })
    }

    /// Whether the battery runs this forgery (the anchor always runs).
    pub fn runs(&self, forgery: &str) -> bool {
        self.forgeries.iter().any(|f| f == forgery)
    }

    /// What it runs against `family`, whose forgeries are `all` (`anchors` among them are
    /// run whatever the battery says and are not counted as left out).
    pub fn run_against(&self, all: &[&str], anchors: &[&str]) -> BatteryRun {
        BatteryRun {
            file: self.file.clone(),
            id: self.id.clone(),
            run: self.forgeries.clone(),
            left_out: all
                .iter()
                .filter(|f| !anchors.contains(f) && !self.runs(f))
                .map(|f| (*f).to_string())
                .collect(),
            described: self.described.clone(),
        }
    }
}

/// Whether a family builds `forgery` of `quality` under a battery's selection (`None`: every
/// forgery); the anchor always runs.
pub fn runs(selected: Option<&[String]>, forgery: &str, quality: Quality) -> bool {
    quality == Quality::Anchor || selected.is_none_or(|s| s.iter().any(|f| f == forgery))
}

impl BatteryRun {
    /// Where the battery came from, in words: "the battery of probes.toml (proposal ID)".
    pub fn source(&self) -> String {
        match &self.id {
            Some(id) => format!(
                "the battery of {} (confirmed from the proposal {id})",
                self.file
            ),
            None => format!("the battery of {}", self.file),
        }
    }

    /// The card as this battery licenses it: a criterion pass on a partial battery becomes
    /// not probed (the rest of the card is recomputed by the lattice); a fail stands.
    pub fn cap(&self, card: Card) -> Card {
        if self.left_out.is_empty() || card.criterion_sensitivity.status != Status::Pass {
            return card;
        }
        let declared = card
            .scorer_kind_override
            .as_ref()
            .map_or(card.scorer_kind, |o| o.declared);
        let cell = Cell::not_probed(format!(
            "every forgery of {} was separated ({}), but it leaves out {}: a partial battery can fail a scorer, not pass it",
            self.source(),
            card.criterion_sensitivity.evidence.trim_end_matches('.'),
            self.left_out.join(", ")
        ));
        let mut capped = Card::new(card.target, declared, cell, card.ownership, card.replay);
        if let Some(raise) = &mut capped.to_raise_the_claim {
            raise.push_str(
                "; the battery given as data is partial: the forgeries it left out must run too (the audit without --battery runs them all)",
            );
        }
        capped.claim_scope = card.claim_scope;
        capped.non_degeneracy = card.non_degeneracy;
        capped.interface = card.interface;
        capped
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use crate::target::ScorerKind;
    use crate::{Claim, card::Card};

    const PROPOSAL: &str = r#"
# Proposed by `benchaudit assist probes` (scripted:model) from: judge.py
confirmed_from = "assist-probes-0a1b2c"
scorer_kind = "shape"
probes = "records"

[[battery]]
name = "made_up_rows"
forgery = "fabricated"
description = "rows that look right and are not"

[[battery]]
name = "again"
forgery = "fabricated"
description = "the same forgery twice"

[[battery]]
name = "clock_skew"
description = "a probe the family lacks"
"#;

    #[test]
    fn a_proposal_reads_as_its_runnable_forgeries_and_lists_the_rest() {
        let b = ProposedBattery::parse(PROPOSAL, "probes.toml").unwrap();
        assert_eq!(b.id.as_deref(), Some("assist-probes-0a1b2c"));
        assert_eq!(b.family, ProbeFamily::Records);
        assert_eq!(b.forgeries, ["fabricated"]);
        assert_eq!(b.described, ["clock_skew"]);
        let all = ProbeFamily::Records.forgeries();
        let run = b.run_against(&all, &["correct"]);
        assert_eq!(run.left_out.len(), all.len() - 2);
        assert!(!run.left_out.contains(&"correct".to_string()));
        assert!(!run.left_out.contains(&"fabricated".to_string()));
    }

    #[test]
    fn unknown_forgeries_unknown_fields_and_empty_batteries_are_refused() {
        let typo = PROPOSAL.replace(
            "\"fabricated\"\ndescription = \"rows",
            "\"fabricate\"\ndescription = \"rows",
        );
        let e = ProposedBattery::parse(&typo, "p.toml").unwrap_err();
        assert!(
            e.contains("`fabricate` is not a forgery of the records family"),
            "{e}"
        );
        let e = ProposedBattery::parse("probes = \"records\"\nextra = 1\n", "p.toml").unwrap_err();
        assert!(e.contains("extra"), "{e}");
        let unconfirmed = PROPOSAL.replace("confirmed_from = ", "proposed = ");
        let e = ProposedBattery::parse(&unconfirmed, "p.toml").unwrap_err();
        assert!(e.contains("rename `proposed` to `confirmed_from`"), "{e}");
        let e = ProposedBattery::parse("probes = \"calls\"\n[[battery]]\nname = \"x\"\n", "p.toml")
            .unwrap_err();
        assert!(e.contains("nothing to run"), "{e}");
    }

    fn card(criterion: Status) -> Card {
        let cell = |status| Cell {
            status,
            evidence: "measured.".into(),
        };
        Card::new(
            "t".into(),
            ScorerKind::Outcome,
            cell(criterion),
            cell(Status::Pass),
            cell(Status::Pass),
        )
    }

    #[test]
    fn a_partial_battery_fails_a_scorer_but_cannot_pass_it() {
        let b = ProposedBattery::parse(PROPOSAL, "probes.toml").unwrap();
        let partial = b.run_against(&ProbeFamily::Records.forgeries(), &["correct"]);
        let pass = card(Status::Pass);
        assert_eq!(pass.licensed_claim, Claim::ModelCapability);
        let capped = partial.cap(pass);
        assert_eq!(capped.criterion_sensitivity.status, Status::NotProbed);
        assert_ne!(capped.licensed_claim, Claim::ModelCapability);
        assert!(
            capped
                .criterion_sensitivity
                .evidence
                .contains("leaves out empty")
        );
        assert!(
            capped
                .criterion_sensitivity
                .evidence
                .contains("assist-probes-0a1b2c")
        );
        assert!(
            capped
                .to_raise_the_claim
                .unwrap()
                .contains("without --battery")
        );
        let fail = card(Status::Fail);
        assert_eq!(partial.cap(fail.clone()), fail);
        // Every forgery of the family: nothing left out, the pass stands.
        let whole = ProposedBattery {
            forgeries: ProbeFamily::Records
                .forgeries()
                .iter()
                .map(|f| (*f).to_string())
                .collect(),
            ..b
        }
        .run_against(&ProbeFamily::Records.forgeries(), &["correct"]);
        assert!(whole.left_out.is_empty());
        assert_eq!(whole.cap(card(Status::Pass)), card(Status::Pass));
    }
}
