//! The text of a fio job file: its sections in order, each option with the file and line it
//! came from, `include` lines read in place, comments stripped and `$ncpus`, `$pagesize`,
//! `$mb_memory` and `${VAR}` expanded. What the options mean is `map`'s.

use crate::Result;
use std::fmt;
use std::path::{Path, PathBuf};

/// The largest job file read, includes each counted on their own: job files are a few
/// hundred bytes, so anything near this is not one.
const FILE_LIMIT: u64 = 1 << 20;
/// Includes nested deeper than this are a loop (a file including itself) or a mistake.
const MAX_DEPTH: usize = 16;

/// Where an option or a section was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct At {
    pub file: PathBuf,
    pub line: usize,
}

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// One `key=value` (or a bare `key`, a flag set).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    pub key: String,
    pub value: Option<String>,
    pub at: At,
}

/// One `[name]` section and its options in order; `global` sections are kept as written,
/// and apply to the jobs after them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub at: At,
    pub entries: Vec<Entry>,
}

/// What `$ncpus`, `$pagesize` and `$mb_memory` stand for, and how `${VAR}` is looked up.
pub struct Expand<'a> {
    pub ncpus: u64,
    pub pagesize: u64,
    pub mb_memory: u64,
    pub env: &'a dyn Fn(&str) -> Option<String>,
}

impl Expand<'_> {
    /// This machine's values and the process's environment.
    pub fn here() -> Expand<'static> {
        Expand {
            ncpus: std::thread::available_parallelism().map_or(1, |n| n.get() as u64),
            pagesize: crate::monitor::memory::page_size() as u64,
            mb_memory: crate::monitor::memory::total_bytes().unwrap_or(0) >> 20,
            env: &|name| std::env::var(name).ok(),
        }
    }

    /// `value` with every `$name` and `${VAR}` replaced; an unknown one is refused at `at`.
    fn apply(&self, value: &str, at: &At) -> Result<String> {
        let mut out = String::with_capacity(value.len());
        let mut rest = value;
        while let Some(i) = rest.find('$') {
            out.push_str(&rest[..i]);
            rest = &rest[i + 1..];
            if let Some(braced) = rest.strip_prefix('{') {
                let Some(end) = braced.find('}') else {
                    refuse!("{at}: `${{` has no closing `}}`; write ${{VAR}}")
                };
                let name = &braced[..end];
                let Some(v) = (self.env)(name) else {
                    refuse!(
                        "{at}: ${{{name}}} is not set in the environment; export {name}, or write its value"
                    )
                };
                out.push_str(&v);
                rest = &braced[end + 1..];
                continue;
            }
            let len = rest.find(|c: char| !c.is_ascii_alphanumeric() && c != '_').unwrap_or(rest.len());
            let n = match &rest[..len] {
                "ncpus" => self.ncpus,
                "pagesize" => self.pagesize,
                "mb_memory" => self.mb_memory,
                other => refuse!(
                    "{at}: `${other}` is not a value storbench knows; it expands $ncpus, $pagesize, \
                     $mb_memory and ${{VAR}} from the environment"
                ),
            };
            out.push_str(&n.to_string());
            rest = &rest[len..];
        }
        out.push_str(rest);
        Ok(out)
    }
}

/// The sections of the job file `path`, includes read in place.
pub fn read(path: &Path, expand: &Expand) -> Result<Vec<Section>> {
    let mut sections = Vec::new();
    read_into(path, expand, 0, &mut sections)?;
    Ok(sections)
}

fn read_into(path: &Path, expand: &Expand, depth: usize, sections: &mut Vec<Section>) -> Result<()> {
    let text = crate::files::input::read_text(path, FILE_LIMIT).map_err(|e| format!("fio job file: {e}"))?;
    for (i, raw) in text.lines().enumerate() {
        let at = At { file: path.to_path_buf(), line: i + 1 };
        let line = without_comment(raw);
        if line.is_empty() {
            continue;
        }
        if let Some(name) = line.strip_prefix('[') {
            if depth > 0 {
                refuse!("{at}: an included file holds options only, no [section] (as fio reads it)")
            }
            let Some(name) = name.strip_suffix(']').map(str::trim).filter(|n| !n.is_empty()) else {
                refuse!("{at}: `{line}` is not a section header; write [jobname]")
            };
            sections.push(Section { name: name.to_string(), at, entries: Vec::new() });
        } else if let Some(file) = line.strip_prefix("include").filter(|r| r.starts_with([' ', '\t'])) {
            if sections.is_empty() {
                refuse!("{at}: `include` comes before any section; put it under [global] or a job's [name]")
            }
            include(path, file.trim(), &at, expand, depth, sections)?;
        } else {
            let entry = entry(line, at, expand)?;
            let Some(section) = sections.last_mut() else {
                refuse!(
                    "{}: `{}` comes before any section; put it under [global] or a job's [name]",
                    entry.at,
                    line
                )
            };
            section.entries.push(entry);
        }
    }
    Ok(())
}

/// The line without what follows `;` or `#` (fio's comments, also at a line's end), trimmed.
fn without_comment(raw: &str) -> &str {
    raw.split([';', '#']).next().unwrap_or("").trim()
}

/// `include FILE`: its options into the section it is in. As fio finds it: from the working
/// directory where it is there, else beside the including file.
fn include(
    from: &Path,
    file: &str,
    at: &At,
    expand: &Expand,
    depth: usize,
    sections: &mut Vec<Section>,
) -> Result<()> {
    if depth >= MAX_DEPTH {
        refuse!("{at}: includes nest deeper than {MAX_DEPTH} files; a file includes itself somewhere")
    }
    let file = expand.apply(file, at)?;
    if file.is_empty() {
        refuse!("{at}: `include` names no file; write include other.fio")
    }
    let path = match Path::new(&file) {
        here if here.exists() => here.to_path_buf(),
        _ => from.parent().unwrap_or(Path::new(".")).join(file),
    };
    read_into(&path, expand, depth + 1, sections)
        .map_err(|e| format!("{at}: in the included file: {e}").into())
}

fn entry(line: &str, at: At, expand: &Expand) -> Result<Entry> {
    let (key, value) = match line.split_once('=') {
        Some((k, v)) => (k.trim(), Some(expand.apply(v.trim(), &at)?)),
        None => (line, None),
    };
    if key.is_empty() || key.contains(char::is_whitespace) {
        refuse!("{at}: `{line}` is not an option; write key=value, or a flag's name alone")
    }
    Ok(Entry { key: key.to_string(), value, at })
}
