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
    Stamp::parse(built_at).is_some_and(|stamp| stamp.is_after(secs, nanos))
}

/// Whether `built_at` is a stamp in the form this module and the reference write: the
/// reference judges an index whose stamp does not parse stale.
pub fn is_stamp(built_at: &str) -> bool {
    Stamp::parse(built_at).is_some()
}

/// A `built_at` stamp read once, for comparing with many file times (recall checks every
/// document of an index on each answer).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stamp {
    /// Microseconds since the epoch.
    micros: i128,
}

impl Stamp {
    /// `YYYY-MM-DDTHH:MM:SS[.ffffff]Z` (six fractional digits, or none), else `None`.
    pub fn parse(stamp: &str) -> Option<Stamp> {
        let body = stamp.strip_suffix('Z')?;
        let (base, fraction) = body.split_once('.').unwrap_or((body, "000000"));
        let b = base.as_bytes();
        let shape = b.len() == 19
            && fraction.len() == 6
            && [(4, b'-'), (7, b'-'), (10, b'T'), (13, b':'), (16, b':')]
                .iter()
                .all(|&(i, c)| b[i] == c);
        if !shape {
            return None;
        }
        let number = |text: &str| -> Option<i64> {
            text.bytes()
                .all(|c| c.is_ascii_digit())
                .then(|| text.parse().ok())?
        };
        let (year, month, day) = (
            number(&base[0..4])?,
            number(&base[5..7])?,
            number(&base[8..10])?,
        );
        let (hour, minute, second) = (
            number(&base[11..13])?,
            number(&base[14..16])?,
            number(&base[17..19])?,
        );
        let seconds =
            days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
        Some(Stamp {
            micros: i128::from(seconds) * 1_000_000 + i128::from(number(fraction)?),
        })
    }

    /// Whether the stamp is later than a modification at `secs` and `nanos` past the epoch,
    /// truncated to microseconds: a modification within the stamp's microsecond may be later.
    pub fn is_after(self, secs: i64, nanos: u32) -> bool {
        self.micros > i128::from(secs) * 1_000_000 + i128::from(nanos / 1000)
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's `days_from_civil`,
/// the inverse of the one `agentteams_mcp::time` formats with).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
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
    fn a_stamp_reads_back_the_time_it_was_formatted_from() {
        for (secs, micros) in [
            (0, 0),
            (1_791_376_496, 123_456),
            (951_782_400, 5),
            (4_107_542_400, 0),
            (-86_400, 1),
        ] {
            let stamp = Stamp::parse(&format_utc(secs, micros)).unwrap();
            if micros > 0 {
                assert!(stamp.is_after(secs, (micros - 1) * 1000 + 999));
            }
            assert!(!stamp.is_after(secs, micros * 1000));
            assert!(stamp.is_after(secs - 1, 999_999_999));
        }
        for bad in [
            "2026-10-07 12:34:56Z",
            "2026-1X-07T12:34:56Z",
            "2026-10-07T12:34:56",
            "",
        ] {
            assert_eq!(Stamp::parse(bad), None, "{bad}");
        }
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
