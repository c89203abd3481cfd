//! The Tasks plugin's recurrence rules (`🔁 every week on Sunday`, `every
//! month on the last`, `every 10 days when done`) and the date of the next
//! occurrence, as its Recurring Tasks page documents them: a rule that
//! names no day adds its interval to the reference date (a day that does
//! not exist moves back to the month's last); a rule that names days takes
//! the first day after the reference that it names, skipping dates that do
//! not exist (iCalendar's rule, which the plugin's rrule library follows).
//! A rule kura cannot read is refused by name, never guessed.

use chrono::{Datelike, Days, Months, NaiveDate, Weekday};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unit {
    Day,
    Week,
    Month,
    Year,
}

/// A recurrence rule, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    every: u32,
    unit: Unit,
    /// The week days it names (`on Monday, Friday`, `weekday`).
    weekdays: Vec<Weekday>,
    /// Which of those week days in the month: 2 for `2nd Wednesday`, -1
    /// for `last Friday`, -2 for `2nd last`; empty: each of them.
    nth: Vec<i32>,
    /// Days of the month (`the 1st and 24th`); -1 is `the last`.
    monthdays: Vec<i32>,
    /// Months of the year (`every January`, `every April and December`).
    months: Vec<u32>,
    /// From the day it is done, not from its dates.
    pub when_done: bool,
}

const WEEKDAYS: [(&str, Weekday); 7] = [
    ("monday", Weekday::Mon),
    ("tuesday", Weekday::Tue),
    ("wednesday", Weekday::Wed),
    ("thursday", Weekday::Thu),
    ("friday", Weekday::Fri),
    ("saturday", Weekday::Sat),
    ("sunday", Weekday::Sun),
];

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

fn weekday(w: &str) -> Option<Weekday> {
    WEEKDAYS.iter().find(|(n, _)| *n == w).map(|(_, d)| *d)
}

fn month(w: &str) -> Option<u32> {
    MONTHS.iter().position(|m| *m == w).map(|i| i as u32 + 1)
}

/// `1st`, `2nd`, `3rd`, `24th`: the number.
fn ordinal(w: &str) -> Option<i32> {
    let digits = w.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &w[digits.len()..];
    let n: i32 = digits.parse().ok()?;
    matches!(suffix, "st" | "nd" | "rd" | "th").then_some(n)
}

/// The words of a rule: lowercase, commas apart, `and` dropped.
fn words(text: &str) -> Vec<String> {
    text.to_lowercase()
        .replace(',', " , ")
        .split_whitespace()
        .filter(|w| *w != "and" && *w != ",")
        .map(str::to_owned)
        .collect()
}

impl Rule {
    /// Read `text` (after 🔁); Err names what kura cannot read.
    pub fn parse(text: &str) -> Result<Rule, String> {
        let all = words(text);
        let mut w: &[String] = &all;
        let refuse = || format!("kura does not read the recurrence rule `{}`", text.trim());
        let mut rule = Rule {
            every: 1,
            unit: Unit::Day,
            weekdays: Vec::new(),
            nth: Vec::new(),
            monthdays: Vec::new(),
            months: Vec::new(),
            when_done: false,
        };
        if let [.., a, b] = w
            && a == "when"
            && b == "done"
        {
            rule.when_done = true;
            w = &w[..w.len() - 2];
        }
        let Some((first, rest)) = w.split_first() else {
            return Err(refuse());
        };
        if first != "every" {
            return Err(refuse());
        }
        w = rest;
        if let Some((n, rest)) = w.split_first()
            && let Ok(n) = n.parse::<u32>()
        {
            if n == 0 {
                return Err(refuse());
            }
            rule.every = n;
            w = rest;
        }
        let Some((what, rest)) = w.split_first() else {
            return Err(refuse());
        };
        w = rest;
        match what.as_str() {
            "day" | "days" => rule.unit = Unit::Day,
            "week" | "weeks" => rule.unit = Unit::Week,
            "month" | "months" => rule.unit = Unit::Month,
            "year" | "years" => rule.unit = Unit::Year,
            "weekday" => {
                rule.unit = Unit::Week;
                rule.weekdays = WEEKDAYS[..5].iter().map(|(_, d)| *d).collect();
            }
            other => {
                // `every Sunday`, `every Monday, Friday`; `every January`,
                // `every April and December`.
                let mut names = std::iter::once(other).chain(w.iter().map(String::as_str));
                let mut taken = 0;
                if let Some(d) = weekday(other) {
                    rule.unit = Unit::Week;
                    rule.weekdays.push(d);
                    for n in names.by_ref().skip(1) {
                        match weekday(n) {
                            Some(d) => rule.weekdays.push(d),
                            None => break,
                        }
                        taken += 1;
                    }
                } else if let Some(m) = month(other) {
                    rule.unit = Unit::Year;
                    rule.months.push(m);
                    for n in names.by_ref().skip(1) {
                        match month(n) {
                            Some(m) => rule.months.push(m),
                            None => break,
                        }
                        taken += 1;
                    }
                } else {
                    return Err(refuse());
                }
                w = &w[taken..];
            }
        }
        if let Some((on, rest)) = w.split_first() {
            if on != "on" {
                return Err(refuse());
            }
            rule.on(rest).ok_or_else(refuse)?;
        }
        Ok(rule)
    }

    /// The `on …` part.
    fn on(&mut self, w: &[String]) -> Option<()> {
        let mut w = w;
        // `every year on February the 29th`.
        if self.unit == Unit::Year
            && let Some(m) = w.first().and_then(|m| month(m))
        {
            self.months.push(m);
            w = &w[1..];
        }
        if self.unit == Unit::Week {
            for d in w {
                self.weekdays.push(weekday(d)?);
            }
            return (!w.is_empty()).then_some(());
        }
        let (the, rest) = w.split_first()?;
        if the != "the" {
            return None;
        }
        // Ordinals, each maybe followed by `last`, then maybe a week day.
        let mut numbers: Vec<i32> = Vec::new();
        let mut i = 0;
        while i < rest.len() {
            let word = rest[i].as_str();
            if word == "last" {
                numbers.push(-1);
            } else if let Some(n) = ordinal(word) {
                if rest.get(i + 1).is_some_and(|n| n == "last") {
                    numbers.push(-n);
                    i += 1;
                } else {
                    numbers.push(n);
                }
            } else {
                break;
            }
            i += 1;
        }
        let days = &rest[i..];
        if numbers.is_empty() {
            return None;
        }
        if days.is_empty() {
            if numbers.iter().any(|&n| n == 0 || !(-31..=31).contains(&n)) {
                return None;
            }
            self.monthdays = numbers;
        } else {
            for d in days {
                self.weekdays.push(weekday(d)?);
            }
            if numbers.iter().any(|&n| n == 0 || !(-5..=5).contains(&n)) {
                return None;
            }
            self.nth = numbers;
        }
        Some(())
    }

    /// Whether the rule names the days it falls on, rather than adding
    /// its interval.
    fn names_days(&self) -> bool {
        !(self.weekdays.is_empty() && self.monthdays.is_empty() && self.months.is_empty())
    }

    /// The next occurrence after `from` (the reference date, or the day
    /// done for `when done`); None past the dates chrono holds.
    pub fn next(&self, from: NaiveDate) -> Option<NaiveDate> {
        if !self.names_days() {
            return match self.unit {
                Unit::Day => from.checked_add_days(Days::new(self.every as u64)),
                Unit::Week => from.checked_add_days(Days::new(7 * self.every as u64)),
                // chrono moves a day that does not exist back to the
                // month's last, as the plugin does.
                Unit::Month => from.checked_add_months(Months::new(self.every)),
                Unit::Year => from.checked_add_months(Months::new(self.every.checked_mul(12)?)),
            };
        }
        // The first matching day after `from`, within nine of the rule's
        // periods and nine years (a 29 February every year is at most
        // eight away), at most four centuries.
        let period_days = match self.unit {
            Unit::Day => 1,
            Unit::Week => 7,
            Unit::Month => 31,
            Unit::Year => 366,
        } * self.every as u64;
        let search = (9 * period_days).clamp(366 * 9, 366 * 400);
        let mut d = from;
        for _ in 0..search {
            d = d.succ_opt()?;
            if self.in_period(from, d) && self.falls_on(from, d) {
                return Some(d);
            }
        }
        None
    }

    /// Whether `d` is in a period the interval keeps, counted from `start`
    /// (weeks start on Monday, as iCalendar's default).
    fn in_period(&self, start: NaiveDate, d: NaiveDate) -> bool {
        let every = self.every as i64;
        let n = match self.unit {
            Unit::Day => (d - start).num_days(),
            Unit::Week => {
                let monday =
                    |x: NaiveDate| x - Days::new(x.weekday().num_days_from_monday() as u64);
                (monday(d) - monday(start)).num_days() / 7
            }
            Unit::Month => {
                (d.year() as i64 * 12 + d.month0() as i64)
                    - (start.year() as i64 * 12 + start.month0() as i64)
            }
            Unit::Year => (d.year() - start.year()) as i64,
        };
        n % every == 0
    }

    fn falls_on(&self, start: NaiveDate, d: NaiveDate) -> bool {
        let last = last_day(d);
        let months = if self.months.is_empty() && self.unit == Unit::Year {
            vec![start.month()]
        } else {
            self.months.clone()
        };
        if !months.is_empty() && !months.contains(&d.month()) {
            return false;
        }
        if !self.weekdays.is_empty() {
            if !self.weekdays.contains(&d.weekday()) {
                return false;
            }
            if self.nth.is_empty() {
                return true;
            }
            let from_start = (d.day() as i32 - 1) / 7 + 1;
            let from_end = -((last as i32 - d.day() as i32) / 7 + 1);
            return self.nth.iter().any(|&n| n == from_start || n == from_end);
        }
        let days = if self.monthdays.is_empty() {
            vec![start.day() as i32]
        } else {
            self.monthdays.clone()
        };
        days.iter().any(|&n| {
            if n > 0 {
                d.day() as i32 == n
            } else {
                d.day() as i32 == last as i32 + 1 + n
            }
        })
    }
}

/// The last day of `d`'s month.
fn last_day(d: NaiveDate) -> u32 {
    let first = d.with_day(1).expect("every month has a 1st");
    let next = first
        .checked_add_months(Months::new(1))
        .unwrap_or(NaiveDate::MAX);
    (next - first).num_days() as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    fn date(s: &str) -> NaiveDate {
        NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap()
    }

    fn next(rule: &str, from: &str) -> String {
        Rule::parse(rule)
            .unwrap()
            .next(date(from))
            .unwrap()
            .to_string()
    }

    /// The Recurring Tasks page's examples, each the date it documents.
    #[test]
    fn the_recurring_tasks_page_s_examples_give_its_dates() {
        // Basic example: the next Sunday after Sunday 25 April 2021.
        assert_eq!(next("every Sunday", "2021-04-25"), "2021-05-02");
        assert_eq!(next("every week", "2021-02-06"), "2021-02-13");
        // `every month on the last`, completed five times.
        let mut d = "2022-01-31".to_owned();
        let mut got = Vec::new();
        for _ in 0..5 {
            d = next("every month on the last", &d);
            got.push(d.clone());
        }
        assert_eq!(
            got,
            [
                "2022-02-28",
                "2022-03-31",
                "2022-04-30",
                "2022-05-31",
                "2022-06-30"
            ]
        );
        // `every month`: a day that does not exist moves earlier, and
        // later months keep the earlier day.
        let mut d = "2021-10-31".to_owned();
        let mut got = Vec::new();
        for _ in 0..5 {
            d = next("every month", &d);
            got.push(d.clone());
        }
        assert_eq!(
            got,
            [
                "2021-11-30",
                "2021-12-30",
                "2022-01-30",
                "2022-02-28",
                "2022-03-28"
            ]
        );
        // `every month on the 31st` skips the months without one.
        let mut d = "2022-01-31".to_owned();
        let mut got = Vec::new();
        for _ in 0..4 {
            d = next("every month on the 31st", &d);
            got.push(d.clone());
        }
        assert_eq!(
            got,
            ["2022-03-31", "2022-05-31", "2022-07-31", "2022-08-31"]
        );
        assert_eq!(next("every 2 weeks", "2021-10-30"), "2021-11-13");
        assert_eq!(next("every 3 months", "2022-01-31"), "2022-04-30");
        assert_eq!(next("every 3 months", "2022-04-30"), "2022-07-30");
    }

    /// The plugin's own recurrence cases (its toggle tests): the rule, the
    /// reference date and the next one.
    #[test]
    fn the_plugin_s_recurrence_cases_give_its_dates() {
        for (rule, from, want) in [
            ("every 7 days", "2021-02-21", "2021-02-28"),
            ("every day", "2021-02-21", "2021-02-22"),
            ("every 4 weeks", "2021-10-15", "2021-11-12"),
            ("every 4 weeks", "2033-10-12", "2033-11-09"),
            ("every month", "2021-10-18", "2021-11-18"),
            (
                "every month on the 2nd Wednesday",
                "2021-09-08",
                "2021-10-13",
            ),
            (
                "every 3 months on the 3rd Thursday",
                "2021-04-15",
                "2021-07-15",
            ),
            (
                "every 3 months on the 3rd Thursday",
                "2021-08-19",
                "2021-11-18",
            ),
            (
                "every 3 months on the 3rd Thursday",
                "2021-09-16",
                "2021-12-16",
            ),
            (
                "every week on Monday, Wednesday, Friday",
                "2022-01-24",
                "2022-01-26",
            ),
            ("every month", "2021-03-31", "2021-04-30"),
            ("every month", "2021-01-29", "2021-02-28"),
            ("every month on the 31st", "2021-01-31", "2021-03-31"),
            (
                "every year on February the 29th",
                "2021-01-01",
                "2024-02-29",
            ),
            ("every year", "2020-02-29", "2021-02-28"),
        ] {
            assert_eq!(next(rule, from), want, "{rule} from {from}");
        }
        // `when done`: from the day done.
        for (rule, today, want) in [
            ("every 7 days when done", "2021-02-18", "2021-02-25"),
            ("every 7 days when done", "2021-02-22", "2021-03-01"),
            ("every day when done", "2022-01-04", "2022-01-05"),
            ("every 3 weeks when done", "2021-01-14", "2021-02-04"),
            ("every month when done", "2021-10-16", "2021-11-16"),
            (
                "every month on the 2nd Wednesday when done",
                "2021-09-15",
                "2021-10-13",
            ),
            (
                "every month on the 2nd Wednesday when done",
                "2021-10-12",
                "2021-10-13",
            ),
            (
                "every month on the 2nd Wednesday when done",
                "2021-10-13",
                "2021-11-10",
            ),
            (
                "every week on Monday, Wednesday, Friday when done",
                "2022-01-26",
                "2022-01-28",
            ),
            ("every month when done", "2021-08-31", "2021-09-30"),
            ("every 2 years when done", "2020-02-29", "2022-02-28"),
        ] {
            let r = Rule::parse(rule).unwrap();
            assert!(r.when_done, "{rule}");
            assert_eq!(next(rule, today), want, "{rule} done {today}");
        }
    }

    /// The page's list of rules to mix and match: each is read, and falls
    /// where it says.
    #[test]
    fn every_rule_the_page_lists_is_read() {
        for (rule, from, want) in [
            ("every 3 days", "2026-12-07", "2026-12-10"),
            ("every 10 days when done", "2026-12-07", "2026-12-17"),
            // Friday to Monday.
            ("every weekday", "2026-12-11", "2026-12-14"),
            ("every week on Sunday", "2026-12-07", "2026-12-13"),
            ("every week on Tuesday, Friday", "2026-12-08", "2026-12-11"),
            ("every 3 weeks on Friday", "2026-12-11", "2027-01-01"),
            ("every 2 months", "2026-12-07", "2027-02-07"),
            ("every month on the 1st", "2026-12-07", "2027-01-01"),
            ("every month on the last Friday", "2026-12-07", "2026-12-25"),
            (
                "every month on the 2nd last Friday",
                "2026-12-07",
                "2026-12-18",
            ),
            (
                "every 6 months on the 2nd Wednesday",
                "2026-12-09",
                "2027-06-09",
            ),
            ("every January on the 15th", "2026-12-07", "2027-01-15"),
            ("every February on the last", "2026-12-07", "2027-02-28"),
            (
                "every April and December on the 1st and 24th",
                "2026-12-07",
                "2026-12-24",
            ),
            (
                "every April and December on the 1st and 24th",
                "2026-12-24",
                "2027-04-01",
            ),
            ("every year", "2026-12-07", "2027-12-07"),
        ] {
            assert_eq!(next(rule, from), want, "{rule} from {from}");
        }
    }

    #[test]
    fn a_rule_kura_cannot_read_is_refused_by_name() {
        for rule in [
            "",
            "daily",
            "every",
            "every 0 days",
            "every fortnight",
            "every day for 3 times",
            "every week until 2027-01-01",
            "every month on the 40th",
            "every week on Funday",
        ] {
            let e = Rule::parse(rule).unwrap_err();
            assert!(e.contains("recurrence rule"), "{rule}: {e}");
        }
    }
}
