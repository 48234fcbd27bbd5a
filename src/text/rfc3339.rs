//! RFC 3339 timestamps, parsed by hand (`fresh_within_s`, token files) and written (token
//! files' `expires_at`).
//!
//! Accepted: `date-time` of RFC 3339 §5.6 — `YYYY-MM-DD`, then `T` (or `t`, or the space
//! the RFC's note allows), `hh:mm:ss`, an optional fraction of any number of digits, then `Z`
//! (or `z`) or a numeric offset `±hh:mm`. Fields are range-checked, including the day of the
//! month in leap years; a leap second (`:60`) is accepted and counts as the next second.
//! Anything else — missing seconds or offset, `24:00`, an ISO week date, surrounding
//! whitespace — is not a timestamp. Fractions beyond nanoseconds are truncated.

use std::time::{SystemTime, UNIX_EPOCH};

/// A point in time, UTC: whole seconds since the Unix epoch (negative before 1970) and the
/// nanoseconds within that second.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Timestamp {
    /// Seconds since 1970-01-01T00:00:00Z.
    pub secs: i64,
    /// Nanoseconds, `0..1_000_000_000`.
    pub nanos: u32,
}

impl Timestamp {
    /// The timestamp of a system time (clamped to the `i64` range).
    pub fn from_system(t: SystemTime) -> Timestamp {
        match t.duration_since(UNIX_EPOCH) {
            Ok(d) => Timestamp {
                secs: i64::try_from(d.as_secs()).unwrap_or(i64::MAX),
                nanos: d.subsec_nanos(),
            },
            Err(before) => {
                let d = before.duration();
                let secs = i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
                if d.subsec_nanos() == 0 {
                    Timestamp {
                        secs: -secs,
                        nanos: 0,
                    }
                } else {
                    Timestamp {
                        secs: -secs - 1,
                        nanos: 1_000_000_000 - d.subsec_nanos(),
                    }
                }
            }
        }
    }

    /// Seconds from `self` to `later` (negative when `later` is earlier).
    pub fn seconds_until(self, later: Timestamp) -> f64 {
        #[allow(clippy::cast_precision_loss)] // sub-microsecond precision is irrelevant here
        let whole = (i128::from(later.secs) - i128::from(self.secs)) as f64;
        whole + (f64::from(later.nanos) - f64::from(self.nanos)) / 1e9
    }
}

/// How old a timestamp is at `now`, in seconds (negative for a future timestamp).
pub fn age_seconds(timestamp: Timestamp, now: SystemTime) -> f64 {
    timestamp.seconds_until(Timestamp::from_system(now))
}

/// `ts` as an RFC 3339 `date-time` in UTC with nanoseconds: `2026-12-01T09:54:08.123456789Z`.
pub fn format(ts: Timestamp) -> String {
    let days = ts.secs.div_euclid(86_400);
    let rem = ts.secs.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:09}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60,
        ts.nanos
    )
}

/// The proleptic Gregorian date of `days` since 1970-01-01 (Howard Hinnant's algorithm).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = u32::try_from(doy - (153 * mp + 2) / 5 + 1).unwrap_or(1);
    let month = u32::try_from(if mp < 10 { mp + 3 } else { mp - 9 }).unwrap_or(1);
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// Parses an RFC 3339 `date-time`; `None` when `s` is not one.
pub fn parse(s: &str) -> Option<Timestamp> {
    let mut c = Cursor(s.as_bytes());
    let year = c.digits(4)?;
    c.byte(b'-')?;
    let month = c.digits(2)?;
    c.byte(b'-')?;
    let day = c.digits(2)?;
    c.one_of(b"Tt ")?;
    let hour = c.digits(2)?;
    c.byte(b':')?;
    let minute = c.digits(2)?;
    c.byte(b':')?;
    let second = c.digits(2)?;
    let mut nanos = 0u32;
    if c.byte(b'.').is_some() {
        let mut count = 0u32;
        while let Some(d) = c.digit() {
            if count < 9 {
                nanos = nanos * 10 + d;
            }
            count += 1;
        }
        if count == 0 {
            return None;
        }
        for _ in count..9 {
            nanos *= 10;
        }
    }
    let offset_minutes: i64 = match c.take()? {
        b'Z' | b'z' => 0,
        sign @ (b'+' | b'-') => {
            let h = c.digits(2)?;
            c.byte(b':')?;
            let m = c.digits(2)?;
            if h > 23 || m > 59 {
                return None;
            }
            let total = i64::from(h * 60 + m);
            if sign == b'+' { total } else { -total }
        }
        _ => return None,
    };
    if !c.0.is_empty()
        || !(1..=12).contains(&month)
        || day == 0
        || day > days_in_month(year, month)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = days_from_civil(i64::from(year), month, day);
    let local = days * 86_400 + i64::from(hour * 3600 + minute * 60 + second);
    let secs = local - offset_minutes * 60;
    // What a leap second or an offset moves past 9999 or before year 0 has no four-digit
    // year, and could not be written back (found by the `rfc3339` fuzz target).
    let first = days_from_civil(0, 1, 1) * 86_400;
    let last = days_from_civil(9999, 12, 31) * 86_400 + 86_399;
    if !(first..=last).contains(&secs) {
        return None;
    }
    Some(Timestamp { secs, nanos })
}

fn is_leap(year: u32) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

fn days_in_month(year: u32, month: u32) -> u32 {
    match month {
        2 if is_leap(year) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days from 1970-01-01 to the given proleptic Gregorian date. Counts whole 400-year cycles
/// (146 097 days each) from 0000-03-01, so February, with its leap day, ends each year.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    // Years start in March: January and February belong to the previous year.
    let year = if month <= 2 { year - 1 } else { year };
    let cycle = year.div_euclid(400);
    let year_of_cycle = year.rem_euclid(400);
    let month_from_march = i64::from((month + 9) % 12);
    // Month lengths from March repeat 31,30,31,30,31 — (153·m + 2) / 5 sums them.
    let day_of_year = (153 * month_from_march + 2) / 5 + i64::from(day) - 1;
    let day_of_cycle = year_of_cycle * 365 + year_of_cycle / 4 - year_of_cycle / 100 + day_of_year;
    // 719 468 days lie between 0000-03-01 and 1970-01-01.
    cycle * 146_097 + day_of_cycle - 719_468
}

/// Reads ASCII bytes front to back.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take(&mut self) -> Option<u8> {
        let (&first, rest) = self.0.split_first()?;
        self.0 = rest;
        Some(first)
    }

    fn byte(&mut self, want: u8) -> Option<()> {
        (self.0.first() == Some(&want)).then(|| self.0 = &self.0[1..])
    }

    fn one_of(&mut self, set: &[u8]) -> Option<()> {
        let b = self.take()?;
        set.contains(&b).then_some(())
    }

    fn digit(&mut self) -> Option<u32> {
        let b = *self.0.first()?;
        if b.is_ascii_digit() {
            self.0 = &self.0[1..];
            Some(u32::from(b - b'0'))
        } else {
            None
        }
    }

    fn digits(&mut self, n: usize) -> Option<u32> {
        let mut value = 0;
        for _ in 0..n {
            value = value * 10 + self.digit()?;
        }
        Some(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn instants_without_a_four_digit_year_are_refused() {
        for text in [
            "9999-12-31T23:59:60.9999999909Z",
            "9999-12-31T23:30:00-01:00",
            "0000-01-01T00:00:00+00:01",
        ] {
            assert_eq!(parse(text), None, "{text}");
        }
        for text in ["9999-12-31T23:59:59.999999999Z", "0000-01-01T00:00:00Z"] {
            let ts = parse(text).expect(text);
            assert_eq!(parse(&format(ts)), Some(ts), "{text}");
        }
    }

    #[test]
    fn formatted_timestamps_parse_back() {
        for secs in [0i64, 951_782_400, 1_764_582_848, 4_102_444_800, -86_401] {
            for nanos in [0u32, 1, 999_999_999] {
                let ts = Timestamp { secs, nanos };
                let text = format(ts);
                assert_eq!(parse(&text), Some(ts), "{text}");
            }
        }
        assert_eq!(
            format(Timestamp {
                secs: 951_782_400,
                nanos: 5
            }),
            "2000-02-29T00:00:00.000000005Z"
        );
    }
    use std::time::Duration;

    fn secs(s: &str) -> Option<i64> {
        parse(s).map(|t| t.secs)
    }

    #[test]
    fn epoch_and_known_instants() {
        assert_eq!(secs("1970-01-01T00:00:00Z"), Some(0));
        assert_eq!(secs("2020-01-01T00:00:00Z"), Some(1_577_836_800));
        assert_eq!(secs("2000-02-29T12:34:56Z"), Some(951_827_696));
        assert_eq!(secs("1969-12-31T23:59:59Z"), Some(-1));
        assert_eq!(secs("0000-01-01T00:00:00Z"), Some(-62_167_219_200));
        assert_eq!(secs("9999-12-31T23:59:59Z"), Some(253_402_300_799));
        assert_eq!(secs("2038-01-19T03:14:08Z"), Some(1 << 31));
    }

    #[test]
    fn offsets_fractions_and_separators() {
        let utc = secs("2026-06-18T10:00:00Z");
        assert_eq!(secs("2026-06-18T12:30:00+02:30"), utc);
        assert_eq!(secs("2026-06-18T05:00:00-05:00"), utc);
        assert_eq!(secs("2026-06-18t10:00:00z"), utc);
        assert_eq!(secs("2026-06-18 10:00:00Z"), utc);
        assert_eq!(secs("2026-06-18T10:00:00+00:00"), utc);
        assert_eq!(secs("2026-06-18T10:00:00-00:00"), utc);
        let t = parse("2026-06-18T10:00:00.5Z").expect("valid");
        assert_eq!(t.nanos, 500_000_000);
        let t = parse("2026-06-18T10:00:00.123456789123Z").expect("valid");
        assert_eq!(t.nanos, 123_456_789);
        // A leap second is the next second.
        assert_eq!(secs("2016-12-31T23:59:60Z"), secs("2017-01-01T00:00:00Z"));
    }

    #[test]
    fn calendar_rules() {
        assert!(parse("2024-02-29T00:00:00Z").is_some());
        assert!(parse("2000-02-29T00:00:00Z").is_some());
        for bad in [
            "2023-02-29T00:00:00Z",
            "1900-02-29T00:00:00Z",
            "2026-04-31T00:00:00Z",
            "2026-13-01T00:00:00Z",
            "2026-00-01T00:00:00Z",
            "2026-01-00T00:00:00Z",
            "2026-01-32T00:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T23:60:00Z",
            "2026-01-01T23:59:61Z",
            "2026-01-01T00:00:00+24:00",
            "2026-01-01T00:00:00+01:60",
        ] {
            assert_eq!(parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn not_timestamps() {
        for bad in [
            "",
            "healthy",
            "2026-01-01",
            "2026-01-01T00:00Z",
            "2026-01-01T00:00:00",
            "2026-01-01T00:00:00.Z",
            "2026-01-01T00:00:00+0100",
            "2026-01-01T00:00:00+01",
            "2026-1-01T00:00:00Z",
            "26-01-01T00:00:00Z",
            "+2026-01-01T00:00:00Z",
            "2026-01-01X00:00:00Z",
            " 2026-01-01T00:00:00Z",
            "2026-01-01T00:00:00Z ",
            "2026-01-01T00:00:00ZZ",
            "2026-W01-1T00:00:00Z",
            "２０２６-01-01T00:00:00Z",
            "1767225600",
        ] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn ages() {
        let now = UNIX_EPOCH + Duration::from_secs(1_000);
        let t = parse("1970-01-01T00:15:00Z").expect("valid"); // 900 s
        assert!((age_seconds(t, now) - 100.0).abs() < 1e-9);
        let future = parse("1970-01-01T00:20:00.25Z").expect("valid");
        assert!((age_seconds(future, now) + 200.25).abs() < 1e-9);
        let before = UNIX_EPOCH - Duration::from_millis(1_500);
        assert_eq!(
            Timestamp::from_system(before),
            Timestamp {
                secs: -2,
                nanos: 500_000_000
            }
        );
    }

    #[test]
    fn every_day_of_four_centuries_round_trips() {
        // Consecutive days map to consecutive day numbers across 1900–2300.
        let mut expected = days_from_civil(1900, 1, 1);
        for year in 1900..2300 {
            for month in 1..=12 {
                for day in 1..=days_in_month(year, month) {
                    assert_eq!(days_from_civil(i64::from(year), month, day), expected);
                    expected += 1;
                }
            }
        }
        assert_eq!(days_from_civil(1970, 1, 1), 0);
    }
}
