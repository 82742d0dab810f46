//! The three tools over MCP (rmcp, the official Rust SDK), bound to episodes of the app-owned
//! store.
//!
//! How a handler finds its episode:
//! * `/v1/episodes/{id}/mcp` — the URL names it. The route checks the episode exists (404/410
//!   as HTTP statuses), then hands the request to rmcp with the id as a request extension; each
//!   tool call reads the id of its own HTTP request. Served statelessly, so it works under every
//!   protocol version, the session-less 2026-07-28 included.
//! * `/mcp?task_id=…&seed=…` — one episode per MCP session: rmcp builds one handler per session
//!   and its `initialize` opens the episode. Only clients that negotiate sessions (the
//!   `initialize` handshake) get one, so this endpoint offers only the protocol versions that
//!   have it: a client in auto mode probing with `server/discover` is refused the session-less
//!   2026-07-28 and falls back to `initialize` (the official Python SDK's `Client` and
//!   fastmcp's do); a session-less request is told to use `POST /v1/episodes`.
//!   A second `initialize` on the session naming other parameters is refused; when the session
//!   ends (closed, or idle past its lifetime) its episode leaves the store.
//! * stdio — one handler, one episode, for clients that spawn servers.
//!
//! Faults, argument errors, 409 and 410 come back as tool results with `isError: true` and the
//! envelope as structured content, so the model reads them; protocol errors are kept for
//! requests that cannot be routed at all (a tool the episode does not offer, `append_results`
//! outside the chunked protocol included), with the same envelope
//! ([`benchaudit_comtrade::unknown_tool`]) as the error's `data`.

use std::borrow::Cow;
use std::sync::{Arc, OnceLock};

use benchaudit_comtrade::{SubmissionProtocol, ToolText};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Extensions, Implementation,
    InitializeRequestParams, InitializeResult, JsonObject, ListToolsResult, PaginatedRequestParams,
    ProtocolVersion, ServerCapabilities, ServerConfig, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Map;
use serde_json::Value;

use crate::answer::Failure;
use crate::app::{App, CreateEpisode};
use crate::store::{EpisodeId, Slot};

/// The episode an `/v1/episodes/{id}/mcp` request is addressed to, put in the HTTP request's
/// extensions by the route so tool calls can find it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BoundEpisode(pub EpisodeId);

#[derive(Debug, Clone)]
enum Binding {
    /// stdio: one episode for the life of the process.
    Fixed(EpisodeId),
    /// `/v1/episodes/{id}/mcp`: the episode named by each request's URL.
    Url,
    /// `/mcp`: the episode opened by the session's `initialize`.
    Session(Arc<SessionEpisode>),
}

/// The episode of one `/mcp` session and what opened it. Dropped with the session's last
/// handler, which removes the episode from the store: nothing else can address it.
#[derive(Debug)]
struct SessionEpisode {
    app: Arc<App>,
    opened: OnceLock<(EpisodeId, CreateEpisode)>,
}

impl Drop for SessionEpisode {
    fn drop(&mut self) {
        if let Some((id, _)) = self.opened.get() {
            self.app.store.close(*id);
        }
    }
}

/// An MCP server handler serving the ComtradeBench tools of one episode.
#[derive(Debug, Clone)]
pub struct EpisodeMcp {
    app: Arc<App>,
    binding: Binding,
}

/// The tools of an episode under `protocol` (`append_results` only when chunked; the three of
/// every protocol when no episode is bound), `page` described in wording `text` (the same text
/// in-process LLM players are shown). Names, descriptions and argument schemas are
/// [`benchaudit_comtrade::tool_defs`]': the schemas state what the tools' parsers read.
pub fn tools(protocol: Option<SubmissionProtocol>, text: ToolText) -> Vec<Tool> {
    benchaudit_comtrade::tool_defs(protocol, text)
        .into_iter()
        .map(|def| {
            let schema = match def.input_schema {
                Value::Object(m) => m,
                _ => JsonObject::new(),
            };
            Tool::new(def.name, def.description, Arc::new(schema))
        })
        .collect()
}

impl EpisodeMcp {
    /// A handler for one fixed episode (stdio).
    pub fn fixed(app: Arc<App>, id: EpisodeId) -> Self {
        EpisodeMcp {
            app,
            binding: Binding::Fixed(id),
        }
    }

    /// A handler that serves the episode named by each request's URL (`/v1/episodes/{id}/mcp`).
    pub fn by_url(app: Arc<App>) -> Self {
        EpisodeMcp {
            app,
            binding: Binding::Url,
        }
    }

    /// A handler for one MCP session: `initialize` opens its episode (`/mcp`).
    pub fn per_session(app: Arc<App>) -> Self {
        EpisodeMcp {
            binding: Binding::Session(Arc::new(SessionEpisode {
                app: Arc::clone(&app),
                opened: OnceLock::new(),
            })),
            app,
        }
    }

    fn episode_id(&self, extensions: &Extensions) -> Option<EpisodeId> {
        match &self.binding {
            Binding::Fixed(id) => Some(*id),
            Binding::Url => extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<BoundEpisode>())
                .map(|b| b.0),
            Binding::Session(session) => session.opened.get().map(|(id, _)| *id),
        }
    }

    fn slot(&self, extensions: &Extensions) -> Result<Arc<Slot>, Failure> {
        let id = self.episode_id(extensions).ok_or_else(|| {
            Failure::new(
                400,
                "no episode is bound to this MCP connection: /mcp opens one per session (initialize with \
                 ?task_id=…&seed=…); session-less clients should POST /v1/episodes and connect to its mcp_url",
            )
        })?;
        self.app.lookup_id(id)
    }

    fn protocol(&self, extensions: &Extensions) -> Option<SubmissionProtocol> {
        let id = self.episode_id(extensions)?;
        let slot = self.app.store.get(id).ok()?;
        Some(slot.options.submission)
    }

    /// One tool call on the bound episode; `Err` with the episode's protocol (the default
    /// when none is bound) for a tool the episode does not offer.
    async fn call(
        &self,
        name: &str,
        args: Map<String, Value>,
        extensions: &Extensions,
    ) -> Result<Result<Value, Failure>, SubmissionProtocol> {
        if !crate::app::TOOL_NAMES.contains(&name) {
            return Err(self.protocol(extensions).unwrap_or_default());
        }
        let slot = match self.slot(extensions) {
            Ok(slot) => slot,
            Err(f) => return Ok(Err(f)),
        };
        let protocol = slot.options.submission;
        self.app.call_tool(slot, name, args).await.ok_or(protocol)
    }

    /// `/mcp`: a request after `initialize` whose query names other parameters than the ones
    /// that opened the session's episode is refused, not served by that episode unnoticed. A
    /// request without a query is the session's.
    fn same_session_query(&self, extensions: &Extensions) -> Result<(), ErrorData> {
        let Binding::Session(session) = &self.binding else {
            return Ok(());
        };
        let Some((id, opened)) = session.opened.get() else {
            return Ok(());
        };
        let query = extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.uri.query())
            .unwrap_or("");
        if query.is_empty() || parse_create_query(query).is_ok_and(|asked| asked == *opened) {
            return Ok(());
        }
        Err(ErrorData::invalid_params(
            format!(
                "this MCP session is bound to episode {id} (task_id {}, seed {}), but this request's URL asks for                  `{}`: a session serves only the episode it opened; open a new session (no Mcp-Session-Id) for another",
                opened.task_id,
                opened.seed,
                crate::answer::cap(query, 256)
            ),
            None,
        ))
    }

    async fn call_tool_inner(
        &self,
        request: CallToolRequestParams,
        extensions: &Extensions,
    ) -> Result<CallToolResult, ErrorData> {
        self.same_session_query(extensions)?;
        crate::metrics::inc(&self.app.metrics.mcp_tool_calls);
        let args = request.arguments.unwrap_or_default();
        let outcome = match self.call(&request.name, args, extensions).await {
            Ok(outcome) => outcome,
            Err(protocol) => {
                // A call that cannot be routed stays a protocol error (MCP's rule), carrying
                // the envelope every other door gives for it as its `data`.
                let envelope = benchaudit_comtrade::unknown_tool(&request.name, protocol);
                return Err(ErrorData::invalid_params(
                    envelope.error.clone(),
                    Some(envelope.to_json()),
                ));
            }
        };
        Ok(match outcome {
            Ok(value) => CallToolResult::structured(value),
            Err(failure) => CallToolResult::structured_error(failure.to_json()),
        })
    }

    /// `/mcp`: opens the session's episode from the query of the `initialize` request. A
    /// later `initialize` on the same session may repeat the same parameters; other ones are
    /// refused (the session keeps its episode).
    fn open_session_episode(&self, extensions: &Extensions) -> Result<(), ErrorData> {
        let Binding::Session(session) = &self.binding else {
            return Ok(());
        };
        let query = extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.uri.query())
            .unwrap_or("");
        let parsed = parse_create_query(query);
        if let Some((id, opened)) = session.opened.get() {
            return match parsed {
                Ok(req) if req == *opened => Ok(()),
                _ => Err(ErrorData::invalid_params(
                    format!(
                        "this MCP session is bound to episode {id} (task_id {}, seed {}); it cannot be \
                         re-initialised with other parameters: open a new session (no Mcp-Session-Id) for another episode",
                        opened.task_id, opened.seed
                    ),
                    None,
                )),
            };
        }
        let req = parsed.map_err(|e| ErrorData::invalid_params(e, None))?;
        let slot = self
            .app
            .create(&req)
            .map_err(|f| ErrorData::invalid_params(f.envelope.error, None))?;
        // rmcp serialises a session's messages, so two initializes cannot race here; if they
        // did, the first binding would win and the second episode would be closed at once.
        if let Err((id, _)) = session.opened.set((slot.id, req)) {
            self.app.store.close(id);
        }
        Ok(())
    }
}

/// Reads `/mcp`'s query (`task_id`, `seed`, and optionally `interface`, `submission`,
/// `max_requests`, `reward`) with the same rules as `POST /v1/episodes`' body.
pub fn parse_create_query(query: &str) -> Result<CreateEpisode, String> {
    let uri: axum::http::Uri = format!("/mcp?{query}")
        .parse()
        .map_err(|e| format!("invalid query string: {e}"))?;
    let axum::extract::Query(req) = axum::extract::Query::<CreateEpisode>::try_from_uri(&uri)
        .map_err(|e| {
            format!(
                "/mcp needs ?task_id=…&seed=… to open an episode: {}",
                crate::answer::cap(&e.body_text(), 256)
            )
        })?;
    req.task().map_err(|f| f.envelope.error)?;
    Ok(req)
}

impl ServerHandler for EpisodeMcp {
    fn get_info(&self) -> ServerConfig {
        let mut info = InitializeResult::new(ServerCapabilities::builder().enable_tools().build());
        info.server_info = Implementation::new("benchaudit", env!("CARGO_PKG_VERSION"));
        info.instructions = Some(
            "ComtradeBench: fetch every record of a paginated trade-data API that injects faults, clean the \
             records (deduplicate, drop totals rows) and submit them once. Start with get_task_info."
                .into(),
        );
        info
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        self.open_session_episode(&context.extensions)?;
        context.peer.set_peer_info(request.clone());
        self.negotiate_initialize(&request)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        self.same_session_query(&context.extensions)?;
        Ok(ListToolsResult::with_all_items(tools(
            self.protocol(&context.extensions),
            self.app.tool_text,
        )))
    }

    /// `/mcp` binds its episode to the session `initialize` opens, so it offers only the
    /// protocol versions that have that handshake: a client probing with `server/discover`
    /// (the session-less 2026-07-28) is told so and falls back to `initialize`. stdio and
    /// `/v1/episodes/{id}/mcp` know their episode without a session and serve every version.
    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        match self.binding {
            Binding::Session(_) => Cow::Borrowed(ProtocolVersion::known_up_to(
                &ProtocolVersion::LATEST_WITH_INITIALIZE,
            )),
            Binding::Fixed(_) | Binding::Url => Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
        }
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools(Some(SubmissionProtocol::Chunked), self.app.tool_text)
            .into_iter()
            .find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call_tool_inner(request, &context.extensions)
            .await
            .map(CallToolResponse::from)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_argument_has_a_described_schema() {
        for t in tools(Some(SubmissionProtocol::Chunked), ToolText::Clarified) {
            let schema = Value::Object(t.input_schema.as_ref().clone());
            assert_eq!(schema["type"], "object", "{}", t.name);
            assert_eq!(schema["additionalProperties"], false, "{}", t.name);
            let props = schema["properties"]
                .as_object()
                .cloned()
                .unwrap_or_default();
            for (name, prop) in &props {
                assert!(
                    prop["description"].as_str().is_some_and(|d| d.len() > 20),
                    "{}.{name} has no description: {prop}",
                    t.name
                );
                // A doc comment's wrap must not reach the text a model reads (fetch_page's
                // arguments; the other tools' texts are being moved to one place).
                assert!(
                    t.name != "fetch_page"
                        || !prop["description"].as_str().unwrap_or("").contains('\n'),
                    "{}.{name}'s description has a line break: {prop}",
                    t.name
                );
            }
            let expected: &[&str] = match t.name.as_ref() {
                "get_task_info" => &[],
                "fetch_page" => &["page", "page_size"],
                "submit_results" => &[
                    "data_jsonl",
                    "data",
                    "record_ids",
                    "metadata_json",
                    "metadata",
                    "run_log",
                ],
                "append_results" => &["data_jsonl"],
                other => panic!("unexpected tool {other}"),
            };
            let mut names: Vec<&str> = props.keys().map(String::as_str).collect();
            names.sort_unstable();
            let mut want = expected.to_vec();
            want.sort_unstable();
            assert_eq!(names, want, "{}", t.name);
        }
        assert_eq!(
            tools(Some(SubmissionProtocol::Full), ToolText::Clarified).len(),
            3
        );
        assert_eq!(tools(None, ToolText::Clarified).len(), 3);
    }

    #[test]
    fn the_page_text_is_the_in_process_one_in_either_wording() {
        for text in ToolText::ALL {
            let listed = tools(None, text);
            let fetch = listed
                .iter()
                .find(|t| t.name == "fetch_page")
                .expect("fetch_page");
            let schema = Value::Object(fetch.input_schema.as_ref().clone());
            assert_eq!(
                schema["properties"]["page"]["description"],
                text.page_description(),
                "{text}"
            );
        }
        let ambiguous = tools(None, ToolText::Ambiguous);
        let schema = Value::Object(ambiguous[1].input_schema.as_ref().clone());
        let d = schema["properties"]["page"]["description"]
            .as_str()
            .unwrap_or("");
        assert!(!d.contains("1-based") && !d.contains("Page 0"), "{d}");
    }

    #[test]
    fn only_endpoints_that_know_their_episode_offer_the_session_less_protocol() {
        let app = Arc::new(App::new(crate::store::StoreLimits::default()));
        let modern = |h: &EpisodeMcp| {
            h.supported_protocol_versions()
                .iter()
                .any(|v| !v.has_initialize())
        };
        // /mcp binds its episode at `initialize`: handshake versions only, the newest kept.
        let session = EpisodeMcp::per_session(Arc::clone(&app));
        assert!(!modern(&session));
        assert!(
            session
                .supported_protocol_versions()
                .contains(&ProtocolVersion::LATEST_WITH_INITIALIZE)
        );
        assert!(modern(&EpisodeMcp::by_url(Arc::clone(&app))));
        let slot = app.store.create(
            benchaudit_comtrade::task("T1_single_page").expect("registry"),
            1,
            benchaudit_comtrade::EpisodeOptions::default(),
            benchaudit_scoring::RewardScorer::F1,
            None,
        );
        assert!(modern(&EpisodeMcp::fixed(app, slot.id)));
    }

    #[test]
    fn session_query_is_validated() {
        let ok =
            parse_create_query("task_id=T4_rate_limit_429&seed=9&interface=strict&reward=judge")
                .expect("valid");
        assert_eq!(
            (ok.seed, ok.interface, ok.reward),
            (
                9,
                benchaudit_comtrade::InterfaceProfile::Strict,
                benchaudit_scoring::RewardScorer::Judge
            )
        );
        for bad in [
            "",
            "task_id=T4_rate_limit_429",
            "task_id=nope&seed=1",
            "task_id=T1_single_page&seed=x",
            "task_id=T1_single_page&seed=1&extra=2",
        ] {
            assert!(parse_create_query(bad).is_err(), "{bad}");
        }
    }
}
