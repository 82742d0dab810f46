//! Transcripts: every decision, tool call and result of an episode, in order. Large strings
//! (re-emitted records) are kept as their length and hash so transcripts stay small; LLM
//! policies add their full message log.

use serde::Serialize;
use serde_json::{Value, json};

use crate::policy::{FaultContext, FaultDecision, Slots, ToolCall};

/// Strings longer than this are summarised in transcripts.
pub const INLINE_LIMIT: usize = 4096;

/// One event of an episode.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum Event {
    /// L0: the slots the policy filled and whether the harness kept them.
    Slots {
        /// As filled.
        slots: Slots,
        /// Slots the harness replaced by the task's values.
        replaced: Vec<String>,
        /// The answer was unreadable: every slot came from the task.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        imputed: bool,
    },
    /// L1: a retry-or-skip decision.
    Decision {
        /// What the policy was told.
        fault: FaultContext,
        /// What it chose, or what the harness imputed.
        decision: FaultDecision,
        /// The answer was unreadable and the harness imputed `decision`.
        #[serde(skip_serializing_if = "std::ops::Not::not")]
        imputed: bool,
    },
    /// A tool call (by the model at L2, by the harness at L0/L1).
    Call {
        /// Tool name.
        name: String,
        /// Arguments, large strings summarised.
        arguments: Value,
    },
    /// A tool result, summarised.
    Result {
        /// Tool name.
        name: String,
        /// The result, large content summarised.
        result: Value,
    },
    /// A note from the scaffold (step limit, stop reason …).
    Note {
        /// Text.
        text: String,
    },
}

/// An episode's events plus, for LLM policies, the message log.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct Transcript {
    /// Events in order.
    pub events: Vec<Event>,
    /// The policy's own log (LLM messages with token usage), if it keeps one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages: Option<Value>,
}

impl Transcript {
    /// Records a call.
    pub fn call(&mut self, call: &ToolCall) {
        self.events.push(Event::Call {
            name: call.name.clone(),
            arguments: summarise(&call.arguments),
        });
    }

    /// Records a result.
    pub fn result(&mut self, name: &str, result: Value) {
        self.events.push(Event::Result {
            name: name.to_string(),
            result,
        });
    }

    /// Records a note.
    pub fn note(&mut self, text: impl Into<String>) {
        self.events.push(Event::Note { text: text.into() });
    }
}

/// `s.lines().count()` by counting newline bytes (the char searcher behind `lines` took 3% of
/// an L2 episode on a 2 345-record payload): every `\n` ends a line, and text after the last
/// one is a line too.
fn line_count(s: &str) -> usize {
    // Newlines counted 64 bytes at a time into a byte-wide sum, which the compiler vectorises
    // (`filter(..).count()` ran a byte per cycle: a tenth of an episode for its payload).
    let mut chunks = s.as_bytes().chunks_exact(64);
    let mut newlines = 0usize;
    for chunk in &mut chunks {
        newlines += usize::from(chunk.iter().map(|&b| u8::from(b == b'\n')).sum::<u8>());
    }
    newlines += chunks.remainder().iter().filter(|&&b| b == b'\n').count();
    newlines + usize::from(!s.is_empty() && !s.ends_with('\n'))
}

/// Replaces long strings by `{bytes, lines}` (the submitted files' SHA-256 is in the record).
pub fn summarise(v: &Value) -> Value {
    match v {
        Value::String(s) if s.len() > INLINE_LIMIT => json!({
            "bytes": s.len(),
            "lines": line_count(s),
        }),
        Value::Array(items) if items.len() > 64 => json!({"items": items.len()}),
        Value::Array(items) => Value::Array(items.iter().map(summarise).collect()),
        Value::Object(m) => {
            Value::Object(m.iter().map(|(k, v)| (k.clone(), summarise(v))).collect())
        }
        other => other.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn line_count_is_lines_count() {
        for s in [
            "",
            "a",
            "a\n",
            "a\n\nb",
            "\n",
            "\n\n",
            "a\r\nb\r\n",
            "\r\n",
            "x\ry",
            "é\nü",
        ] {
            assert_eq!(line_count(s), s.lines().count(), "{s:?}");
        }
        // Past the 64-byte blocks, newlines at block edges and a block of nothing else.
        for s in [
            "a\n".repeat(100),
            format!("{}\n{}", "x".repeat(63), "y".repeat(64)),
            format!("{}\nz", "\n".repeat(128)),
            "é".repeat(70),
        ] {
            assert_eq!(line_count(&s), s.lines().count(), "{s:?}");
        }
    }
}
