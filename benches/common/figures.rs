//! A report row that is also data. [`row`] prints the Markdown row a person
//! reads, then one `figure {json}` line for each number in it; `cargo xtask
//! bench` keeps those lines in `benches/results/DATE-PART.json` and leaves
//! them out of the report it shows. Self-contained (std and serde_json), so
//! the app's bench can include it by path too.
//!
//! ```text
//! row("lease pairs", format!("{rate:.0} pairs/s"), "at least 5,000 pairs/s",
//!     value(rate, "pairs/s").against("the SQLite floor", floor, "/s"));
//! ```

#![allow(dead_code)] // each bench uses its share

use std::io::Write;
use std::time::Duration;

/// The numbers of one row: the row's own figure first, then any others
/// (`and`), each with what it is compared against (`against`).
pub struct Data {
    numbers: Vec<Number>,
}

struct Number {
    /// After the row's name: "p99" makes "NAME: p99". None for the row's own.
    label: Option<String>,
    value: f64,
    unit: String,
    against: Option<(String, f64, String)>,
}

/// The row's own figure: `value` in `unit` ("s", "ms", "MiB", "pairs/s", "x").
pub fn value(value: f64, unit: &str) -> Data {
    Data {
        numbers: vec![Number {
            label: None,
            value,
            unit: unit.to_owned(),
            against: None,
        }],
    }
}

impl Data {
    /// Another number the row shows, named `label` after the row's figure.
    pub fn and(mut self, label: &str, value: f64, unit: &str) -> Self {
        self.numbers.push(Number {
            label: Some(label.to_owned()),
            value,
            unit: unit.to_owned(),
            against: None,
        });
        self
    }

    /// What the last number is compared against: the baseline `name`,
    /// measured in the same run.
    pub fn against(mut self, name: &str, value: f64, unit: &str) -> Self {
        let last = self.numbers.last_mut().expect("value() made one");
        last.against = Some((plain(name), value, unit.to_owned()));
        self
    }
}

/// The report's row (`| figure | measured | target |`), then its numbers as
/// `figure {json}` lines.
pub fn row(figure: &str, measured: String, target: &str, data: Data) {
    println!("| {figure} | {measured} | {target} |");
    for line in lines(figure, &measured, target, &data) {
        println!("{line}");
    }
    std::io::stdout().flush().unwrap();
}

/// A time others are compared with: its row's figure and the time.
pub struct Baseline {
    pub figure: String,
    pub took: Duration,
}

impl Baseline {
    /// Prints the baseline's row: `took`, in seconds.
    pub fn row(figure: String, took: Duration) -> Self {
        let seconds = took.as_secs_f64();
        row(
            &figure,
            format!("{seconds:.2} s"),
            "baseline",
            value(seconds, "s"),
        );
        Self { figure, took }
    }

    /// The row of `took` against the baseline: in bold, the time and how many
    /// times the baseline's it is (`times` after the "x": " cp").
    pub fn compared(&self, figure: &str, took: Duration, times: &str, target: &str) {
        let (seconds, baseline) = (took.as_secs_f64(), self.took.as_secs_f64());
        row(
            figure,
            format!("**{seconds:.2} s = {:.2}x{times}**", seconds / baseline),
            target,
            value(seconds, "s").against(&self.figure, baseline, "s"),
        );
    }
}

/// Numbers that belong to no row of their own (a row printed another way).
pub fn numbers(figure: &str, data: Data) {
    for line in lines(figure, "", "", &data) {
        println!("{line}");
    }
    std::io::stdout().flush().unwrap();
}

/// The `figure {json}` lines of a row (xtask's tests read them too).
pub fn lines(figure: &str, measured: &str, target: &str, data: &Data) -> Vec<String> {
    let name = plain(figure);
    data.numbers
        .iter()
        // Not measured (a ratio to nothing): no figure.
        .filter(|number| number.value.is_finite())
        .map(|number| {
            let mut json = serde_json::json!({
                "name": match &number.label {
                    Some(label) => format!("{name}: {label}"),
                    None => name.clone(),
                },
                "value": number.value,
                "unit": number.unit,
            });
            if let Some((name, value, unit)) = &number.against {
                json["against"] = serde_json::json!({ "name": name, "value": value, "unit": unit });
            }
            if number.label.is_none() {
                if !target.is_empty() {
                    json["target"] = plain(target).into();
                }
                if !measured.is_empty() {
                    json["shown"] = plain(measured).into();
                }
            }
            format!("figure {json}")
        })
        .collect()
}

/// Text without the report's bold marks.
fn plain(text: &str) -> String {
    text.replace("**", "")
}
