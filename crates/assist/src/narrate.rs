//! Narration: a model writes a card's prose from the facts of `audit.json`, and every number in
//! it goes through the number guard ([`benchaudit_audit::guard::check`]). The model is asked to
//! tag each figure with the JSON pointer it quotes (`0.987<!-- ba:/cards/0/… -->`), so a tagged
//! figure is checked at the place it claims; an untagged one must still be some number of the
//! JSON. A narration the guard rejects is never passed off as the card's prose.

use benchaudit_audit::guard::{GuardReport, check};
use serde::Serialize;
use serde_json::Value;

use crate::chat::Chat;
use crate::{Error, excerpt};

/// The default bound of the facts sent in one narration request.
pub const DEFAULT_MAX_FACT_BYTES: usize = 24_000;

/// Strings longer than this are left out of the facts (figures and verdicts are short).
const MAX_FACT_STRING: usize = 600;

fn escape_pointer(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

fn flatten(value: &Value, pointer: String, out: &mut Vec<(String, Value)>) {
    match value {
        Value::Object(m) => {
            for (k, v) in m {
                flatten(v, format!("{pointer}/{}", escape_pointer(k)), out);
            }
        }
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                flatten(v, format!("{pointer}/{i}"), out);
            }
        }
        Value::String(s) if s.len() > MAX_FACT_STRING => {}
        Value::Null => {}
        leaf => out.push((pointer, leaf.clone())),
    }
}

/// Strings up to this length are verdicts and names; longer ones are evidence sentences.
const SHORT_STRING: usize = 80;

/// The facts a narration may quote: `POINTER = VALUE` lines, up to `max_bytes`, in the order
/// a narration needs them: the cards' verdicts and names (`/cards`), the document's figures,
/// the cards' evidence sentences, then the other strings.
pub fn facts(audit: &Value, max_bytes: usize) -> Vec<String> {
    let mut cards = Vec::new();
    if let Some(c) = audit.get("cards") {
        flatten(c, "/cards".into(), &mut cards);
    }
    let mut rest = Vec::new();
    if let Value::Object(m) = audit {
        for (k, v) in m.iter().filter(|(k, _)| k.as_str() != "cards") {
            flatten(v, format!("/{}", escape_pointer(k)), &mut rest);
        }
    }
    let long = |v: &Value| v.as_str().is_some_and(|s| s.len() > SHORT_STRING);
    let (evidence, verdicts): (Vec<_>, Vec<_>) = cards.into_iter().partition(|(_, v)| long(v));
    let (figures, other): (Vec<_>, Vec<_>) = rest.into_iter().partition(|(_, v)| v.is_number());
    let mut out = Vec::new();
    let mut used = 0;
    for (pointer, value) in verdicts
        .into_iter()
        .chain(figures)
        .chain(evidence)
        .chain(other)
    {
        let line = format!("{pointer} = {value}");
        if used + line.len() + 1 > max_bytes {
            continue;
        }
        used += line.len() + 1;
        out.push(line);
    }
    out
}

/// The messages of one narration request.
pub fn prompt(facts: &[String]) -> (String, String) {
    let system = "You write the prose summary of a benchmark's validity card for a reader who will not open the JSON. You state only what the facts say. Every figure you write is copied exactly from a fact and followed immediately, with no space, by the fact's tag <!-- ba:POINTER -->. You never write a number that is not a fact's value: no totals, differences, percentages, years, list numbers or section numbers.".to_string();
    let user = format!(
        "Write 2 to 5 short paragraphs of Markdown (no headings, no tables) on what the card licenses and why: the licensed claim, the cells that fail, and what would raise the claim.\n\
         Example of a tagged figure: the scorer gives the fabricated submission 0.987<!-- ba:/comtrade/probes/0/target_score --> (use the real pointers below).\n\n\
         The facts (POINTER = VALUE):\n{}",
        facts.join("\n")
    );
    (system, user)
}

/// A narration and the guard's verdict on it.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Narration {
    /// The prose as the model wrote it.
    pub text: String,
    /// The number guard's report against `audit.json`.
    pub guard: GuardReport,
}

impl Narration {
    /// Every figure is accounted for.
    pub fn passed(&self) -> bool {
        self.guard.passed()
    }
}

/// Checks a narration against the audit document.
pub fn judge(text: String, audit: &Value) -> Narration {
    let guard = check(&text, audit);
    Narration { text, guard }
}

/// Asks `chat` for a narration of `audit` (request `seed`) and puts it through the guard. An
/// empty answer is [`Error::Garbage`]; a rejected one is returned with its violations.
pub fn narrate(
    chat: &mut Chat,
    audit: &Value,
    max_fact_bytes: usize,
    purpose: &str,
    seed: u64,
) -> Result<Narration, Error> {
    let facts = facts(audit, max_fact_bytes);
    if facts.is_empty() {
        return Err(Error::Input(
            "the audit document holds no figures or verdicts to narrate".into(),
        ));
    }
    let (system, user) = prompt(&facts);
    let answer = chat.ask(purpose, &system, &user, seed)?;
    if answer.trim().is_empty() {
        return Err(Error::Garbage {
            what: "narration",
            why: "it is empty".into(),
            excerpt: excerpt(&answer),
        });
    }
    Ok(judge(answer.trim().to_string() + "\n", audit))
}
