//! The `built_at` timestamp as the reference writes it: UTC, `datetime.isoformat()` with `Z`,
//! microseconds shown only when non-zero (`2026-10-07T12:34:56.123456Z`); formatted and compared
//! by [`crate::corpus::built_at`], which recall shares.

use std::time::{SystemTime, UNIX_EPOCH};

pub use crate::corpus::built_at::{built_after, format_utc};

/// Now, formatted.
pub fn now() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_utc(since.as_secs() as i64, since.subsec_micros())
}
