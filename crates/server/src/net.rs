//! Connections: a TCP listener with a cap on open connections (as mini-redis does it), and the
//! HTTP/1 loop that serves each one under two clocks, so a slow or idle client costs a
//! connection slot for a bounded time only:
//!
//! * **header timeout** (hyper's own, with its timer installed): a request head must arrive
//!   complete within it, counted from when the connection opens or the previous response
//!   ends — so a keep-alive connection that sends nothing is closed after it too;
//! * **idle timeout**: a connection that moves no byte in either direction for this long
//!   (a stalled body, a client that stops reading its response) is dropped.
//!
//! Each accepted connection holds a semaphore permit until it closes, so a flood of clients
//! queues in the kernel's backlog instead of exhausting file descriptors or memory.

use std::io;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;

use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::app::App;
use crate::metrics::inc;

/// The listener.
#[derive(Debug)]
pub struct BoundedListener {
    inner: TcpListener,
    permits: Arc<Semaphore>,
    app: Arc<App>,
    epoch: Instant,
}

impl BoundedListener {
    /// Wraps `inner`, allowing at most `max_connections` open connections (clamped to
    /// 1..=[`Semaphore::MAX_PERMITS`]; the CLI refuses values outside its documented range).
    pub fn new(inner: TcpListener, max_connections: usize, app: Arc<App>) -> Self {
        BoundedListener {
            inner,
            permits: Arc::new(Semaphore::new(
                max_connections.clamp(1, Semaphore::MAX_PERMITS),
            )),
            app,
            epoch: Instant::now(),
        }
    }

    /// The address listened on.
    pub fn local_addr(&self) -> io::Result<SocketAddr> {
        self.inner.local_addr()
    }

    /// Waits for a connection slot, then for a connection.
    pub async fn accept(&mut self) -> BoundedStream {
        let permit = Arc::clone(&self.permits).acquire_owned().await.ok();
        loop {
            match self.inner.accept().await {
                Ok((stream, _addr)) => {
                    // Small request/response exchanges: don't wait for Nagle.
                    let _ = stream.set_nodelay(true);
                    return BoundedStream {
                        stream,
                        _permit: permit,
                        epoch: self.epoch,
                        activity: Arc::new(AtomicU64::new(0)),
                    };
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
                        tracing::warn!(error = %e, "accept failed; backing off");
                        tokio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
        }
    }
}

/// A connection holding its permit, and the time of its last byte in or out.
#[derive(Debug)]
pub struct BoundedStream {
    stream: TcpStream,
    /// Released when the connection is dropped. `None` only if the semaphore was closed,
    /// which this module never does.
    _permit: Option<OwnedSemaphorePermit>,
    epoch: Instant,
    /// Milliseconds since `epoch` of the last read or write that moved bytes.
    activity: Arc<AtomicU64>,
}

impl BoundedStream {
    fn touch(&self) {
        let ms = u64::try_from(self.epoch.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.activity.store(ms, Ordering::Relaxed);
    }
}

/// The clocks of [`serve_connection`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ConnectionLimits {
    /// A request head must arrive within this (and idle keep-alive connections close after it).
    pub header_timeout: Duration,
    /// A connection moving no byte for this long is dropped.
    pub idle_timeout: Duration,
}

/// Serves HTTP/1 on one connection until the client closes it, a timeout fires, or `cancel`
/// asks for a graceful close (in-flight requests finish, idle keep-alive ends at once).
pub async fn serve_connection(
    stream: BoundedStream,
    service: crate::lane::PageLane,
    limits: ConnectionLimits,
    cancel: CancellationToken,
    app: Arc<App>,
) {
    let activity = Arc::clone(&stream.activity);
    let epoch = stream.epoch;
    stream.touch();
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        .header_read_timeout(limits.header_timeout)
        .keep_alive(true);
    // With upgrades, so `/ws` (OpenEnv) can take the connection over; the upgraded stream is
    // still this `BoundedStream`, so the idle timeout keeps counting on it.
    let conn = builder
        .serve_connection(TokioIo::new(stream), service)
        .with_upgrades();
    tokio::pin!(conn);
    let mut draining = false;
    loop {
        tokio::select! {
            result = conn.as_mut() => {
                if let Err(e) = result {
                    if e.is_timeout() {
                        inc(&app.metrics.connection_timeouts);
                    }
                    tracing::debug!(error = %e, "connection ended with an error");
                }
                return;
            }
            () = cancel.cancelled(), if !draining => {
                conn.as_mut().graceful_shutdown();
                draining = true;
            }
            () = idle(&activity, epoch, limits.idle_timeout) => {
                inc(&app.metrics.connection_timeouts);
                tracing::debug!("connection idle past the idle timeout; closing it");
                return;
            }
        }
    }
}

/// Resolves once `activity` has not moved for `timeout`.
async fn idle(activity: &AtomicU64, epoch: Instant, timeout: Duration) {
    loop {
        let last = activity.load(Ordering::Relaxed);
        tokio::time::sleep_until(epoch + Duration::from_millis(last) + timeout).await;
        if activity.load(Ordering::Relaxed) == last {
            return;
        }
    }
}

impl AsyncRead for BoundedStream {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let poll = Pin::new(&mut self.stream).poll_read(cx, buf);
        if matches!(poll, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            self.touch();
        }
        poll
    }
}

impl AsyncWrite for BoundedStream {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let poll = Pin::new(&mut self.stream).poll_write(cx, buf);
        if matches!(poll, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        poll
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
        let poll = Pin::new(&mut self.stream).poll_write_vectored(cx, bufs);
        if matches!(poll, Poll::Ready(Ok(n)) if n > 0) {
            self.touch();
        }
        poll
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn idle_resolves_only_after_a_full_quiet_period() {
        let epoch = Instant::now();
        let activity = Arc::new(AtomicU64::new(0));
        let watched = Arc::clone(&activity);
        let watch = tokio::spawn(async move {
            idle(&watched, epoch, Duration::from_secs(10)).await;
            epoch.elapsed()
        });
        // Bytes move at 6 s and 12 s: quiet from 12 s, so idle at 22 s, not 10 s.
        for at in [6, 12] {
            tokio::time::sleep_until(epoch + Duration::from_secs(at)).await;
            activity.store(at * 1000, Ordering::Relaxed);
        }
        let fired = watch.await.expect("watch");
        assert_eq!(fired.as_secs(), 22, "{fired:?}");
    }
}
