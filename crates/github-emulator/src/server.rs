//! Binding and running the emulator: `Sim::serve` spawns axum on the caller's tokio runtime
//! and hands back a [`SimServer`] whose drop (or `shutdown`) stops accepting connections and
//! lets open ones finish.
//!
//! It holds no state of its own beyond the shutdown signal; the `Sim` handle owns the data, so
//! a test can inspect it after the server is gone.

use std::net::SocketAddr;

use tokio::net::TcpListener;
use tokio::sync::oneshot;

use super::{routes, Sim};

/// A running emulator. Dropping it shuts the server down.
pub struct SimServer {
    /// `http://127.0.0.1:PORT`, no trailing slash.
    pub url: String,
    stop: Option<oneshot::Sender<()>>,
}

impl SimServer {
    /// Stops the server (the same as dropping it).
    pub fn shutdown(self) {}
}

impl Drop for SimServer {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
    }
}

impl std::fmt::Debug for SimServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SimServer").field("url", &self.url).finish()
    }
}

/// Binds `addr` and spawns the server.
pub(crate) async fn serve(sim: Sim, addr: SocketAddr) -> std::io::Result<SimServer> {
    let listener = TcpListener::bind(addr).await?;
    let mut local = listener.local_addr()?;
    if local.ip().is_unspecified() {
        local.set_ip(std::net::Ipv4Addr::LOCALHOST.into());
    }
    let (stop, stopped) = oneshot::channel::<()>();
    let app = routes::router(sim);
    tokio::spawn(async move {
        let signal = async {
            let _ = stopped.await;
        };
        if let Err(e) = axum::serve(listener, app)
            .with_graceful_shutdown(signal)
            .await
        {
            tracing::warn!(error = %e, "sim server stopped with an error");
        }
    });
    Ok(SimServer {
        url: format!("http://{local}"),
        stop: Some(stop),
    })
}
