//! Stalls: requests to chosen routes are held until released, the way a slow GitHub or a stuck
//! proxy holds them, so a test can kill a client in the middle of a multi-request operation
//! (after its end record, before its labels). It injects no errors; faults live in `http.rs`.

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// The stall rules and the requests held by them.
#[derive(Clone, Default)]
pub(crate) struct Stalls {
    state: Arc<Mutex<StallState>>,
    notify: Arc<Notify>,
}

#[derive(Default)]
struct StallState {
    rules: Vec<(String, String)>,
    held: usize,
}

/// Counts a held request for as long as it is held (also when its client goes away).
struct Held<'a>(&'a Stalls);

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.0.lock().held -= 1;
    }
}

impl Stalls {
    fn lock(&self) -> std::sync::MutexGuard<'_, StallState> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Holds every later `method` request to `route` (an axum route template).
    pub(crate) fn add(&self, method: &str, route: &str) {
        self.lock()
            .rules
            .push((method.to_ascii_uppercase(), route.to_string()));
    }

    /// Drops every rule and lets held requests go on.
    pub(crate) fn release_all(&self) {
        self.lock().rules.clear();
        self.notify.notify_waiters();
    }

    /// How many requests are held right now.
    pub(crate) fn held(&self) -> usize {
        self.lock().held
    }

    fn matches(&self, method: &str, route: &str) -> bool {
        self.lock()
            .rules
            .iter()
            .any(|(m, r)| m == method && r == route)
    }

    /// Waits while a rule holds `method route`.
    pub(crate) async fn wait(&self, method: &str, route: &str) {
        if !self.matches(method, route) {
            return;
        }
        self.lock().held += 1;
        let _held = Held(self);
        loop {
            let released = self.notify.notified();
            if !self.matches(method, route) {
                return;
            }
            released.await;
        }
    }
}
