//! Dates and durations as Bases has them: a date is a moment (milliseconds
//! since the epoch) read and shown in the machine's time zone, with or
//! without a time of day; a duration is months and milliseconds (`"1M"`
//! adds a calendar month, `"1d"` 24 hours).

use chrono::{Datelike, Local, NaiveDate, NaiveDateTime, TimeZone, Timelike};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Date {
    pub ms: i64,
    /// Written with a time of day (a datetime), or a date only.
    pub time: bool,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Dur {
    pub months: i64,
    pub ms: i64,
}

const DAY: i64 = 86_400_000;

impl Dur {
    /// Its length in milliseconds, a month counted as 30 days.
    pub fn approx_ms(self) -> f64 {
        self.months as f64 * 30.0 * DAY as f64 + self.ms as f64
    }

    pub fn scaled(self, by: f64) -> Dur {
        Dur {
            months: (self.months as f64 * by).round() as i64,
            ms: (self.ms as f64 * by).round() as i64,
        }
    }

    pub fn plus(self, other: Dur, sign: i64) -> Dur {
        Dur {
            months: self
                .months
                .saturating_add(other.months.saturating_mul(sign)),
            ms: self.ms.saturating_add(other.ms.saturating_mul(sign)),
        }
    }

    /// `"1 week"`, `"2h"`, `"1y 2M"`, `"-3 days"`: numbers each with a unit
    /// (y, M, w, d, h, m, s, spelled short or long).
    pub fn parse(s: &str) -> Option<Dur> {
        let mut rest = s.trim();
        if rest.is_empty() {
            return None;
        }
        let mut out = Dur { months: 0, ms: 0 };
        while !rest.is_empty() {
            let num_end = rest
                .char_indices()
                .find(|&(i, c)| {
                    !(c.is_ascii_digit() || c == '.' || (i == 0 && (c == '-' || c == '+')))
                })
                .map_or(rest.len(), |(i, _)| i);
            let n: f64 = rest[..num_end].parse().ok()?;
            rest = rest[num_end..].trim_start();
            let unit_end = rest
                .char_indices()
                .find(|(_, c)| !c.is_ascii_alphabetic())
                .map_or(rest.len(), |(i, _)| i);
            let unit = &rest[..unit_end];
            rest = rest[unit_end..].trim_start_matches([' ', ',']);
            let (months, ms) = match unit {
                "y" | "year" | "years" => (12.0, 0.0),
                "M" | "month" | "months" => (1.0, 0.0),
                "w" | "week" | "weeks" => (0.0, 7.0 * DAY as f64),
                "d" | "day" | "days" => (0.0, DAY as f64),
                "h" | "hour" | "hours" => (0.0, 3_600_000.0),
                "m" | "minute" | "minutes" => (0.0, 60_000.0),
                "s" | "second" | "seconds" => (0.0, 1000.0),
                _ => return None,
            };
            out.months = out.months.saturating_add((n * months).round() as i64);
            out.ms = out.ms.saturating_add((n * ms).round() as i64);
        }
        Some(out)
    }
}

/// The moment a local date and time names, kept per thread for the last
/// few thousand asked: a vault repeats its dates, and the time zone's rules
/// cost a lookup each time.
fn local_ms(n: NaiveDateTime) -> Option<i64> {
    use std::cell::RefCell;
    use std::collections::HashMap;
    thread_local! {
        static SEEN: RefCell<HashMap<NaiveDateTime, Option<i64>>> = RefCell::new(HashMap::new());
    }
    SEEN.with(|seen| {
        let mut seen = seen.borrow_mut();
        if let Some(ms) = seen.get(&n) {
            return *ms;
        }
        if seen.len() >= 4096 {
            seen.clear();
        }
        let ms = Local
            .from_local_datetime(&n)
            .earliest()
            .map(|d| d.timestamp_millis());
        seen.insert(n, ms);
        ms
    })
}

fn local(ms: i64) -> NaiveDateTime {
    Local
        .timestamp_millis_opt(ms)
        .single()
        .map(|d| d.naive_local())
        .unwrap_or_default()
}

/// The digits of `b[at..at + n]` as a number.
fn digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let d = b.get(at..at + n)?;
    d.iter().try_fold(0u32, |acc, c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

impl Date {
    /// `YYYY-MM-DD`, with ` HH:mm`, `THH:mm:ss`, fractions, and `Z` or an
    /// offset; a date without a zone is in the machine's time zone.
    pub fn parse(s: &str) -> Option<Date> {
        let s = s.trim();
        let b = s.as_bytes();
        if b.len() < 10 || b[4] != b'-' || b[7] != b'-' {
            return None;
        }
        let day =
            NaiveDate::from_ymd_opt(digits(b, 0, 4)? as i32, digits(b, 5, 2)?, digits(b, 8, 2)?)?;
        if b.len() == 10 {
            return local_ms(day.and_hms_opt(0, 0, 0)?).map(|ms| Date { ms, time: false });
        }
        if !matches!(b[10], b'T' | b' ') {
            return None;
        }
        // `HH:mm`, `HH:mm:ss`, `HH:mm:ss.fff`, the common forms, read here;
        // anything after them (a zone) through RFC 3339.
        let (h, m) = (digits(b, 11, 2)?, digits(b, 14, 2)?);
        if b.get(13) != Some(&b':') {
            return None;
        }
        let mut at = 16;
        let mut sec = 0;
        let mut milli = 0;
        if b.get(at) == Some(&b':') {
            sec = digits(b, at + 1, 2)?;
            at += 3;
            if b.get(at) == Some(&b'.') {
                let n = b[at + 1..]
                    .iter()
                    .take_while(|c| c.is_ascii_digit())
                    .count();
                milli = digits(b, at + 1, n.min(3))? * 10u32.pow(3 - n.min(3) as u32);
                at += 1 + n;
            }
        }
        if at == b.len() {
            let t = chrono::NaiveTime::from_hms_milli_opt(h, m, sec, milli)?;
            return local_ms(day.and_time(t)).map(|ms| Date { ms, time: true });
        }
        let with_seconds = if b.get(16) == Some(&b':') {
            format!("{}T{}", &s[..10], &s[11..])
        } else {
            format!("{}T{}:00{}", &s[..10], &s[11..16], &s[16..])
        };
        chrono::DateTime::parse_from_rfc3339(&with_seconds)
            .ok()
            .map(|d| Date {
                ms: d.timestamp_millis(),
                time: true,
            })
    }

    pub fn from_ms(ms: i64, time: bool) -> Date {
        Date { ms, time }
    }

    /// Midnight of the same day.
    pub fn day(self) -> Date {
        let d = local(self.ms).date();
        Date {
            ms: d.and_hms_opt(0, 0, 0).and_then(local_ms).unwrap_or(self.ms),
            time: false,
        }
    }

    pub fn add(self, d: Dur, sign: i64) -> Option<Date> {
        let mut n = local(self.ms);
        if d.months != 0 {
            let m = chrono::Months::new(u32::try_from(d.months.unsigned_abs()).ok()?);
            n = if (d.months > 0) == (sign > 0) {
                n.checked_add_months(m)?
            } else {
                n.checked_sub_months(m)?
            };
        }
        let ms = local_ms(n)?.checked_add(d.ms.checked_mul(sign)?)?;
        Some(Date {
            ms,
            time: self.time || d.ms % DAY != 0,
        })
    }

    pub fn field(self, name: &str) -> Option<f64> {
        let n = local(self.ms);
        Some(match name {
            "year" => n.year() as f64,
            "month" => n.month() as f64,
            "day" => n.day() as f64,
            "hour" => n.hour() as f64,
            "minute" => n.minute() as f64,
            "second" => n.second() as f64,
            "millisecond" => (n.nanosecond() / 1_000_000) as f64,
            _ => return None,
        })
    }

    /// ISO 8601 in the machine's time zone: `2026-11-30` for a date,
    /// `2026-11-30T09:05:00` for a datetime.
    pub fn iso(self) -> String {
        let n = local(self.ms);
        if self.time {
            n.format("%Y-%m-%dT%H:%M:%S").to_string()
        } else {
            n.format("%Y-%m-%d").to_string()
        }
    }

    pub fn time_of_day(self) -> String {
        local(self.ms).format("%H:%M:%S").to_string()
    }

    /// Formatted with a Moment.js format string (`YYYY-MM-DD`, `MMM D`,
    /// `dddd`, `HH:mm`, `[literal]`); other characters are kept.
    pub fn format(self, f: &str) -> String {
        let n = local(self.ms);
        let chars: Vec<char> = f.chars().collect();
        let mut out = String::new();
        let mut i = 0;
        const MONTHS: [&str; 12] = [
            "January",
            "February",
            "March",
            "April",
            "May",
            "June",
            "July",
            "August",
            "September",
            "October",
            "November",
            "December",
        ];
        const DAYS: [&str; 7] = [
            "Sunday",
            "Monday",
            "Tuesday",
            "Wednesday",
            "Thursday",
            "Friday",
            "Saturday",
        ];
        while i < chars.len() {
            if chars[i] == '[' {
                let end = chars[i..].iter().position(|&c| c == ']').map(|p| i + p);
                if let Some(end) = end {
                    out.extend(&chars[i + 1..end]);
                    i = end + 1;
                    continue;
                }
            }
            let c = chars[i];
            let run = chars[i..].iter().take_while(|&&x| x == c).count();
            let wd = n.weekday().num_days_from_sunday() as usize;
            let h12 = match n.hour() % 12 {
                0 => 12,
                h => h,
            };
            let (text, used) = match (c, run) {
                ('Y', r) if r >= 4 => (format!("{:04}", n.year()), 4),
                ('Y', r) if r >= 2 => (format!("{:02}", n.year() % 100), 2),
                ('M', r) if r >= 4 => (MONTHS[n.month0() as usize].to_owned(), 4),
                ('M', 3) => (MONTHS[n.month0() as usize][..3].to_owned(), 3),
                ('M', 2) => (format!("{:02}", n.month()), 2),
                ('M', _) => (n.month().to_string(), 1),
                ('D', r) if r >= 2 => (format!("{:02}", n.day()), 2),
                ('D', _) if chars.get(i + 1) == Some(&'o') => (ordinal(n.day()), 2),
                ('D', _) => (n.day().to_string(), 1),
                ('d', r) if r >= 4 => (DAYS[wd].to_owned(), 4),
                ('d', 3) => (DAYS[wd][..3].to_owned(), 3),
                ('d', 2) => (DAYS[wd][..2].to_owned(), 2),
                ('d', _) => (wd.to_string(), 1),
                ('H', r) if r >= 2 => (format!("{:02}", n.hour()), 2),
                ('H', _) => (n.hour().to_string(), 1),
                ('h', r) if r >= 2 => (format!("{h12:02}"), 2),
                ('h', _) => (h12.to_string(), 1),
                ('m', r) if r >= 2 => (format!("{:02}", n.minute()), 2),
                ('m', _) => (n.minute().to_string(), 1),
                ('s', r) if r >= 2 => (format!("{:02}", n.second()), 2),
                ('s', _) => (n.second().to_string(), 1),
                ('S', r) => {
                    let ms = format!("{:03}", n.nanosecond() / 1_000_000);
                    (ms[..r.min(3)].to_owned(), r.min(3))
                }
                ('A', _) => ((if n.hour() < 12 { "AM" } else { "PM" }).to_owned(), 1),
                ('a', _) => ((if n.hour() < 12 { "am" } else { "pm" }).to_owned(), 1),
                (c, _) => (c.to_string(), 1),
            };
            out.push_str(&text);
            i += used;
        }
        out
    }

    /// How long ago (or ahead) from `now`, as Moment.js words it: `3 days
    /// ago`, `in a month`.
    pub fn relative(self, now: i64) -> String {
        let diff = now - self.ms;
        let s = diff.abs() as f64 / 1000.0;
        let (m, h, d) = (s / 60.0, s / 3600.0, s / 86400.0);
        let words = if s < 45.0 {
            "a few seconds".to_owned()
        } else if s < 90.0 {
            "a minute".to_owned()
        } else if m < 45.0 {
            format!("{} minutes", m.round())
        } else if m < 90.0 {
            "an hour".to_owned()
        } else if h < 22.0 {
            format!("{} hours", h.round())
        } else if h < 36.0 {
            "a day".to_owned()
        } else if d < 26.0 {
            format!("{} days", d.round())
        } else if d < 46.0 {
            "a month".to_owned()
        } else if d < 320.0 {
            format!("{} months", (d / 30.4).round())
        } else if d < 548.0 {
            "a year".to_owned()
        } else {
            format!("{} years", (d / 365.0).round())
        };
        if diff >= 0 {
            format!("{words} ago")
        } else {
            format!("in {words}")
        }
    }
}

fn ordinal(n: u32) -> String {
    let suffix = match (n % 10, n % 100) {
        (_, 11..=13) => "th",
        (1, _) => "st",
        (2, _) => "nd",
        (3, _) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

/// Today at midnight, from the moment `now` (the last asked kept: a query
/// asks with one `now` for every file).
pub fn today(now: i64) -> Date {
    use std::cell::Cell;
    thread_local! {
        static LAST: Cell<Option<(i64, Date)>> = const { Cell::new(None) };
    }
    LAST.with(|last| match last.get() {
        Some((at, d)) if at == now => d,
        _ => {
            let d = Date::from_ms(now, true).day();
            last.set(Some((now, d)));
            d
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(s: &str) -> Date {
        Date::parse(s).unwrap()
    }

    #[test]
    fn durations_add_calendar_months_and_fixed_hours() {
        let r = d("2024-12-01")
            .add(Dur::parse("1M").unwrap(), 1)
            .unwrap()
            .add(Dur::parse("4h").unwrap(), 1)
            .unwrap()
            .add(Dur::parse("3m").unwrap(), 1)
            .unwrap();
        assert_eq!(r.format("YYYY-MM-DD HH:mm:ss"), "2025-01-01 04:03:00");
        assert_eq!(Dur::parse("1 week").unwrap().ms, 7 * DAY);
        assert_eq!(Dur::parse("1y 2 months").unwrap().months, 14);
        assert!(Dur::parse("3 fortnights").is_none());
        assert!(Dur::parse("").is_none());
    }

    #[test]
    fn dates_parse_with_and_without_time() {
        assert!(!d("2026-11-30").time);
        assert!(d("2026-11-30T10:00").time);
        assert_eq!(d("2026-11-30 10:00:05").iso(), "2026-11-30T10:00:05");
        assert_eq!(d("2026-11-30T10:00:05").day().iso(), "2026-11-30");
        assert!(Date::parse("2026-13-01").is_none());
        assert_eq!(
            d("2026-11-30T10:00:05.25").ms - d("2026-11-30T10:00:05").ms,
            250
        );
        assert_eq!(d("2026-11-30T10:00Z").ms, d("2026-11-30T12:00:00+02:00").ms);
        assert!(d("2026-11-30T10:00Z").time);
        for bad in [
            "2026-11-3",
            "2026/11/30",
            "2026-11-30x",
            "2026-11-30T1:00",
            "2026-11-30T10:00:0",
        ] {
            assert!(Date::parse(bad).is_none(), "{bad}");
        }
        assert!(Date::parse("soon").is_none());
        assert_eq!(
            d("2026-03-05").format("dddd, MMMM Do YYYY [at] h A"),
            "Thursday, March 5th 2026 at 12 AM"
        );
        assert_eq!(d("2026-03-05").field("month"), Some(3.0));
    }

    #[test]
    fn relative_times_read_as_moment_words_them() {
        let now = d("2026-11-29T12:00").ms;
        assert_eq!(d("2026-11-26T12:00").relative(now), "3 days ago");
        assert_eq!(d("2026-12-29T12:00").relative(now), "in a month");
        assert_eq!(d("2026-11-29T11:59:50").relative(now), "a few seconds ago");
    }
}
