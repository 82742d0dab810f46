//! Shared by the integration tests: an in-process server on 127.0.0.1:0 with its client
//! ([`Fixture`]: create episodes, connect MCP, read `/metrics`), clients for REST and MCP
//! behind one `Api` trait, and rule policies (oracle, empty, no-dedup) that run the same way
//! against any of them and against an in-process episode (the reference).
#![allow(clippy::unwrap_used, clippy::expect_used, dead_code)]

use std::collections::BTreeMap;
use std::future::Future;
use std::net::SocketAddr;

use benchaudit_comtrade::{Episode, EpisodeOptions, FetchPageArgs, SubmitArgs, task};
use benchaudit_scoring::{RewardScorer, Scores};
use benchaudit_server::ServerConfig;
use benchaudit_server::answer::SubmitAnswer;
use rmcp::model::{CallToolRequestParams, ClientConfig, ProtocolVersion};
use rmcp::service::RunningService;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{Value, json};

/// A server running in this process.
pub struct TestServer {
    pub addr: SocketAddr,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    handle: Option<tokio::task::JoinHandle<Result<(), benchaudit_server::ServeError>>>,
}

impl TestServer {
    pub async fn start(config: ServerConfig) -> Self {
        let listener = benchaudit_server::bind("127.0.0.1:0".parse().unwrap()).unwrap();
        let addr = listener.local_addr().unwrap();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let handle = tokio::spawn(benchaudit_server::run(listener, config, async move {
            let _ = stopped.await;
        }));
        TestServer {
            addr,
            stop: Some(stop),
            handle: Some(handle),
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.addr)
    }

    /// Stops the server and waits for `run` to return.
    pub async fn shutdown(mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        if let Some(handle) = self.handle.take() {
            tokio::time::timeout(std::time::Duration::from_secs(10), handle)
                .await
                .unwrap()
                .unwrap()
                .unwrap();
        }
    }
}

pub fn client() -> reqwest::Client {
    reqwest::Client::builder().no_proxy().build().unwrap()
}

/// A server and a client for it: what nearly every test starts with.
pub struct Fixture {
    pub server: TestServer,
    pub http: reqwest::Client,
}

impl Fixture {
    pub async fn start(config: ServerConfig) -> Self {
        Fixture {
            server: TestServer::start(config).await,
            http: client(),
        }
    }

    pub fn url(&self, path: &str) -> String {
        self.server.url(path)
    }

    /// `POST /v1/episodes`, returning the episode id.
    pub async fn create(&self, body: Value) -> String {
        create(&self.http, &self.server, body).await
    }

    /// A REST client of a new episode.
    pub async fn rest(&self, body: Value) -> (String, Rest) {
        let id = self.create(body).await;
        let rest = Rest::new(self.http.clone(), &self.server, &id);
        (id, rest)
    }

    /// An MCP client (latest protocol) of a new episode's URL.
    pub async fn mcp(&self, body: Value) -> (String, Mcp) {
        let id = self.create(body).await;
        let mcp = connect(self.url(&format!("/v1/episodes/{id}/mcp"))).await;
        (id, mcp)
    }

    /// `GET path`: (status, JSON body).
    pub async fn get(&self, path: &str) -> (u16, Value) {
        let r = self.http.get(self.url(path)).send().await.unwrap();
        let status = r.status().as_u16();
        (status, r.json().await.unwrap())
    }

    pub async fn metrics(&self) -> Metrics {
        metrics(&self.http, &self.server).await
    }

    pub async fn shutdown(self) {
        self.server.shutdown().await;
    }
}

/// `GET /metrics`.
pub async fn metrics(http: &reqwest::Client, server: &TestServer) -> Metrics {
    Metrics(
        http.get(server.url("/metrics"))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap(),
    )
}

/// `/metrics` text.
pub struct Metrics(pub String);

impl Metrics {
    /// Asserts the exposition has exactly this line.
    pub fn assert_line(&self, line: impl AsRef<str>) {
        let line = line.as_ref();
        assert!(
            self.0.lines().any(|l| l == line),
            "missing {line:?} in\n{}",
            self.0
        );
    }

    /// The value of a sample (name with labels, as written).
    pub fn value(&self, sample: &str) -> Option<f64> {
        self.0
            .lines()
            .find_map(|l| l.strip_prefix(sample)?.strip_prefix(' ')?.parse().ok())
    }
}

/// An MCP client (latest protocol) of `url`.
pub async fn connect(url: String) -> Mcp {
    let client =
        ().serve(StreamableHttpClientTransport::from_uri(url))
            .await
            .expect("MCP handshake");
    Mcp { client }
}

/// An MCP client of `url` under protocol 2025-11-25, which keeps sessions.
pub async fn connect_legacy(url: String) -> RunningService<RoleClient, ClientConfig> {
    let mut info = ClientConfig::default();
    info.protocol_version = ProtocolVersion::V_2025_11_25;
    info.serve(StreamableHttpClientTransport::from_uri(url))
        .await
        .expect("MCP handshake")
}

/// `POST /v1/episodes`, returning the episode id.
pub async fn create(http: &reqwest::Client, server: &TestServer, body: Value) -> String {
    let r = http
        .post(server.url("/v1/episodes"))
        .json(&body)
        .send()
        .await
        .unwrap();
    assert_eq!(r.status(), 201, "{body}");
    let v: Value = r.json().await.unwrap();
    v["episode_id"].as_str().unwrap().to_string()
}

/// What a policy needs from an episode, whatever carries it.
pub trait Api: Send {
    fn task_info(&mut self) -> impl Future<Output = Value> + Send;
    /// Ok(page) or Err(envelope).
    fn fetch(&mut self, page: i64) -> impl Future<Output = Result<Value, Value>> + Send;
    fn submit(&mut self, args: Value) -> impl Future<Output = Result<Value, Value>> + Send;
    fn append(&mut self, data: String) -> impl Future<Output = Result<Value, Value>> + Send;
}

/// The reference: the pure episode, scored in process.
pub struct InProcess {
    pub episode: Episode,
    pub reward: RewardScorer,
}

impl InProcess {
    pub fn new(task_id: &str, seed: u64, options: EpisodeOptions) -> Self {
        InProcess {
            episode: Episode::new(task(task_id).unwrap(), seed, options),
            reward: RewardScorer::F1,
        }
    }
}

impl Api for InProcess {
    async fn task_info(&mut self) -> Value {
        serde_json::to_value(self.episode.get_task_info()).unwrap()
    }
    async fn fetch(&mut self, page: i64) -> Result<Value, Value> {
        let t = self.episode.task();
        self.episode
            .fetch_page(FetchPageArgs {
                page,
                page_size: None,
            })
            .map(|p| p.to_json(t))
            .map_err(|e| e.to_json())
    }
    async fn submit(&mut self, args: Value) -> Result<Value, Value> {
        let t = self.episode.task();
        let seed = self.episode.seed();
        let s = self
            .episode
            .submit_results(SubmitArgs::from_json(&args).unwrap())
            .map_err(|e| e.to_json())?;
        let answer = SubmitAnswer::from_scores(Scores::compute(t, seed, &s), self.reward);
        // Through text, as the remote answers come: serde_json's default float parsing may
        // land one ulp away from the printed value, the same way on both sides.
        Ok(serde_json::from_str(&serde_json::to_string(&answer).unwrap()).unwrap())
    }
    async fn append(&mut self, data: String) -> Result<Value, Value> {
        self.episode
            .append_results(&data)
            .map(|n| json!({"appended": true, "records_held": n}))
            .map_err(|e| e.to_json())
    }
}

/// An episode over REST.
pub struct Rest {
    pub http: reqwest::Client,
    pub base: String,
    /// HTTP statuses of every fetch, for checking faults travel as statuses.
    pub statuses: Vec<u16>,
}

impl Rest {
    pub fn new(http: reqwest::Client, server: &TestServer, id: &str) -> Self {
        Rest {
            http,
            base: server.url(&format!("/v1/episodes/{id}")),
            statuses: Vec::new(),
        }
    }

    async fn answer(r: reqwest::Response) -> (u16, Value) {
        let status = r.status().as_u16();
        assert_eq!(
            r.headers()
                .get("content-type")
                .and_then(|v| v.to_str().ok()),
            Some("application/json"),
            "every REST answer is JSON"
        );
        (status, r.json().await.unwrap())
    }
}

impl Api for Rest {
    async fn task_info(&mut self) -> Value {
        let (status, v) = Self::answer(
            self.http
                .get(format!("{}/task", self.base))
                .send()
                .await
                .unwrap(),
        )
        .await;
        assert_eq!(status, 200, "{v}");
        v
    }
    async fn fetch(&mut self, page: i64) -> Result<Value, Value> {
        let r = self
            .http
            .get(format!("{}/pages/{page}", self.base))
            .send()
            .await
            .unwrap();
        let retry_after = r
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .map(str::to_string);
        let (status, v) = Self::answer(r).await;
        self.statuses.push(status);
        if status == 200 {
            return Ok(v);
        }
        assert_eq!(
            v["status"], status,
            "the envelope's status is the HTTP status: {v}"
        );
        assert_eq!(
            retry_after.is_some(),
            v.get("retry_after_s").is_some(),
            "Retry-After mirrors retry_after_s: {v}"
        );
        Err(v)
    }
    async fn submit(&mut self, args: Value) -> Result<Value, Value> {
        let (status, v) = Self::answer(
            self.http
                .post(format!("{}/submit", self.base))
                .json(&args)
                .send()
                .await
                .unwrap(),
        )
        .await;
        if status == 200 { Ok(v) } else { Err(v) }
    }
    async fn append(&mut self, data: String) -> Result<Value, Value> {
        let r = self
            .http
            .post(format!("{}/append", self.base))
            .json(&json!({"data_jsonl": data}))
            .send()
            .await
            .unwrap();
        let (status, v) = Self::answer(r).await;
        if status == 200 { Ok(v) } else { Err(v) }
    }
}

/// An episode over MCP (any transport).
pub struct Mcp {
    pub client: RunningService<RoleClient, ()>,
}

pub fn obj(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        other => panic!("not an object: {other}"),
    }
}

impl Mcp {
    /// Calls a tool: Ok(structured content) or Err(structured content of an isError result).
    pub async fn call(&self, name: &'static str, args: Value) -> Result<Value, Value> {
        let r = self
            .client
            .call_tool(CallToolRequestParams::new(name).with_arguments(obj(args)))
            .await
            .unwrap();
        let content = r.structured_content.clone().expect("structured content");
        if r.is_error == Some(true) {
            Err(content)
        } else {
            Ok(content)
        }
    }
}

impl Api for Mcp {
    async fn task_info(&mut self) -> Value {
        self.call("get_task_info", json!({})).await.unwrap()
    }
    async fn fetch(&mut self, page: i64) -> Result<Value, Value> {
        self.call("fetch_page", json!({"page": page})).await
    }
    async fn submit(&mut self, args: Value) -> Result<Value, Value> {
        self.call("submit_results", args).await
    }
    async fn append(&mut self, data: String) -> Result<Value, Value> {
        self.call("append_results", json!({"data_jsonl": data}))
            .await
    }
}

/// Rule policies with known outcomes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Policy {
    /// Retries transient faults, drops totals, dedups by record_id, re-fetches drift: F1 = 1.
    Oracle,
    /// As the oracle but keeps duplicates: precision < 1 where duplicates are served.
    NoDedup,
    /// Submits nothing: F1 = 0.
    Empty,
}

/// The submission schema: the canonical fields in served order.
pub const SCHEMA: [&str; 10] = benchaudit_scoring::f1::FIELDS;

/// Runs `policy` to the end of the episode and returns the submit answer.
pub async fn run_policy<A: Api>(api: &mut A, policy: Policy) -> Value {
    let info = api.task_info().await;
    let c = &info["constraints"];
    let page_size = c["page_size"].as_u64().unwrap();
    let total_rows = c["total_rows"].as_u64().unwrap();
    let budget = c["max_requests"].as_u64().unwrap();
    let total_pages = total_rows.div_ceil(page_size) as i64;
    let protocol = if info["instructions"]
        .as_str()
        .unwrap()
        .contains("append_results")
    {
        "chunked"
    } else {
        "full"
    };
    let mut unique: BTreeMap<String, Value> = BTreeMap::new();
    let mut kept: Vec<Value> = Vec::new();
    let mut log = vec![format!("info task_id={} start", info["task_id"])];
    let mut requests = 0;
    if policy != Policy::Empty {
        'passes: while (unique.len() as u64) < total_rows {
            for page in 1..=total_pages {
                loop {
                    if requests >= budget {
                        log.push("warn budget spent, stop".into());
                        break 'passes;
                    }
                    requests += 1;
                    match api.fetch(page).await {
                        Ok(body) => {
                            for row in body["rows"].as_array().unwrap() {
                                if row.get("is_total") == Some(&Value::Bool(true)) {
                                    continue;
                                }
                                unique.insert(
                                    row["record_id"].as_str().unwrap().to_string(),
                                    row.clone(),
                                );
                                kept.push(row.clone());
                            }
                            log.push(format!("info page={page} request={requests} ok"));
                            break;
                        }
                        Err(e)
                            if e["retry"] == true && (e["status"] == 429 || e["status"] == 500) =>
                        {
                            log.push(format!("warn page={page} request={requests} status {} retrying with exponential backoff", e["status"]));
                        }
                        Err(e) => {
                            log.push(format!("error page={page} request={requests} {e}"));
                            break 'passes;
                        }
                    }
                }
            }
        }
    }
    let rows: Vec<&Value> = match policy {
        Policy::Oracle => unique.values().collect(),
        Policy::NoDedup => kept.iter().collect(),
        Policy::Empty => Vec::new(),
    };
    let data: String = rows
        .iter()
        .map(|r| format!("{}\n", serde_json::to_string(r).unwrap()))
        .collect();
    log.push("info complete".into());
    let metadata = json!({
        "task_id": info["task_id"], "query": info["query"], "row_count": rows.len(),
        "schema": SCHEMA, "dedup_key": ["year", "reporter", "partner", "flow", "hs", "record_id"],
        "request_count": requests,
    });
    let mut args = json!({"metadata_json": metadata.to_string(), "run_log": log.join("\n")});
    if protocol == "chunked" && !data.is_empty() {
        // Two chunks, then the submit with no data of its own.
        let lines: Vec<&str> = data.lines().collect();
        let (a, b) = lines.split_at(lines.len() / 2);
        api.append(a.join("\n")).await.unwrap();
        api.append(b.join("\n")).await.unwrap();
    } else {
        args["data_jsonl"] = Value::String(data);
    }
    api.submit(args).await.unwrap()
}
