//! Dates and durations as Bases has them: a date is a moment (milliseconds
//! since the epoch) read and shown in the machine's time zone, with or
//! without a time of day; a duration is calendar months, calendar days and
//! milliseconds, as Moment.js adds them: `"1M"` a month, `"1d"` and `"1w"`
//! days on the calendar (a day across a change of summer time is 23 or 25
//! hours, and `due <= today() + "1 week"` means the date a week on), `"1h"`,
//! `"1m"` and `"1s"` elapsed time.

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
    pub days: i64,
    pub ms: i64,
}

/// The moments JavaScript's dates hold: ±8.64·10¹⁵ ms (years -271821 to
/// 275760); a date past them is refused, not shown as another.
pub const MAX_MS: i64 = 8_640_000_000_000_000;

const DAY: i64 = 86_400_000;

impl Dur {
    /// Its length in milliseconds, a month counted as 30 days and a day
    /// as 24 hours.
    pub fn approx_ms(self) -> f64 {
        (self.months as f64 * 30.0 + self.days as f64) * DAY as f64 + self.ms as f64
    }

    /// Scaled by `by`: a part of a day becomes elapsed time (`duration("1d")
    /// / 2` is 12 hours), as `"1.5d"` reads.
    pub fn scaled(self, by: f64) -> Dur {
        let days = self.days as f64 * by;
        let whole = days.trunc();
        Dur {
            months: (self.months as f64 * by).round() as i64,
            days: whole as i64,
            ms: (self.ms as f64 * by + (days - whole) * DAY as f64).round() as i64,
        }
    }

    pub fn plus(self, other: Dur, sign: i64) -> Dur {
        Dur {
            months: self
                .months
                .saturating_add(other.months.saturating_mul(sign)),
            days: self.days.saturating_add(other.days.saturating_mul(sign)),
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
        let mut out = Dur {
            months: 0,
            days: 0,
            ms: 0,
        };
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
            let (months, days, ms) = match unit {
                "y" | "year" | "years" => (12.0, 0.0, 0.0),
                "M" | "month" | "months" => (1.0, 0.0, 0.0),
                "w" | "week" | "weeks" => (0.0, 7.0, 0.0),
                "d" | "day" | "days" => (0.0, 1.0, 0.0),
                "h" | "hour" | "hours" => (0.0, 0.0, 3_600_000.0),
                "m" | "minute" | "minutes" => (0.0, 0.0, 60_000.0),
                "s" | "second" | "seconds" => (0.0, 0.0, 1000.0),
                _ => return None,
            };
            // A fraction of a day is elapsed time (`"1.5d"`: a day and 12 h).
            let whole = (n * days).trunc();
            out.months = out.months.saturating_add((n * months).round() as i64);
            out.days = out.days.saturating_add(whole as i64);
            out.ms = out
                .ms
                .saturating_add((n * ms + (n * days - whole) * DAY as f64).round() as i64);
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
        // A time the clocks skipped (summer time starting, at midnight in
        // Santiago) is read with the offset in force before the gap, as
        // JavaScript's dates read it: 02:30 in a 02:00 → 03:00 gap is 03:30.
        let ms = Local
            .from_local_datetime(&n)
            .earliest()
            .map(|d| d.timestamp_millis())
            .or_else(|| {
                let before = Local
                    .offset_from_local_datetime(&(n - chrono::Duration::days(1)))
                    .earliest()?;
                let utc = n - chrono::Duration::seconds(i64::from(before.local_minus_utc()));
                Some(utc.and_utc().timestamp_millis())
            });
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

    /// The date `d` later (`sign` 1) or earlier (-1): months and days on
    /// the calendar of the machine's time zone, then the elapsed time;
    /// None past what a date holds.
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
        if d.days != 0 {
            let days = chrono::Days::new(d.days.unsigned_abs());
            n = if (d.days > 0) == (sign > 0) {
                n.checked_add_days(days)?
            } else {
                n.checked_sub_days(days)?
            };
        }
        let ms = local_ms(n)?.checked_add(d.ms.checked_mul(sign)?)?;
        // Within JavaScript's range and the calendar's (chrono's years
        // ±262,142), so that it reads back as itself, never as 1970.
        (ms.abs() <= MAX_MS && Local.timestamp_millis_opt(ms).single().is_some()).then_some(Date {
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

    /// Formatted with a Moment.js format string, its English locale's
    /// tokens (`YYYY-MM-DD`, `MMM D`, `dddd`, `HH:mm`, `L`, `LL`, `LT`,
    /// `X`, `Q`, `W`, `DDD`, `E`, `Z`, `k`, …, `[literal]`); any other
    /// character is kept as it is.
    pub fn format(self, f: &str) -> String {
        let n = local(self.ms);
        let mut out = String::new();
        let mut rest = f;
        while let Some(c) = rest.chars().next() {
            if c == '['
                && let Some(end) = rest.find(']')
            {
                out.push_str(&rest[1..end]);
                rest = &rest[end + 1..];
                continue;
            }
            match TOKENS.iter().find(|t| rest.starts_with(**t)) {
                Some(t) => {
                    match long_form(t) {
                        Some(expanded) => out.push_str(&self.format(expanded)),
                        None => out.push_str(&self.token(n, t)),
                    }
                    rest = &rest[t.len()..];
                }
                None => {
                    out.push(c);
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
        out
    }

    /// One Moment.js token of the local time `n`.
    fn token(self, n: NaiveDateTime, t: &str) -> String {
        let wd = n.weekday().num_days_from_sunday();
        let h12 = match n.hour() % 12 {
            0 => 12,
            h => h,
        };
        // The English locale's week: it starts on Sunday, and week 1 is
        // the one holding January 1st (worked out only when asked).
        let us = || us_week(n.date());
        let iso = n.iso_week();
        let offset = Local
            .timestamp_millis_opt(self.ms)
            .single()
            .map_or(0, |d| d.offset().local_minus_utc());
        let zone = |sep: &str| {
            let (sign, m) = if offset < 0 {
                ('-', -offset / 60)
            } else {
                ('+', offset / 60)
            };
            format!("{sign}{:02}{sep}{:02}", m / 60, m % 60)
        };
        let y = n.year();
        match t {
            "YYYY" => format!("{y:04}"),
            "YY" => format!("{:02}", y.rem_euclid(100)),
            "Y" if y > 9999 => format!("+{y}"),
            "Y" => y.to_string(),
            "GGGG" => format!("{:04}", iso.year()),
            "gggg" => format!("{:04}", us().1),
            "Q" => (n.month0() / 3 + 1).to_string(),
            "Qo" => ordinal(n.month0() / 3 + 1),
            "MMMM" => MONTHS[n.month0() as usize].to_owned(),
            "MMM" => MONTHS[n.month0() as usize][..3].to_owned(),
            "MM" => format!("{:02}", n.month()),
            "Mo" => ordinal(n.month()),
            "M" => n.month().to_string(),
            "DDDD" => format!("{:03}", n.ordinal()),
            "DDDo" => ordinal(n.ordinal()),
            "DDD" => n.ordinal().to_string(),
            "DD" => format!("{:02}", n.day()),
            "Do" => ordinal(n.day()),
            "D" => n.day().to_string(),
            "dddd" => DAYS[wd as usize].to_owned(),
            "ddd" => DAYS[wd as usize][..3].to_owned(),
            "dd" => DAYS[wd as usize][..2].to_owned(),
            "do" => ordinal(wd),
            "d" | "e" => wd.to_string(),
            "E" => n.weekday().number_from_monday().to_string(),
            "WW" => format!("{:02}", iso.week()),
            "Wo" => ordinal(iso.week()),
            "W" => iso.week().to_string(),
            "ww" => format!("{:02}", us().0),
            "wo" => ordinal(us().0),
            "w" => us().0.to_string(),
            "HH" => format!("{:02}", n.hour()),
            "H" => n.hour().to_string(),
            "hh" => format!("{h12:02}"),
            "h" => h12.to_string(),
            "kk" => format!("{:02}", n.hour() + if n.hour() == 0 { 24 } else { 0 }),
            "k" => (n.hour() + if n.hour() == 0 { 24 } else { 0 }).to_string(),
            "mm" => format!("{:02}", n.minute()),
            "m" => n.minute().to_string(),
            "ss" => format!("{:02}", n.second()),
            "s" => n.second().to_string(),
            "SSS" | "SS" | "S" => {
                format!("{:03}", n.nanosecond() / 1_000_000)[..t.len()].to_owned()
            }
            "A" => (if n.hour() < 12 { "AM" } else { "PM" }).to_owned(),
            "a" => (if n.hour() < 12 { "am" } else { "pm" }).to_owned(),
            "X" => self.ms.div_euclid(1000).to_string(),
            "x" => self.ms.to_string(),
            "ZZ" => zone(""),
            "Z" => zone(":"),
            other => other.to_owned(),
        }
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

/// Moment.js's tokens, longest first where one begins another.
const TOKENS: &[&str] = &[
    "LLLL", "LLL", "LTS", "LT", "LL", "L", "llll", "lll", "ll", "l", "YYYY", "YY", "Y", "GGGG",
    "gggg", "Qo", "Q", "MMMM", "MMM", "MM", "Mo", "M", "DDDD", "DDDo", "DDD", "DD", "Do", "D",
    "dddd", "ddd", "dd", "do", "d", "E", "e", "WW", "Wo", "W", "ww", "wo", "w", "HH", "H", "hh",
    "h", "kk", "k", "mm", "m", "ss", "s", "SSS", "SS", "S", "A", "a", "X", "x", "ZZ", "Z",
];

/// The English locale's long date formats, in the tokens above.
fn long_form(t: &str) -> Option<&'static str> {
    Some(match t {
        "LT" => "h:mm A",
        "LTS" => "h:mm:ss A",
        "L" => "MM/DD/YYYY",
        "LL" => "MMMM D, YYYY",
        "LLL" => "MMMM D, YYYY h:mm A",
        "LLLL" => "dddd, MMMM D, YYYY h:mm A",
        "l" => "M/D/YYYY",
        "ll" => "MMM D, YYYY",
        "lll" => "MMM D, YYYY h:mm A",
        "llll" => "ddd, MMM D, YYYY h:mm A",
        _ => return None,
    })
}

/// The week of the year as the English locale counts it (weeks start on
/// Sunday; week 1 holds January 1st), and the year that week belongs to.
fn us_week(d: NaiveDate) -> (u32, i32) {
    // The Saturday ending `d`'s week decides its year: the week holding
    // January 1st is week 1 of the year it ends in. At the calendar's
    // ends (year ±262,142) the week is counted in `d`'s own year.
    let saturday = d
        .checked_add_days(chrono::Days::new(u64::from(
            6 - d.weekday().num_days_from_sunday(),
        )))
        .unwrap_or(d);
    let year = saturday.year();
    let Some(jan1) = NaiveDate::from_ymd_opt(year, 1, 1) else {
        return (1, year);
    };
    let first_sunday = jan1
        .checked_sub_days(chrono::Days::new(u64::from(
            jan1.weekday().num_days_from_sunday(),
        )))
        .unwrap_or(jan1);
    let week = (d - first_sunday).num_days().div_euclid(7) + 1;
    (week as u32, year)
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
        assert_eq!(Dur::parse("1 week").unwrap().days, 7);
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

    /// Moment.js's documented tokens (momentjs.com, "Display"), the English
    /// locale; `Z` and `X` depend on the machine's zone, so their shape.
    #[test]
    fn moment_tokens_format_as_moment_does() {
        let t = d("2026-03-05T14:07:09.045");
        for (f, want) in [
            ("L", "03/05/2026"),
            ("LL", "March 5, 2026"),
            ("LLL", "March 5, 2026 2:07 PM"),
            ("LLLL", "Thursday, March 5, 2026 2:07 PM"),
            ("LT", "2:07 PM"),
            ("LTS", "2:07:09 PM"),
            ("l", "3/5/2026"),
            ("ll", "Mar 5, 2026"),
            ("lll", "Mar 5, 2026 2:07 PM"),
            ("llll", "Thu, Mar 5, 2026 2:07 PM"),
            ("Q Qo", "1 1st"),
            ("DDD DDDD DDDo", "64 064 64th"),
            ("E e d", "4 4 4"),
            ("W WW Wo GGGG", "10 10 10th 2026"),
            ("w ww wo gggg", "10 10 10th 2026"),
            ("k kk", "14 14"),
            ("Y YY YYYY", "2026 26 2026"),
            ("Mo Do do", "3rd 5th 4th"),
            ("SSS SS S", "045 04 0"),
            ("[Q]Q [at] LT", "Q1 at 2:07 PM"),
        ] {
            assert_eq!(t.format(f), want, "{f}");
        }
        assert_eq!(d("2026-03-05").format("k"), "24");
        // 2027-01-01 is a Friday: its English week is week 1 of 2027, and
        // so is 2026-12-27 (that Sunday starts it); ISO puts it in 2026's 53rd.
        assert_eq!(d("2026-12-27").format("w gggg"), "1 2027");
        assert_eq!(d("2027-01-01").format("W GGGG"), "53 2026");
        assert_eq!(t.format("X").parse::<i64>().unwrap(), t.ms / 1000);
        assert_eq!(t.format("x"), t.ms.to_string());
        let z = t.format("Z ZZ");
        let b = z.as_bytes();
        assert!(
            z.len() == 12
                && matches!(b[0], b'+' | b'-')
                && b[3] == b':'
                && matches!(b[7], b'+' | b'-'),
            "{z}"
        );
    }

    /// A day on the calendar, not 24 hours; a month the same day next
    /// month; elapsed time for hours; a date past JavaScript's range none.
    #[test]
    fn durations_add_calendar_days() {
        let day = Dur::parse("1d").unwrap();
        assert_eq!((day.days, day.ms), (1, 0));
        let r = d("2026-01-30").add(day, 1).unwrap();
        assert_eq!(r.iso(), "2026-01-31");
        assert!(!r.time);
        let half = Dur::parse("1.5d").unwrap();
        assert_eq!((half.days, half.ms), (1, DAY / 2));
        assert_eq!(
            d("2026-01-30").add(half, 1).unwrap().iso(),
            "2026-01-31T12:00:00"
        );
        assert_eq!(
            d("2026-01-30")
                .add(Dur::parse("2w").unwrap(), -1)
                .unwrap()
                .iso(),
            "2026-01-16"
        );
        assert!(
            d("2026-01-01")
                .add(Dur::parse("9999999999999s").unwrap(), 1)
                .is_none()
        );
    }

    #[test]
    fn relative_times_read_as_moment_words_them() {
        let now = d("2026-11-29T12:00").ms;
        assert_eq!(d("2026-11-26T12:00").relative(now), "3 days ago");
        assert_eq!(d("2026-12-29T12:00").relative(now), "in a month");
        assert_eq!(d("2026-11-29T11:59:50").relative(now), "a few seconds ago");
    }
}
