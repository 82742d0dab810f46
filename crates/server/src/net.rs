//! A TCP listener with a cap on open connections (as mini-redis does it): each accepted
//! connection holds a semaphore permit until it closes, so a flood of clients queues in the
//! kernel's backlog instead of exhausting file descriptors or memory.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::app::App;
use crate::metrics::inc;

/// The listener.
#[derive(Debug)]
pub struct BoundedListener {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    app: Arc<App>,
}

impl BoundedListener {
    /// Wraps `inner`, allowing at most `max_connections` open connections.
    pub fn new(inner: TcpListener, max_connections: usize, app: Arc<App>) -> Self {
        BoundedListener {
            inner,
            permits: Arc::new(Semaphore::new(max_connections.max(1))),
            app,
        }
    }
}

/// A connection holding its permit.
#[derive(Debug)]
pub struct BoundedStream {
    stream: TcpStream,
    /// Released when the connection is dropped. `None` only if the semaphore was closed,
    /// which this module never does.
    _permit: Option<OwnedSemaphorePermit>,
}

impl axum::serve::Listener for BoundedListener {
    type Io = BoundedStream;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        let permit = Arc::clone(&self.permits).acquire_owned().await.ok();
        loop {
            match self.inner.accept().await {
                Ok((stream, addr)) => {
                    // Small request/response exchanges: don't wait for Nagle.
                    let _ = stream.set_nodelay(true);
                    return (
                        BoundedStream {
                            stream,
                            _permit: permit,
                        },
                        addr,
                    );
                }
                Err(e) => {
                    inc(&self.app.metrics.accept_errors);
                    // Per-connection errors (reset before accept) retry at once; resource
                    // exhaustion (EMFILE, ENFILE, ENOMEM) backs off so the loop does not spin.
                    if !matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionRefused
                            | io::ErrorKind::ConnectionAborted
                            | io::ErrorKind::ConnectionReset
                    ) {
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
        }
    }

    fn local_addr(&self) -> io::Result<Self::Addr> {
        self.inner.local_addr()
    }
}

impl AsyncRead for BoundedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for BoundedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.stream).poll_shutdown(cx)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}
