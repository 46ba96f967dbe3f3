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
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    let (hh, mm, ss) = (rem / 3600, rem % 3600 / 60, rem % 60);
    let base = format!("{y:04}-{m:02}-{d:02}T{hh:02}:{mm:02}:{ss:02}");
    if micros == 0 {
        format!("{base}Z")
    } else {
        format!("{base}.{micros:06}Z")
    }
}

/// Days since 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
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
