//! One conversation channel to a model for every assist layer: requests go through the
//! OpenAI-compatible [`ChatClient`] the `run --model` path uses (its retries, timeouts and key
//! scrubbing), and every request with its response or error is kept in a [`Recording`]. A
//! recording answers the same requests again without the model ([`Chat::replay`]), so a
//! proposal, a narration or an evaluation can be reproduced and inspected by anyone.
//!
//! Keys never reach a recording: a request body holds no key (it travels in the
//! `Authorization` header only) and the client scrubs every response and error.

use std::path::Path;

use benchaudit_agents::llm::messages::ChatResponse;
use benchaudit_agents::llm::{ChatClient, ModelConfig};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use crate::Error;

/// The file every assist command writes its exchanges to, beside its output.
pub const EXCHANGES_FILE: &str = "exchanges.json";

/// One request and what came back.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Exchange {
    /// Which layer asked (`discover`, `probes`, `narrate`) and for what (`eval` adds the
    /// reference and run).
    pub purpose: String,
    /// The request body as sent.
    pub request: Value,
    /// The provider's response body (key scrubbed), when there was one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response: Option<Value>,
    /// Why there was none.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Everything sent and received, and the settings that shaped the requests.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Recording {
    /// `provider:model`.
    pub model: String,
    /// The model name sent in requests.
    pub request_model: String,
    /// The endpoint (`…/chat/completions`); empty when replayed.
    pub endpoint: String,
    /// The request field the output limit goes in (`max_tokens` or `max_completion_tokens`).
    pub token_field: String,
    /// The output limit of each request.
    pub max_tokens: u64,
    /// The model's configuration (key excluded), as a run manifest records it.
    #[serde(default)]
    pub config: Value,
    /// The exchanges, in order.
    pub exchanges: Vec<Exchange>,
}

impl Recording {
    /// Reads a recording (`exchanges.json`), bounded in size.
    pub fn load(path: &Path) -> Result<Recording, Error> {
        let text =
            benchaudit_runs::files::read_text_bounded(path, benchaudit_runs::files::limits::GUARD)
                .map_err(|e| Error::File(e.to_string()))?;
        serde_json::from_str(&text).map_err(|e| {
            Error::Input(format!(
                "{} is not an assist recording ({EXCHANGES_FILE}): {e}",
                path.display()
            ))
        })
    }

    /// Writes it as pretty JSON.
    pub fn save(&self, path: &Path) -> Result<(), Error> {
        let text = serde_json::to_string_pretty(self).map_err(|e| Error::Write {
            path: path.display().to_string(),
            cause: e.to_string(),
        })?;
        crate::write_atomic(path, &(text + "\n"))
    }
}

enum Backend {
    Live(ChatClient),
    /// Recorded exchanges, and which of them have answered.
    Replay(Vec<(Exchange, bool)>),
}

/// A model to ask, live or from a recording.
pub struct Chat {
    backend: Backend,
    recording: Recording,
}

impl std::fmt::Debug for Chat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Chat")
            .field("model", &self.recording.model)
            .field("exchanges", &self.recording.exchanges.len())
            .finish()
    }
}

impl Chat {
    /// A live model behind `client`, each request limited to `max_tokens` output tokens.
    pub fn live(config: &ModelConfig, client: ChatClient, max_tokens: u64) -> Chat {
        let recording = Recording {
            model: config.name.clone(),
            request_model: config.model.clone(),
            endpoint: client.endpoint().to_string(),
            token_field: config.quirks.token_param.field().to_string(),
            max_tokens,
            config: serde_json::to_value(config).unwrap_or(Value::Null),
            exchanges: Vec::new(),
        };
        Chat {
            backend: Backend::Live(client),
            recording,
        }
    }

    /// Answers from `recorded` instead of a model: each request must equal a recorded one
    /// (taken in order), else it is an error naming the first difference.
    pub fn replay(recorded: Recording) -> Chat {
        let exchanges = recorded
            .exchanges
            .iter()
            .cloned()
            .map(|e| (e, false))
            .collect();
        let recording = Recording {
            exchanges: Vec::new(),
            ..recorded
        };
        Chat {
            backend: Backend::Replay(exchanges),
            recording,
        }
    }

    /// `provider:model`.
    pub fn model(&self) -> &str {
        &self.recording.model
    }

    /// What was sent and received so far.
    pub fn recording(&self) -> &Recording {
        &self.recording
    }

    /// Asks once: a system and a user message, the request's `seed`, the output limit. The
    /// answer's text, or why there is none; either way the exchange is recorded.
    pub fn ask(
        &mut self,
        purpose: &str,
        system: &str,
        user: &str,
        seed: u64,
    ) -> Result<String, Error> {
        let mut body = Map::new();
        body.insert("model".into(), json!(self.recording.request_model));
        body.insert(
            "messages".into(),
            json!([
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ]),
        );
        body.insert(
            self.recording.token_field.clone(),
            json!(self.recording.max_tokens),
        );
        body.insert("seed".into(), json!(seed));
        let request = Value::Object(body);
        let outcome: Result<Value, String> = match &mut self.backend {
            Backend::Live(client) => client
                .complete(&request)
                .map(|c| c.body)
                .map_err(|e| e.to_string()),
            Backend::Replay(recorded) => {
                let found = recorded
                    .iter_mut()
                    .find(|(e, used)| !*used && e.request == request && e.purpose == purpose);
                match found {
                    Some((e, used)) => {
                        *used = true;
                        match (&e.response, &e.error) {
                            (Some(r), _) => Ok(r.clone()),
                            (None, Some(err)) => Err(err.clone()),
                            (None, None) => Err("the recorded exchange has no answer".into()),
                        }
                    }
                    None => {
                        return Err(Error::Replay(format!(
                            "the recording holds no unanswered `{purpose}` request equal to this one (seed {seed}): the inputs, model settings or prompts differ from the recorded run"
                        )));
                    }
                }
            }
        };
        let exchange = Exchange {
            purpose: purpose.to_string(),
            request,
            response: outcome.as_ref().ok().cloned(),
            error: outcome.as_ref().err().cloned(),
        };
        self.recording.exchanges.push(exchange);
        let body = outcome.map_err(Error::Provider)?;
        let parsed: ChatResponse = serde_json::from_value(body.clone())
            .map_err(|e| Error::Provider(format!("the response is not a chat completion: {e}")))?;
        let choice = parsed
            .choices
            .into_iter()
            .next()
            .ok_or_else(|| Error::Provider("the response has no choice".into()))?;
        Ok(choice.message.text())
    }
}
