//! A scripted OpenAI-compatible server for the LLM tests: a tiny HTTP/1.1 server on
//! 127.0.0.1 (std only, one thread per connection, `Connection: close`) that records every
//! request and answers through a handler, plus scripted "models" that read the conversation
//! they are sent and answer the way a model would. The scripted models are stateless: every
//! decision is derived from the messages of the request, so they also check that the policy
//! turns the scaffold's history into a faithful conversation.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};

/// One request as the server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    /// Request method.
    pub method: String,
    /// Request path.
    pub path: String,
    /// Headers, names lower-cased.
    pub headers: Vec<(String, String)>,
    /// Raw body text.
    pub raw: String,
    /// Parsed body (Null when not JSON).
    pub body: Value,
}

impl Recorded {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
    }
}

/// What the server does with a request.
#[derive(Debug, Clone)]
pub enum Reply {
    /// A response.
    Json {
        status: u16,
        headers: Vec<(String, String)>,
        body: String,
    },
    /// Wait, then reply (the client may have given up by then).
    Delay(Duration, Box<Reply>),
    /// Close the connection without answering (a connection reset).
    Close,
}

impl Reply {
    pub fn ok(body: Value) -> Reply {
        Reply::Json {
            status: 200,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }
    pub fn status(status: u16, body: Value) -> Reply {
        Reply::Json {
            status,
            headers: Vec::new(),
            body: body.to_string(),
        }
    }
    pub fn with_header(self, name: &str, value: &str) -> Reply {
        match self {
            Reply::Json {
                status,
                mut headers,
                body,
            } => {
                headers.push((name.into(), value.into()));
                Reply::Json {
                    status,
                    headers,
                    body,
                }
            }
            other => other,
        }
    }
}

type Handler = dyn Fn(usize, &Recorded) -> Reply + Send + Sync;
type GetHandler = dyn Fn(&Recorded) -> Reply + Send + Sync;

/// A running scripted server. POSTs (chat completions) go to the handler and are recorded in
/// `requests`; GETs (a preflight's `/models`, `/props`) go to the GET handler, by default a
/// one-model list, and are recorded apart in `gets`.
pub struct Server {
    port: u16,
    requests: Arc<Mutex<Vec<Recorded>>>,
    gets: Arc<Mutex<Vec<Recorded>>>,
}

/// The default GET handler: `/models` lists one model, anything else is 404.
pub fn default_gets(r: &Recorded) -> Reply {
    if r.path.ends_with("/models") {
        Reply::ok(
            json!({"object": "list", "data": [{"id": "scripted", "object": "model", "owned_by": "benchaudit-tests"}]}),
        )
    } else {
        Reply::status(404, json!({"error": {"message": "not found"}}))
    }
}

impl Server {
    /// Starts a server whose handler gets (0-based request number, request).
    pub fn start(handler: impl Fn(usize, &Recorded) -> Reply + Send + Sync + 'static) -> Server {
        Server::start_with_gets(handler, default_gets)
    }

    /// A server with its own GET handler.
    pub fn start_with_gets(
        handler: impl Fn(usize, &Recorded) -> Reply + Send + Sync + 'static,
        gets: impl Fn(&Recorded) -> Reply + Send + Sync + 'static,
    ) -> Server {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind 127.0.0.1");
        let port = listener.local_addr().expect("addr").port();
        let requests = Arc::new(Mutex::new(Vec::new()));
        let get_log = Arc::new(Mutex::new(Vec::new()));
        let handler: Arc<Handler> = Arc::new(handler);
        let get_handler: Arc<GetHandler> = Arc::new(gets);
        let recs = Arc::clone(&requests);
        let get_recs = Arc::clone(&get_log);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (recs, handler) = (Arc::clone(&recs), Arc::clone(&handler));
                let (get_recs, get_handler) = (Arc::clone(&get_recs), Arc::clone(&get_handler));
                std::thread::spawn(move || {
                    serve(stream, &recs, &*handler, &get_recs, &*get_handler)
                });
            }
        });
        Server {
            port,
            requests,
            gets: get_log,
        }
    }

    /// Every GET so far.
    pub fn gets(&self) -> Vec<Recorded> {
        self.gets.lock().unwrap().clone()
    }

    /// `http://127.0.0.1:PORT/v1`.
    pub fn base_url(&self) -> String {
        format!("http://127.0.0.1:{}/v1", self.port)
    }

    /// Every request so far, in arrival order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.requests.lock().unwrap().clone()
    }
}

fn serve(
    stream: TcpStream,
    recs: &Mutex<Vec<Recorded>>,
    handler: &Handler,
    get_recs: &Mutex<Vec<Recorded>>,
    get_handler: &GetHandler,
) {
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(match stream.try_clone() {
        Ok(s) => s,
        Err(_) => return,
    });
    let mut line = String::new();
    if reader.read_line(&mut line).is_err() || line.is_empty() {
        return;
    }
    let method = line.split_whitespace().next().unwrap_or("").to_string();
    let path = line.split_whitespace().nth(1).unwrap_or("").to_string();
    let mut headers = Vec::new();
    loop {
        let mut h = String::new();
        if reader.read_line(&mut h).is_err() {
            return;
        }
        let h = h.trim_end();
        if h.is_empty() {
            break;
        }
        if let Some((k, v)) = h.split_once(':') {
            headers.push((k.trim().to_ascii_lowercase(), v.trim().to_string()));
        }
    }
    let len: usize = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0u8; len];
    if reader.read_exact(&mut body).is_err() {
        return;
    }
    let raw = String::from_utf8_lossy(&body).to_string();
    let rec = Recorded {
        method,
        path,
        headers,
        body: serde_json::from_str(&raw).unwrap_or(Value::Null),
        raw,
    };
    let mut reply = if rec.method == "GET" {
        get_recs.lock().unwrap().push(rec.clone());
        get_handler(&rec)
    } else {
        let index = {
            let mut r = recs.lock().unwrap();
            r.push(rec.clone());
            r.len() - 1
        };
        handler(index, &rec)
    };
    let mut stream = stream;
    loop {
        match reply {
            Reply::Delay(d, next) => {
                std::thread::sleep(d);
                reply = *next;
            }
            Reply::Close => {
                let _ = stream.shutdown(std::net::Shutdown::Both);
                return;
            }
            Reply::Json {
                status,
                headers,
                body,
            } => {
                let mut out = format!(
                    "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                    if status == 200 { "OK" } else { "Scripted" },
                    body.len()
                );
                for (k, v) in headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                out.push_str("\r\n");
                out.push_str(&body);
                let _ = stream.write_all(out.as_bytes());
                let _ = stream.flush();
                return;
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Scripted models.

/// What the policy asked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ask {
    /// L0: fill the slots.
    Slots,
    /// L1: retry or skip.
    Fault,
    /// L2 with native tools.
    Native,
    /// L2 with the text protocol.
    Text,
}

pub fn messages(req: &Value) -> Vec<Value> {
    req["messages"].as_array().cloned().unwrap_or_default()
}

fn content(m: &Value) -> String {
    m["content"].as_str().unwrap_or("").to_string()
}

pub fn classify(req: &Value) -> Ask {
    let msgs = messages(req);
    let system = msgs.first().map(content).unwrap_or_default();
    let last_user = msgs
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(content)
        .unwrap_or_default();
    if req.get("tools").is_some() {
        Ask::Native
    } else if system.contains("<tool_call>") {
        Ask::Text
    } else if last_user.contains("Retry or skip?") {
        Ask::Fault
    } else {
        assert!(
            last_user.contains("harness template"),
            "unrecognised request: {req}"
        );
        Ask::Slots
    }
}

/// A tool call the scripted model saw earlier and what it returned.
#[derive(Debug, Clone)]
pub struct Seen {
    pub name: String,
    pub args: Value,
    pub result: Value,
}

fn first_object(text: &str) -> Option<Value> {
    for (i, _) in text.match_indices('{') {
        let mut s = serde_json::Deserializer::from_str(&text[i..]).into_iter::<Value>();
        if let Some(Ok(v @ Value::Object(_))) = s.next() {
            return Some(v);
        }
    }
    None
}

/// The executed calls of a conversation, in order, from either protocol.
pub fn seen(req: &Value) -> Vec<Seen> {
    let msgs = messages(req);
    let mut out = Vec::new();
    match classify(req) {
        Ask::Native => {
            let mut calls: Vec<(String, String, Value)> = Vec::new();
            for m in &msgs {
                if m["role"] == "assistant" {
                    for c in m["tool_calls"].as_array().cloned().unwrap_or_default() {
                        let args = c["function"]["arguments"].as_str().unwrap_or("{}");
                        calls.push((
                            c["id"].as_str().unwrap_or("").to_string(),
                            c["function"]["name"].as_str().unwrap_or("").to_string(),
                            serde_json::from_str(args).unwrap_or(Value::String(args.into())),
                        ));
                    }
                }
                if m["role"] == "tool" {
                    let id = m["tool_call_id"].as_str().unwrap_or("");
                    let (_, name, args) = calls
                        .iter()
                        .find(|(i, _, _)| i == id)
                        .cloned()
                        .expect("tool message answers a call");
                    let result = serde_json::from_str(&content(m)).expect("tool content is JSON");
                    out.push(Seen { name, args, result });
                }
            }
        }
        Ask::Text => {
            let mut calls = Vec::new();
            let mut results = Vec::new();
            for m in &msgs[1..] {
                let c = content(m);
                if m["role"] == "assistant" {
                    for block in c.split("<tool_call>").skip(1) {
                        let body = block.split("</tool_call>").next().unwrap_or("");
                        let v = first_object(body).unwrap_or(Value::Null);
                        calls.push((
                            v["name"].as_str().unwrap_or("").to_string(),
                            v["arguments"].clone(),
                        ));
                    }
                }
                if m["role"] == "user" {
                    for block in c.split("<tool_response name=\"").skip(1) {
                        let json_text = block.split_once("\">\n").map(|x| x.1).unwrap_or("");
                        let json_text = json_text.split("\n</tool_response>").next().unwrap_or("");
                        results.push(
                            serde_json::from_str::<Value>(json_text)
                                .expect("tool response is JSON"),
                        );
                    }
                }
            }
            assert_eq!(calls.len(), results.len(), "every text call answered");
            for ((name, args), result) in calls.into_iter().zip(results) {
                out.push(Seen { name, args, result });
            }
        }
        _ => {}
    }
    out
}

static CALLS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// A reply making tool calls, in the request's protocol.
pub fn call_reply(req: &Value, calls: &[(&str, Value)], completion_tokens: u64) -> Value {
    let usage = json!({"prompt_tokens": 100, "completion_tokens": completion_tokens});
    if classify(req) == Ask::Text {
        let text: String = calls
            .iter()
            .map(|(n, a)| {
                format!(
                    "<tool_call>{}</tool_call>",
                    json!({"name": n, "arguments": a})
                )
            })
            .collect();
        return json!({"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}], "usage": usage});
    }
    let tool_calls: Vec<Value> = calls
        .iter()
        .map(|(n, a)| {
            let id = CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            json!({"id": format!("call_s{id}"), "type": "function", "function": {"name": n, "arguments": a.to_string()}})
        })
        .collect();
    json!({"id": "chatcmpl-1", "object": "chat.completion",
           "choices": [{"index": 0, "message": {"role": "assistant", "content": null, "tool_calls": tool_calls}, "finish_reason": "tool_calls"}],
           "usage": usage})
}

/// A plain text reply.
pub fn text_reply(text: &str, completion_tokens: u64) -> Value {
    json!({"choices": [{"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
           "usage": {"prompt_tokens": 50, "completion_tokens": completion_tokens}})
}

fn task_info_from_prompt(req: &Value) -> Value {
    let msgs = messages(req);
    let user = msgs
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(content)
        .unwrap_or_default();
    first_object(&user).expect("task info in the L0 prompt")
}

/// Submission arguments for `rows` (deduplicated by record_id, totals dropped).
pub fn submission(task_id: &str, rows: &[Value], log: &str) -> Value {
    let mut ids = BTreeSet::new();
    let mut lines = Vec::new();
    for r in rows {
        if r.get("is_total").is_some() || r.get("isTotal").is_some() {
            continue;
        }
        if ids.insert(r["record_id"].as_str().unwrap_or("").to_string()) {
            lines.push(r.to_string());
        }
    }
    let meta = json!({"task_id": task_id, "row_count": lines.len(),
        "schema": ["year","reporter","partner","flow","hs","cmdCode","tradeValue","netWeight","qty","record_id"],
        "dedup_key": ["year","reporter","partner","flow","hs","record_id"]});
    json!({"data_jsonl": lines.join("\n"), "metadata_json": meta.to_string(), "run_log": log})
}

/// The solver: get_task_info, every page (retrying faults), dedup, drop totals, submit. L0:
/// the task's own slots; L1: "retry".
pub fn solver(req: &Value) -> Value {
    match classify(req) {
        Ask::Slots => {
            let info = task_info_from_prompt(req);
            let q = &info["query"];
            let slots = json!({"reporter": q["reporter"], "partner": q["partner"], "flow": q["flow"],
                "hs": q["hs"], "year": q["year"], "start_page": 1, "max_pages": null});
            text_reply(&format!("```json\n{slots}\n```"), 30)
        }
        Ask::Fault => text_reply("retry", 1),
        Ask::Native | Ask::Text => {
            let steps = seen(req);
            let Some(last) = steps.last() else {
                return call_reply(req, &[("get_task_info", json!({}))], 20);
            };
            let info = steps
                .iter()
                .find(|s| s.name == "get_task_info")
                .map(|s| s.result.clone())
                .unwrap_or(Value::Null);
            let size = info["constraints"]["page_size"].as_u64().unwrap_or(10);
            let task_id = info["task_id"].as_str().unwrap_or("");
            let page = last.args["page"].as_i64().unwrap_or(0);
            if last.name == "get_task_info" {
                return call_reply(
                    req,
                    &[("fetch_page", json!({"page": 1, "page_size": size}))],
                    20,
                );
            }
            if last.name == "fetch_page" {
                if last.result.get("rows").is_some() && last.result["has_more"] == true {
                    return call_reply(
                        req,
                        &[("fetch_page", json!({"page": page + 1, "page_size": size}))],
                        20,
                    );
                }
                if last.result["retry"] == true {
                    return call_reply(req, &[("fetch_page", last.args.clone())], 20);
                }
            }
            let rows: Vec<Value> = steps
                .iter()
                .filter_map(|s| s.result["rows"].as_array().cloned())
                .flatten()
                .collect();
            call_reply(
                req,
                &[(
                    "submit_results",
                    submission(task_id, &rows, "INFO fetched every page; deduplicated"),
                )],
                200,
            )
        }
    }
}

/// Paper C.6's failure: opens with fetch_page(0), re-issues the identical rejected call, then
/// submits an empty payload. L0: asks to start at page 0; L1: "skip".
pub const PAGE_ZERO_REPEATS: usize = 5;

pub fn page_zero(req: &Value) -> Value {
    match classify(req) {
        Ask::Slots => {
            let info = task_info_from_prompt(req);
            let q = &info["query"];
            let slots = json!({"reporter": q["reporter"], "partner": q["partner"], "flow": q["flow"],
                "hs": q["hs"], "year": q["year"], "start_page": 0, "max_pages": 1});
            text_reply(&slots.to_string(), 30)
        }
        Ask::Fault => text_reply("Skip.", 2),
        Ask::Native | Ask::Text => {
            let steps = seen(req);
            if steps.len() < PAGE_ZERO_REPEATS {
                return call_reply(
                    req,
                    &[("fetch_page", json!({"page": 0, "page_size": 10}))],
                    20,
                );
            }
            call_reply(
                req,
                &[(
                    "submit_results",
                    submission(
                        "T3_duplicates",
                        &[],
                        "ERROR could not fetch the data; giving up",
                    ),
                )],
                100,
            )
        }
    }
}
