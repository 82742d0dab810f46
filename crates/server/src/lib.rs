//! ComtradeBench over REST and MCP: the episode state machine of `benchaudit_comtrade` served
//! to agents that speak HTTP or the Model Context Protocol.
//!
//! * [`run`] serves the REST API of SPEC §9 and MCP over streamable HTTP on a listener until a
//!   shutdown future resolves (`run(listener, config, shutdown)`, as mini-redis does it);
//!   [`serve_blocking`] wraps it with its own runtime and SIGINT/SIGTERM handling for the CLI.
//! * [`serve_stdio`] serves one episode over MCP on a pair of byte streams (stdin/stdout for
//!   [`serve_stdio_blocking`]).
//!
//! Episodes live in an app-owned store ([`store::EpisodeStore`]) addressed by unguessable ids,
//! under a cap with idle expiry; an evicted or expired episode answers 410, never a fresh
//! episode.
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
#![deny(missing_docs)]

pub mod answer;
pub mod app;
pub mod mcp;
pub mod metrics;
pub mod net;
pub mod rest;
pub mod store;

use std::future::Future;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use axum::extract::{DefaultBodyLimit, Path, Request, State};
use axum::http::Method;
use axum::response::{IntoResponse, Response};
use axum::routing;
use benchaudit_comtrade::{EpisodeOptions, TaskSpec};
use benchaudit_scoring::RewardScorer;
use rmcp::ServiceExt;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

pub use app::{App, CreateEpisode, Created};
pub use store::StoreLimits;

use crate::answer::Failure;
use crate::mcp::{BoundEpisode, EpisodeMcp};

/// Why serving failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// The address could not be bound (in use, not permitted, not local).
    #[error("cannot listen on {addr}: {source}")]
    Bind {
        /// The address asked for.
        addr: SocketAddr,
        /// The OS error.
        source: io::Error,
    },
    /// The async runtime could not start.
    #[error("cannot start the async runtime: {0}")]
    Runtime(io::Error),
    /// The HTTP server stopped on an IO error.
    #[error("server error: {0}")]
    Io(#[from] io::Error),
    /// The MCP session over stdio could not start or failed.
    #[error("MCP over stdio: {0}")]
    Mcp(String),
}

/// Limits and switches of a server. The defaults suit one machine serving many agents.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerConfig {
    /// Episode cap, idle expiry, tombstones, chunked-submission buffer.
    pub limits: StoreLimits,
    /// Largest request body accepted (413 past it), REST and MCP alike.
    pub max_body_bytes: usize,
    /// Most TCP connections open at once; more wait in the accept backlog.
    pub max_connections: usize,
    /// Most MCP sessions open at once on `/mcp` (each holds an episode and a task).
    pub max_mcp_sessions: usize,
    /// Host names (or host:port) MCP requests may name in `Host`, besides loopback; guards
    /// against DNS rebinding when the server is reachable from a browser.
    pub allowed_hosts: Vec<String>,
    /// How long shutdown waits for open connections before it stops anyway.
    pub drain_timeout: Duration,
}

impl Default for ServerConfig {
    fn default() -> Self {
        ServerConfig {
            limits: StoreLimits::default(),
            max_body_bytes: 16 << 20,
            max_connections: 10_000,
            max_mcp_sessions: 10_000,
            allowed_hosts: Vec::new(),
            drain_timeout: Duration::from_secs(10),
        }
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
}

/// Builds the whole HTTP app (REST, MCP, health, metrics) around `app`.
pub fn router(app: Arc<App>, config: &ServerConfig, cancel: CancellationToken) -> Router {
    let mut hosts: Vec<String> = vec!["localhost".into(), "127.0.0.1".into(), "::1".into()];
    hosts.extend(config.allowed_hosts.iter().cloned());
    let base = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(cancel)
        .with_max_request_body_bytes(config.max_body_bytes);
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
    // A session lives as long as its episode would.
    sessions.session_config.keep_alive = config.limits.idle_timeout;
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
    });
    let mcp_routes = Router::new()
        .route("/v1/episodes/{id}/mcp", routing::any(episode_mcp_route))
        .route("/mcp", routing::any(session_mcp_route))
        .route("/metrics", routing::get(metrics_route))
        .with_state(http);
    Router::new()
        .merge(rest::routes().with_state(Arc::clone(&app)))
        .merge(mcp_routes)
        .fallback(rest::not_found)
        .method_not_allowed_fallback(rest::method_not_allowed)
        .layer(DefaultBodyLimit::max(config.max_body_bytes))
        .layer(axum::middleware::from_fn_with_state(
            app,
            rest::count_responses,
        ))
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
    let (mut parts, body) = request.into_parts();
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
                "too many open MCP sessions; close one, or use POST /v1/episodes and its mcp_url",
            )
            .into_response();
        }
    }
    http.session_mcp.handle(request).await.map(Body::new)
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
         # HELP benchaudit_append_buffer_bytes Bytes held for chunked submissions.\n# TYPE benchaudit_append_buffer_bytes gauge\nbenchaudit_append_buffer_bytes {}\n",
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
/// MCP streams, and waits up to `drain_timeout` for open requests.
pub async fn run(
    listener: TcpListener,
    config: ServerConfig,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError> {
    let app = Arc::new(App::new(config.limits));
    let cancel = CancellationToken::new();
    let router = router(Arc::clone(&app), &config, cancel.clone());
    let sweeper = tokio::spawn(sweep(Arc::clone(&app), cancel.clone()));
    let listener = net::BoundedListener::new(listener, config.max_connections, app);
    let graceful = {
        let cancel = cancel.clone();
        async move {
            shutdown.await;
            cancel.cancel();
        }
    };
    let server = axum::serve(listener, router).with_graceful_shutdown(graceful);
    let drain = {
        let cancel = cancel.clone();
        async move {
            cancel.cancelled().await;
            tokio::time::sleep(config.drain_timeout).await;
        }
    };
    let result = tokio::select! {
        r = std::future::IntoFuture::into_future(server) => r.map_err(ServeError::Io),
        () = drain => Ok(()),
    };
    cancel.cancel();
    sweeper.abort();
    result
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
/// synchronous). `on_ready` is called with the bound address once the server listens.
pub fn serve_blocking(
    addr: SocketAddr,
    mut config: ServerConfig,
    on_ready: impl FnOnce(SocketAddr),
) -> Result<(), ServeError> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let result = rt.block_on(async move {
        let listener = TcpListener::bind(addr)
            .await
            .map_err(|source| ServeError::Bind { addr, source })?;
        let local = listener.local_addr()?;
        if !local.ip().is_unspecified() && !local.ip().is_loopback() {
            config.allowed_hosts.push(local.ip().to_string());
        }
        on_ready(local);
        run(listener, config, shutdown_signal()).await
    });
    rt.shutdown_timeout(Duration::from_secs(1));
    result
}

/// Serves one episode `(task, seed, options)` over MCP on `reader`/`writer` until the client
/// disconnects or `shutdown` resolves. Nothing but protocol messages is written to `writer`.
pub async fn serve_stdio<R, W>(
    task: &'static TaskSpec,
    seed: u64,
    options: EpisodeOptions,
    reward: RewardScorer,
    reader: R,
    writer: W,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> Result<(), ServeError>
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let app = Arc::new(App::new(StoreLimits {
        max_episodes: 1,
        idle_timeout: None,
        max_tombstones: 1,
        ..StoreLimits::default()
    }));
    let slot = app.store.create(task, seed, options, reward);
    metrics::inc(&app.metrics.episodes_created);
    let handler = EpisodeMcp::fixed(Arc::clone(&app), slot.id);
    let running = handler
        .serve((reader, writer))
        .await
        .map_err(|e| ServeError::Mcp(e.to_string()))?;
    let cancel = running.cancellation_token();
    let stopper = tokio::spawn(async move {
        shutdown.await;
        cancel.cancel();
    });
    let result = running.waiting().await;
    stopper.abort();
    result
        .map(|_| ())
        .map_err(|e| ServeError::Mcp(e.to_string()))
}

/// [`serve_stdio`] on stdin/stdout with its own runtime, stopping on SIGINT/SIGTERM.
pub fn serve_stdio_blocking(
    task: &'static TaskSpec,
    seed: u64,
    options: EpisodeOptions,
    reward: RewardScorer,
) -> Result<(), ServeError> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(ServeError::Runtime)?;
    let result = rt.block_on(serve_stdio(
        task,
        seed,
        options,
        reward,
        tokio::io::stdin(),
        tokio::io::stdout(),
        shutdown_signal(),
    ));
    // stdin is read on a blocking thread that may still wait for input: don't wait for it.
    rt.shutdown_timeout(Duration::from_millis(200));
    result
}
