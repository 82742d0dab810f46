//! ComtradeBench over REST and MCP: the episode state machine of `benchaudit_comtrade` served
//! to agents that speak HTTP or the Model Context Protocol.
//!
//! * [`run`] serves the REST API of SPEC §9 and MCP over streamable HTTP on a listener until a
//!   shutdown future resolves (`run(listener, config, shutdown)`, as mini-redis does it);
//!   [`serve_blocking`] wraps it with its own runtime and SIGINT/SIGTERM handling for the CLI.
//! * The same listener speaks the OpenEnv environment protocol ([`openenv`]: `/ws` sessions
//!   with reset, step, state; `/reset`, `/step`, `/state`, `/schema`, `/health`,
//!   `/metadata`), so RL trainers and OpenEnv clients play episodes of the same store.
//! * [`serve_stdio`] serves one episode over MCP on a pair of byte streams (stdin/stdout for
//!   [`serve_stdio_blocking`]).
//!
//! Episodes live in an app-owned store ([`store::EpisodeStore`]) addressed by unguessable,
//! self-certifying ids, under a cap with idle expiry; every id the server issued answers 410
//! once its episode is gone, never a fresh episode.
//!
//! One hostile client cannot stall the rest: connections are capped and closed after a
//! header-read or idle timeout ([`net`]); bodies are read whole under a size limit and a
//! deadline, and `Host` must be a known name ([`gate`]); a plain page fetch, the call agents
//! make most, skips the router through the page lane ([`lane`]) but gets the route's own
//! answer; scoring, chunk assembly and parsing of large bodies run on a CPU pool of one job
//! per core ([`App::cpu`]) and episodes use async locks, so the async workers always answer
//! `/healthz` and other episodes.
//!
//! ```
//! use benchaudit_server::{ServerConfig, run};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let listener = benchaudit_server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
//! let addr = listener.local_addr().unwrap();
//! let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
//! let server = tokio::spawn(run(listener, ServerConfig::default(), async move { let _ = stopped.await; }));
//! // … agents talk to http://{addr}/v1/… and http://{addr}/mcp …
//! # let _ = addr;
//! stop.send(()).unwrap();
//! server.await.unwrap().unwrap();
//! # });
//! ```
//!
//! Why one long file: it is the server's wiring (configuration and its validated ranges, the
//! router, the accept loop with its limits, shutdown, stdio); each piece is short and they are
//! read together when a limit changes.
#![deny(missing_docs)]

pub mod answer;
pub mod app;
pub mod gate;
pub mod jsonrpc;
pub mod lane;
pub mod mcp;
mod mcp_page;
pub mod metrics;
pub mod net;
pub mod openenv;
pub mod record;
pub mod rest;
pub mod stdio;
pub mod store;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::{Method, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing;
use benchaudit_comtrade::{EpisodeOptions, TaskSpec};
use benchaudit_scoring::RewardScorer;
use http_body_util::BodyExt;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use app::{App, CreateEpisode, Created};
pub use store::StoreLimits;

use crate::answer::Failure;
use crate::mcp::{BoundEpisode, EpisodeMcp};
use crate::metrics::inc;

/// Why serving failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The address could not be bound (in use, not permitted, not local). The OS error is
    /// the source, not repeated in the message, so a printed chain states it once.
    #[error("cannot listen on {addr}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        source: io::Error,
    },
    /// A limit is outside its range.
    #[error("invalid server configuration: {0}")]
    Config(String),
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(io::Error),
    /// The HTTP server stopped on an IO error.
    #[error("server error")]
    Io(#[from] io::Error),
    /// The MCP session over stdio could not start or failed.
    #[error("MCP over stdio: {0}")]
    Mcp(String),
    /// What the caller prepares once the address is bound (a ledger to record into) failed.
    #[error("{0}")]
    Setup(String),
    /// The MCP session over stdio ended with requests read but not answered.
    #[error("MCP over stdio: {count} message line(s) read were not answered: {cause}")]
    Unanswered {
        /// Lines read whose answer was never written.
        count: usize,
        /// Why the session ended before answering them.
        cause: String,
    },
}

/// Limits and switches of a server. The defaults suit one machine serving many agents;
/// [`ServerConfig::RANGES`] lists what [`ServerConfig::validate`] accepts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Episode cap, idle expiry, tombstones, chunked-submission buffer.
    pub limits: StoreLimits,
    /// Largest request body accepted (413 past it), REST and MCP alike.
    pub max_body_bytes: usize,
    /// Most TCP connections open at once; more wait in the accept backlog.
    pub max_connections: usize,
    /// A request head must arrive within this, counted from when the connection opens or the
    /// previous response ends; so an idle keep-alive connection closes after it too.
    pub header_timeout: Duration,
    /// A whole request body must arrive within this after its head (408 past it).
    pub body_timeout: Duration,
    /// A connection that moves no byte for this long is closed (a stalled upload, a client
    /// that stops reading). Must exceed the 15 s keep-alive of MCP event streams.
    pub connection_idle_timeout: Duration,
    /// Most MCP sessions open at once on `/mcp` (each holds an episode and a task); past it
    /// new sessions answer 503.
    pub max_mcp_sessions: usize,
    /// An `/mcp` session with no request for this long is closed, and its episode with it.
    pub mcp_session_timeout: Duration,
    /// Host names (or host:port) requests may name in `Host`, besides loopback; guards
    /// against DNS rebinding when the server is reachable from a browser.
    pub allowed_hosts: Vec<String>,
    /// How long shutdown waits for open connections before it stops anyway.
    pub drain_timeout: Duration,
    /// Where accepted submissions are recorded (`serve --ledger`); none by default.
    pub recorder: Option<record::RecorderHandle>,
    /// The wording of `fetch_page`'s `page` argument the tool lists show (`--tool-text`).
    pub tool_text: benchaudit_comtrade::ToolText,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            limits: StoreLimits::default(),
            max_body_bytes: 16 << 20,
            max_connections: 10_000,
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            connection_idle_timeout: Duration::from_secs(60),
            max_mcp_sessions: 10_000,
            mcp_session_timeout: Duration::from_secs(600),
            allowed_hosts: Vec::new(),
            drain_timeout: Duration::from_secs(10),
            recorder: None,
            tool_text: benchaudit_comtrade::ToolText::default(),
        }
    }
}

/// A documented range of one limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    /// The CLI flag that sets it.
    pub flag: &'static str,
    /// Smallest value.
    pub min: u64,
    /// Largest value.
    pub max: u64,
    /// Unit ("", "bytes", "seconds").
    pub unit: &'static str,
}

impl ServerConfig {
    /// The ranges [`ServerConfig::validate`] enforces (and the CLI documents).
    pub const RANGES: [Range; 9] = [
        Range {
            flag: "--max-episodes",
            min: 1,
            max: 10_000_000,
            unit: "",
        },
        Range {
            flag: "--idle-timeout",
            min: 0,
            max: 31_536_000,
            unit: "seconds (0 = never)",
        },
        Range {
            flag: "--max-connections",
            min: 1,
            max: 1_000_000,
            unit: "",
        },
        Range {
            flag: "--max-body-bytes",
            min: 1024,
            max: 1 << 30,
            unit: "bytes",
        },
        Range {
            flag: "--header-timeout",
            min: 1,
            max: 3600,
            unit: "seconds",
        },
        Range {
            flag: "--body-timeout",
            min: 1,
            max: 3600,
            unit: "seconds",
        },
        Range {
            flag: "--connection-idle-timeout",
            min: 20,
            max: 86_400,
            unit: "seconds",
        },
        Range {
            flag: "--max-mcp-sessions",
            min: 1,
            max: 1_000_000,
            unit: "",
        },
        Range {
            flag: "--mcp-session-timeout",
            min: 1,
            max: 86_400,
            unit: "seconds",
        },
    ];

    /// Checks every limit against [`ServerConfig::RANGES`].
    pub fn validate(&self) -> Result<(), ServeError> {
        let secs = |d: Duration| d.as_secs();
        let idle = self.limits.idle_timeout.map_or(0, secs);
        let values = [
            self.limits.max_episodes as u64,
            idle,
            self.max_connections as u64,
            self.max_body_bytes as u64,
            secs(self.header_timeout),
            secs(self.body_timeout),
            secs(self.connection_idle_timeout),
            self.max_mcp_sessions as u64,
            secs(self.mcp_session_timeout),
        ];
        for (range, value) in Self::RANGES.iter().zip(values) {
            if !(range.min..=range.max).contains(&value) {
                return Err(ServeError::Config(format!(
                    "{} must be between {} and {}{}, got {value}",
                    range.flag,
                    range.min,
                    range.max,
                    if range.unit.is_empty() {
                        String::new()
                    } else {
                        format!(" {}", range.unit)
                    }
                )));
            }
        }
        Ok(())
    }
}

/// What the HTTP routes share.
struct Http {
    app: Arc<App>,
    /// `/v1/episodes/{id}/mcp`: stateless, JSON responses, the episode named by the URL.
    episode_mcp: StreamableHttpService<EpisodeMcp, NeverSessionManager>,
    /// `/mcp`: one session, one handler, one episode.
    session_mcp: StreamableHttpService<EpisodeMcp, LocalSessionManager>,
    sessions: Arc<LocalSessionManager>,
    max_sessions: usize,
    session_timeout: Duration,
}

/// The HTTP service a server runs around `app`: the whole app (REST, MCP, OpenEnv, health,
/// metrics) as one router, behind the page lane ([`lane`]).
pub fn service(app: Arc<App>, config: &ServerConfig, cancel: CancellationToken) -> lane::PageLane {
    let gate = Arc::new(gate::Gate::new(
        &config.allowed_hosts,
        config.max_body_bytes,
        config.body_timeout,
    ));
    let router = router(Arc::clone(&app), config, cancel, Arc::clone(&gate));
    lane::PageLane::new(router, app, gate)
}

/// The router of every route, behind `gate` (which the lane checks too).
fn router(
    app: Arc<App>,
    config: &ServerConfig,
    cancel: CancellationToken,
    gate: Arc<gate::Gate>,
) -> Router {
    let mut hosts: Vec<String> = gate::LOOPBACK_HOSTS.iter().map(|h| h.to_string()).collect();
    hosts.extend(config.allowed_hosts.iter().cloned());
    let openenv = openenv::routes(Arc::new(openenv::OpenEnv::new(
        Arc::clone(&app),
        &config.allowed_hosts,
        config.max_body_bytes,
        config.connection_idle_timeout,
        cancel.clone(),
    )));
    let base = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(cancel)
        .with_max_request_body_bytes(config.max_body_bytes)
        // Event streams ping well inside the connection idle timeout.
        .with_sse_keep_alive(Some(
            (config.connection_idle_timeout / 3).min(Duration::from_secs(15)),
        ));
    let episode_mcp = {
        let app = Arc::clone(&app);
        StreamableHttpService::new(
            move || Ok(EpisodeMcp::by_url(Arc::clone(&app))),
            Arc::new(NeverSessionManager::default()),
            base.clone()
                .with_legacy_session_mode(false)
                .with_json_response(true),
        )
    };
    let mut sessions = LocalSessionManager::default();
    sessions.session_config.keep_alive = Some(config.mcp_session_timeout);
    let sessions = Arc::new(sessions);
    let session_mcp = {
        let app = Arc::clone(&app);
        StreamableHttpService::new(
            move || Ok(EpisodeMcp::per_session(Arc::clone(&app))),
            Arc::clone(&sessions),
            base.with_legacy_session_mode(true),
        )
    };
    let http = Arc::new(Http {
        app: Arc::clone(&app),
        episode_mcp,
        session_mcp,
        sessions,
        max_sessions: config.max_mcp_sessions,
        session_timeout: config.mcp_session_timeout,
    });
    let mcp_routes = Router::new()
        .route("/v1/episodes/{id}/mcp", routing::any(episode_mcp_route))
        .route("/mcp", routing::any(session_mcp_route))
        .route("/metrics", routing::get(metrics_route))
        .with_state(http);
    Router::new()
        .merge(rest::routes().with_state(Arc::clone(&app)))
        .merge(mcp_routes)
        .merge(openenv)
        .fallback(rest::not_found)
        .method_not_allowed_fallback(rest::method_not_allowed)
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(gate, gate::check))
        .layer(axum::middleware::from_fn_with_state(
            app,
            rest::count_responses,
        ))
}

/// Bodies larger than this are checked on the CPU pool.
const CHECK_INLINE_BYTES: usize = 256 * 1024;

/// Checks a POST to an MCP endpoint as JSON-RPC before the SDK sees it: a malformed message
/// gets its JSON-RPC error response here ([`jsonrpc`]). Returns the request to pass on, or the
/// answer. Requests that are not JSON POSTs are left to the SDK (406, 415, …).
async fn check_jsonrpc(app: &App, request: Request) -> Result<Request, Response> {
    let is_json = request
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').next())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("application/json"));
    if request.method() != Method::POST || !is_json {
        return Ok(request);
    }
    let (parts, body) = request.into_parts();
    // The gate has already read the body whole; this only takes it.
    let bytes: Bytes = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            return Err(
                Failure::new(400, format!("cannot read the request body: {e}")).into_response(),
            );
        }
    };
    // The full parse, as over stdio: a message the SDK's own types refuse (too deeply nested,
    // params of another shape) is a JSON-RPC error here too, never the SDK's plain-text 415.
    let check = |bytes: &[u8]| jsonrpc::parse(bytes).map(drop);
    let checked = if bytes.len() <= CHECK_INLINE_BYTES {
        check(&bytes)
    } else {
        let job = bytes.clone();
        match app.cpu(move || check(&job)).await {
            Ok(checked) => checked,
            Err(failure) => return Err(failure.into_response()),
        }
    };
    match checked {
        Ok(()) => Ok(Request::from_parts(parts, Body::from(bytes))),
        Err(rejection) => {
            inc(&app.metrics.jsonrpc_rejected);
            tracing::debug!(code = rejection.code, "{}", rejection.message);
            let status =
                StatusCode::from_u16(rejection.http_status()).unwrap_or(StatusCode::BAD_REQUEST);
            Err((status, axum::Json(rejection.to_json())).into_response())
        }
    }
}

async fn episode_mcp_route(
    State(http): State<Arc<Http>>,
    Path(id): Path<String>,
    request: Request,
) -> Response {
    let slot = match http.app.lookup(&id) {
        Ok(slot) => slot,
        Err(failure) => return failure.into_response(),
    };
    let request = match check_jsonrpc(&http.app, request).await {
        Ok(request) => request,
        Err(answer) => return answer,
    };
    let (mut parts, body) = request.into_parts();
    // The gate has already read the body whole (and `check_jsonrpc` a JSON one).
    let body = match body.collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(e) => {
            return Failure::new(400, format!("cannot read the request body: {e}")).into_response();
        }
    };
    // A plain `fetch_page` call is answered from the page's bytes; anything else by the SDK.
    let body =
        match mcp_page::try_answer(&http.app, &slot, &parts.method, &parts.headers, body).await {
            Ok(answer) => return answer,
            Err(body) => Body::from(body),
        };
    parts.extensions.insert(BoundEpisode(slot.id));
    drop(slot);
    http.episode_mcp
        .handle(Request::from_parts(parts, body))
        .await
        .map(Body::new)
}

async fn session_mcp_route(State(http): State<Arc<Http>>, request: Request) -> Response {
    let opens_session =
        request.method() == Method::POST && !request.headers().contains_key("mcp-session-id");
    if opens_session {
        if let Err(e) = mcp::parse_create_query(request.uri().query().unwrap_or("")) {
            return Failure::new(422, e).into_response();
        }
        if http.sessions.sessions.read().await.len() >= http.max_sessions {
            return Failure::new(
                503,
                format!(
                    "too many open MCP sessions (the server's cap is {}; idle sessions close after {} s): close one, \
                     or use POST /v1/episodes and its mcp_url",
                    http.max_sessions,
                    http.session_timeout.as_secs()
                ),
            )
            .into_response();
        }
    }
    let request = match check_jsonrpc(&http.app, request).await {
        Ok(request) => request,
        Err(answer) => return answer,
    };
    let deletes = request.method() == Method::DELETE;
    let mut response = http.session_mcp.handle(request).await.map(Body::new);
    // The SDK answers a closed session 202; MCP clients (the Python SDK among them) expect 200
    // or 204 for DELETE, and log anything else as a failed termination.
    if deletes && response.status() == StatusCode::ACCEPTED {
        *response.status_mut() = StatusCode::NO_CONTENT;
    }
    response
}

async fn metrics_route(State(http): State<Arc<Http>>) -> Response {
    let sessions = http.sessions.sessions.read().await.len();
    let store = &http.app.store;
    let mut text =
        http.app
            .metrics
            .render(store.len(), store.limits().max_episodes, store.departures());
    text.push_str(&format!(
        "# HELP benchaudit_mcp_sessions_open MCP sessions open on /mcp.\n# TYPE benchaudit_mcp_sessions_open gauge\nbenchaudit_mcp_sessions_open {sessions}\n\
         # HELP benchaudit_mcp_sessions_max Cap on MCP sessions open on /mcp (new ones answer 503 past it).\n# TYPE benchaudit_mcp_sessions_max gauge\nbenchaudit_mcp_sessions_max {}\n\
         # HELP benchaudit_mcp_session_timeout_seconds An /mcp session idle this long is closed with its episode.\n# TYPE benchaudit_mcp_session_timeout_seconds gauge\nbenchaudit_mcp_session_timeout_seconds {}\n\
         # HELP benchaudit_append_buffer_bytes Bytes held for chunked submissions.\n# TYPE benchaudit_append_buffer_bytes gauge\nbenchaudit_append_buffer_bytes {}\n",
        http.max_sessions,
        http.session_timeout.as_secs(),
        store.appended_bytes()
    ));
    (
        [(
            axum::http::header::CONTENT_TYPE,
            "text/plain; version=0.0.4; charset=utf-8",
        )],
        text,
    )
        .into_response()
}

/// Expires idle episodes in the background until `cancel`.
async fn sweep(app: Arc<App>, cancel: CancellationToken) {
    let Some(idle) = app.store.limits().idle_timeout else {
        return;
    };
    let mut tick =
        tokio::time::interval((idle / 8).clamp(Duration::from_millis(20), Duration::from_secs(10)));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            () = cancel.cancelled() => return,
            _ = tick.tick() => { app.store.sweep_expired(); }
        }
    }
}

/// Serves REST and MCP on `listener` until `shutdown` resolves, then stops accepting, ends
/// MCP streams, closes idle connections, and waits up to `drain_timeout` for open requests.
/// Fails at once, serving nothing, if `config` is outside [`ServerConfig::RANGES`].
pub async fn run(
    listener: TcpListener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    config.validate()?;
    let app = Arc::new(
        App::new(config.limits)
            .with_recorder(config.recorder.as_ref().map(|r| Arc::clone(&r.0)))
            .with_tool_text(config.tool_text),
    );
    let cancel = CancellationToken::new();
    let service = service(Arc::clone(&app), &config, cancel.clone());
    let sweeper = tokio::spawn(sweep(Arc::clone(&app), cancel.clone()));
    let mut listener =
        net::BoundedListener::new(listener, config.max_connections, Arc::clone(&app));
    let limits = net::ConnectionLimits {
        header_timeout: config.header_timeout,
        idle_timeout: config.connection_idle_timeout,
    };
    let connections = TaskTracker::new();
    let stop = cancel.clone();
    let signal = tokio::spawn(async move {
        shutdown.await;
        stop.cancel();
    });
    loop {
        let stream = tokio::select! {
            biased;
            () = cancel.cancelled() => break,
            stream = listener.accept() => stream,
        };
        connections.spawn(net::serve_connection(
            stream,
            service.clone(),
            limits,
            cancel.clone(),
            Arc::clone(&app),
        ));
    }
    drop(listener);
    connections.close();
    let _ = tokio::time::timeout(config.drain_timeout, connections.wait()).await;
    signal.abort();
    sweeper.abort();
    Ok(())
}

/// Resolves on SIGINT (Ctrl-C) or SIGTERM. If a signal handler cannot be installed, that
/// signal is simply not awaited.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}

/// Accept backlog asked of the kernel (which caps it at `net.core.somaxconn`). A burst of
/// clients connecting at once must not overflow it: Linux then drops the handshake's final ACK
/// and the client's first request can end in a connection reset.
pub const ACCEPT_BACKLOG: u32 = 4096;

/// Binds a listener for [`run`] with [`ACCEPT_BACKLOG`].
pub fn bind(addr: SocketAddr) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() {
        tokio::net::TcpSocket::new_v4()?
    } else {
        tokio::net::TcpSocket::new_v6()?
    };
    // Rebinding right after a restart must not wait out TIME_WAIT.
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(ACCEPT_BACKLOG)
}

/// Serves REST and MCP on `addr` until SIGINT/SIGTERM, on a runtime of its own (the CLI stays
/// synchronous). `on_ready` is called with the bound address once the server listens and before
/// it serves: what it prepares (e.g. the ledger of `serve --ledger`, set into the
/// configuration) is made only once the address is known to be free, so a failed bind leaves
/// nothing behind. An error from it stops the server before it serves.
pub fn serve_blocking(
    addr: SocketAddr,
    mut config: ServerConfig,
    on_ready: impl FnOnce(SocketAddr, &mut ServerConfig) -> Result<(), ServeError>,
) -> Result<(), ServeError> {
    config.validate()?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let result = rt.block_on(async move {
        let listener = bind(addr).map_err(|source| ServeError::Bind { addr, source })?;
        let local = listener.local_addr()?;
        if !local.ip().is_unspecified() && !local.ip().is_loopback() {
            config.allowed_hosts.push(local.ip().to_string());
        }
        on_ready(local, &mut config)?;
        run(listener, config, shutdown_signal()).await
    });
    rt.shutdown_timeout(Duration::from_secs(1));
    result
}

/// One episode served over stdio: what it is and the longest line accepted.
#[derive(Debug, Clone, Copy)]
pub struct StdioEpisode {
    /// The task.
    pub task: &'static TaskSpec,
    /// The seed.
    pub seed: u64,
    /// Interface, submission protocol, budget override.
    pub options: EpisodeOptions,
    /// Primary scorer.
    pub reward: RewardScorer,
    /// Longest message line accepted; a longer one is skipped and answered with an error.
    pub max_line_bytes: usize,
    /// The wording of `fetch_page`'s `page` argument the tool list shows.
    pub tool_text: benchaudit_comtrade::ToolText,
}

/// Serves one episode over MCP on `reader`/`writer` until the input ends and every answer is
/// written, or `shutdown` resolves. Nothing but protocol messages is written to `writer`; every
/// line read gets its answer, malformed ones a JSON-RPC error, and a client that stops reading
/// stops the server reading ([`stdio`]: the backpressure contract and its limits).
///
/// # Errors
/// [`ServeError::Unanswered`] with the count when lines read were left without an answer (the
/// output failed, or `shutdown` came first); [`ServeError::Mcp`] when the session failed.
pub async fn serve_stdio<R, W>(
    episode: StdioEpisode,
    reader: R,
    writer: W,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let app = Arc::new(
        App::new(StoreLimits {
            max_episodes: 1,
            idle_timeout: None,
            max_tombstones: 1,
            ..StoreLimits::default()
        })
        .with_tool_text(episode.tool_text),
    );
    let slot = app.store.create(
        episode.task,
        episode.seed,
        episode.options,
        episode.reward,
        None,
    );
    inc(&app.metrics.episodes_created);
    let handler = EpisodeMcp::fixed(Arc::clone(&app), slot.id);
    let (transport, tasks) =
        stdio::line_transport(reader, writer, episode.max_line_bytes, Arc::clone(&app));
    let mut stopped = false;
    let result = match handler.serve(transport).await {
        Err(e) => Err(ServeError::Mcp(e.to_string())),
        Ok(running) => {
            let cancel = running.cancellation_token();
            let (stop_tx, mut stop_rx) = tokio::sync::oneshot::channel::<()>();
            let stopper = tokio::spawn(async move {
                shutdown.await;
                let _ = stop_tx.send(());
                cancel.cancel();
            });
            let result = running.waiting().await;
            stopped = stop_rx.try_recv().is_ok();
            stopper.abort();
            result
                .map(|_| ())
                .map_err(|e| ServeError::Mcp(e.to_string()))
        }
    };
    // After the input ended the reader has returned; otherwise (a signal, a failed output or
    // handshake) it may still wait on input. The writer then writes what was queued and ends;
    // a client that no longer reads cannot hold the process past the bound.
    tasks.reader.abort();
    let _ = tokio::time::timeout(Duration::from_secs(5), tasks.writer).await;
    let count = tasks.flow.unanswered();
    if count == 0 {
        return result;
    }
    let cause = match (tasks.flow.output_failure(), result) {
        (Some(why), _) => {
            format!("writing to the client failed ({why}); the rest of the input was not read")
        }
        (None, Err(e)) => e.to_string(),
        (None, Ok(())) if stopped => "the server was stopped by a signal".to_string(),
        (None, Ok(())) => "the session ended before their answers were written".to_string(),
    };
    Err(ServeError::Unanswered { count, cause })
}

/// [`serve_stdio`] on stdin/stdout with its own runtime, stopping on SIGINT/SIGTERM.
pub fn serve_stdio_blocking(episode: StdioEpisode) -> Result<(), ServeError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let result = rt.block_on(serve_stdio(
        episode,
        tokio::io::stdin(),
        tokio::io::stdout(),
        shutdown_signal(),
    ));
    // stdin is read on a blocking thread that may still wait for input: don't wait for it.
    rt.shutdown_timeout(Duration::from_millis(200));
    result
}
