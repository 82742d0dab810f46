//! The REST API of SPEC §9. Faults travel as real HTTP statuses (429, 500, 422 …) with the
//! tool envelope `{status, error, retry, retry_after_s?}` as the body; every failure of the
//! server itself (bad JSON, unknown route, body too large) uses the same envelope.
//!
//! Status policy for bad input: malformed JSON → 400; well-formed JSON of the wrong shape
//! (wrong types, missing or unknown fields) → 422; a body over the limit → 413; a body without
//! `Content-Type: application/json` (missing, or another type) → 415; an unknown or malformed
//! episode id → 404; an evicted or expired episode → 410; a second submission, or a page asked
//! for after it → 409. (Requiring the JSON content type keeps a browser page from posting here
//! with a "simple" cross-origin request, which cannot set it without a preflight.)

use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::rejection::{BytesRejection, PathRejection, QueryRejection};
use axum::extract::{Path, Query, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use axum::{Json, Router, routing};
use benchaudit_comtrade::{AppendArgs, FetchPageArgs, SubmitArgs};
use serde::de::DeserializeOwned;
use serde_json::{Value, json};

use crate::answer::Failure;
use crate::app::{App, CreateEpisode, truncate};
use crate::store::Slot;

impl IntoResponse for Failure {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        let mut response = (status, Json(self.to_json())).into_response();
        if let Some(secs) = self.envelope.retry_after_s {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from(secs));
        }
        response
    }
}

/// The REST routes (MCP routes are added by the caller).
pub fn routes() -> Router<Arc<App>> {
    Router::new()
        .route("/v1/tasks", routing::get(list_tasks))
        .route("/v1/episodes", routing::post(create_episode))
        .route("/v1/episodes/{id}", routing::get(get_episode))
        .route("/v1/episodes/{id}/task", routing::get(get_task))
        .route("/v1/episodes/{id}/pages/{page}", routing::get(get_page))
        .route("/v1/episodes/{id}/append", routing::post(append))
        .route("/v1/episodes/{id}/submit", routing::post(submit))
        .route("/healthz", routing::get(healthz))
}

/// Answers unknown routes with the JSON envelope.
pub async fn not_found(request: Request) -> Failure {
    Failure::new(
        404,
        format!(
            "no route {} {}",
            request.method(),
            truncate(request.uri().path())
        ),
    )
}

/// Answers known routes with the wrong method.
pub async fn method_not_allowed(request: Request) -> Failure {
    Failure::new(
        405,
        format!(
            "method {} not allowed on {}",
            request.method(),
            truncate(request.uri().path())
        ),
    )
}

/// Counts every response by status for `/metrics`.
pub async fn count_responses(
    State(app): State<Arc<App>>,
    request: Request,
    next: Next,
) -> Response {
    let response = next.run(request).await;
    app.metrics.response(response.status().as_u16());
    response
}

async fn healthz() -> Json<Value> {
    Json(json!({"status": "ok"}))
}

async fn list_tasks() -> Json<Value> {
    let tasks: Vec<Value> = benchaudit_comtrade::tasks()
        .iter()
        .map(|t| {
            let mut v = serde_json::to_value(t).unwrap_or(Value::Null);
            if let Value::Object(m) = &mut v {
                m.insert("total_pages".into(), t.total_pages().into());
            }
            v
        })
        .collect();
    Json(json!({ "tasks": tasks }))
}

/// Bodies larger than this are parsed on the CPU pool, not on an async worker.
const PARSE_INLINE_BYTES: usize = 256 * 1024;

/// Reads a JSON body and turns it into `T` with `parse`: content type (415 unless JSON), size
/// (413 past the limit), emptiness (400), then `parse` (400 for syntax, 422 for shape) — on the
/// CPU pool when the body is large.
async fn parse_body<T: Send + 'static>(
    app: &App,
    headers: &HeaderMap,
    body: Result<Bytes, BytesRejection>,
    parse: fn(&[u8]) -> Result<T, Failure>,
) -> Result<T, Failure> {
    let essence = headers
        .get(header::CONTENT_TYPE)
        .map(|ct| {
            ct.to_str()
                .unwrap_or("")
                .split(';')
                .next()
                .unwrap_or("")
                .trim()
                .to_ascii_lowercase()
        })
        .unwrap_or_default();
    if essence != "application/json" && !essence.ends_with("+json") {
        return Err(Failure::new(
            415,
            if essence.is_empty() {
                "a request body needs Content-Type: application/json".to_string()
            } else {
                format!(
                    "expected Content-Type application/json, got `{}`",
                    truncate(&essence)
                )
            },
        ));
    }
    let bytes = body.map_err(|rejection| {
        let status = rejection.status();
        if status == StatusCode::PAYLOAD_TOO_LARGE {
            Failure::new(413, "request body is larger than the server's limit")
        } else {
            Failure::new(status.as_u16(), rejection.body_text())
        }
    })?;
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Failure::new(
            400,
            "request body is empty; expected a JSON object",
        ));
    }
    if bytes.len() <= PARSE_INLINE_BYTES {
        return parse(&bytes);
    }
    app.cpu(move || parse(&bytes)).await?
}

/// Syntax: malformed JSON → 400.
fn json_value(bytes: &[u8]) -> Result<Value, Failure> {
    serde_json::from_slice(bytes).map_err(|e| Failure::new(400, format!("malformed JSON: {e}")))
}

/// Syntax, then shape: wrong shape → 422 naming the problem. Read straight from the bytes, so
/// a key given twice is refused (`duplicate field`) as the ledger reader refuses it, not
/// silently collapsed into its last value as a parsed JSON object would.
fn typed<T: DeserializeOwned>(bytes: &[u8]) -> Result<T, Failure> {
    serde_json::from_slice(bytes).map_err(|e| match e.classify() {
        serde_json::error::Category::Data => {
            Failure::new(422, format!("invalid request body: {e}"))
        }
        _ => Failure::new(400, format!("malformed JSON: {e}")),
    })
}

fn episode(app: &App, id: Result<Path<String>, PathRejection>) -> Result<Arc<Slot>, Failure> {
    let Path(id) = id.map_err(|r| Failure::new(404, r.body_text()))?;
    app.lookup(&id)
}

async fn create_episode(
    State(app): State<Arc<App>>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Failure> {
    let req: CreateEpisode = parse_body(&app, &headers, body, typed::<CreateEpisode>).await?;
    let slot = app.create(&req)?;
    let created = App::created(&slot);
    let location = HeaderValue::from_str(&format!("/v1/episodes/{}", created.episode_id)).ok();
    let mut response = (StatusCode::CREATED, Json(created)).into_response();
    if let Some(location) = location {
        response.headers_mut().insert(header::LOCATION, location);
    }
    Ok(response)
}

async fn get_episode(
    State(app): State<Arc<App>>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Json<Value>, Failure> {
    let slot = episode(&app, id)?;
    Ok(Json(app.status(&slot).await))
}

async fn get_task(
    State(app): State<Arc<App>>,
    id: Result<Path<String>, PathRejection>,
) -> Result<Response, Failure> {
    let slot = episode(&app, id)?;
    Ok(Json(app.task_info(&slot).await).into_response())
}

/// Arguments that cannot be read at all never reach the episode (no budget spent), as in the
/// released service where request validation ran before the handler; they get the one
/// tool-argument envelope ([`benchaudit_comtrade::argument_envelope`]) in-process tools and
/// MCP give for the same call.
fn argument_failure(slot: &Slot, e: &benchaudit_comtrade::ArgumentError) -> Failure {
    Failure::from(e.envelope(slot.options.interface))
}

async fn get_page(
    State(app): State<Arc<App>>,
    params: Result<Path<(String, String)>, PathRejection>,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, Failure> {
    let Path((id, page)) = params.map_err(|r| Failure::new(404, r.body_text()))?;
    page_answer(&app, &id, page, query).await
}

/// `GET /v1/episodes/{id}/pages/{page}` once its path is read: the route above and the page
/// lane ([`crate::lane`]) both answer with this, so the two cannot differ.
pub(crate) async fn page_answer(
    app: &App,
    id: &str,
    page: String,
    query: Result<Query<Vec<(String, String)>>, QueryRejection>,
) -> Result<Response, Failure> {
    let slot = app.lookup(id)?;
    let Query(query) = query.map_err(|e| {
        argument_failure(
            &slot,
            &benchaudit_comtrade::ArgumentError(format!(
                "invalid query string: {}",
                crate::answer::cap(&e.body_text(), 256)
            )),
        )
    })?;
    // The path and query are text: read them as `fetch_page`'s arguments with the parser
    // every door uses (lenient on integers written as strings; an unknown parameter is an
    // unknown argument), so `/pages/abc?pge=1` and `fetch_page(page="abc", pge="1")` get the
    // same envelope. An empty `page_size=` is no page_size.
    let mut args = serde_json::Map::new();
    args.insert("page".into(), Value::String(page));
    for (k, v) in query {
        if k == "page_size" && v.is_empty() {
            continue;
        }
        if args.contains_key(&k) {
            return Err(argument_failure(
                &slot,
                &benchaudit_comtrade::ArgumentError(format!(
                    "argument `{}` given twice",
                    truncate(&k)
                )),
            ));
        }
        args.insert(k, Value::String(v));
    }
    let FetchPageArgs { page, page_size } =
        FetchPageArgs::from_json(&Value::Object(args)).map_err(|e| argument_failure(&slot, &e))?;
    let (task, page) = app
        .fetch_page(&slot, FetchPageArgs { page, page_size })
        .await?;
    // The page's bytes straight from the rows (the same bytes `Json(PageBody)` would give;
    // see answer.rs), into a buffer sized once.
    let mut body = Vec::new();
    page.write_json(task, &mut body);
    Ok((
        [(
            header::CONTENT_TYPE,
            HeaderValue::from_static("application/json"),
        )],
        body,
    )
        .into_response())
}

async fn append(
    State(app): State<Arc<App>>,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Json<Value>, Failure> {
    let slot = episode(&app, id)?;
    let body = parse_body(&app, &headers, body, json_value).await?;
    let args = AppendArgs::from_json(&body).map_err(|e| argument_failure(&slot, &e))?;
    let held = app.append(slot, args.data_jsonl).await?;
    Ok(Json(json!({"appended": true, "records_held": held})))
}

async fn submit(
    State(app): State<Arc<App>>,
    id: Result<Path<String>, PathRejection>,
    headers: HeaderMap,
    body: Result<Bytes, BytesRejection>,
) -> Result<Response, Failure> {
    let slot = episode(&app, id)?;
    let body = parse_body(&app, &headers, body, json_value).await?;
    let args = SubmitArgs::from_json(&body).map_err(|e| argument_failure(&slot, &e))?;
    let answer = app.submit(slot, args).await?;
    Ok(Json(answer).into_response())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn failures_carry_status_and_retry_after() {
        let f = Failure::from(benchaudit_comtrade::ToolError {
            status: 429,
            error: "rate limit exceeded".into(),
            retry: true,
            retry_after_s: Some(1),
        });
        let r = f.into_response();
        assert_eq!(r.status(), StatusCode::TOO_MANY_REQUESTS);
        assert_eq!(
            r.headers()
                .get(header::RETRY_AFTER)
                .and_then(|v| v.to_str().ok()),
            Some("1")
        );
    }
}
