//! Probe design: given only a scorer's source, a model predicts the scorer's kind (shape,
//! specification, outcome) and proposes a forgery battery. Each proposed probe names, where it
//! can, the forgery of a BenchAudit probe family that builds it, so the battery is data the
//! external-target protocol runs (`benchaudit audit --target MANIFEST --battery probes.toml`,
//! `benchaudit_audit::proposed`); running it is a separate, explicit step whose results are
//! ordinary measured cells.

use benchaudit_audit::external::ProbeFamily;
use benchaudit_audit::target::ScorerKind;
use serde::Serialize;
use serde_json::Value;

use crate::chat::Chat;
use crate::source::Source;
use crate::{Error, excerpt};

/// One proposed probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Probe {
    /// Short name.
    pub name: String,
    /// What the forged submission is and why a valid scorer must score it below the correct one.
    pub description: String,
    /// The family's forgery that builds it, when one does; `None`: described only (a person
    /// writes it, or it is a probe the family lacks).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forgery: Option<String>,
}

/// A proposed kind and battery: what `assist probes` writes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeProposal {
    /// Stable id.
    pub id: String,
    /// `provider:model`.
    pub model: String,
    /// The files the model was shown.
    pub sources: Vec<String>,
    /// The probe family the battery is written for.
    pub family: String,
    /// The predicted scorer kind.
    pub scorer_kind: ScorerKind,
    /// The model's reason for it.
    pub why: String,
    /// The battery.
    pub battery: Vec<Probe>,
    /// Forgery names the model gave that the family does not build (kept as described-only).
    pub flags: Vec<String>,
}

impl ProbeProposal {
    /// Probes the family can build.
    pub fn runnable(&self) -> usize {
        self.battery.iter().filter(|p| p.forgery.is_some()).count()
    }

    /// The proposal as TOML, marked `proposed`: the kind and the probe family are the
    /// manifest's `scorer_kind` and `probes` fields; the battery follows as `[[battery]]`.
    pub fn to_toml(&self) -> String {
        let q = |s: &str| toml::Value::String(s.to_string()).to_string();
        let kind = match self.scorer_kind {
            ScorerKind::Shape => "shape",
            ScorerKind::Outcome => "outcome",
            ScorerKind::Specification => "specification",
            ScorerKind::Unknown => "unknown",
        };
        let mut out = format!(
            "# Proposed by `benchaudit assist probes` ({}) from: {}\n# A proposal: it changes no card. Read it against the scorer, rename `proposed` to\n# `confirmed_from`, then run it as a step of its own:\n# `benchaudit audit --target MANIFEST --battery THIS_FILE` builds the probes with a `forgery`\n# (and the family's anchor) and nothing else; a criterion pass on a battery that leaves out\n# some of the family's forgeries is shown as not probed. `scorer_kind` is the prediction, not a\n# declaration; the probes without a `forgery` are described for a person to write.\n",
            self.model,
            self.sources.join(", ")
        );
        for f in &self.flags {
            out.push_str(&format!("# FLAG: {f}\n"));
        }
        out.push_str(&format!("proposed = {}\n", q(&self.id)));
        out.push_str(&format!("scorer_kind = {}\n", q(kind)));
        out.push_str(&format!("probes = {}\n", q(&self.family)));
        out.push_str(&format!(
            "# why: {}\n",
            excerpt(&self.why.replace(['\n', '\r'], " "))
        ));
        for p in &self.battery {
            out.push_str("\n[[battery]]\n");
            out.push_str(&format!("name = {}\n", q(&p.name)));
            if let Some(f) = &p.forgery {
                out.push_str(&format!("forgery = {}\n", q(f)));
            }
            out.push_str(&format!("description = {}\n", q(&p.description)));
        }
        out
    }
}

/// The messages of one probe-design request.
pub fn prompt(source: &Source, family: ProbeFamily) -> (String, String) {
    let system = "You audit the scorers of LLM-agent benchmarks. From a scorer's source alone you say what kind of scorer it is and design forged submissions that a valid scorer must score below the correct submission. You answer with one JSON object and nothing else.".to_string();
    let user = format!(
        "Scorer kinds:\n\
         - shape: grades the submission's format, schema or self-reported metadata, not whether its content is right;\n\
         - specification: grades conformance to a specification (e.g. a function call's name and argument types against a schema);\n\
         - outcome: grades the content against ground truth or the resulting state.\n\n\
         Propose a battery of forged submissions (4 to 8) that tell a valid scorer from an invalid one: each forgery keeps what an invalid scorer looks at and breaks what a valid one must check.\n\
         Where a forgery is one of these prebuilt ones, name it in \"forgery\": {names}. Otherwise set \"forgery\" to null.\n\n\
         Answer with exactly this JSON shape:\n\
         {{\"scorer_kind\": \"shape\" or \"specification\" or \"outcome\", \"why\": \"<one sentence>\", \"probes\": [{{\"name\": \"<snake_case>\", \"description\": \"<what is forged and what a valid scorer must do>\", \"forgery\": \"<prebuilt name>\" or null}}]}}\n\n\
         The scorer's source:\n\n{source}",
        names = family.forgeries().join(", "),
        source = source.render()
    );
    (system, user)
}

fn kind_of(v: Option<&Value>) -> Option<ScorerKind> {
    let s = v?.as_str()?.trim().to_ascii_lowercase();
    if s.starts_with("shape") {
        Some(ScorerKind::Shape)
    } else if s.starts_with("spec") {
        Some(ScorerKind::Specification)
    } else if s.starts_with("outcome") {
        Some(ScorerKind::Outcome)
    } else {
        None
    }
}

/// Reads a model's answer. Without a JSON object, a known scorer kind and at least one probe
/// with a name, it is [`Error::Garbage`].
pub fn parse(
    answer: &str,
    family: ProbeFamily,
    model: &str,
    sources: &[String],
) -> Result<ProbeProposal, Error> {
    let garbage = |why: String| Error::Garbage {
        what: "probe proposal",
        why,
        excerpt: excerpt(answer),
    };
    let object = benchaudit_agents::llm::messages::first_json_object(answer)
        .ok_or_else(|| garbage("no JSON object in it".into()))?;
    let scorer_kind = kind_of(object.get("scorer_kind")).ok_or_else(|| {
        garbage("its `scorer_kind` is not shape, specification or outcome".into())
    })?;
    let items = object
        .get("probes")
        .and_then(Value::as_array)
        .ok_or_else(|| garbage("its JSON object has no `probes` array".into()))?;
    let known = family.forgeries();
    let mut battery = Vec::new();
    let mut flags = Vec::new();
    for item in items {
        let Some(name) = item
            .get("name")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|n| !n.is_empty())
        else {
            continue;
        };
        let description = item
            .get("description")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .trim()
            .to_string();
        let forgery = match item.get("forgery").and_then(Value::as_str).map(str::trim) {
            Some(f) if known.contains(&f) => Some(f.to_string()),
            Some(f) if !f.is_empty() && f != "null" => {
                flags.push(format!(
                    "{name}: `{f}` is not a forgery of the {} family; kept as described only",
                    family.name()
                ));
                None
            }
            _ => None,
        };
        if battery.iter().any(|p: &Probe| p.name == name) {
            flags.push(format!("{name} proposed twice: the first is kept"));
            continue;
        }
        battery.push(Probe {
            name: name.to_string(),
            description,
            forgery,
        });
    }
    if battery.is_empty() {
        return Err(garbage(format!(
            "none of its {} probes has a name",
            items.len()
        )));
    }
    let id = format!(
        "assist-probes-{}",
        &benchaudit_agents::sha256_hex(
            format!("{model}\n{}\n{answer}", sources.join("\n")).as_bytes()
        )[..12]
    );
    Ok(ProbeProposal {
        id,
        model: model.to_string(),
        sources: sources.to_vec(),
        family: family.name().to_string(),
        scorer_kind,
        why: object
            .get("why")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        battery,
        flags,
    })
}

/// Asks `chat` once (request `seed`) and reads the answer.
pub fn design(
    chat: &mut Chat,
    source: &Source,
    sources: &[String],
    family: ProbeFamily,
    purpose: &str,
    seed: u64,
) -> Result<ProbeProposal, Error> {
    let (system, user) = prompt(source, family);
    let answer = chat.ask(purpose, &system, &user, seed)?;
    let model = chat.model().to_string();
    parse(&answer, family, &model, sources)
}
