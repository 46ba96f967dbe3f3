//! The `built_at` timestamp as the reference writes it: UTC, `datetime.isoformat()` with `Z`,
//! microseconds shown only when non-zero (`2026-10-07T12:34:56.123456Z`).

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, formatted.
pub fn now() -> String {
    let since = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    format_utc(since.as_secs() as i64, since.subsec_micros())
}

/// Formats seconds since the epoch plus microseconds.
pub fn format_utc(secs: i64, micros: u32) -> String {
    let t = agentteams_mcp::time::utc_fields(secs);
    let base = format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
        t.year, t.month, t.day, t.hour, t.minute, t.second
    );
    if micros == 0 {
        format!("{base}Z")
    } else {
        format!("{base}.{micros:06}Z")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_like_python_isoformat() {
        assert_eq!(format_utc(0, 0), "1970-01-01T00:00:00Z");
        // python3 -c 'import datetime;print(datetime.datetime.fromtimestamp(1791376496, datetime.UTC))'
        assert_eq!(
            format_utc(1_791_376_496, 123_456),
            "2026-10-07T12:34:56.123456Z"
        );
        assert_eq!(format_utc(951_782_400, 5), "2000-02-29T00:00:00.000005Z");
        assert_eq!(format_utc(4_107_542_400, 0), "2100-03-01T00:00:00Z");
    }
}
