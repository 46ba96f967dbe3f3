//! The `built_at` stamp as the reference writes it (UTC, `datetime.isoformat()` with `Z`,
//! microseconds shown only when non-zero) and compared with file times as its staleness rules
//! compare them: the builder stamps with it, recall judges `may_be_stale` with it.

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

/// Whether `built_at` (as this module or the reference writes it) is later than a modification
/// at `secs` and `nanos` past the epoch: the reference judges an index stale when a source's
/// mtime is later than its `built_at`. `false` for a stamp in another form (then the caller
/// rewrites rather than keep it).
pub fn built_after(built_at: &str, secs: i64, nanos: u32) -> bool {
    let Some(stamp) = sortable(built_at) else {
        return false;
    };
    // The mtime truncated to microseconds: stamps agree with times when this is strictly less.
    sortable(&format_utc(secs, nanos / 1000)).is_some_and(|m| m < stamp)
}

/// Whether `built_at` is a stamp in the form this module and the reference write: the
/// reference judges an index whose stamp does not parse stale.
pub fn is_stamp(built_at: &str) -> bool {
    sortable(built_at).is_some()
}

/// A stamp as fixed-width text (six fractional digits), which sorts as the times do.
fn sortable(stamp: &str) -> Option<String> {
    let body = stamp.strip_suffix('Z')?;
    let (base, fraction) = body.split_once('.').unwrap_or((body, "000000"));
    let fixed = base.len() == 19 && fraction.len() == 6;
    let digits = fraction.bytes().all(|b| b.is_ascii_digit());
    (fixed && digits).then(|| format!("{base}.{fraction}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn built_after_compares_a_stamp_with_a_modification_time() {
        // 2026-10-07T12:34:56.123456Z
        let secs = 1_791_376_496;
        assert!(built_after(
            "2026-10-07T12:34:56.123457Z",
            secs,
            123_456_000
        ));
        assert!(!built_after(
            "2026-10-07T12:34:56.123456Z",
            secs,
            123_456_000
        ));
        // A modification within the stamp's microsecond may be later than it.
        assert!(!built_after(
            "2026-10-07T12:34:56.123456Z",
            secs,
            123_456_789
        ));
        assert!(built_after("2026-10-07T12:34:57Z", secs, 999_999_999));
        assert!(!built_after("2026-10-07T12:34:56Z", secs, 1));
        assert!(!built_after("yesterday", secs, 0));
        assert!(!built_after("2026-10-07T12:34:56.1Z", 0, 0));
    }

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
