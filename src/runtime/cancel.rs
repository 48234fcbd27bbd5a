//! Run-wide cancellation (SIGINT/SIGTERM): a flag plus the wake-ups of every attempt in flight.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use crate::runtime::sync::lock;

type WakeFn = Box<dyn Fn() + Send>;

/// A cancellation token shared by the whole run. Cloning shares it.
#[derive(Clone, Default)]
pub struct Cancel {
    inner: Arc<Inner>,
}

#[derive(Default)]
struct Inner {
    cancelled: AtomicBool,
    next: AtomicU64,
    wakers: Mutex<Vec<(u64, WakeFn)>>,
    sleep: (Mutex<()>, Condvar),
}

/// Unregisters a waker when dropped.
pub struct Registration {
    inner: Arc<Inner>,
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        lock(&self.inner.wakers).retain(|(id, _)| *id != self.id);
    }
}

impl Cancel {
    /// A fresh, uncancelled token.
    pub fn new() -> Cancel {
        Cancel::default()
    }

    /// Whether the run was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancelled.load(Ordering::SeqCst)
    }

    /// Cancels the run: every registered waker fires once, sleepers wake.
    pub fn cancel(&self) {
        self.inner.cancelled.store(true, Ordering::SeqCst);
        let wakers = std::mem::take(&mut *lock(&self.inner.wakers));
        for (_, wake) in wakers {
            wake();
        }
        let _guard = lock(&self.inner.sleep.0);
        self.inner.sleep.1.notify_all();
    }

    /// Registers `wake` to run on cancellation (at once if already cancelled).
    pub fn register(&self, wake: impl Fn() + Send + 'static) -> Registration {
        let id = self.inner.next.fetch_add(1, Ordering::SeqCst);
        if self.is_cancelled() {
            wake();
        } else {
            lock(&self.inner.wakers).push((id, Box::new(wake)));
        }
        Registration {
            inner: self.inner.clone(),
            id,
        }
    }

    /// Sleeps up to `d`, returning early (false) when the run is cancelled.
    pub fn sleep(&self, d: Duration) -> bool {
        let guard = lock(&self.inner.sleep.0);
        if self.is_cancelled() {
            return false;
        }
        let _ = self
            .inner
            .sleep
            .1
            .wait_timeout_while(guard, d, |_| !self.is_cancelled());
        !self.is_cancelled()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn cancel_wakes_registered_and_sleepers() {
        let c = Cancel::new();
        let n = Arc::new(AtomicUsize::new(0));
        let n1 = n.clone();
        let reg = c.register(move || {
            n1.fetch_add(1, Ordering::SeqCst);
        });
        let c2 = c.clone();
        let t = std::thread::spawn(move || c2.sleep(Duration::from_secs(30)));
        c.cancel();
        assert!(!t.join().unwrap_or(true));
        assert_eq!(n.load(Ordering::SeqCst), 1);
        drop(reg);
        assert!(!c.sleep(Duration::from_secs(30)));
    }
}
