//! Scaffold discovery: a model reads a harness's source and proposes, for each
//! execution-critical decision at each level, who owns it (the harness's fixed logic or the
//! model under test), citing the lines that make the decision. The proposal is written in the
//! target manifest's `[ownership]` format, marked `proposed`; each citation is checked against
//! the lines the model was shown, and one that does not exist is flagged.

use benchaudit_agents::{Decision, Owner};
use benchaudit_audit::comtrade_target::decision_name;
use benchaudit_audit::target::DeclaredOwnership;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::chat::Chat;
use crate::source::Source;
use crate::{Error, excerpt};

/// The decisions every harness is asked about (ComtradeBench's names, paper §4.1); the model
/// may name more.
pub fn standard_decisions() -> Vec<String> {
    Decision::ALL
        .iter()
        .map(|d| decision_name(*d).to_string())
        .collect()
}

/// What to ask.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Ask {
    /// The levels (configurations) the harness runs at, each answered separately.
    pub levels: Vec<String>,
    /// The level the benchmark is scored at.
    pub scored_level: String,
    /// Decisions the benchmark claims to measure (D_claimed).
    pub claimed: Vec<String>,
}

/// A line range the model cited, and what the check found.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Citation {
    /// The file, as the model named it.
    pub file: String,
    /// First line.
    pub start: usize,
    /// Last line.
    pub end: usize,
    /// Why the citation does not hold (no such file, lines outside what was shown).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// One proposed entry.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proposed {
    /// Level.
    pub level: String,
    /// Decision.
    pub decision: String,
    /// Proposed owner.
    pub owner: Owner,
    /// The lines that make the decision, as cited.
    pub citations: Vec<Citation>,
    /// The model's reason, in its words.
    pub why: String,
}

/// A proposed ownership map: what `assist discover` writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Proposal {
    /// Stable id of this proposal (model, sources, answer): what `confirmed_from` names.
    pub id: String,
    /// `provider:model`.
    pub model: String,
    /// The files (and ranges) the model was shown.
    pub sources: Vec<String>,
    /// What was asked.
    pub ask: Ask,
    /// The entries, in the model's order (first answer per level and decision).
    pub entries: Vec<Proposed>,
    /// Everything a person must look at before confirming: citations that do not exist,
    /// uncited entries, decisions asked about and not answered, repeated entries.
    pub flags: Vec<String>,
}

impl Proposal {
    /// The map as the audit would read it once confirmed.
    pub fn declared(&self) -> DeclaredOwnership {
        DeclaredOwnership {
            entries: self
                .entries
                .iter()
                .map(|e| (e.level.clone(), e.decision.clone(), e.owner))
                .collect(),
            claimed: self.ask.claimed.clone(),
            scored_level: self.ask.scored_level.clone(),
            measured: Vec::new(),
            confirmed_from: None,
        }
    }

    /// Citations that do not hold.
    pub fn bad_citations(&self) -> usize {
        self.entries
            .iter()
            .flat_map(|e| &e.citations)
            .filter(|c| c.problem.is_some())
            .count()
    }

    /// The proposal as the manifest's `[ownership]` table, still marked `proposed`, each entry
    /// followed by its citations (and any problem) as a comment.
    pub fn to_toml(&self) -> String {
        let q = |s: &str| toml::Value::String(s.to_string()).to_string();
        let list = |v: &[String]| v.iter().map(|s| q(s)).collect::<Vec<_>>().join(", ");
        let mut out = String::new();
        out.push_str(&format!(
            "# Proposed by `benchaudit assist discover` ({}) from: {}\n",
            self.model,
            self.sources.join(", ")
        ));
        out.push_str("# A proposal, not a declaration: a manifest holding it is refused. To confirm it, check every\n# entry against the harness, copy the table into the target's manifest and rename `proposed`\n# to `confirmed_from`; the card's ownership cell then names this proposal.\n");
        for f in &self.flags {
            out.push_str(&format!("# FLAG: {f}\n"));
        }
        out.push_str("[ownership]\n");
        out.push_str(&format!("proposed = {}\n", q(&self.id)));
        out.push_str(&format!("scored_level = {}\n", q(&self.ask.scored_level)));
        out.push_str(&format!("claimed = [{}]\n", list(&self.ask.claimed)));
        out.push_str("entries = [\n");
        for e in &self.entries {
            let owner = match e.owner {
                Owner::Harness => "harness",
                Owner::Model => "model",
            };
            let cites: Vec<String> = e
                .citations
                .iter()
                .map(|c| match &c.problem {
                    None => format!("{}:{}-{}", c.file, c.start, c.end),
                    Some(p) => format!("{}:{}-{} NOT FOUND ({p})", c.file, c.start, c.end),
                })
                .collect();
            let cites = if cites.is_empty() {
                "UNCITED".to_string()
            } else {
                cites.join(", ")
            };
            let why = e.why.replace(['\n', '\r'], " ");
            out.push_str(&format!(
                "  [{}, {}, {}],  # {cites}; {}\n",
                q(&e.level),
                q(&e.decision),
                q(owner),
                excerpt(&why)
            ));
        }
        out.push_str("]\n");
        out
    }
}

/// The messages of one discovery request.
pub fn prompt(source: &Source, ask: &Ask) -> (String, String) {
    let system = "You audit benchmark harnesses for LLM agents. You read a harness's source and decide, for each execution-critical decision, who owns it: \"harness\" when fixed code in the harness makes it whatever the model says, \"model\" when the model under test makes it (the harness only carries out the model's choice). You cite the exact lines that make each decision, by file name and line numbers as shown. You answer with one JSON object and nothing else.".to_string();
    let decisions = standard_decisions();
    let user = format!(
        "Levels (configurations of the harness) to answer for: {levels}.\n\
         Decisions to answer for at every level: {decisions}\n\
         - retry: retry or give up after a transient fault (429, 500);\n\
         - dedup: removing duplicate records;\n\
         - totals_filter: dropping summary/totals rows;\n\
         - pagination: which page to fetch next, when to stop;\n\
         - submission: assembling the records and submitting them.\n\
         If the harness makes other execution-critical decisions, add them with a short snake_case name.\n\n\
         Answer with exactly this JSON shape:\n\
         {{\"decisions\": [{{\"level\": \"<level>\", \"decision\": \"<name>\", \"owner\": \"harness\" or \"model\", \"lines\": [{{\"file\": \"<file name as shown>\", \"start\": <first line>, \"end\": <last line>}}], \"why\": \"<one sentence>\"}}]}}\n\n\
         The source:\n\n{source}",
        levels = ask.levels.join(", "),
        decisions = decisions.join(", "),
        source = source.render()
    );
    (system, user)
}

fn owner_of(v: &Value) -> Option<Owner> {
    let s = v.as_str()?.trim().to_ascii_lowercase();
    match s.as_str() {
        "harness" | "scaffold" | "code" => Some(Owner::Harness),
        "model" | "agent" | "llm" => Some(Owner::Model),
        _ => None,
    }
}

fn usize_of(v: Option<&Value>) -> Option<usize> {
    match v? {
        Value::Number(n) => n.as_u64().and_then(|n| usize::try_from(n).ok()),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A citation as a model may write it: `{"file", "start", "end"}`, `{"file", "lines": [a, b]}`
/// or `"file:a-b"` (`"file:a"` for one line).
fn citation_of(v: &Value) -> Option<(String, usize, usize)> {
    match v {
        Value::Object(m) => {
            let file = m.get("file").and_then(Value::as_str)?.to_string();
            let (start, end) = match m.get("lines") {
                Some(Value::Array(a)) if !a.is_empty() => {
                    (usize_of(a.first())?, usize_of(a.last())?)
                }
                _ => {
                    let s = usize_of(m.get("start").or(m.get("line")))?;
                    (s, usize_of(m.get("end")).unwrap_or(s))
                }
            };
            Some((file, start, end))
        }
        Value::String(s) => {
            let (file, range) = s.rsplit_once(':')?;
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            Some((
                file.to_string(),
                a.trim().parse().ok()?,
                b.trim().parse().ok()?,
            ))
        }
        _ => None,
    }
}

/// Reads a model's answer into a proposal. An answer without a JSON object, or whose object
/// holds no readable entry for the levels asked, is [`Error::Garbage`].
pub fn parse(
    answer: &str,
    source: &Source,
    ask: &Ask,
    model: &str,
    sources: &[String],
) -> Result<Proposal, Error> {
    let garbage = |why: &str| Error::Garbage {
        what: "ownership proposal",
        why: why.to_string(),
        excerpt: excerpt(answer),
    };
    let object: Map<String, Value> = benchaudit_agents::llm::messages::first_json_object(answer)
        .ok_or_else(|| garbage("no JSON object in it"))?;
    let items = object
        .get("decisions")
        .and_then(Value::as_array)
        .ok_or_else(|| garbage("its JSON object has no `decisions` array"))?;
    let mut entries: Vec<Proposed> = Vec::new();
    let mut flags = Vec::new();
    let mut unreadable = 0usize;
    for item in items {
        let level = item.get("level").and_then(Value::as_str).map(str::trim);
        let decision = item
            .get("decision")
            .and_then(Value::as_str)
            .map(|d| d.trim().to_ascii_lowercase().replace([' ', '-'], "_"));
        let owner = item.get("owner").and_then(owner_of);
        let (Some(level), Some(decision), Some(owner)) = (level, decision, owner) else {
            unreadable += 1;
            continue;
        };
        if !ask.levels.iter().any(|l| l == level) {
            flags.push(format!(
                "an entry for level `{level}`, which was not asked about, was dropped"
            ));
            continue;
        }
        if decision.is_empty() {
            unreadable += 1;
            continue;
        }
        if entries
            .iter()
            .any(|e| e.level == level && e.decision == decision)
        {
            flags.push(format!(
                "{level} {decision} answered twice: the first answer is kept"
            ));
            continue;
        }
        let cited: Vec<Value> = match item.get("lines").or(item.get("citations")) {
            Some(Value::Array(a)) => a.clone(),
            Some(v @ (Value::Object(_) | Value::String(_))) => vec![v.clone()],
            _ => Vec::new(),
        };
        let mut citations = Vec::new();
        for c in &cited {
            match citation_of(c) {
                Some((file, start, end)) => {
                    let problem = source.check_citation(&file, start, end).err();
                    if let Some(p) = &problem {
                        flags.push(format!(
                            "{level} {decision}: citation {file}:{start}-{end} does not exist: {p}"
                        ));
                    }
                    citations.push(Citation {
                        file,
                        start,
                        end,
                        problem,
                    });
                }
                None => flags.push(format!("{level} {decision}: an unreadable citation {c}")),
            }
        }
        if citations.is_empty() {
            flags.push(format!("{level} {decision}: no lines cited"));
        }
        entries.push(Proposed {
            level: level.to_string(),
            decision,
            owner,
            citations,
            why: item
                .get("why")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
        });
    }
    if entries.is_empty() {
        return Err(garbage(&format!(
            "none of its {} entries has a level asked about, a decision and an owner (harness or model)",
            items.len()
        )));
    }
    if unreadable > 0 {
        flags.push(format!("{unreadable} unreadable entries were dropped"));
    }
    for level in &ask.levels {
        for d in standard_decisions() {
            if !entries.iter().any(|e| &e.level == level && e.decision == d) {
                flags.push(format!("{level} {d}: not answered"));
            }
        }
    }
    let id = format!(
        "assist-discover-{}",
        &benchaudit_agents::sha256_hex(
            format!("{model}\n{}\n{answer}", sources.join("\n")).as_bytes()
        )[..12]
    );
    Ok(Proposal {
        id,
        model: model.to_string(),
        sources: sources.to_vec(),
        ask: ask.clone(),
        entries,
        flags,
    })
}

/// Asks `chat` once (request `seed`) and reads the answer.
pub fn discover(
    chat: &mut Chat,
    source: &Source,
    sources: &[String],
    ask: &Ask,
    purpose: &str,
    seed: u64,
) -> Result<Proposal, Error> {
    let (system, user) = prompt(source, ask);
    let answer = chat.ask(purpose, &system, &user, seed)?;
    let model = chat.model().to_string();
    parse(&answer, source, ask, &model, sources)
}
