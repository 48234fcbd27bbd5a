//! The poison-tolerant lock every layer uses.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, taking the data even when another thread panicked while holding it: every
/// mutex here guards plain state (tables, flags, buffers) that stays consistent between
/// statements, and a health check must still report rather than cascade one panic.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|poison| poison.into_inner())
}
