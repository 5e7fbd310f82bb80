//! What reading any table of a plan shares: errors that point at the plan's line and column
//! ([`PlanError`], [`Source`]), a table deserialized into a type with its unknown keys named
//! ([`typed`]), and the plan keys an options struct's flags define.

use serde::de::DeserializeOwned;
use std::fmt;
use std::ops::Range;
use storbench_bench::secret::redact;
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// A plan error, located in the plan's text.
#[derive(Debug, Clone, PartialEq)]
pub struct PlanError {
    pub file: String,
    pub line: u32,
    pub column: u32,
    pub message: String,
    pub hint: Option<String>,
    /// The line of the plan the error points at, its secrets hidden (the message may be
    /// printed or saved anywhere).
    pub source_line: String,
    /// Where the caret goes under `source_line` (the column, less what hiding took out).
    pub caret: u32,
    /// The plan's next problem, in a table of its own (another configuration's or workload's,
    /// another top-level key), and so on: a plan is checked whole, every problem said at once.
    pub next: Option<Box<PlanError>>,
}

impl PlanError {
    /// The plan's problems after this one ([`PlanError::next`] and on).
    pub fn also(&self) -> impl Iterator<Item = &PlanError> {
        std::iter::successors(self.next.as_deref(), |e| e.next.as_deref())
    }
}

impl fmt::Display for PlanError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}:{}: {}", self.file, self.line, self.column, self.message)?;
        write!(f, "\n  {:>4} | {}", self.line, self.source_line)?;
        write!(f, "\n  {:>4} | {}^", "", " ".repeat(self.caret.saturating_sub(1) as usize))?;
        if let Some(h) = &self.hint {
            write!(f, "\n  hint: {h}")?;
        }
        if let Some(next) = &self.next {
            write!(f, "\n{next}")?;
        }
        Ok(())
    }
}

impl std::error::Error for PlanError {}

/// A line or column number; a plan's are far below 4 billion.
pub fn count(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// Where errors point: the plan's name and text.
pub struct Source<'a> {
    file: &'a str,
    text: &'a str,
}

impl<'a> Source<'a> {
    /// A file's name and text, for errors that point into it.
    pub fn new(file: &'a str, text: &'a str) -> Source<'a> {
        Source { file, text }
    }

    pub(crate) fn error(
        &self,
        span: Range<usize>,
        message: impl Into<String>,
        hint: Option<String>,
    ) -> PlanError {
        let at = span.start.min(self.text.len());
        let before = &self.text[..at];
        let line = count(before.matches('\n').count() + 1);
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = count(self.text[line_start..at].chars().count() + 1);
        let source_line = redact(self.text[line_start..].lines().next().unwrap_or(""));
        let caret = count(redact(&self.text[line_start..at]).chars().count() + 1);
        let message = redact(&message.into());
        let hint = hint.map(|h| redact(&h));
        PlanError { file: self.file.to_string(), line, column, message, hint, source_line, caret, next: None }
    }

    /// A toml/serde error, with a hint for the common mistakes.
    pub(crate) fn toml_error(
        &self,
        e: &toml::de::Error,
        whole: Range<usize>,
        what: &str,
        keys: &[&str],
    ) -> PlanError {
        // A value's own check speaks of its flag (`--rw`); the plan's user set a key.
        let message = in_terms(e.message().trim(), keys);
        let hint = unknown_key(&message).map(|k| hint_for(k, keys, what));
        let missing = message.strip_prefix("missing field `").and_then(|m| m.split('`').next());
        let hint = hint
            .or_else(|| missing.map(|k| format!("add {k} = ... to this table (see `storbench plan init`)")));
        let hint = hint.or_else(|| {
            (message.starts_with("invalid type") || message.contains("did not match any variant")).then(
                || {
                    "sizes and durations are strings or numbers (\"4k\", \"30s\", 30); counts are numbers; \
                 switches are true or false"
                        .to_string()
                },
            )
        });
        self.error(e.span().unwrap_or(whole), format!("{what}: {message}"), hint)
    }
}

/// Deserializes `t` (located at `span`) into `T`, errors located in the plan.
pub(crate) fn typed<T: DeserializeOwned>(
    src: &Source,
    t: &DeTable,
    span: Range<usize>,
    what: &str,
    keys: &[&str],
) -> Result<T, PlanError> {
    for (k, _) in t.iter() {
        if !keys.contains(&k.get_ref().as_ref()) {
            return Err(src.error(
                k.span(),
                format!("{what}: unknown key `{}`", k.get_ref()),
                Some(hint_for(k.get_ref(), keys, what)),
            ));
        }
    }
    let de = toml::de::Deserializer::from(Spanned::new(span.clone(), t.clone()));
    T::deserialize(de).map_err(|e| src.toml_error(&e, span, what, keys))
}

/// Keys a workload table holds besides its command's options.
pub const OWN_KEYS: [&str; 3] = ["kind", "label", "sweep"];

/// Command-line options that are not workload keys: where output goes and what the terminal
/// shows (the evaluation decides), the background streams (a configuration's key) and DS3's
/// file and compatibility options, and the live metrics' address (the evaluation's own). A
/// capture is a configuration's background stream (`background = ["capture"]`); recording an
/// oltp run's calls (`--record`) is a run's on the command line.
pub const NOT_PLAN_KEYS: [&str; 21] = [
    "name",
    "shard",
    "start_at",
    "output_dir",
    "json",
    "power",
    "background",
    "background_wait",
    "capture",
    "record",
    "verbose",
    "out_filename",
    "config_file",
    "windows_perf_host",
    "crash_after",
    "crash_cmd",
    "crash_cmd_timeout",
    "crash_cycles",
    "crash_writer",
    "writer_spec",
    "metrics_listen",
];

/// The plan keys of an options struct: its clap argument ids, which are its field names.
pub fn keys_of<T: clap::Args>(skip: &[&str]) -> Vec<String> {
    keys_in(&T::augment_args(clap::Command::new("plan")), skip)
}

/// The plan keys of the options `cmd` defines.
pub fn keys_in(cmd: &clap::Command, skip: &[&str]) -> Vec<String> {
    cmd.get_arguments()
        .map(|a| a.get_id().as_str())
        .filter(|id| !skip.contains(id) && *id != "help")
        .map(str::to_string)
        .collect()
}

/// `keys` as the plain words the readers compare with.
pub fn words(keys: &[String]) -> Vec<&str> {
    keys.iter().map(String::as_str).collect()
}

pub(crate) fn hint_for(key: &str, keys: &[&str], what: &str) -> String {
    match closest(key, keys) {
        Some(near) => format!("did you mean `{near}`? {what} takes: {}", keys.join(", ")),
        None => format!("{what} takes: {}", keys.join(", ")),
    }
}

/// "unknown field `x`, expected ..." → `x`.
pub(crate) fn unknown_key(message: &str) -> Option<&str> {
    message.strip_prefix("unknown field `")?.split('`').next()
}

/// The key nearest to `key` by edit distance, if near enough to be a typo.
pub(crate) fn closest<'a>(key: &str, keys: &[&'a str]) -> Option<&'a str> {
    let best = keys.iter().map(|k| (edit_distance(key, k), *k)).min()?;
    (best.0 <= 2.max(key.len() / 3)).then_some(best.1)
}

pub(crate) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

pub(crate) fn string(src: &Source, v: &Spanned<DeValue>, key: &str) -> Result<String, PlanError> {
    v.get_ref().as_str().map(str::to_string).ok_or_else(|| {
        let hint = Some(format!("write {key} = \"...\""));
        src.error(v.span(), format!("{key} must be a string, not {}", v.get_ref().type_str()), hint)
    })
}

pub(crate) fn table<'a, 'i>(
    src: &Source,
    v: &'a Spanned<DeValue<'i>>,
    what: &str,
) -> Result<&'a DeTable<'i>, PlanError> {
    v.get_ref().as_table().ok_or_else(|| {
        src.error(
            v.span(),
            format!("{what} must be a table"),
            Some(format!("write it as {what} with keys below")),
        )
    })
}

/// An array of tables (`[[name]]`), each with its span.
pub(crate) fn tables<'i>(
    src: &Source,
    v: &Spanned<DeValue<'i>>,
    what: &str,
) -> Result<Vec<Spanned<DeTable<'i>>>, PlanError> {
    let hint = || Some(format!("write each one as a {what} table"));
    let list = v
        .get_ref()
        .as_array()
        .ok_or_else(|| src.error(v.span(), format!("{what} must be a list of tables"), hint()))?;
    list.iter()
        .map(|item| match item.get_ref().as_table() {
            Some(t) => Ok(Spanned::new(item.span(), t.clone())),
            None => Err(src.error(item.span(), format!("each {what} must be a table"), hint())),
        })
        .collect()
}

/// A sweep value as the evaluation records it.
pub(crate) fn json_of(v: &DeValue) -> serde_json::Value {
    if let Some(s) = v.as_str() {
        return s.into();
    }
    if let Some(b) = v.as_bool() {
        return b.into();
    }
    if let Some(i) =
        v.as_integer().and_then(|i| i64::from_str_radix(&i.as_str().replace('_', ""), i.radix()).ok())
    {
        return i.into();
    }
    if let Some(f) = v.as_float().and_then(|f| f.as_str().replace('_', "").parse::<f64>().ok()) {
        return f.into();
    }
    serde_json::Value::Null
}

/// `text` with each `--flag` that is one of `keys` written as the key (`--bs 1000` reads
/// `bs 1000`): a value's own check speaks of its flag, a plan's user set a key. Commands quoted
/// in back-quotes stay as they are: they are to be run as written.
pub fn in_terms(text: &str, keys: &[&str]) -> String {
    let mut out = String::with_capacity(text.len());
    for (i, part) in text.split('`').enumerate() {
        if i > 0 {
            out.push('`');
        }
        if i % 2 == 1 {
            out.push_str(part);
            continue;
        }
        let mut rest = part;
        while let Some(at) = rest.find("--") {
            let name_len = rest[at + 2..]
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_'))
                .unwrap_or(rest.len() - at - 2);
            let key = rest[at + 2..at + 2 + name_len].replace('-', "_");
            out.push_str(&rest[..at]);
            if keys.contains(&key.as_str()) {
                out.push_str(&key);
            } else {
                out.push_str(&rest[at..at + 2 + name_len]);
            }
            rest = &rest[at + 2 + name_len..];
        }
        out.push_str(rest);
    }
    out
}
