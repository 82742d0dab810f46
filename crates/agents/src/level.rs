//! Scaffolding levels and the ownership map (SPEC §4.1): which execution-critical decision the
//! harness makes and which the model makes, at each level. The map is data so the audit can
//! compare it with what it measures.

use serde::{Deserialize, Serialize};

/// How much of the execution-critical work the harness does.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub enum Level {
    /// Production auto-everything: the model fills templated slots only.
    L0,
    /// Half-scaffold: the model decides retry or skip on faults.
    L1,
    /// Slim: the model owns every decision and drives the tools.
    L2,
}

impl Level {
    /// All levels, in order.
    pub const ALL: [Level; 3] = [Level::L0, Level::L1, Level::L2];

    /// Parses "L0" / "l0" / "0".
    pub fn parse(s: &str) -> Option<Level> {
        match s.trim().to_ascii_uppercase().as_str() {
            "L0" | "0" => Some(Level::L0),
            "L1" | "1" => Some(Level::L1),
            "L2" | "2" => Some(Level::L2),
            _ => None,
        }
    }
}

/// `L0`, `l1`, `2`… (a flag's value), or says which levels exist.
impl std::str::FromStr for Level {
    type Err = String;
    fn from_str(s: &str) -> Result<Level, String> {
        Level::parse(s).ok_or_else(|| format!("unknown level `{s}` (known: L0, L1, L2)"))
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Level::L0 => "L0",
            Level::L1 => "L1",
            Level::L2 => "L2",
        })
    }
}

/// An execution-critical decision the adversarial API targets.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Decision {
    /// Retry or skip on a transient fault.
    Retry,
    /// Remove duplicate records.
    Dedup,
    /// Drop totals rows.
    TotalsFilter,
    /// Next page, when to stop, re-fetch.
    Pagination,
    /// Re-emit the records and submit.
    Submission,
}

impl Decision {
    /// All decisions, in table order.
    pub const ALL: [Decision; 5] = [
        Decision::Retry,
        Decision::Dedup,
        Decision::TotalsFilter,
        Decision::Pagination,
        Decision::Submission,
    ];
}

/// Who makes a decision.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Owner {
    /// Fixed control logic in the harness.
    Harness,
    /// The model (or rule policy) under test.
    Model,
}

/// Decision → owner, per level.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OwnershipMap {
    /// One entry per (level, decision).
    pub entries: Vec<(Level, Decision, Owner)>,
}

impl OwnershipMap {
    /// The map the scaffolds of this crate declare (SPEC §4.1).
    pub fn declared() -> Self {
        let mut entries = Vec::new();
        for level in Level::ALL {
            for decision in Decision::ALL {
                let owner = match (level, decision) {
                    (Level::L0, _) => Owner::Harness,
                    (Level::L1, Decision::Retry) => Owner::Model,
                    (Level::L1, _) => Owner::Harness,
                    (Level::L2, _) => Owner::Model,
                };
                entries.push((level, decision, owner));
            }
        }
        OwnershipMap { entries }
    }

    /// The owner of `decision` at `level`, if the map says.
    pub fn owner(&self, level: Level, decision: Decision) -> Option<Owner> {
        self.entries
            .iter()
            .find(|(l, d, _)| *l == level && *d == decision)
            .map(|(_, _, o)| *o)
    }

    /// The decisions the model owns at `level`.
    pub fn model_owned(&self, level: Level) -> Vec<Decision> {
        self.entries
            .iter()
            .filter(|(l, _, o)| *l == level && *o == Owner::Model)
            .map(|(_, d, _)| *d)
            .collect()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_policies_parse_from_flags_or_say_what_exists() {
        assert_eq!("l2".parse::<Level>(), Ok(Level::L2));
        assert_eq!("0".parse::<Level>(), Ok(Level::L0));
        assert!(matches!("L3".parse::<Level>(), Err(e) if e.contains("L0, L1, L2")));
        assert_eq!(" no-dedup".parse(), Ok(crate::RuleKind::NoDedup));
        let e = "typo".parse::<crate::RuleKind>().unwrap_err();
        assert!(e.contains("`typo`") && e.contains("retry-literal"), "{e}");
    }

    #[test]
    fn declared_map_matches_the_spec_table() {
        let m = OwnershipMap::declared();
        assert!(m.model_owned(Level::L0).is_empty());
        assert_eq!(m.model_owned(Level::L1), vec![Decision::Retry]);
        assert_eq!(m.model_owned(Level::L2), Decision::ALL.to_vec());
        assert_eq!(m.entries.len(), 15);
        assert_eq!(Level::parse("l2"), Some(Level::L2));
        assert_eq!(Level::parse("L3"), None);
    }
}
