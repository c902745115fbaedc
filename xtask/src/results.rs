//! What `cargo xtask bench` keeps of a run. A bench prints a `figure {json}`
//! line after each row of its report (`benches/common/figures.rs`); here
//! those lines are taken out of the report shown and kept per part in
//! `benches/results/DATE-PART.json`, with what the run was measured on: the
//! commit, rustc, the cores and the load.

use std::collections::BTreeMap;
use std::io::{BufRead, Write};
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context, Result};
use serde_json::{json, Map, Value};

/// How a figure line starts; the rest is one JSON object.
const PREFIX: &str = "figure ";

/// The figure of a figure line (None when `line` is not one): an object
/// with at least a string `name`, a number `value` and a string `unit`.
pub fn parse(line: &str) -> Option<Result<Map<String, Value>>> {
    let json = line.strip_prefix(PREFIX)?;
    Some(figure(json))
}

fn figure(json: &str) -> Result<Map<String, Value>> {
    let Value::Object(figure) = serde_json::from_str(json).context("not JSON")? else {
        bail!("not a JSON object");
    };
    let has = |key: &str, is: fn(&Value) -> bool| figure.get(key).is_some_and(is);
    if !has("name", Value::is_string) {
        bail!("no string \"name\"");
    }
    if !has("value", Value::is_number) {
        bail!("no number \"value\"");
    }
    if !has("unit", Value::is_string) {
        bail!("no string \"unit\"");
    }
    Ok(figure)
}

/// What a run's figures were measured on, read once as it starts.
pub struct Run {
    /// The day the run started, UTC (YYYY-MM-DD).
    pub date: String,
    pub commit: String,
    /// Whether tracked files differed from the commit.
    pub dirty: bool,
    pub rustc: String,
    pub cores: usize,
    /// /proc/loadavg's three load averages as the run started.
    pub load: String,
    /// A `--quick` run: small sizes, figures that only show the bench works.
    pub quick: bool,
    /// `cargo xtask bench`'s arguments.
    pub args: Vec<String>,
}

impl Run {
    pub fn here(root: &Path, args: &[String]) -> Self {
        let out = |program: &str, args: &[&str]| {
            Command::new(program)
                .args(args)
                .current_dir(root)
                .output()
                .ok()
                .filter(|o| o.status.success())
                .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        };
        let days = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() / 86_400);
        Self {
            date: civil_date(days as i64),
            commit: out("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into()),
            dirty: out("git", &["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|changed| !changed.is_empty()),
            rustc: out("rustc", &["--version"]).unwrap_or_else(|| "unknown".into()),
            cores: std::thread::available_parallelism().map_or(0, |n| n.get()),
            load: std::fs::read_to_string("/proc/loadavg")
                .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
                .unwrap_or_default(),
            quick: args.iter().any(|a| a == "--quick"),
            args: args.to_vec(),
        }
    }
}

/// The figures of one run, per part, each part kept in a file of its own.
pub struct Results {
    dir: PathBuf,
    run: Run,
    parts: BTreeMap<String, Part>,
}

struct Part {
    /// Chosen when the part is first saved; rewritten as figures come.
    file: Option<PathBuf>,
    figures: Vec<Value>,
}

impl Results {
    pub fn new(dir: PathBuf, run: Run) -> Self {
        Self {
            dir,
            run,
            parts: BTreeMap::new(),
        }
    }

    /// Echoes a bench's report (`output`, its stdout) to `echo`, figure lines
    /// left out, and keeps their figures under `part`, named by `bench`.
    /// A figure line that does not parse is echoed, with a warning. Answers
    /// how many figures were kept.
    pub fn collect(
        &mut self,
        bench: &str,
        part: &str,
        output: impl BufRead,
        echo: &mut impl Write,
    ) -> Result<usize> {
        let mut kept = 0;
        // Lossy: a stray byte in a report loses no figure.
        for line in output.split(b'\n') {
            let line = line.context("reading the bench's report")?;
            let line = String::from_utf8_lossy(&line);
            let line = line.strip_suffix('\r').unwrap_or(&line);
            match parse(line) {
                None => writeln!(echo, "{line}")?,
                Some(Ok(mut figure)) => {
                    figure.insert("bench".into(), bench.into());
                    self.parts
                        .entry(part.to_owned())
                        .or_insert_with(|| Part {
                            file: None,
                            figures: Vec::new(),
                        })
                        .figures
                        .push(Value::Object(figure));
                    kept += 1;
                }
                Some(Err(e)) => {
                    eprintln!("warning: a figure line of bench {bench} is not kept ({e:#})");
                    writeln!(echo, "{line}")?;
                }
            }
            echo.flush()?;
        }
        Ok(kept)
    }

    /// Writes each part's file with the figures it has so far. Answers the
    /// files written.
    pub fn save(&mut self) -> Result<Vec<PathBuf>> {
        std::fs::create_dir_all(&self.dir)
            .with_context(|| format!("creating {}", self.dir.display()))?;
        let mut written = Vec::new();
        for (name, part) in &mut self.parts {
            let file = part
                .file
                .get_or_insert_with(|| free_file(&self.dir, &self.run.date, name, self.run.quick));
            let text = serde_json::to_string_pretty(&document(&self.run, name, &part.figures))?;
            std::fs::write(&*file, text + "\n")
                .with_context(|| format!("writing {}", file.display()))?;
            written.push(file.clone());
        }
        Ok(written)
    }
}

/// A part's file: the run, then its figures.
fn document(run: &Run, part: &str, figures: &[Value]) -> Value {
    json!({
        "date": run.date,
        "part": part,
        "commit": run.commit,
        "dirty": run.dirty,
        "rustc": run.rustc,
        "cores": run.cores,
        "load": run.load,
        "quick": run.quick,
        "args": run.args,
        "figures": figures,
    })
}

/// `DIR/DATE-PART.json` (`DATE-PART-quick.json` for a `--quick` run), or
/// the same ending `-2`, `-3`… when an earlier run of the day has it.
fn free_file(dir: &Path, date: &str, part: &str, quick: bool) -> PathBuf {
    let part: String = part
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let stem = format!("{date}-{part}{}", if quick { "-quick" } else { "" });
    (1..)
        .map(|n| match n {
            1 => dir.join(format!("{stem}.json")),
            n => dir.join(format!("{stem}-{n}.json")),
        })
        .find(|file| !file.exists())
        .expect("a free name")
}

/// The date (YYYY-MM-DD) `days` after 1970-01-01, in the proleptic
/// Gregorian calendar (Howard Hinnant's `civil_from_days`).
fn civil_date(days: i64) -> String {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02}")
}

/// The benches' printer, as they include it: what the tests parse.
#[cfg(test)]
#[path = "../../benches/common/figures.rs"]
mod figures;

#[cfg(test)]
mod tests {
    use super::*;

    fn run(quick: bool) -> Run {
        Run {
            date: "2026-12-06".into(),
            commit: "abc123".into(),
            dirty: false,
            rustc: "rustc 1.95.0".into(),
            cores: 2,
            load: "1.00 0.50 0.25".into(),
            quick,
            args: vec!["--only".into(), "pairs".into()],
        }
    }

    /// A folder of its own under the system's temp folder, emptied.
    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("xtask-results-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn a_figure_line_is_parsed_and_other_lines_are_not_figures() {
        let line =
            r#"figure {"name":"pairs","value":6064.2,"unit":"pairs/s","target":"at least 5,000"}"#;
        let figure = parse(line).unwrap().unwrap();
        assert_eq!(figure["name"], "pairs");
        assert_eq!(figure["value"], 6064.2);
        assert_eq!(figure["unit"], "pairs/s");
        assert_eq!(figure["target"], "at least 5,000");
        assert!(parse("| pairs | 6064 pairs/s | at least 5,000 |").is_none());
        assert!(parse("figures are printed below").is_none());
        assert!(parse("").is_none());
    }

    #[test]
    fn a_figure_line_without_name_number_or_unit_is_refused() {
        for bad in [
            "figure {not json",
            "figure [1, 2]",
            r#"figure {"value":1,"unit":"s"}"#,
            r#"figure {"name":"x","unit":"s"}"#,
            r#"figure {"name":"x","value":null,"unit":"s"}"#,
            r#"figure {"name":"x","value":"1.0","unit":"s"}"#,
            r#"figure {"name":"x","value":1}"#,
        ] {
            assert!(parse(bad).unwrap().is_err(), "{bad} was taken");
        }
    }

    use super::figures;

    #[test]
    fn what_the_benches_print_is_what_is_parsed() {
        let data = figures::value(0.516, "s")
            .against("cp of the 1 GiB file", 0.296, "s")
            .and("fastest", 0.496, "s")
            .and("not measured", f64::NAN, "s");
        let lines = figures::lines(
            "**check-in** of the 1 GiB file",
            "**0.516 s** = 1.74x cp",
            "at most 1.5x cp",
            &data,
        );
        assert_eq!(lines.len(), 2, "a number that is not finite is left out");
        let own = parse(&lines[0]).unwrap().unwrap();
        assert_eq!(own["name"], "check-in of the 1 GiB file");
        assert_eq!(own["value"], 0.516);
        assert_eq!(own["unit"], "s");
        assert_eq!(own["target"], "at most 1.5x cp");
        assert_eq!(own["shown"], "0.516 s = 1.74x cp");
        assert_eq!(own["against"]["name"], "cp of the 1 GiB file");
        assert_eq!(own["against"]["value"], 0.296);
        let other = parse(&lines[1]).unwrap().unwrap();
        assert_eq!(other["name"], "check-in of the 1 GiB file: fastest");
        assert_eq!(other["value"], 0.496);
        assert!(other.get("against").is_none() && other.get("target").is_none());
    }

    #[test]
    fn collecting_keeps_the_figures_and_echoes_the_rest() {
        let report = "| figure | measured | baseline / target |\n\
                      |---|---|---|\n\
                      | pairs | 6064 pairs/s | at least 5,000 |\n\
                      figure {\"name\":\"pairs\",\"value\":6064,\"unit\":\"pairs/s\"}\n\
                      figure {\"name\":\"broken\"}\n\
                      | cycles | 2521 cycles/s | |\n\
                      figure {\"name\":\"cycles\",\"value\":2521,\"unit\":\"cycles/s\"}\n";
        let mut results = Results::new(scratch("collect"), run(false));
        let mut echo = Vec::new();
        let kept = results
            .collect("lease", "pairs", report.as_bytes(), &mut echo)
            .unwrap();
        assert_eq!(kept, 2);
        let echo = String::from_utf8(echo).unwrap();
        assert!(echo.contains("| pairs | 6064 pairs/s | at least 5,000 |\n"));
        assert!(echo.contains("| cycles | 2521 cycles/s | |\n"));
        assert!(echo.contains("figure {\"name\":\"broken\"}\n"), "{echo}");
        assert!(!echo.contains("\"value\":6064"), "{echo}");
        let figures = &results.parts["pairs"].figures;
        assert_eq!(figures.len(), 2);
        assert_eq!(figures[0]["bench"], "lease");
        assert_eq!(figures[1]["name"], "cycles");
    }

    #[test]
    fn each_part_is_saved_in_its_own_dated_file_rewritten_as_figures_come() {
        let dir = scratch("save");
        let mut results = Results::new(dir.clone(), run(false));
        let figure =
            |name: &str| format!("figure {{\"name\":\"{name}\",\"value\":1.5,\"unit\":\"s\"}}\n");
        let mut sink = Vec::new();
        results
            .collect("preview", "preview", figure("a").as_bytes(), &mut sink)
            .unwrap();
        assert_eq!(
            results.save().unwrap(),
            [dir.join("2026-12-06-preview.json")]
        );
        // A second bench of the same part: the same file, with both.
        results
            .collect("server", "preview", figure("b").as_bytes(), &mut sink)
            .unwrap();
        results
            .collect("lease", "pairs", figure("c").as_bytes(), &mut sink)
            .unwrap();
        let written = results.save().unwrap();
        assert_eq!(
            written,
            [
                dir.join("2026-12-06-pairs.json"),
                dir.join("2026-12-06-preview.json")
            ]
        );
        let kept: Value =
            serde_json::from_str(&std::fs::read_to_string(&written[1]).unwrap()).unwrap();
        assert_eq!(kept["part"], "preview");
        assert_eq!(kept["date"], "2026-12-06");
        assert_eq!(kept["commit"], "abc123");
        assert_eq!(kept["rustc"], "rustc 1.95.0");
        assert_eq!(kept["cores"], 2);
        assert_eq!(kept["quick"], false);
        let figures = kept["figures"].as_array().unwrap();
        let names: Vec<&str> = figures
            .iter()
            .map(|f| f["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["a", "b"]);
        assert_eq!(figures[1]["bench"], "server");
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn a_later_run_of_the_day_takes_the_next_name_and_a_quick_run_says_so() {
        let dir = scratch("names");
        assert_eq!(
            free_file(&dir, "2026-12-06", "pairs", false),
            dir.join("2026-12-06-pairs.json")
        );
        std::fs::write(dir.join("2026-12-06-pairs.json"), "{}").unwrap();
        std::fs::write(dir.join("2026-12-06-pairs-2.json"), "{}").unwrap();
        assert_eq!(
            free_file(&dir, "2026-12-06", "pairs", false),
            dir.join("2026-12-06-pairs-3.json")
        );
        assert_eq!(
            free_file(&dir, "2026-12-06", "pairs", true),
            dir.join("2026-12-06-pairs-quick.json")
        );
        assert_eq!(
            free_file(&dir, "2026-12-06", "../etc/x", false),
            dir.join("2026-12-06----etc-x.json")
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn days_since_1970_are_dates() {
        assert_eq!(civil_date(0), "1970-01-01");
        assert_eq!(civil_date(-1), "1969-12-31");
        assert_eq!(civil_date(11_017), "2000-03-01");
        assert_eq!(civil_date(19_782), "2024-02-29");
        assert_eq!(civil_date(20_793), "2026-12-06");
    }
}
