//! LLM agents over OpenAI-compatible chat completions (SPEC §4.2): one policy that plays the
//! model at L0 (slot filling), L1 (retry or skip) and L2 (the model drives the tools), with
//! native tool calling or the `<tool_call>` text protocol, provider quirks as data, per-episode
//! output-token budgets and step limits, provider faults retried and kept out of the model's
//! decisions, and keys that never leave the `Authorization` header.
//!
//! - [`config`]: providers, quirk table, budgets, `PROVIDER:NAME`.
//! - [`client`]: HTTP, retries with backoff and `Retry-After`, timeouts, rate limits.
//! - [`messages`]: lenient wire types.
//! - [`prompts`]: what the model is told and how its L0/L1 answers are read.
//! - [`text_protocol`]: tools for models without native tool calling.
//! - [`policy`]: [`LlmPolicy`] and the per-run [`LlmAgent`] factory.
//! - [`secret`]: [`ApiKey`], redacted everywhere.

pub mod client;
pub mod config;
pub mod messages;
pub mod policy;
pub mod prompts;
pub mod secret;
pub mod text_protocol;

pub use client::{ChatClient, ClientConfig, ClientError, RateLimiter, RetryPolicy, ServerInfo};
pub use config::{ModelConfig, ModelId, ModelOverrides, Quirks, ToolProtocol};
pub use policy::{AgentError, AgentOptions, LlmAgent, LlmPolicy, build_agents, preflight_agents};
pub use secret::ApiKey;
