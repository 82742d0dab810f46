//! MCP over stdio as newline-delimited JSON, with every line accounted for: a line over the
//! limit, a line that is not JSON, or a message the SDK cannot take is answered with a
//! JSON-RPC error on the output (see [`crate::jsonrpc`]) and logged to stderr through
//! `tracing` — never dropped in silence. Lines over the limit are skipped as they stream in,
//! so memory stays bounded by the limit.

use std::future::Future;
use std::io;
use std::sync::Arc;

use bytes::BytesMut;
use rmcp::RoleServer;
use rmcp::model::{ClientJsonRpcMessage, ServerJsonRpcMessage};
use rmcp::transport::Transport;
use serde_json::Value;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio_util::codec::{Decoder, LinesCodec, LinesCodecError};

use crate::app::App;
use crate::jsonrpc::{self, INVALID_REQUEST, PARSE_ERROR, Rejection};
use crate::metrics::inc;

/// Default longest line (one message) accepted over stdio: the HTTP body limit.
pub const DEFAULT_MAX_LINE_BYTES: usize = 16 << 20;

/// The transport handed to the SDK: parsed messages in, messages out, both through tasks
/// that own the byte streams.
#[derive(Debug)]
pub struct LineTransport {
    incoming: mpsc::Receiver<ClientJsonRpcMessage>,
    out: mpsc::Sender<Vec<u8>>,
}

/// The tasks behind a [`LineTransport`]: stop the reader, then await the writer to flush.
#[derive(Debug)]
pub struct LineTasks {
    /// Reads and checks lines.
    pub reader: JoinHandle<()>,
    /// Writes lines in order (SDK messages and error replies alike).
    pub writer: JoinHandle<()>,
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
    let (in_tx, in_rx) = mpsc::channel(16);
    let (out_tx, out_rx) = mpsc::channel(64);
    let writer = tokio::spawn(write_lines(writer, out_rx));
    let reader = tokio::spawn(read_lines(
        reader,
        max_line_bytes,
        in_tx,
        out_tx.clone(),
        app,
    ));
    (
        LineTransport {
            incoming: in_rx,
            out: out_tx,
        },
        LineTasks { reader, writer },
    )
}

async fn write_lines<W: AsyncWrite + Unpin>(mut writer: W, mut lines: mpsc::Receiver<Vec<u8>>) {
    while let Some(line) = lines.recv().await {
        if let Err(e) = writer.write_all(&line).await {
            tracing::warn!(error = %e, "cannot write to the MCP client; stopping output");
            return;
        }
        // Flush each message: the client waits for it.
        if writer.flush().await.is_err() {
            return;
        }
    }
}

fn encode(message: &Value) -> Vec<u8> {
    let mut line = serde_json::to_vec(message).unwrap_or_else(|_| b"{}".to_vec());
    line.push(b'\n');
    line
}

async fn read_lines<R: AsyncRead + Unpin>(
    mut reader: R,
    max_line_bytes: usize,
    incoming: mpsc::Sender<ClientJsonRpcMessage>,
    out: mpsc::Sender<Vec<u8>>,
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
        let rejection = match decoded {
            Ok(Some(line)) => {
                if line.trim().is_empty() {
                    continue;
                }
                match jsonrpc::parse(line.as_bytes()) {
                    Ok(message) => {
                        if incoming.send(message).await.is_err() {
                            return; // the session ended
                        }
                        continue;
                    }
                    Err(rejection) => rejection,
                }
            }
            Ok(None) if eof => return,
            Ok(None) => {
                match reader.read_buf(&mut buf).await {
                    Ok(0) => eof = true,
                    Ok(_) => {}
                    Err(e) => {
                        tracing::warn!(error = %e, "cannot read from the MCP client; ending the session");
                        return;
                    }
                }
                continue;
            }
            Err(LinesCodecError::MaxLineLengthExceeded) => Rejection {
                id: Value::Null,
                code: INVALID_REQUEST,
                message: format!(
                    "Invalid Request: message longer than {max_line_bytes} bytes; it was skipped"
                ),
            },
            Err(LinesCodecError::Io(e)) => Rejection {
                id: Value::Null,
                code: PARSE_ERROR,
                message: format!("Parse error: {e}"),
            },
        };
        inc(&app.metrics.jsonrpc_rejected);
        tracing::warn!(code = rejection.code, id = %rejection.id, "{}", rejection.message);
        if out.send(encode(&rejection.to_json())).await.is_err() {
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
        async move {
            let mut line = serde_json::to_vec(&item).map_err(io::Error::other)?;
            line.push(b'\n');
            out.send(line)
                .await
                .map_err(|_| io::Error::new(io::ErrorKind::BrokenPipe, "MCP output closed"))
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
