//! Providers and models as data: where each provider lives, which variable holds its key, and
//! the per-model request quirks of paper A.7 (SPEC §4.2). Nothing here does IO except reading
//! the key variable in [`ModelConfig::resolve`].

use serde::Serialize;

use crate::llm::secret::{ApiKey, KeyError};

/// Per-episode output-token budget of ordinary models (paper A.7).
pub const DEFAULT_TOKEN_BUDGET: u64 = 6_000;
/// Per-episode output-token budget of reasoning-class models (paper A.7).
pub const REASONING_TOKEN_BUDGET: u64 = 12_000;
/// L2 step limit: tool calls a model may make in one episode (SPEC §4.2).
pub const DEFAULT_STEP_LIMIT: u32 = 30;

/// A provider with a pinned OpenAI-compatible endpoint (paper A.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct ProviderInfo {
    /// The name used in `--model PROVIDER:NAME`.
    pub name: &'static str,
    /// Base URL; requests go to `{base_url}/chat/completions`.
    pub base_url: &'static str,
    /// Environment variable that holds the key (`None`: the server takes no key).
    pub key_env: Option<&'static str>,
}

/// Where `--model local:NAME` looks without `--base-url`: the server `scripts/local-llm/start.sh`
/// starts (llama.cpp's `llama-server`, port `LOCAL_LLM_PORT`, default 8081).
pub const LOCAL_BASE_URL: &str = "http://127.0.0.1:8081/v1";

/// The known providers. Any other provider name needs `--base-url`.
pub const PROVIDERS: &[ProviderInfo] = &[
    ProviderInfo {
        name: "openai",
        base_url: "https://api.openai.com/v1",
        key_env: Some("OPENAI_API_KEY"),
    },
    ProviderInfo {
        name: "anthropic",
        base_url: "https://api.anthropic.com/v1",
        key_env: Some("ANTHROPIC_API_KEY"),
    },
    ProviderInfo {
        name: "together",
        base_url: "https://api.together.xyz/v1",
        key_env: Some("TOGETHER_API_KEY"),
    },
    ProviderInfo {
        name: "local",
        base_url: LOCAL_BASE_URL,
        key_env: None,
    },
];

/// Looks a known provider up by name.
pub fn provider(name: &str) -> Option<&'static ProviderInfo> {
    PROVIDERS.iter().find(|p| p.name == name)
}

/// Which request field carries the output-token limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum TokenParam {
    /// `max_tokens` (most providers).
    MaxTokens,
    /// `max_completion_tokens` (gpt-5 and the o-series reject `max_tokens`).
    MaxCompletionTokens,
}

impl TokenParam {
    /// The JSON field name.
    pub fn field(self) -> &'static str {
        match self {
            TokenParam::MaxTokens => "max_tokens",
            TokenParam::MaxCompletionTokens => "max_completion_tokens",
        }
    }
}

/// How a model must be asked, as data. Defaults: `max_tokens`, temperature 0, `stop` allowed,
/// ordinary budget.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct Quirks {
    /// Output-limit field.
    pub token_param: TokenParam,
    /// Send `temperature: 0`; false when the model rejects the parameter (it then samples at
    /// its provider's default, which the transcript and docs disclose).
    pub temperature_zero: bool,
    /// The model accepts `stop` (used by the text protocol to end at `</tool_call>`).
    pub stop: bool,
    /// Reasoning-class: the larger default output budget, and room to think before the short
    /// L0/L1 answers ([`Quirks::answer_cap`]).
    pub reasoning_class: bool,
}

/// Output-token caps of the one-question levels: an L0 answer is a small JSON object, an L1
/// answer one word. Asking for the whole episode budget let a rambling model spend minutes per
/// question (local-llm.md defect 3). Reasoning models spend completion tokens on thought first.
pub const SLOTS_ANSWER_CAP: u64 = 512;
/// See [`SLOTS_ANSWER_CAP`].
pub const FAULT_ANSWER_CAP: u64 = 64;
/// The caps of reasoning-class models.
pub const REASONING_ANSWER_CAP: u64 = 4_096;

impl Quirks {
    /// The quirks of a model nobody has reported a problem with.
    pub const DEFAULT: Quirks = Quirks {
        token_param: TokenParam::MaxTokens,
        temperature_zero: true,
        stop: true,
        reasoning_class: false,
    };

    /// OpenAI reasoning models: `max_completion_tokens`, no temperature, no stop.
    pub const OPENAI_REASONING: Quirks = Quirks {
        token_param: TokenParam::MaxCompletionTokens,
        temperature_zero: false,
        stop: false,
        reasoning_class: true,
    };

    /// The output limit of an L0 (`slots`) or L1 question, before the episode's remaining
    /// budget bounds it.
    pub fn answer_cap(&self, slots: bool) -> u64 {
        match (self.reasoning_class, slots) {
            (true, _) => REASONING_ANSWER_CAP,
            (false, true) => SLOTS_ANSWER_CAP,
            (false, false) => FAULT_ANSWER_CAP,
        }
    }

    /// The default per-episode output budget these quirks imply.
    pub fn default_budget(&self) -> u64 {
        if self.reasoning_class {
            REASONING_TOKEN_BUDGET
        } else {
            DEFAULT_TOKEN_BUDGET
        }
    }
}

/// How a quirk rule recognises a model (by the last `/`-separated segment of its name,
/// lower-cased, so `openai/gpt-5` behind a router matches too).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "value")]
pub enum NameMatch {
    /// The name starts with this.
    Prefix(&'static str),
    /// OpenAI's o-series: `o` followed by a digit (`o1`, `o3-mini`, `o4-mini`).
    OSeries,
}

impl NameMatch {
    fn matches(self, model: &str) -> bool {
        let base = model
            .rsplit('/')
            .next()
            .unwrap_or(model)
            .to_ascii_lowercase();
        match self {
            NameMatch::Prefix(p) => base.starts_with(p),
            NameMatch::OSeries => {
                let mut chars = base.chars();
                chars.next() == Some('o') && chars.next().is_some_and(|c| c.is_ascii_digit())
            }
        }
    }
}

/// One row of the quirk table: which models, what to do, and the evidence.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct QuirkRule {
    /// Which models.
    pub matches: NameMatch,
    /// How to ask them.
    pub quirks: Quirks,
    /// Why (the observed provider behaviour).
    pub why: &'static str,
}

/// The quirk table, first match wins (paper A.7; crates.md "OpenAI-compatible client").
pub const QUIRK_RULES: &[QuirkRule] = &[
    QuirkRule {
        matches: NameMatch::Prefix("gpt-5"),
        quirks: Quirks::OPENAI_REASONING,
        why: "gpt-5 rejects temperature and stop and takes max_completion_tokens",
    },
    QuirkRule {
        matches: NameMatch::OSeries,
        quirks: Quirks::OPENAI_REASONING,
        why: "o-series models reject temperature and stop and take max_completion_tokens",
    },
    QuirkRule {
        matches: NameMatch::Prefix("claude-fable-5"),
        quirks: Quirks {
            temperature_zero: false,
            reasoning_class: true,
            ..Quirks::DEFAULT
        },
        why: "the endpoint rejects temperature as deprecated for this model; reasoning class",
    },
    QuirkRule {
        matches: NameMatch::Prefix("claude-sonnet-4-6"),
        quirks: Quirks {
            reasoning_class: true,
            ..Quirks::DEFAULT
        },
        why: "reasoning class (12 000-token budget in paper A.7)",
    },
];

/// The quirks of a model: the first matching rule, else [`Quirks::DEFAULT`].
pub fn quirks_for(model: &str) -> Quirks {
    QUIRK_RULES
        .iter()
        .find(|r| r.matches.matches(model))
        .map_or(Quirks::DEFAULT, |r| r.quirks)
}

/// How tools reach the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolProtocol {
    /// The API's `tools` / `tool_calls`.
    #[default]
    Native,
    /// Tools described in the system prompt; calls written as `<tool_call>{json}</tool_call>`.
    Text,
}

/// `PROVIDER:NAME` as typed on the command line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelId {
    /// Provider (`openai`, `anthropic`, `together`, or any name with `--base-url`).
    pub provider: String,
    /// Model name as the provider spells it (may itself contain `:` or `/`).
    pub model: String,
}

/// Why a model could not be configured (a usage error: nothing has run yet).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConfigError {
    /// Not `PROVIDER:NAME`.
    #[error("invalid model `{0}`: write PROVIDER:NAME, e.g. openai:gpt-4o or local:qwen2.5-7b")]
    BadModel(String),
    /// An unknown provider without a base URL.
    #[error(
        "unknown provider `{0}` (known: openai, anthropic, together, local = {url}); give --base-url URL for any other OpenAI-compatible server",
        url = LOCAL_BASE_URL
    )]
    UnknownProvider(String),
    /// The base URL is not http(s).
    #[error("invalid base URL `{0}`: expected http://HOST[:PORT]/PATH or https://…")]
    BadBaseUrl(String),
    /// The key variable is missing.
    #[error(transparent)]
    Key(#[from] KeyError),
    /// A zero budget or step limit.
    #[error("{0} must be at least 1")]
    Zero(&'static str),
}

impl ModelId {
    /// Parses `PROVIDER:NAME` (split at the first `:`, so `ollama:llama3.1:8b` works).
    pub fn parse(spec: &str) -> Result<ModelId, ConfigError> {
        match spec.trim().split_once(':') {
            Some((p, m)) if !p.trim().is_empty() && !m.trim().is_empty() => Ok(ModelId {
                provider: p.trim().to_ascii_lowercase(),
                model: m.trim().to_string(),
            }),
            _ => Err(ConfigError::BadModel(spec.to_string())),
        }
    }

    /// `provider:model`, the name the ledger records.
    pub fn name(&self) -> String {
        format!("{}:{}", self.provider, self.model)
    }
}

/// What the command line may override for a model.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelOverrides {
    /// `--base-url`: any OpenAI-compatible server.
    pub base_url: Option<String>,
    /// `--api-key-env`: the variable holding the key (required for unknown providers that need
    /// one; local servers usually need none).
    pub api_key_env: Option<String>,
    /// `--max-output-tokens`: the per-episode output budget.
    pub token_budget: Option<u64>,
    /// `--step-limit`.
    pub step_limit: Option<u32>,
    /// `--text-protocol`.
    pub text_protocol: bool,
    /// `--tool-choice`: sent as `tool_choice` with the tools (llama-cpp-python's server drops
    /// the tools without it; vLLM rejects `auto` unless started with
    /// `--enable-auto-tool-choice`, so it is not sent by default).
    pub tool_choice: Option<String>,
    /// `--lenient-tool-calls`: also execute a call written in the wrong envelope (bare or
    /// fenced JSON naming an offered tool, another tag than `<tool_call>`). Off by default:
    /// it changes what is measured, so the manifest records it.
    pub lenient_calls: bool,
    /// `--tool-text`: the wording of `fetch_page`'s `page` argument (clarified by default).
    pub tool_text: benchaudit_comtrade::ToolText,
}

/// Everything needed to ask one model, key excluded: this is what the run manifest records.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelConfig {
    /// `provider:model`.
    pub name: String,
    /// Provider name.
    pub provider: String,
    /// Model name sent in requests.
    pub model: String,
    /// Endpoint base URL.
    pub base_url: String,
    /// The variable the key was read from (never the key).
    pub api_key_env: Option<String>,
    /// Request quirks.
    pub quirks: Quirks,
    /// Per-episode output-token budget.
    pub token_budget: u64,
    /// L2 step limit.
    pub step_limit: u32,
    /// Native tool calls or the text protocol.
    pub tool_protocol: ToolProtocol,
    /// `tool_choice` sent with the tools, if any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<String>,
    /// Calls in the wrong envelope are executed (true) or counted as malformed and end the
    /// episode (false, the default).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub lenient_calls: bool,
    /// The wording of the tools the model is shown (`clarified` or `ambiguous`): always
    /// recorded, so a resume under the other wording is refused naming `tool_text`.
    pub tool_text: benchaudit_comtrade::ToolText,
    /// What the preflight learnt about the server and the model file (llama.cpp: build, model
    /// file SHA-256, context size), recorded in the manifest beside the rest.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub server: Option<crate::llm::client::ServerInfo>,
}

impl ModelConfig {
    /// A configuration without reading any key (tests, and servers that need none).
    pub fn new(
        id: &ModelId,
        base_url: &str,
        overrides: &ModelOverrides,
    ) -> Result<ModelConfig, ConfigError> {
        let base = base_url.trim().trim_end_matches('/').to_string();
        let scheme_ok = base.starts_with("http://") || base.starts_with("https://");
        if !scheme_ok || base.len() <= "https://".len() {
            return Err(ConfigError::BadBaseUrl(base_url.to_string()));
        }
        let quirks = quirks_for(&id.model);
        let token_budget = overrides.token_budget.unwrap_or(quirks.default_budget());
        let step_limit = overrides.step_limit.unwrap_or(DEFAULT_STEP_LIMIT);
        if token_budget == 0 {
            return Err(ConfigError::Zero("--max-output-tokens"));
        }
        if step_limit == 0 {
            return Err(ConfigError::Zero("--step-limit"));
        }
        Ok(ModelConfig {
            name: id.name(),
            provider: id.provider.clone(),
            model: id.model.clone(),
            base_url: base,
            api_key_env: overrides.api_key_env.clone(),
            quirks,
            token_budget,
            step_limit,
            tool_protocol: if overrides.text_protocol {
                ToolProtocol::Text
            } else {
                ToolProtocol::Native
            },
            tool_choice: overrides.tool_choice.clone(),
            lenient_calls: overrides.lenient_calls,
            tool_text: overrides.tool_text,
            server: None,
        })
    }

    /// Resolves a model from the command line: the provider table or `--base-url`, and the key
    /// from `--api-key-env` or the provider's variable. A known provider without its key, or a
    /// named variable that is unset, is an error now rather than 1 000 infra errors later.
    pub fn resolve(
        id: &ModelId,
        overrides: &ModelOverrides,
    ) -> Result<(ModelConfig, Option<ApiKey>), ConfigError> {
        let known = provider(&id.provider);
        let base_url = match (&overrides.base_url, known) {
            (Some(url), _) => url.clone(),
            (None, Some(p)) => p.base_url.to_string(),
            (None, None) => return Err(ConfigError::UnknownProvider(id.provider.clone())),
        };
        let key_env = overrides.api_key_env.clone().or_else(|| {
            known
                .filter(|_| overrides.base_url.is_none())
                .and_then(|p| p.key_env)
                .map(str::to_string)
        });
        let mut config = ModelConfig::new(id, &base_url, overrides)?;
        config.api_key_env = key_env.clone();
        let key = match key_env {
            Some(var) => Some(ApiKey::from_env(&var)?),
            None => None,
        };
        Ok((config, key))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_quirk_table_matches_paper_a7() {
        for m in [
            "gpt-5",
            "gpt-5-mini",
            "gpt-5.1",
            "openai/gpt-5",
            "o1",
            "o3-mini",
            "o4-mini",
            "GPT-5",
        ] {
            let q = quirks_for(m);
            assert_eq!(q.token_param, TokenParam::MaxCompletionTokens, "{m}");
            assert!(!q.temperature_zero && !q.stop && q.reasoning_class, "{m}");
            assert_eq!(q.default_budget(), 12_000, "{m}");
        }
        for m in [
            "gpt-4o",
            "gpt-4o-mini",
            "meta-llama/Llama-3.3-70B-Instruct-Turbo",
            "Qwen/Qwen2.5-7B-Instruct-Turbo",
            "claude-haiku-4-5",
            "olmo-2",
            "llama3.1:8b",
        ] {
            assert_eq!(quirks_for(m), Quirks::DEFAULT, "{m}");
            assert_eq!(quirks_for(m).default_budget(), 6_000, "{m}");
        }
        let fable = quirks_for("claude-fable-5");
        assert!(!fable.temperature_zero && fable.reasoning_class);
        assert_eq!(fable.token_param, TokenParam::MaxTokens);
        let sonnet = quirks_for("claude-sonnet-4-6");
        assert!(sonnet.temperature_zero && sonnet.reasoning_class);
    }

    #[test]
    fn model_ids_split_at_the_first_colon() {
        let id = ModelId::parse("ollama:llama3.1:8b").expect("valid");
        assert_eq!(
            (id.provider.as_str(), id.model.as_str()),
            ("ollama", "llama3.1:8b")
        );
        assert_eq!(id.name(), "ollama:llama3.1:8b");
        for bad in ["gpt-4o", ":gpt-4o", "openai:", ""] {
            assert!(ModelId::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn resolution_uses_the_table_or_the_base_url() {
        let o = ModelOverrides::default();
        let err = ModelConfig::resolve(&ModelId::parse("vllm:qwen").expect("id"), &o)
            .expect_err("no base url");
        assert_eq!(err, ConfigError::UnknownProvider("vllm".into()));
        // `local` is the server scripts/local-llm/start.sh starts: no flag, no key.
        let (c, key) = ModelConfig::resolve(&ModelId::parse("local:smollm2").expect("id"), &o)
            .expect("local needs neither --base-url nor a key");
        assert!(key.is_none() && c.api_key_env.is_none());
        assert_eq!(c.base_url, LOCAL_BASE_URL);
        let o = ModelOverrides {
            base_url: Some("http://127.0.0.1:8081/v1/".into()),
            ..ModelOverrides::default()
        };
        let (c, key) = ModelConfig::resolve(&ModelId::parse("local:qwen").expect("id"), &o)
            .expect("local needs no key");
        assert!(key.is_none());
        assert_eq!(c.base_url, "http://127.0.0.1:8081/v1");
        assert_eq!((c.token_budget, c.step_limit), (6_000, 30));
        let o = ModelOverrides {
            base_url: Some("ftp://x".into()),
            ..ModelOverrides::default()
        };
        assert!(matches!(
            ModelConfig::resolve(&ModelId::parse("local:q").expect("id"), &o),
            Err(ConfigError::BadBaseUrl(_))
        ));
        let o = ModelOverrides {
            api_key_env: Some("BENCHAUDIT_SURELY_UNSET_KEY_VAR_7F3A".into()),
            ..ModelOverrides::default()
        };
        assert!(matches!(
            ModelConfig::resolve(&ModelId::parse("openai:gpt-4o").expect("id"), &o),
            Err(ConfigError::Key(KeyError::Missing(_)))
        ));
    }

    #[test]
    fn overrides_replace_budget_and_step_limit_but_not_quirks() {
        let o = ModelOverrides {
            token_budget: Some(100),
            step_limit: Some(5),
            text_protocol: true,
            ..ModelOverrides::default()
        };
        let c = ModelConfig::new(&ModelId::parse("x:gpt-5").expect("id"), "http://h:1", &o)
            .expect("ok");
        assert_eq!(
            (c.token_budget, c.step_limit, c.tool_protocol),
            (100, 5, ToolProtocol::Text)
        );
        assert_eq!(c.quirks, Quirks::OPENAI_REASONING);
        let zero = ModelOverrides {
            step_limit: Some(0),
            ..ModelOverrides::default()
        };
        assert!(
            ModelConfig::new(&ModelId::parse("x:y").expect("id"), "http://h:1", &zero).is_err()
        );
    }
}
