//! Plan text → `Plan`. Every error names the file, line and column of the key or value at
//! fault, says what is wrong and how to fix it; nothing runs until the whole plan parses.

use super::configuration::Configuration;
use super::configuration::{check_price, place_id};
use super::method::Method;
use super::table::*;
use super::{Plan, Point, Workload};
use crate::registry;
use crate::registry::kind::{Kind, Options, Targets};
use crate::subcommand::io::args::IoJob;
use std::ops::Range;
use storbench_bench::workload::io::{Pattern, SQLIO_PROFILES};
use toml::Spanned;
use toml::de::{DeTable, DeValue};

/// The most repetitions a plan may ask for.
pub const MAX_REPETITIONS: u32 = 1000;

/// Parses and checks a plan. `file` names it in errors.
pub fn parse(file: &str, text: &str) -> Result<Plan, PlanError> {
    // Every password in the plan's URLs is hidden from here on, even where a message quotes
    // it without its URL around it.
    storbench_bench::secret::remember_in(text);
    let src = Source::new(file, text);
    let doc =
        DeTable::parse(text).map_err(|e| src.toml_error(&e, 0..0, "the plan is not valid TOML", &[]))?;
    let whole = doc.span();
    let root = doc.into_inner();
    let mut found = Found::default();
    const TOP: [&str; 5] = ["name", "method", "configuration", "workload", "requirements"];
    for (key, _) in root.iter().filter(|(key, _)| !TOP.contains(&key.get_ref().as_ref())) {
        found.push::<()>(Err(src.error(
            key.span(),
            format!("unknown key `{}` at the top of the plan", key.get_ref()),
            Some(hint_for(key.get_ref(), &TOP, "a plan's top level")),
        )));
    }
    let name = match root.get("name") {
        None => Some("evaluation".to_string()),
        Some(v) => {
            found.push(string(&src, v, "name").and_then(|n| plain_text(&src, n, v.span(), "the plan's name")))
        }
    };
    let method =
        match root.get("method") {
            None => Some(Method::default()),
            Some(v) => found.push(table(&src, v, "[method]").and_then(|t| {
                typed::<Method>(&src, t, v.span(), "[method]", &words(&keys_of::<Method>(&[])))
            })),
        };
    if let Some(m) = &method {
        found.push(check_method(&src, m, root.get("method")));
    }
    let (configurations, sets) = configurations(&src, root.get("configuration"), whole.clone(), &mut found);
    let workloads = workloads(&src, root.get("workload"), whole, &sets, &mut found);
    // Requirements name the workloads' figures: judged once the workloads read.
    let (Some(name), Some(method), true) = (name, method, found.errors.is_empty()) else {
        return Err(found.into_error());
    };
    let requirements = match root.get("requirements") {
        None => Vec::new(),
        Some(v) => {
            let kinds: Vec<(&str, &str)> =
                workloads.iter().map(|w| (w.label.as_str(), w.args.kind().name)).collect();
            let mut conditions: Vec<&str> = configurations.iter().map(|c| c.condition()).collect();
            conditions.sort_unstable();
            conditions.dedup();
            let read = super::requirements::read(&src, v, &kinds, Some(&conditions))?;
            super::search::check_requirements(&src, v, &read, &workloads)?;
            read
        }
    };
    Ok(Plan { name, method, configurations, workloads, requirements })
}

/// The problems found so far in a plan, each table's on its own, in the plan's order.
#[derive(Default)]
struct Found {
    errors: Vec<PlanError>,
}

impl Found {
    /// The value, or None with its problem kept.
    fn push<T>(&mut self, r: Result<T, PlanError>) -> Option<T> {
        r.map_err(|e| self.errors.push(e)).ok()
    }

    /// The first problem, the others chained after it. Called with at least one.
    fn into_error(self) -> PlanError {
        let chained = self.errors.into_iter().rev().fold(None, |next, mut e: PlanError| {
            e.next = next.map(Box::new);
            Some(e)
        });
        chained.expect("a plan with a problem")
    }
}

fn check_method(src: &Source, m: &Method, at: Option<&Spanned<DeValue>>) -> Result<(), PlanError> {
    let span = |key: &str| {
        at.and_then(|v| v.get_ref().as_table()).and_then(|t| t.get(key)).map_or(0..0, |v| v.span())
    };
    m.check().map_err(|(key, message, hint)| src.error(span(key), message, Some(hint.to_string())))
}

impl Method {
    /// The values a type cannot rule out; `Err((key, message, hint))`. Also run on the method
    /// after the command line's overrides.
    pub fn check(&self) -> Result<(), (&'static str, String, &'static str)> {
        if let Some(w) = self.window.as_deref()
            && !matches!(w, "fixed" | "steady_state")
        {
            return Err((
                "window",
                format!("unknown window `{w}`"),
                "window is \"fixed\" or \"steady_state\"",
            ));
        }
        if self.repetitions == Some(0) {
            let hint = "at least 1; 3 (the default) lets the report show the spread";
            return Err(("repetitions", "repetitions = 0 runs nothing".into(), hint));
        }
        if self.repetitions.is_some_and(|n| n > MAX_REPETITIONS) {
            let hint = "at most 1000; 3 to 10 show the spread";
            return Err((
                "repetitions",
                format!("repetitions = {} would never finish", self.repetitions.unwrap_or(0)),
                hint,
            ));
        }
        if self.round.is_some_and(|r| r.0.is_zero()) {
            return Err(("round", "round = 0 never ends a round".into(), "give a round such as \"60s\""));
        }
        Ok(())
    }
}

/// Each configuration's `set` table: its own values of workload keys, by workload label or
/// kind (`set.oltp = { n_threads = 73 }`), where it has one.
type Sets<'i> = Vec<Option<Spanned<DeTable<'i>>>>;

/// The plan's configurations, and each one's own workload values; a configuration with a
/// problem is left out, its problem kept in `found`.
fn configurations<'i>(
    src: &Source,
    value: Option<&Spanned<DeValue<'i>>>,
    whole: Range<usize>,
    found: &mut Found,
) -> (Vec<Configuration>, Sets<'i>) {
    let Some(value) = value else {
        let hint = "add one per storage setup:\n\n    [[configuration]]\n    name = \"ssd\"\n    target = \"/mnt/ssd\"";
        found.push::<()>(Err(src.error(
            whole.start..whole.start,
            "the plan has no [[configuration]]",
            Some(hint.into()),
        )));
        return (Vec::new(), Vec::new());
    };
    let keys = [
        "name",
        "target",
        "log_target",
        "url",
        "allow_device",
        "force",
        "description",
        "background",
        "condition",
        "storage",
        "power",
        SET,
    ];
    let keys: Vec<&str> = keys.into_iter().chain(super::configuration::FACT_KEYS).collect();
    let mut out: Vec<Configuration> = Vec::new();
    let mut sets = Vec::new();
    for item in found.push(tables(src, value, "[[configuration]]")).unwrap_or_default() {
        if let Some((c, set)) = found.push(configuration(src, item, &keys, &out)) {
            out.push(c);
            sets.push(set);
        }
    }
    (out, sets)
}

/// One `[[configuration]]` table, checked against those before it (`seen`), and its own
/// workload values.
fn configuration<'i>(
    src: &Source,
    mut item: Spanned<DeTable<'i>>,
    keys: &[&str],
    seen: &[Configuration],
) -> Result<(Configuration, Option<Spanned<DeTable<'i>>>), PlanError> {
    let set = item.get_mut().remove(SET).map(|v| Ok(Spanned::new(v.span(), table(src, &v, SET)?.clone())));
    let set = set.transpose()?;
    let c: Configuration = typed(src, item.get_ref(), item.span(), "a [[configuration]]", keys)?;
    let at = |key: &str| item.get_ref().get(key).map_or(item.span(), |v| v.span());
    check_name(src, &c.name, at("name"), "configuration name")?;
    if let Some(d) = &c.description {
        plain_text(src, d.clone(), at("description"), "a description")?;
    }
    if seen.iter().any(|o| o.name == c.name) {
        let hint = Some("give each [[configuration]] its own name".into());
        return Err(src.error(at("name"), format!("configuration `{}` is named twice", c.name), hint));
    }
    check_target(src, &c.target, c.allow_device, at("target"))?;
    check_price(src, c.facts.price, at("price"))?;
    if let Some(logs) = &c.log_target {
        check_target(src, logs, false, at("log_target"))?;
    }
    // Absolute, so that a resume from another directory runs on the same storage.
    let absolute = |p: &std::path::Path| std::fs::canonicalize(p).unwrap_or_else(|_| p.to_path_buf());
    let c = Configuration {
        target: absolute(&c.target),
        log_target: c.log_target.as_deref().map(absolute),
        own_values: set.as_ref().map(own_values_text).unwrap_or_default(),
        ..c
    };
    if let Some((other, role)) = same_place(seen, &c) {
        let hint = Some(
            "give each [[configuration]] its own storage (one directory or device each), or measure \
             one storage in another condition with a stream beside it: background = [\"io:rate=40MiB\"]"
                .into(),
        );
        let message = format!(
            "configuration `{}`'s {role} {} is the same place as configuration `{}`'s; both would \
             measure one storage and compare it with itself",
            c.name,
            place_of(&c, role).display(),
            other.name
        );
        return Err(src.error(at(role), message, hint));
    }
    let c = super::condition::settle(src, seen, c, &at)?;
    Ok((c, set))
}

/// The configuration among `seen` whose target or log target is the same directory or device
/// as one of `c`'s (by device and inode, whatever the spelling), and which of `c`'s it is.
/// Two configurations on one storage with different background streams are apart: they
/// measure it in two conditions (normal and during a rebuild).
fn same_place<'a>(seen: &'a [Configuration], c: &Configuration) -> Option<(&'a Configuration, &'static str)> {
    let id = place_id;
    let places = |c: &Configuration| {
        let mut v = vec![(id(&c.target), "target")];
        v.extend(c.log_target.as_deref().map(|l| (id(l), "log_target")));
        v
    };
    let mine = places(c);
    seen.iter().filter(|other| other.background == c.background).find_map(|other| {
        let theirs = places(other);
        mine.iter()
            .find(|(m, _)| m.is_some() && theirs.iter().any(|(t, _)| t == m))
            .map(|(_, role)| (other, *role))
    })
}

fn place_of<'a>(c: &'a Configuration, role: &str) -> &'a std::path::Path {
    match role {
        "log_target" => c.log_target.as_deref().unwrap_or(&c.target),
        _ => &c.target,
    }
}

/// Free text (a plan's name, a description) without control characters: a NUL or an escape
/// sequence would reach every report and terminal that shows it.
fn plain_text(src: &Source, text: String, span: Range<usize>, what: &str) -> Result<String, PlanError> {
    match storbench_report::text::control_char(&text) {
        None => Ok(text),
        Some(c) => Err(src.error(
            span,
            format!("{what} holds a control character (U+{:04X})", u32::from(c)),
            Some("write plain text: letters, digits, spaces, punctuation and line breaks".into()),
        )),
    }
}

fn check_name(src: &Source, name: &str, span: Range<usize>, what: &str) -> Result<(), PlanError> {
    let usable = |ch: char| ch.is_ascii_alphanumeric() || "-_.".contains(ch);
    if name.is_empty() || name.starts_with('.') || !name.chars().all(usable) {
        let hint = Some("use letters, digits, -, _ and . (it names run ids and directories)".into());
        return Err(src.error(span, format!("{what} `{name}` is not usable"), hint));
    }
    Ok(())
}

fn check_target(
    src: &Source,
    path: &std::path::Path,
    allow_device: bool,
    span: Range<usize>,
) -> Result<(), PlanError> {
    use std::os::unix::fs::FileTypeExt;
    let meta = std::fs::metadata(path).map_err(|e| {
        let hint =
            Some("create the directory first (mount the storage under test there), or fix the path".into());
        src.error(span.clone(), format!("{}: {e}", path.display()), hint)
    })?;
    let device = meta.file_type().is_block_device();
    if !(meta.is_dir() || device) {
        let hint = Some("a configuration's target is the directory its files go in (or a device)".into());
        return Err(src.error(span, format!("{} is not a directory", path.display()), hint));
    }
    if device && !allow_device {
        let hint =
            Some("add allow_device = true to the configuration; its contents will be overwritten".into());
        return Err(src.error(span, format!("{} is a block device", path.display()), hint));
    }
    Ok(())
}

/// The plan's workloads; a workload with a problem is left out, its problem kept in `found`.
fn workloads(
    src: &Source,
    value: Option<&Spanned<DeValue>>,
    whole: Range<usize>,
    sets: &Sets,
    found: &mut Found,
) -> Vec<Workload> {
    let Some(value) = value else {
        let hint = "add what to run, e.g.\n\n    [[workload]]\n    kind = \"io\"\n    profile = \"sqlio\"";
        found.push::<()>(Err(src.error(
            whole.start..whole.start,
            "the plan has no [[workload]]",
            Some(hint.into()),
        )));
        return Vec::new();
    };
    let mut out: Vec<Workload> = Vec::new();
    let mut names = Vec::new();
    for item in found.push(tables(src, value, "[[workload]]")).unwrap_or_default() {
        for mut w in found.push(workload(src, &item, sets, &mut names)).unwrap_or_default() {
            let base = w.label.clone();
            for n in 2.. {
                if !out.iter().any(|o| o.label == w.label) {
                    break;
                }
                w.label = format!("{base}-{n}");
            }
            out.push(w);
        }
    }
    found.push(every_set_names_a_workload(src, sets, &names));
    out
}

/// The key of a configuration's own workload values.
pub const SET: &str = "set";

/// A configuration's own values for the workload labelled `label` of `kind`: its `set`
/// entries for the kind, then for the label (which win). `fixed` keys are the workload's
/// alone (its kind, label, swept key, what its profile set fixes).
fn own_values<'i>(
    src: &Source,
    set: &Option<Spanned<DeTable<'i>>>,
    (label, kind): (&str, &str),
    fixed: &[&str],
) -> Result<Option<DeTable<'i>>, PlanError> {
    let Some(set) = set else { return Ok(None) };
    let mut own: Option<DeTable> = None;
    for name in [kind, label] {
        let Some(entry) = set.get_ref().get(name) else { continue };
        for (k, v) in table(src, entry, &format!("{SET}.{name}"))? {
            if fixed.contains(&k.get_ref().as_ref()) {
                let hint = Some(format!(
                    "a configuration may set any other key of the workload; these are the workload's own: {}",
                    fixed.join(", ")
                ));
                return Err(src.error(
                    k.span(),
                    format!("`{}` cannot be set per configuration", k.get_ref()),
                    hint,
                ));
            }
            own.get_or_insert_with(DeTable::new).insert(k.clone(), v.clone());
        }
    }
    Ok(own)
}

/// A `set` table as the report shows it: `oltp: n_threads = 73`, one line per workload.
fn own_values_text(set: &Spanned<DeTable>) -> Vec<String> {
    let line = |(name, values): (&Spanned<toml::de::DeString>, &Spanned<DeValue>)| {
        let pairs: Vec<String> = match values.get_ref().as_table() {
            Some(t) => t.iter().map(|(k, v)| format!("{} = {}", k.get_ref(), json_of(v.get_ref()))).collect(),
            None => Vec::new(),
        };
        format!("{}: {}", name.get_ref(), pairs.join(", "))
    };
    set.get_ref().iter().map(line).collect()
}

/// Refuses a `set` entry that names no workload of the plan (`names`: every workload's label
/// and kind).
fn every_set_names_a_workload(src: &Source, sets: &Sets, names: &[String]) -> Result<(), PlanError> {
    for set in sets.iter().flatten() {
        if let Some((k, _)) =
            set.get_ref().iter().find(|(k, _)| !names.iter().any(|n| n == k.get_ref().as_ref()))
        {
            let mut known: Vec<&str> = Vec::new();
            for n in names {
                if !known.contains(&n.as_str()) {
                    known.push(n);
                }
            }
            let hint = Some(format!("name a workload by its label or its kind: {}", known.join(", ")));
            return Err(src.error(
                k.span(),
                format!("`{SET}.{}` names no workload of the plan", k.get_ref()),
                hint,
            ));
        }
    }
    Ok(())
}

/// One `[[workload]]` table, with each configuration's own values (`sets`); an io profile set
/// becomes one workload per profile. Its label and kind go to `names`.
fn workload(
    src: &Source,
    item: &Spanned<DeTable>,
    sets: &Sets,
    names: &mut Vec<String>,
) -> Result<Vec<Workload>, PlanError> {
    let t = item.get_ref();
    let kind_value = t.get("kind").ok_or_else(|| {
        let hint = Some(format!("add kind = {}", registry::names_listed()));
        src.error(item.span(), "a [[workload]] without a kind", hint)
    })?;
    let kind = string(src, kind_value, "kind")?;
    let label = t.get("label").map(|v| string(src, v, "label")).transpose()?;
    if let (Some(l), Some(v)) = (&label, t.get("label")) {
        check_name(src, l, v.span(), "label")?;
    }
    let mut options = t.clone();
    for k in OWN_KEYS {
        options.remove(k);
    }
    let sweep = t.get("sweep").map(|v| sweep_of(src, v)).transpose()?;
    let entry = registry::by_name(&kind).ok_or_else(|| {
        let hint = Some(format!("kind is {}", registry::names_listed()));
        src.error(kind_value.span(), format!("unknown workload kind `{kind}`"), hint)
    })?;
    let search = super::search::take(src, &mut options, item.span(), entry.what)?;
    let build = |opts: &DeTable, span: Range<usize>| (entry.parse)(src, opts, span, entry);
    let points_of = |options: &DeTable| -> Result<Vec<Point>, PlanError> {
        let Some((key, values)) = &sweep else { return Ok(vec![(None, build(options, item.span())?)]) };
        let mut points = Vec::new();
        for v in values {
            let mut opts = options.clone();
            if key.get_ref() == TARGETS {
                targets_point(src, entry, key, v, &mut opts)?;
            } else {
                opts.insert(key.clone(), v.clone());
            }
            let point = (key.get_ref().to_string(), json_of(v.get_ref()));
            points.push((Some(point), build(&opts, v.span())?));
        }
        Ok(points)
    };
    let args = build(&options, item.span())?;
    let points = points_of(&options)?;
    let swept = sweep.as_ref().map(|(k, _)| k.get_ref().to_string());
    let searched = search.as_ref().and_then(|s| s.search).map(|p| p.name());
    let label = label.unwrap_or_else(|| default_label(&*args, swept.as_deref(), searched));
    let search_keys = super::search::keys();
    let mut fixed: Vec<&str> = OWN_KEYS
        .iter()
        .copied()
        .chain(swept.as_deref())
        .chain(search_keys.iter().map(String::as_str))
        .collect();
    if options.contains_key("profile") {
        fixed.extend(PROFILE_KEYS.iter().chain(&["profile"]));
    }
    let mut by_configuration = Vec::new();
    for set in sets {
        let own = match own_values(src, set, (&label, &kind), &fixed)? {
            None => None,
            Some(own) => {
                let mut opts = options.clone();
                opts.extend(own);
                Some(points_of(&opts)?.into_iter().map(|(_, a)| a).collect())
            }
        };
        by_configuration.push(own);
    }
    names.extend([label.clone(), kind.clone()]);
    let workload = Workload { label, args, points, by_configuration, search };
    let workloads = match workload.args.get::<IoJob>().cloned() {
        Some(a) if a.options.profile.is_some() => profile_set(src, workload, &a, t)?,
        Some(a) if a.options.fio_job.is_some() => fio_set(src, workload, &a, t)?,
        _ => vec![workload],
    };
    for w in &workloads {
        super::search::check(src, w, t)?;
    }
    Ok(workloads)
}

/// The sweep key for the number of targets: an oltp workload uses the first N of the
/// configuration's `url`s, a mailbox workload N databases.
pub const TARGETS: &str = "targets";

fn targets_point<'i>(
    src: &Source,
    kind: &Kind,
    key: &Spanned<toml::de::DeString<'i>>,
    v: &Spanned<DeValue<'i>>,
    opts: &mut DeTable<'i>,
) -> Result<(), PlanError> {
    if !matches!(json_of(v.get_ref()).as_i64(), Some(n) if n >= 1) {
        let hint = Some("targets are counted: sweep = { targets = [1, 2, 4] }".into());
        return Err(src.error(v.span(), "a number of targets is a whole number of at least 1", hint));
    }
    match kind.targets {
        Targets::Key(own) => {
            opts.insert(Spanned::new(key.span(), own.into()), v.clone());
            Ok(())
        }
        Targets::Configurations => Ok(()),
        Targets::One => {
            let with: Vec<&str> =
                registry::KINDS.iter().filter(|k| k.targets != Targets::One).map(|k| k.name).collect();
            let hint = Some(format!(
                "sweep targets in a workload that has several ({}); sweep another of its keys instead",
                with.join(", ")
            ));
            Err(src.error(key.span(), format!("{} has one target", kind.what), hint))
        }
    }
}

/// The keys a profile set gives each of its jobs.
const PROFILE_KEYS: [&str; 4] = ["rw", "bs", "iodepth", "rwmix_read"];

/// `profile = "sqlio"`: one workload per profile, labelled `<label or profile>-<profile>`.
fn profile_set(src: &Source, w: Workload, a: &IoJob, t: &DeTable) -> Result<Vec<Workload>, PlanError> {
    let at = t.get("profile").map_or(0..0, |v| v.span());
    if a.options.profile.as_deref() != Some("sqlio") {
        let hint = Some("the profile sets are: sqlio".into());
        return Err(src.error(
            at,
            format!("unknown profile `{}`", a.options.profile.as_deref().unwrap_or("")),
            hint,
        ));
    }
    let swept = t.get("sweep").and_then(|v| v.get_ref().as_table()).and_then(|s| s.iter().next());
    if let Some((k, _)) = swept.filter(|(k, _)| PROFILE_KEYS.contains(&k.get_ref().as_ref())) {
        let hint = Some("sweep another option, or describe the job yourself without `profile`".into());
        return Err(src.error(k.span(), format!("`{}` is set by the sqlio profile set", k.get_ref()), hint));
    }
    for key in PROFILE_KEYS {
        if let Some(v) = t.get(key) {
            let hint = Some(format!("remove `{key}`, or drop `profile` and describe the job yourself"));
            return Err(src.error(v.span(), format!("`{key}` is set by the sqlio profile set"), hint));
        }
    }
    let prefix = if w.label == "sqlio" { String::new() } else { format!("{}-", w.label) };
    Ok(SQLIO_PROFILES
        .iter()
        .map(|p| one_of_set(&w, format!("{prefix}sqlio-{}", p.name), |a| sqlio_job(a, p)))
        .collect())
}

/// Workload `w` as one job of its set, labelled `label`: `job` makes the job of its options,
/// at each sweep point and in each configuration's own values.
fn one_of_set(w: &Workload, label: String, job: impl Fn(&IoJob) -> IoJob) -> Workload {
    let set = |args: &dyn Options| -> Box<dyn Options> {
        match args.get::<IoJob>() {
            Some(a) => Box::new(job(a)),
            None => args.clone_box(),
        }
    };
    Workload {
        label,
        args: set(&*w.args),
        points: w.points.iter().map(|(s, a)| (s.clone(), set(&**a))).collect(),
        by_configuration: w
            .by_configuration
            .iter()
            .map(|own| own.as_ref().map(|points| points.iter().map(|a| set(&**a)).collect()))
            .collect(),
        search: w.search.clone(),
    }
}

/// `fio_job = "path"`: one workload per job of the file in its order, labelled
/// `<label or file>-<job>`, each with the workload's other keys over the job's options.
fn fio_set(src: &Source, w: Workload, a: &IoJob, t: &DeTable) -> Result<Vec<Workload>, PlanError> {
    use storbench_bench::workload::io::fio_job::{self, Expand};
    let at = t.get("fio_job").map_or(0..0, |v| v.span());
    let expand = Expand::here();
    let jobs = fio_job::jobs(&a.options, &expand).map_err(|e| {
        let hint = Some("fix the job file, or describe the job with the workload's own keys".into());
        src.error(at.clone(), e.to_string(), hint)
    })?;
    let stem = a.options.fio_job.as_deref().and_then(|p| p.file_stem()).map(|s| s.to_string_lossy());
    let prefix =
        if t.contains_key("label") { w.label.clone() } else { stem.unwrap_or_default().into_owned() };
    Ok(jobs
        .iter()
        .enumerate()
        .map(|(i, job)| {
            let label = format!("{prefix}-{}", job.name).replace(['/', ':', ' '], "_");
            one_of_set(&w, label, |given| {
                // The same file under each point's own keys; it read once already.
                let options = fio_job::jobs(&given.options, &expand)
                    .ok()
                    .and_then(|mut all| (i < all.len()).then(|| all.swap_remove(i).options))
                    .unwrap_or_else(|| job.options.clone());
                IoJob { options, ..given.clone() }
            })
        })
        .collect())
}

/// `a` as the single job of one SQLIO profile.
fn sqlio_job(a: &IoJob, p: &storbench_bench::workload::io::SqlioProfile) -> IoJob {
    let random = matches!(p.pattern, Pattern::Random(_));
    let options = storbench_bench::workload::io::options::IoOptions {
        profile: None,
        rw: Some(crate::subcommand::io::args::Rw::of(random, p.read_pct)),
        bs: Some(crate::subcommand::io::args::BlockSizes::single(p.block_size)),
        iodepth: Some(p.iodepth),
        ..a.options.clone()
    };
    IoJob { options, ..a.clone() }
}

/// A workload's label when the plan gives none: its kind's (`io-randread-8k-qd4`, `sqlio`,
/// `oltp`), `-<key>-sweep` for a swept key and `-<load>-search` for a searched load.
fn default_label(args: &dyn Options, swept: Option<&str>, searched: Option<&str>) -> String {
    let base = args.label(swept.or(searched));
    let base = match swept {
        Some(k) => format!("{base}-{k}-sweep"),
        None => base,
    };
    match searched {
        Some(load) => format!("{base}-{load}-search"),
        None => base,
    }
}

/// `sweep = { KEY = [v1, v2, ...] }`: exactly one key with a non-empty list.
fn sweep_of<'i>(
    src: &Source,
    v: &Spanned<DeValue<'i>>,
) -> Result<(Spanned<toml::de::DeString<'i>>, Vec<Spanned<DeValue<'i>>>), PlanError> {
    let hint = || Some("write sweep = { iodepth = [1, 4, 16, 64] }: one option and its values".to_string());
    let t = v.get_ref().as_table().ok_or_else(|| src.error(v.span(), "sweep is not a table", hint()))?;
    let mut entries = t.iter();
    let (Some((key, values)), None) = (entries.next(), entries.next()) else {
        return Err(src.error(v.span(), "sweep takes exactly one option", hint()));
    };
    let search_keys = super::search::keys();
    if OWN_KEYS.iter().copied().chain(words(&search_keys)).any(|k| k == key.get_ref().as_ref()) {
        return Err(src.error(key.span(), format!("`{}` cannot be swept", key.get_ref()), hint()));
    }
    if key.get_ref() == "profile" {
        let hint = Some("give each profile set its own [[workload]]".into());
        return Err(src.error(key.span(), "`profile` cannot be swept", hint));
    }
    match values.get_ref().as_array() {
        Some(list) if !list.is_empty() => {
            for (i, v) in list.iter().enumerate() {
                if list[..i].iter().any(|w| json_of(w.get_ref()) == json_of(v.get_ref())) {
                    let hint = Some("give each value once: each is one point of the curve".into());
                    return Err(src.error(
                        v.span(),
                        format!("sweep {} repeats a value", key.get_ref()),
                        hint,
                    ));
                }
            }
            Ok((key.clone(), list.iter().cloned().collect()))
        }
        _ => {
            Err(src.error(values.span(), format!("sweep {} is not a list of values", key.get_ref()), hint()))
        }
    }
}

/// The plan `text` of file `file` parsed as this shard's (see `shard::in_plan`); an error quotes
/// its line as the plan has it, `{shard}` and all, the caret where that line has it.
pub fn parse_as_shard(file: &str, text: &str, on_cluster: bool) -> Result<Plan, PlanError> {
    let substituted = crate::shard::in_plan(text, on_cluster);
    parse(file, &substituted).map_err(|mut e| {
        let index = crate::shard::plan_index(on_cluster).map(|i| i.to_string()).unwrap_or_default();
        if let Some(was) =
            text.lines().nth(e.line.saturating_sub(1) as usize).filter(|l| l.contains("{shard}"))
        {
            e.caret = count(written_column(was, &index, e.caret as usize));
            e.source_line = storbench_bench::secret::redact(was);
        }
        e
    })
}

/// The 1-based column of line `was` (as written) that column `caret` of it with each
/// `{shard}` made `index` is.
pub(super) fn written_column(was: &str, index: &str, caret: usize) -> usize {
    let (mut substituted, mut written, mut rest) = (1, 1, was);
    while substituted < caret && !rest.is_empty() {
        match rest.strip_prefix("{shard}") {
            Some(after) => {
                (substituted, written, rest) = (substituted + index.len(), written + "{shard}".len(), after);
            }
            None => {
                let width = rest.chars().next().map_or(1, char::len_utf8);
                (substituted, written, rest) = (substituted + 1, written + 1, &rest[width..]);
            }
        }
    }
    written
}
