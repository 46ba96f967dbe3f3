//! UTC calendar fields of a Unix timestamp, for the timestamps this project writes (std has no
//! calendar), and the RFC 3339 form the logs share (audit records, the access log, approvals).
//! Other formats stay with their owner (index `built_at`).

use std::time::{SystemTime, UNIX_EPOCH};

/// A moment's UTC date and time of day, to the second.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UtcFields {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

/// The UTC fields of `secs` seconds since 1970-01-01T00:00:00Z (negative: before it).
pub fn utc_fields(secs: i64) -> UtcFields {
    let of_day = secs.rem_euclid(86_400) as u32;
    let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
    UtcFields {
        year,
        month,
        day,
        hour: of_day / 3600,
        minute: of_day / 60 % 60,
        second: of_day % 60,
    }
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// `civil_from_days`, which works in 400-year eras so no table or loop is needed).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// `time` formatted as RFC 3339 in UTC with milliseconds, e.g. `2026-11-29T20:55:06.123Z`.
pub fn rfc3339(time: SystemTime) -> String {
    let since_epoch = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let t = utc_fields(since_epoch.as_secs() as i64);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year,
        t.month,
        t.day,
        t.hour,
        t.minute,
        t.second,
        since_epoch.subsec_millis()
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn timestamps_are_rfc3339_utc() {
        let at = |secs: u64, millis: u64| {
            rfc3339(UNIX_EPOCH + Duration::from_secs(secs) + Duration::from_millis(millis))
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000Z");
        // `date -u -d @951782400` = 2000-02-29 (a 400-year leap day).
        assert_eq!(at(951_782_400, 5), "2000-02-29T00:00:00.005Z");
        assert_eq!(at(1_796_063_706, 123), "2026-11-30T18:35:06.123Z");
        assert_eq!(at(4_107_542_399, 999), "2100-02-28T23:59:59.999Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000Z");
    }

    fn f(secs: i64) -> (i64, u32, u32, u32, u32, u32) {
        let u = utc_fields(secs);
        (u.year, u.month, u.day, u.hour, u.minute, u.second)
    }

    #[test]
    fn dates_across_eras_leap_days_and_the_epoch() {
        assert_eq!(f(0), (1970, 1, 1, 0, 0, 0));
        assert_eq!(f(-1), (1969, 12, 31, 23, 59, 59));
        // python3 -c 'import datetime;print(datetime.datetime.fromtimestamp(1791376496, datetime.UTC))'
        assert_eq!(f(1_791_376_496), (2026, 10, 7, 12, 34, 56));
        assert_eq!(f(951_782_400), (2000, 2, 29, 0, 0, 0));
        assert_eq!(f(4_107_542_400), (2100, 3, 1, 0, 0, 0));
        assert_eq!(f(253_402_300_799), (9999, 12, 31, 23, 59, 59));
    }
}
