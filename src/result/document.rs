//! The v1 result document (stub; being written).
