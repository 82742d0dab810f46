//! MCP over stdio as newline-delimited JSON: every request read gets its answer, and memory
//! stays bounded whether or not the client reads its output.
//!
//! * **Every line is accounted for.** A line over the limit, a line that is not JSON, a message
//!   the SDK cannot take, or a request reusing the id of a request still unanswered is answered
//!   here with a JSON-RPC error (see [`crate::jsonrpc`]) and logged to stderr; everything else
//!   goes to the SDK. When the input ends, the session ends only once the answer of every
//!   request read has been written: the end of input never cuts answers short, however slowly
//!   the client reads. If the output fails, reading stops and [`Flow::unanswered`] counts the
//!   requests read and left without an answer (the CLI exits non-zero with that count).
//! * **Backpressure.** The next line is taken only while fewer than [`MAX_PENDING_ANSWERS`]
//!   lines wait for their answer to be written and the bytes held — lines of requests not yet
//!   answered plus answers not yet written — are under [`MAX_HELD_BYTES`]. A client that stops
//!   reading its output therefore stops the server reading its input (the pipe fills, its
//!   writes block): what the server holds is bounded by these two limits, the longest line and
//!   the answers of the requests in flight, not by how much the client sends.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use bytes::BytesMut;
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientNotification, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::{Notify, mpsc};
use tokio::task::JoinHandle;
use tokio_util::codec::{Decoder, LinesCodec, LinesCodecError};

use crate::app::App;
use crate::jsonrpc::{self, INVALID_REQUEST, PARSE_ERROR, Rejection};
use crate::metrics::inc;

/// Default longest line (one message) accepted over stdio: the HTTP body limit.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 << 20;

/// Most lines read whose answer is not written yet; at this many the reader waits.
pub const MAX_PENDING_ANSWERS: usize = 32;

/// Bytes held for the client — lines of requests not yet answered and answers not yet
/// written — at which the reader waits before taking another line.
pub const MAX_HELD_BYTES: usize = 16 << 20;

/// The transport handed to the SDK: parsed messages in, messages out, both through tasks
/// that own the byte streams.
#[derive(Debug)]
pub struct LineTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    out: mpsc::UnboundedSender<Outgoing>,
    flow: Arc<Flow>,
}

/// The tasks behind a [`LineTransport`] and the account they keep.
#[derive(Debug)]
pub struct LineTasks {
    /// Reads and checks lines; ends once the input has ended and every answer is written, or
    /// the output has failed.
    pub reader: JoinHandle<()>,
    /// Writes lines in order (SDK messages and error replies alike).
    pub writer: JoinHandle<()>,
    /// Requests in flight and bytes held.
    pub flow: Arc<Flow>,
}

/// A line for the output and what writing it settles.
#[derive(Debug)]
struct Outgoing {
    line: Vec<u8>,
    settles: Settles,
}

#[derive(Debug)]
enum Settles {
    /// A message that answers no line (a notification).
    Nothing,
    /// An error written here for a line the SDK never saw.
    Rejection,
    /// The SDK's answer to the request with this id.
    Request(RequestId),
}

/// The account of lines read and answers written, shared by the reader, the SDK's sends and
/// the writer.
#[derive(Debug, Default)]
pub struct Flow {
    state: Mutex<FlowState>,
    /// Wakes the reader (the only waiter) when an answer is written or the output fails.
    changed: Notify,
}

#[derive(Debug, Default)]
struct FlowState {
    /// Requests handed to the SDK whose answer is not written yet, with their line's length.
    pending: HashMap<RequestId, usize>,
    /// Lines answered here whose error is not written yet.
    rejections: usize,
    /// Bytes of pending requests plus bytes of answers queued for the output.
    held_bytes: usize,
    /// Why the output failed, once it has.
    output_failed: Option<String>,
}

impl FlowState {
    fn waiting(&self) -> usize {
        self.pending.len() + self.rejections
    }
}

impl Flow {
    fn lock(&self) -> MutexGuard<'_, FlowState> {
        // The state stays consistent between statements; a panicking holder cannot break it.
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Lines read and not answered: requests whose answer was never written, and errors owed
    /// for lines the SDK never saw.
    pub fn unanswered(&self) -> usize {
        self.lock().waiting()
    }

    /// Why the output failed, if it did.
    pub fn output_failure(&self) -> Option<String> {
        self.lock().output_failed.clone()
    }

    /// Waits until `ready` holds (checked again after every change).
    async fn wait_until(&self, ready: impl Fn(&FlowState) -> bool) {
        loop {
            if ready(&self.lock()) {
                return;
            }
            // One waiter: a notification sent between the check and here is kept as a permit.
            self.changed.notified().await;
        }
    }

    /// Waits until another line may be taken; `false` once the output has failed.
    async fn wait_for_room(&self) -> bool {
        self.wait_until(|s| {
            s.output_failed.is_some()
                || (s.waiting() < MAX_PENDING_ANSWERS && s.held_bytes < MAX_HELD_BYTES)
        })
        .await;
        self.lock().output_failed.is_none()
    }

    /// Waits until every line read is answered, or the output has failed.
    async fn wait_settled(&self) {
        self.wait_until(|s| s.output_failed.is_some() || s.waiting() == 0)
            .await;
    }

    /// Records a request handed to the SDK; `false` if a request with its id is still
    /// unanswered (the SDK matches answers by id, so one of the two would go unanswered).
    fn begin_request(&self, id: &RequestId, bytes: usize) -> bool {
        let mut s = self.lock();
        if s.pending.contains_key(id) {
            return false;
        }
        s.pending.insert(id.clone(), bytes);
        s.held_bytes += bytes;
        true
    }

    fn begin_rejection(&self) {
        self.lock().rejections += 1;
    }

    /// A cancelled request: the SDK sends no answer for it (MCP's rule), so none is owed.
    fn cancelled(&self, id: &RequestId) {
        let mut s = self.lock();
        if let Some(bytes) = s.pending.remove(id) {
            s.held_bytes = s.held_bytes.saturating_sub(bytes);
        }
        drop(s);
        self.changed.notify_one();
    }

    fn queued(&self, bytes: usize) {
        self.lock().held_bytes += bytes;
    }

    fn written(&self, settles: &Settles, bytes: usize) {
        let mut s = self.lock();
        s.held_bytes = s.held_bytes.saturating_sub(bytes);
        match settles {
            Settles::Nothing => {}
            Settles::Rejection => s.rejections = s.rejections.saturating_sub(1),
            Settles::Request(id) => {
                if let Some(request) = s.pending.remove(id) {
                    s.held_bytes = s.held_bytes.saturating_sub(request);
                }
            }
        }
        drop(s);
        self.changed.notify_one();
    }

    fn failed(&self, why: String) {
        self.lock().output_failed.get_or_insert(why);
        self.changed.notify_one();
    }
}

/// Starts the tasks reading `reader` and writing `writer`.
pub fn line_transport<R, W>(
    reader: R,
    writer: W,
    max_line_bytes: usize,
    app: Arc<App>,
) -> (LineTransport, LineTasks)
where
    R: AsyncRead + Send + Unpin + 'static,
    W: AsyncWrite + Send + Unpin + 'static,
{
    let flow = Arc::new(Flow::default());
    let (in_tx, in_rx) = mpsc::channel(16);
    // Unbounded here because the reader's gate bounds it: at most MAX_PENDING_ANSWERS answers
    // (and MAX_HELD_BYTES) wait in it.
    let (out_tx, out_rx) = mpsc::unbounded_channel();
    let writer = tokio::spawn(write_lines(writer, out_rx, Arc::clone(&flow)));
    let reader = tokio::spawn(read_lines(
        reader,
        max_line_bytes,
        in_tx,
        out_tx.clone(),
        Arc::clone(&flow),
        app,
    ));
    (
        LineTransport {
            incoming: in_rx,
            out: out_tx,
            flow: Arc::clone(&flow),
        },
        LineTasks {
            reader,
            writer,
            flow,
        },
    )
}

async fn write_lines<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut lines: mpsc::UnboundedReceiver<Outgoing>,
    flow: Arc<Flow>,
) {
    while let Some(out) = lines.recv().await {
        // Flush each message: the client waits for it.
        let result = match writer.write_all(&out.line).await {
            Ok(()) => writer.flush().await,
            Err(e) => Err(e),
        };
        if let Err(e) = result {
            tracing::warn!(error = %e, "cannot write to the MCP client; stopping");
            flow.failed(e.to_string());
            return;
        }
        flow.written(&out.settles, out.line.len());
    }
}

fn encode(message: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).unwrap_or_else(|_| b"{}".to_vec());
    line.push(b'\n');
    line
}

/// Records a parsed message in the account before the SDK gets it: a request reusing the id of
/// one still unanswered is refused, a cancellation releases the request it cancels.
fn admit(
    flow: &Flow,
    message: ClientJsonRpcMessage,
    bytes: usize,
) -> Result<ClientJsonRpcMessage, Rejection> {
    match &message {
        JsonRpcMessage::Request(request) => {
            if !flow.begin_request(&request.id, bytes) {
                return Err(Rejection::new(
                    request.id.clone().into_json_value(),
                    INVALID_REQUEST,
                    format!(
                        "Invalid Request: id {} is already used by a request not yet answered; \
                         requests in flight need distinct ids",
                        request.id
                    ),
                ));
            }
        }
        JsonRpcMessage::Notification(n) => {
            if let ClientNotification::CancelledNotification(c) = &n.notification
                && let Some(id) = &c.params.request_id
            {
                flow.cancelled(id);
            }
        }
        JsonRpcMessage::Response(_) | JsonRpcMessage::Error(_) => {}
    }
    Ok(message)
}

async fn read_lines<R: AsyncRead + Unpin>(
    mut reader: R,
    max_line_bytes: usize,
    incoming: mpsc::Sender<ClientJsonRpcMessage>,
    out: mpsc::UnboundedSender<Outgoing>,
    flow: Arc<Flow>,
    app: Arc<App>,
) {
    let mut codec = LinesCodec::new_with_max_length(max_line_bytes);
    let mut buf = BytesMut::with_capacity(64 * 1024);
    let mut eof = false;
    loop {
        let decoded = if eof {
            codec.decode_eof(&mut buf)
        } else {
            codec.decode(&mut buf)
        };
        let line = match decoded {
            Ok(Some(line)) if line.trim().is_empty() => continue,
            Ok(Some(line)) => Ok(line),
            Ok(None) if eof => {
                // The session ends once every line read has its answer written (or the SDK
                // has ended by itself).
                tokio::select! {
                    () = flow.wait_settled() => {}
                    () = incoming.closed() => {}
                }
                return;
            }
            Ok(None) => {
                match reader.read_buf(&mut buf).await {
                    Ok(0) => eof = true,
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot read from the MCP client; ending the session");
                        eof = true;
                        buf.clear();
                    }
                }
                continue;
            }
            Err(LinesCodecError::MaxLineLengthExceeded) => Err(Rejection::new(
                Value::Null,
                INVALID_REQUEST,
                format!(
                    "Invalid Request: message longer than {max_line_bytes} bytes; it was skipped"
                ),
            )),
            Err(LinesCodecError::Io(e)) => Err(Rejection::new(
                Value::Null,
                PARSE_ERROR,
                format!("Parse error: {e}"),
            )),
        };
        // Backpressure: a line is taken only when its answer has room.
        if !flow.wait_for_room().await {
            return;
        }
        let rejection = match line.and_then(|line| {
            let message = jsonrpc::parse(line.as_bytes())?;
            admit(&flow, message, line.len())
        }) {
            Ok(message) => {
                if incoming.send(message).await.is_err() {
                    return; // the session ended
                }
                continue;
            }
            Err(rejection) => rejection,
        };
        flow.begin_rejection();
        inc(&app.metrics.jsonrpc_rejected);
        tracing::warn!(code = rejection.code, id = %rejection.id, "{}", rejection.message);
        let line = encode(&rejection.to_json());
        flow.queued(line.len());
        if out
            .send(Outgoing {
                line,
                settles: Settles::Rejection,
            })
            .is_err()
        {
            return;
        }
    }
}

impl Transport<RoleServer> for LineTransport {
    type Error = io::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let out = self.out.clone();
        let flow = Arc::clone(&self.flow);
        async move {
            let settles = match &item {
                JsonRpcMessage::Response(r) => Settles::Request(r.id.clone()),
                JsonRpcMessage::Error(e) => e.id.clone().map_or(Settles::Nothing, Settles::Request),
                JsonRpcMessage::Request(_) | JsonRpcMessage::Notification(_) => Settles::Nothing,
            };
            let mut line = serde_json::to_vec(&item).map_err(io::Error::other)?;
            line.push(b'\n');
            let bytes = line.len();
            flow.queued(bytes);
            out.send(Outgoing { line, settles }).map_err(|_| {
                flow.written(&Settles::Nothing, bytes);
                io::Error::new(io::ErrorKind::BrokenPipe, "MCP output closed")
            })
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.incoming.recv()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.incoming.close();
        Ok(())
    }
}
