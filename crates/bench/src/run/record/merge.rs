//! Many shards' records made into one (`storbench merge`): the record of one run that did
//! what all the shards did together over their common measured window, from which the
//! workload's own `summary::rebuild` builds the merged summary (one summariser for a run and
//! for a merge).
//!
//! Each shard's intervals are placed on the wall clock (its `epoch_ns` plus theirs) and put in
//! slots of one interval's length from the earliest measured start; the common window is the
//! slots every finished shard measured (the intersection of their measured phases, whole
//! intervals). Per slot and stream the shards' counts are added and their histograms merged
//! exactly (HDR), so the merged percentiles are those of the union. A merged interval lies
//! where its shards' intervals lie on average (they differ by the shards' start skew), so the
//! merged measured time, over which rates are taken, is the shards' mean. Shards on one host
//! read its one power meter: a slot's power is each host's mean reading, summed over the hosts.
//! Each shard's histograms are added into the slot's sums bucket by bucket from their
//! encoding, and each sum is encoded straight from its buckets. The slots are split into one
//! run of consecutive slots a core, each core reading every shard's log forward from its first
//! slot (a record read `without its log` keeps its log on disk), so a merge holds a line of
//! each log and each core's slot sums, not the logs; the merged slots are written in order.
//! A shard's tail (what its workers counted as they stopped) counts where its last interval is
//! the window's.
//!
//! A shard whose record has no end (killed) still adds what it measured inside the window but
//! does not narrow it; the merge is then incomplete and names it, as it names a failed shard.
//! Parts (an OLTP run's targets) are numbered on across the shards: shard 2's `p0` follows
//! shard 1's parts. The merged end's `detail` (a workload's own findings) is the first finished
//! shard's; its facts' CPU time is the shards' over the window, summed.

use super::name::{Name, name};
use super::{End, Facts, IntervalLine, Line, RECORD_VERSION, RecordError, Start, StoredRecord};
use crate::metrics::{EncodedLog, HlogWriter, Inflater, LogCursor, TagSums};
use std::collections::BTreeMap;
use std::ops::Range;
use storbench_report::series::Phase;
use storbench_report::{ShardEntry, ShardsFile};

/// One shard's bundle, read.
pub struct Shard {
    /// What it is called in `shards.json` and messages (`identity`).
    pub name: String,
    /// Its bundle as given.
    pub bundle: String,
    pub record: StoredRecord,
}

/// The merged run: its `record.jsonl` and `latency.hlog`, and what each shard contributed.
pub struct Merged {
    pub record: String,
    pub hlog: String,
    pub shards: ShardsFile,
}

/// A shard's name: its identity as its run knew it (`2/4 (host)`, from its summary's
/// `shard`), else its bundle directory's name `dir`.
pub fn identity(record: &StoredRecord, dir: &str) -> String {
    match claimed(record) {
        Some(s) if s.host.is_empty() => format!("{}/{}", s.index, s.count),
        Some(s) => format!("{}/{} ({})", s.index, s.count, s.host),
        None => dir.to_string(),
    }
}

/// The shard of a run `record` says it is (`--shard` or an engine's rank), where it says; a
/// run given only `--start-at` is no numbered shard.
pub fn claimed(record: &StoredRecord) -> Option<&storbench_report::ShardInfo> {
    record.start.summary.shard.as_ref().filter(|s| s.from != "--start-at")
}

/// A shard's interval lines, each with its histograms' places in its log, and its measured
/// workload intervals.
struct View<'a> {
    shard: &'a Shard,
    lines: Vec<(&'a IntervalLine, Range<usize>)>,
    /// Indexes into `lines` of the workload stream's measured intervals, in order.
    measured: Vec<usize>,
}

impl<'a> View<'a> {
    fn of(shard: &'a Shard) -> Result<View<'a>, RecordError> {
        let r = &shard.record;
        let (from, to) = r.end.as_ref().map_or((0, u64::MAX), |e| e.facts.window_ns());
        let lines = r.with_hists().map_err(|e| RecordError::Read(format!("{}: {e}", shard.bundle)))?;
        let own = r.start.workload.as_str();
        let measured = (0..lines.len())
            .filter(|&n| {
                let i = lines[n].0;
                i.stream == own && measure(i) && i.start_ns >= from && i.end_ns <= to
            })
            .collect();
        Ok(View { shard, lines, measured })
    }

    fn wall(&self, ns: u64) -> i128 {
        self.shard.record.start.epoch_ns + i128::from(ns)
    }

    fn first(&self) -> Option<&'a IntervalLine> {
        self.measured.first().map(|&n| self.lines[n].0)
    }

    fn last(&self) -> Option<&'a IntervalLine> {
        self.measured.last().map(|&n| self.lines[n].0)
    }

    fn finished(&self) -> bool {
        self.shard.record.end.is_some()
    }
}

fn measure(i: &IntervalLine) -> bool {
    i.phase == Phase::Measure && !i.tail
}

/// Slots of one interval's length from `origin` on the wall clock.
#[derive(Clone, Copy)]
struct Clock {
    origin: i128,
    interval_ns: i128,
}

impl Clock {
    fn slot(&self, view: &View<'_>, i: &IntervalLine) -> i64 {
        let off = (view.wall(i.start_ns) - self.origin) as f64 / self.interval_ns as f64;
        off.round() as i64
    }
}

/// The merged record of `shards` (at least one holding a measured interval); `per_shard` are
/// the workload's parameters that are one shard's share of the load, summed in the merge.
pub fn merge(shards: &[Shard], per_shard: &[&str]) -> Result<Merged, RecordError> {
    let views = shards.iter().map(View::of).collect::<Result<Vec<_>, _>>()?;
    let measured: Vec<&View<'_>> = views.iter().filter(|v| !v.measured.is_empty()).collect();
    let finished: Vec<&View<'_>> = measured.iter().copied().filter(|v| v.finished()).collect();
    let deciding = if finished.is_empty() { &measured } else { &finished };
    let Some(first) = deciding.first().and_then(|v| v.first()) else {
        return Err(RecordError::Read("no shard measured anything: there is nothing to merge".into()));
    };
    let interval_ns = i128::from((first.end_ns - first.start_ns).max(1));
    let origin = deciding.iter().filter_map(|v| v.first().map(|i| v.wall(i.start_ns))).min().unwrap_or(0);
    let clock = Clock { origin, interval_ns };
    let slots = |v: &View<'_>| (clock.slot(v, v.first().unwrap()), clock.slot(v, v.last().unwrap()));
    let lo = deciding.iter().map(|v| slots(v).0).max().unwrap_or(0);
    let hi = deciding.iter().map(|v| slots(v).1).min().unwrap_or(0);
    if lo > hi {
        return Err(RecordError::Read(format!(
            "the shards' measured phases do not overlap ({}): start them together (--start-at) and \
             merge the bundles of one run",
            deciding.iter().map(|v| phase_text(v, origin)).collect::<Vec<_>>().join("; ")
        )));
    }
    let epoch_ns = shards.iter().map(|s| s.record.start.epoch_ns).min().unwrap_or(0);
    let mut out = Writer::new(epoch_ns, &measured);
    let reader = out.window(&measured, clock, (lo, hi), &streams(shards))?;
    out.tails(reader, &measured, clock, hi, &streams(shards))?;
    let shards_file = shards_file(&views, clock, (lo, hi), epoch_ns, &out);
    out.finish((shards, per_shard), &views, &shards_file)
}

fn phase_text(v: &View<'_>, origin: i128) -> String {
    let s = |ns: i128| (ns - origin) as f64 / 1e9;
    let (a, b) = (v.first().unwrap(), v.last().unwrap());
    format!("{} measured {:.1} s..{:.1} s", v.shard.bundle, s(v.wall(a.start_ns)), s(v.wall(b.end_ns)))
}

/// The streams to merge: the workload's, then the first shard's background streams.
fn streams(shards: &[Shard]) -> Vec<String> {
    let start = &shards[0].record.start;
    std::iter::once(start.workload.clone()).chain(start.streams.iter().map(|s| s.name.clone())).collect()
}

/// One stream's lines of one slot added up: the counts, and the histograms' sums (in the
/// `Reader`'s, by tag) until `close` encodes them.
#[derive(Default)]
struct Sum {
    counts: BTreeMap<Name, u64>,
    /// The tags in the order the shards gave them.
    tags: Vec<Name>,
    /// The sums encoded (`close`): tag, compressed V2 encoding, highest value in ns.
    hists: Vec<(Name, Vec<u8>, u64)>,
    starts: Vec<i128>,
    ends: Vec<i128>,
    /// The power readings by host: shards on one host read its one meter.
    power: BTreeMap<String, Vec<f64>>,
}

impl Sum {
    /// The power over the slot: each host's once (its shards' mean reading), summed.
    fn power(&self) -> Option<f64> {
        let host = |ws: &Vec<f64>| ws.iter().sum::<f64>() / ws.len() as f64;
        (!self.power.is_empty()).then(|| self.power.values().map(host).sum())
    }
}

/// Where one core reads the shards' histograms and adds them up: each shard's log (the
/// record's in memory, or its file read forward), the inflater, a sum by tag reused slot
/// after slot, and the workload's sums over the window (for the log's `-total` lines).
#[derive(Default)]
struct Reader<'a> {
    logs: Vec<Option<Log<'a>>>,
    scratch: Inflater,
    sums: TagSums,
    totals: TagSums,
}

/// A shard's histograms as a `Reader` reads them.
enum Log<'a> {
    Memory(&'a EncodedLog),
    Disk(LogCursor),
}

impl<'a> Reader<'a> {
    fn new(shards: usize) -> Reader<'a> {
        Reader { logs: (0..shards).map(|_| None).collect(), ..Reader::default() }
    }

    /// Adds the lines of interval `i` of shard `n` (`view`), whose histograms are `hists` in
    /// its log, to `sum`.
    fn add(
        &mut self,
        sum: &mut Sum,
        (n, view): (usize, &View<'a>),
        (i, hists): (&IntervalLine, Range<usize>),
        parts: u64,
    ) -> Result<(), RecordError> {
        let own = i.stream == view.shard.record.start.workload;
        let name = |k: &Name| if own { renumbered(k, parts) } else { k.clone() };
        for (k, n) in &i.counts {
            *sum.counts.entry(name(k)).or_default() += n;
        }
        let bad = |why: String| RecordError::Read(format!("{}: latency.hlog: {why}", view.shard.bundle));
        for (k, tag) in hists.zip(&i.hists) {
            let at = self.sum_of(sum, name(tag));
            self.add_hist((n, view), k, tag, at).map_err(bad)?;
        }
        sum.starts.push(view.wall(i.start_ns));
        sum.ends.push(view.wall(i.end_ns));
        if let Some(w) = i.power_watts {
            let host = &view.shard.record.start.summary.host.hostname;
            sum.power.entry(host.clone()).or_default().push(w);
        }
        Ok(())
    }

    /// The index of `tag`'s sum, added to the slot's tags on its first histogram.
    fn sum_of(&mut self, sum: &mut Sum, tag: Name) -> usize {
        let at = self.sums.place(&tag);
        if !sum.tags.contains(&tag) {
            sum.tags.push(tag);
        }
        at
    }

    /// Adds histogram `k` of shard `n`'s log, which the record names `tag`, to sum `at`.
    fn add_hist(
        &mut self,
        (n, view): (usize, &View<'a>),
        k: usize,
        tag: &str,
        at: usize,
    ) -> Result<(), String> {
        let record = &view.shard.record;
        let log = match &mut self.logs[n] {
            Some(log) => log,
            empty => empty.insert(match record.log_file() {
                Some(path) => Log::Disk(LogCursor::new(
                    crate::files::input::open_input(path).map_err(|e| e.to_string())?,
                )),
                None => Log::Memory(record.hlog()),
            }),
        };
        let sum = self.sums.at(at);
        match log {
            Log::Memory(log) => log.add_to(k, sum, &mut self.scratch),
            Log::Disk(cursor) => {
                let (there, bytes) = cursor.at(k)?;
                if there != tag {
                    return Err(format!("the record names the histogram {tag}; the log has {there} there"));
                }
                sum.add_encoded(bytes, &mut self.scratch).map_err(|e| format!("histogram {k} ({tag}): {e}"))
            }
        }
    }

    /// `sum`'s histograms encoded, each sum emptied for the next slot; a workload stream's
    /// (`own`) added to the totals.
    fn close(&mut self, sum: &mut Sum, own: bool) {
        for tag in std::mem::take(&mut sum.tags) {
            let Some(b) = self.sums.get_mut(&tag) else { continue };
            let (bytes, max) = b.encode();
            if own {
                self.totals.of(&tag).add(b);
            }
            b.clear();
            sum.hists.push((tag, bytes, max));
        }
    }
}

/// A part's count or tag (`p3.reads`) numbered after the `before` parts of earlier shards.
fn renumbered(key: &Name, before: u64) -> Name {
    let part = key.strip_prefix('p').and_then(|rest| rest.split_once('.'));
    match part.and_then(|(n, tail)| Some((n.parse::<u64>().ok()?, tail))) {
        Some((n, tail)) if before > 0 => name(&format!("p{}.{tail}", n + before)),
        _ => key.clone(),
    }
}

fn mean(xs: &[i128]) -> i128 {
    xs.iter().sum::<i128>() / xs.len().max(1) as i128
}

/// The (shard, line) pairs of one slot and stream.
type Members = Vec<(usize, usize)>;

/// A slot and stream, and its members.
type Slot = ((i64, usize), Members);

/// The merged record as it is written, line by line.
struct Writer {
    epoch_ns: i128,
    record: String,
    hlog: HlogWriter<Vec<u8>>,
    lines: Vec<IntervalLine>,
    /// The workload's histograms over the window, for the log's `-total` lines.
    totals: TagSums,
    /// Per shard (by its index among the measuring ones): the parts of earlier shards, its
    /// CPU time when the window began and when its last merged interval closed, its intervals
    /// and its failed operations in the window.
    parts_before: Vec<u64>,
    cpu_base: Vec<Option<(u64, u64)>>,
    cpu_now: Vec<(u64, u64)>,
    used: Vec<usize>,
    errors: Vec<u64>,
    bundles: Vec<String>,
}

impl Writer {
    fn new(epoch_ns: i128, measured: &[&View<'_>]) -> Writer {
        let hlog = HlogWriter::new(Vec::new(), epoch_ns as f64 / 1e9).expect("writing to memory");
        let parts =
            measured.iter().map(|v| v.lines[v.measured[0]].0.counts.get("parts").copied().unwrap_or(0));
        let parts_before = parts.scan(0, |sum, p| Some(std::mem::replace(sum, *sum + p))).collect();
        let n = measured.len();
        Writer {
            epoch_ns,
            record: String::new(),
            hlog,
            lines: Vec::new(),
            totals: TagSums::default(),
            parts_before,
            cpu_base: vec![None; n],
            cpu_now: vec![(0, 0); n],
            used: vec![0; n],
            errors: vec![0; n],
            bundles: measured.iter().map(|v| v.shard.bundle.clone()).collect(),
        }
    }

    /// Every stream's slots `lo..=hi`: the shards' measured intervals in each, added up; the
    /// reader of the last slots, to go on to the tails.
    fn window<'a>(
        &mut self,
        views: &[&View<'a>],
        clock: Clock,
        (lo, hi): (i64, i64),
        streams: &[String],
    ) -> Result<Reader<'a>, RecordError> {
        // Per slot and stream, the (shard, line) pairs in it, found in one pass.
        let mut slots: BTreeMap<(i64, usize), Members> = BTreeMap::new();
        for (n, v) in views.iter().enumerate() {
            for (at, &(i, _)) in v.lines.iter().enumerate() {
                let Some(s) = streams.iter().position(|s| *s == i.stream).filter(|_| measure(i)) else {
                    continue;
                };
                let k = clock.slot(v, i);
                if k < lo && s == 0 {
                    self.cpu_base[n] = Some((i.cpu_user_ns, i.cpu_sys_ns));
                }
                if (lo..=hi).contains(&k) {
                    slots.entry((k, s)).or_default().push((n, at));
                }
            }
        }
        let slots: Vec<_> = slots.into_iter().collect();
        if slots.is_empty() {
            return Ok(Reader::new(views.len()));
        }
        // One run of consecutive slots a core, each read forward through the shards' logs;
        // then the slots are written in order.
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        let runs: Vec<_> = slots.chunks(slots.len().div_ceil(cores).max(1)).collect();
        let summed = std::thread::scope(|scope| {
            let this = &*self;
            let sum = move |run: &[Slot]| {
                let mut reader = Reader::new(views.len());
                let sums = run.iter().map(|((_, s), m)| this.sum(&mut reader, views, m, *s == 0));
                sums.collect::<Result<Vec<_>, _>>().map(|sums| (sums, reader))
            };
            let others: Vec<_> = runs[1..].iter().map(|run| scope.spawn(move || sum(run))).collect();
            let first = sum(runs[0]);
            std::iter::once(first)
                .chain(others.into_iter().map(|h| h.join().expect("a core's slots")))
                .collect::<Vec<_>>()
        });
        let mut last = None;
        for (run, summed) in runs.iter().zip(summed) {
            let (sums, mut reader) = summed?;
            for (((_, s), members), sum) in run.iter().zip(sums) {
                if *s == 0 {
                    members.iter().for_each(|&(n, at)| self.count_in(n, views[n].lines[at].0));
                }
                self.write(&streams[*s], sum, false)?;
            }
            self.add_totals(&mut reader);
            last = Some(reader);
        }
        Ok(last.unwrap_or_else(|| Reader::new(views.len())))
    }

    /// The lines `members` (shard, line) of one slot and stream, added up (`own`: the
    /// workload's).
    fn sum<'a>(
        &self,
        reader: &mut Reader<'a>,
        views: &[&View<'a>],
        members: &[(usize, usize)],
        own: bool,
    ) -> Result<Sum, RecordError> {
        let mut sum = Sum::default();
        for &(n, at) in members {
            reader.add(&mut sum, (n, views[n]), views[n].lines[at].clone(), self.parts_before[n])?;
        }
        reader.close(&mut sum, own);
        Ok(sum)
    }

    /// The reader's totals added to the window's, and emptied.
    fn add_totals(&mut self, reader: &mut Reader<'_>) {
        self.totals.add(&std::mem::take(&mut reader.totals));
    }

    /// A shard's workload interval `i` counted in the window.
    fn count_in(&mut self, n: usize, i: &IntervalLine) {
        self.cpu_base[n].get_or_insert((0, 0));
        self.cpu_now[n] = (i.cpu_user_ns, i.cpu_sys_ns);
        self.used[n] += 1;
        self.errors[n] +=
            i.counts.iter().filter(|(k, _)| k.starts_with("errors.")).map(|(_, n)| n).sum::<u64>();
    }

    /// The tails of the shards whose last measured interval is the window's last, read on by
    /// `reader`.
    fn tails<'a>(
        &mut self,
        mut reader: Reader<'a>,
        views: &[&View<'a>],
        clock: Clock,
        hi: i64,
        streams: &[String],
    ) -> Result<(), RecordError> {
        let end = self.lines.last().map_or(0, |l| l.end_ns);
        for (s, stream) in streams.iter().enumerate() {
            let mut sum = Sum::default();
            for (n, v) in views.iter().enumerate() {
                if clock.slot(v, v.last().unwrap()) != hi {
                    continue;
                }
                for (i, hists) in v.lines.iter().filter(|(i, _)| i.tail && i.stream == *stream) {
                    reader.add(&mut sum, (n, v), (i, hists.clone()), self.parts_before[n])?;
                }
            }
            if !sum.starts.is_empty() {
                reader.close(&mut sum, s == 0);
                let at = self.epoch_ns + i128::from(end);
                (sum.starts, sum.ends) = (vec![at], vec![at]);
                self.write(stream, sum, true)?;
            }
        }
        self.add_totals(&mut reader);
        Ok(())
    }

    /// The merged line of a slot (or the tails) of `stream`, and its histograms' log lines.
    fn write(&mut self, stream: &str, sum: Sum, tail: bool) -> Result<(), RecordError> {
        let ns = |t: i128| u64::try_from(t - self.epoch_ns).unwrap_or(0);
        let (start_ns, end_ns) = (ns(mean(&sum.starts)), ns(mean(&sum.ends)));
        let power_watts = sum.power();
        let cpu = self.cpu_sum();
        let index = self.lines.iter().filter(|l| l.stream == stream).count() as u64;
        let line = IntervalLine {
            stream: stream.into(),
            index,
            phase: Phase::Measure,
            start_ns,
            end_ns,
            counts: sum.counts.into_iter().collect(),
            hists: sum.hists.iter().map(|(t, ..)| t.clone()).collect(),
            tail,
            cpu_user_ns: cpu.0,
            cpu_sys_ns: cpu.1,
            power_watts,
            rebuild: Vec::new(),
        };
        let (start_s, length_s) = (start_ns as f64 / 1e9, end_ns.saturating_sub(start_ns) as f64 / 1e9);
        for (tag, bytes, max_ns) in &sum.hists {
            self.hlog.write_encoded(tag, start_s, length_s, *max_ns, bytes).expect("writing to memory");
        }
        self.push(Line::Interval(line.clone()))?;
        self.lines.push(line);
        Ok(())
    }

    fn push(&mut self, line: Line) -> Result<(), RecordError> {
        let text =
            serde_json::to_string(&line).map_err(|e| RecordError::Read(format!("the merged record: {e}")))?;
        self.record.push_str(&text);
        self.record.push('\n');
        Ok(())
    }

    /// The shards' CPU time over the window so far, summed.
    fn cpu_sum(&self) -> (u64, u64) {
        self.cpu_base.iter().zip(&self.cpu_now).fold((0, 0), |(u, s), (base, now)| {
            let (bu, bs) = base.unwrap_or(*now);
            (u + now.0.saturating_sub(bu), s + now.1.saturating_sub(bs))
        })
    }

    /// The record's start and end around the intervals, and the log's totals.
    fn finish(
        mut self,
        (shards, per_shard): (&[Shard], &[&str]),
        views: &[View<'_>],
        file: &ShardsFile,
    ) -> Result<Merged, RecordError> {
        let start = merged_start(shards, per_shard, self.epoch_ns);
        let end = self.end(views, file)?;
        let first_start = self.lines.first().map_or(0, |l| l.start_ns);
        let last_end = self.lines.iter().rev().find(|l| !l.tail).map_or(0, |l| l.end_ns);
        let length_s = last_end.saturating_sub(first_start) as f64 / 1e9;
        for (tag, total) in self.totals.iter() {
            let (bytes, max_ns) = total.encode();
            self.hlog
                .write_encoded(&format!("{tag}-total"), first_start as f64 / 1e9, length_s, max_ns, &bytes)
                .expect("to memory");
        }
        let intervals = std::mem::take(&mut self.record);
        self.push(Line::Start(Box::new(start)))?;
        self.record.push_str(&intervals);
        self.push(Line::End(end))?;
        let hlog = String::from_utf8(self.hlog.into_inner()).expect("the log is text");
        Ok(Merged { record: self.record, hlog, shards: file.clone() })
    }

    fn end(&self, views: &[View<'_>], file: &ShardsFile) -> Result<End, RecordError> {
        let ends: Vec<&End> = views.iter().filter_map(|v| v.shard.record.end.as_ref()).collect();
        let Some(model) = ends.iter().find(|e| e.facts.complete).or(ends.first()) else {
            return Err(RecordError::Read(
                "no shard's record has an end: every shard was killed before it finished; merge \
                 needs at least one finished shard"
                    .into(),
            ));
        };
        let first = self.lines.first().map_or(0, |l| l.start_ns);
        let last = self.lines.iter().rev().find(|l| !l.tail).map_or(0, |l| l.end_ns);
        let cpu = self.cpu_sum();
        let mut warnings = vec![format!(
            "merged from {} shards over their common measured window, {:.1} s",
            views.len(),
            last.saturating_sub(first) as f64 / 1e9
        )];
        warnings.extend(file.shards.iter().filter(|s| s.late).map(|s| {
            format!("shard {} started measuring late (more than one interval after the first)", s.name)
        }));
        for v in views {
            let facts = v.shard.record.end.as_ref().map(|e| &e.facts);
            warnings.extend(
                facts.iter().flat_map(|f| &f.warnings).map(|w| format!("shard {}: {w}", v.shard.name)),
            );
        }
        let facts = Facts {
            warmup_s: first as f64 / 1e9,
            measured_s: last.saturating_sub(first) as f64 / 1e9,
            cpu_user_ns: cpu.0,
            cpu_sys_ns: cpu.1,
            complete: file.complete,
            failures: file.missing.clone(),
            warnings,
            steady: None,
        };
        let ended_at = ends.iter().map(|e| e.ended_at.clone()).max().unwrap_or_default();
        Ok(End {
            ended_at,
            facts,
            detail: model.detail.clone(),
            added_warnings: Vec::new(),
            streams: model.streams.clone(),
        })
    }
}

/// The merged run's start: the earliest shard's summary as it started, on the earliest epoch.
fn merged_start(shards: &[Shard], per_shard: &[&str], epoch_ns: i128) -> Start {
    let earliest = shards.iter().min_by_key(|s| s.record.start.epoch_ns).unwrap_or(&shards[0]);
    let mut summary = earliest.record.start.summary.clone();
    for key in per_shard {
        let each = shards.iter().map(|s| s.record.start.summary.parameters.get(key).and_then(|v| v.as_u64()));
        if let Some(sum) = each.sum::<Option<u64>>() {
            summary.parameters[key] = sum.into();
        }
    }
    Start {
        version: RECORD_VERSION,
        workload: earliest.record.start.workload.clone(),
        epoch_ns,
        summary,
        streams: shards[0].record.start.streams.clone(),
    }
}

/// What each shard contributed, and which are missing.
fn shards_file(
    views: &[View<'_>],
    clock: Clock,
    (lo, hi): (i64, i64),
    epoch_ns: i128,
    w: &Writer,
) -> ShardsFile {
    let s = |ns: i128| (ns - epoch_ns) as f64 / 1e9;
    let mut missing = Vec::new();
    let shards = views
        .iter()
        .map(|v| {
            let problems = problems(v);
            missing.extend(problems.iter().map(|p| format!("shard {}: {p}", v.shard.name)));
            let at = w.bundles.iter().position(|b| *b == v.shard.bundle);
            ShardEntry {
                name: v.shard.name.clone(),
                bundle: v.shard.bundle.clone(),
                headline: None,
                measured_s: match (v.first(), v.last()) {
                    (Some(a), Some(b)) => (s(v.wall(a.start_ns)), s(v.wall(b.end_ns))),
                    _ => (0.0, 0.0),
                },
                intervals: at.map_or(0, |n| w.used[n]),
                late: v.first().is_some_and(|i| v.wall(i.start_ns) - clock.origin > clock.interval_ns),
                errors: at.map_or(0, |n| w.errors[n]),
                complete: problems.is_empty(),
                problems,
            }
        })
        .collect();
    missing.extend(absent(views));
    let window_s = (
        s(clock.origin + i128::from(lo) * clock.interval_ns),
        s(clock.origin + i128::from(hi + 1) * clock.interval_ns),
    );
    ShardsFile { complete: missing.is_empty(), missing, window_s, shards }
}

/// The shards of the run none of the bundles is: indexes `1..=N` of the count the shards say.
fn absent(views: &[View<'_>]) -> Vec<String> {
    let infos: Vec<_> = views.iter().filter_map(|v| claimed(&v.shard.record)).collect();
    let Some(count) = infos.iter().map(|i| i.count).max() else { return Vec::new() };
    (1..=count)
        .filter(|n| !infos.iter().any(|i| i.index == *n))
        .map(|n| format!("shard {n}/{count}: missing: no bundle of it was given"))
        .collect()
}

/// Why a shard is not a whole, successful run (nothing when it is).
fn problems(v: &View<'_>) -> Vec<String> {
    let Some(end) = &v.shard.record.end else {
        return vec![format!(
            "incomplete: its record has no end (killed or still running; it measured {} intervals)",
            v.measured.len()
        )];
    };
    let mut out: Vec<String> = end.facts.failures.clone();
    if !end.facts.complete {
        out.push("incomplete: it was stopped before its measured phase ended".into());
    }
    if v.measured.is_empty() {
        out.push("it measured nothing".into());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::{LatencyHistogram, histogram_text};

    /// Shard `index` of `count` on `host`: three measured seconds, each of 100 reads at
    /// `index` ms and the host's power read as `watts`.
    fn shard(index: u32, count: u32, host: &str, watts: f64) -> Shard {
        let mut summary = super::super::test_summary("io");
        summary.host.hostname = host.into();
        let info = storbench_report::ShardInfo {
            index,
            count,
            host: host.into(),
            from: "--shard".into(),
            ..Default::default()
        };
        summary.shard = Some(info);
        let start = Start {
            version: RECORD_VERSION,
            workload: "io".into(),
            epoch_ns: 1_000_000,
            summary,
            streams: vec![],
        };
        let mut record = vec![Line::Start(Box::new(start))];
        let mut hlog = String::new();
        for n in 0..3u64 {
            let mut h = LatencyHistogram::new();
            (0..100).for_each(|_| h.record(u64::from(index) * 1_000_000));
            hlog += &format!("Tag=read,{n}.000,1.000,0.000,{}\n", histogram_text(&h));
            record.push(Line::Interval(IntervalLine {
                stream: "io".into(),
                index: n,
                phase: Phase::Measure,
                start_ns: n * 1_000_000_000,
                end_ns: (n + 1) * 1_000_000_000,
                counts: [("read.ios".into(), 100)].into(),
                hists: vec!["read".into()],
                tail: false,
                cpu_user_ns: 0,
                cpu_sys_ns: 0,
                power_watts: Some(watts),
                rebuild: vec![],
            }));
        }
        let facts = Facts { measured_s: 3.0, complete: true, ..Facts::default() };
        record.push(Line::End(super::super::test_end(facts)));
        let text: String = record.iter().map(|l| serde_json::to_string(l).unwrap() + "\n").collect();
        let record = StoredRecord::from_text(&text, &hlog).unwrap();
        Shard { name: identity(&record, "dir"), bundle: format!("b{index}"), record }
    }

    fn merged_record(shards: &[Shard]) -> (StoredRecord, ShardsFile) {
        let m = merge(shards, &[]).unwrap();
        (StoredRecord::from_text(&m.record, &m.hlog).unwrap(), m.shards)
    }

    #[test]
    fn a_hosts_power_counts_once_however_many_of_its_shards_read_it() {
        let shards = [shard(1, 3, "a", 100.0), shard(2, 3, "a", 110.0), shard(3, 3, "b", 50.0)];
        let (record, _) = merged_record(&shards);
        assert_eq!(record.intervals.len(), 3);
        for i in &record.intervals {
            assert_eq!(i.power_watts, Some(105.0 + 50.0), "host a's mean and host b's");
            assert_eq!(i.counts["read.ios"], 300);
        }
    }

    #[test]
    fn shards_are_named_by_identity_and_a_missing_index_makes_the_merge_incomplete() {
        let (record, file) = merged_record(&[shard(1, 3, "a", 1.0), shard(3, 3, "b", 1.0)]);
        let names: Vec<&str> = file.shards.iter().map(|s| s.name.as_str()).collect();
        assert_eq!(names, ["1/3 (a)", "3/3 (b)"]);
        assert!(!file.complete);
        assert_eq!(file.missing, ["shard 2/3: missing: no bundle of it was given"]);
        assert!(!record.end().unwrap().facts.complete);
        // The merged reads are the union's: 300 at 1 ms, 300 at 3 ms.
        let all: crate::metrics::Recorder = record.merged("io", |_| true).unwrap();
        let lat = all.read.latency.summary().unwrap();
        assert_eq!((all.read.ios, lat.p50 / 1_000_000, lat.max / 1_000_000), (600, 1, 3));
    }

    #[test]
    fn parts_are_numbered_on_after_the_earlier_shards_parts() {
        assert_eq!(&*renumbered(&name("p0.reads"), 2), "p2.reads");
        assert_eq!(&*renumbered(&name("p11.order"), 3), "p14.order");
        assert_eq!(&*renumbered(&name("parts"), 3), "parts");
        assert_eq!(&*renumbered(&name("read.ios"), 3), "read.ios");
        assert_eq!(&*renumbered(&name("p1.x"), 0), "p1.x");
    }
}
