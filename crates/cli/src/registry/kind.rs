//! What a workload kind is to the command line ([`Kind`]) and what its options give an
//! evaluation ([`Options`]): the types every kind's entry (`subcommand/<kind>/entry.rs`) fills
//! in. The list of entries is the registry's (`registry::KINDS`).

use crate::measure::Ran;
use crate::plan::configuration::Configuration;
use crate::plan::method::Method;
use crate::plan::table::{NOT_PLAN_KEYS, OWN_KEYS, PlanError, Source, keys_in, typed, words};
use anyhow::Result;
use serde::de::DeserializeOwned;
use std::any::Any;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;
use storbench_bench::run::Ending;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::registry::Workload;
use toml::de::DeTable;

/// How a plan table (at `span`) becomes a kind's options.
pub type ParseFn = fn(&Source, &DeTable, Range<usize>, &Kind) -> Result<Box<dyn Options>, PlanError>;

/// A workload kind's entry: the library's (`workload`) with its command line.
pub struct Kind {
    /// The library's entry: its name, what it reports, how its summary is rebuilt.
    pub workload: &'static Workload,
    /// Its name in plans, summaries and run ids, and its subcommand's (the library's).
    pub name: &'static str,
    /// How a plan's messages name one: "an io workload" (the library's).
    pub what: &'static str,
    /// Its options that are the configuration's in a plan (where the data goes).
    pub reserved: &'static [&'static str],
    /// Its options as clap defines them: their doc comments are `--help`, `plan init`'s
    /// comments and the plan keys' documentation at once.
    pub command: fn() -> clap::Command,
    /// A plan's `[[workload]]` table → its options.
    pub parse: ParseFn,
    /// Its subcommand, `storbench <name> ...`, as clap defines it.
    pub subcommand: fn() -> clap::Command,
    /// That subcommand's parsed command line, ready to run.
    pub invoked: fn(&clap::ArgMatches) -> Result<Box<dyn Invoked>, clap::Error>,
    /// A run's result as a table for the terminal.
    pub table: fn(&storbench_report::Summary) -> String,
    /// What a plan's sweep over `targets` moves in it.
    pub targets: Targets,
}

/// What a plan's `sweep = { targets = [1, 2, 4] }` moves in a workload of a kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Targets {
    /// Nothing: it has one target.
    One,
    /// The first N of the configuration's own targets (oltp: its urls), by
    /// [`Options::use_targets`].
    Configurations,
    /// Its own key of that name (the mailbox's `databases`).
    Key(&'static str),
}

impl Kind {
    /// The entry of the library's `workload` whose options in a plan are `T` and whose command
    /// line is `C`.
    pub const fn of<T, C>(workload: &'static Workload, reserved: &'static [&'static str]) -> Kind
    where
        T: Flagged + serde::de::DeserializeOwned + Options,
        C: CommandLine,
    {
        Kind {
            workload,
            name: workload.name,
            what: workload.what,
            reserved,
            command: command_of::<T::Flags>,
            parse: parse_as::<T>,
            subcommand: C::command,
            invoked: invoked_as::<C>,
            table: C::table,
            targets: Targets::One,
        }
    }

    /// The entry, with a sweep over `targets` moving `targets`.
    pub const fn sweeping(self, targets: Targets) -> Kind {
        Kind { targets, ..self }
    }
}

/// A kind's command line: `storbench <kind> ...` and whatever subcommands it has of its own
/// (`oltp load`, `mailbox verify`).
pub trait CommandLine: clap::FromArgMatches + Send + 'static {
    /// The subcommand: its name (the kind's), its help and its options.
    fn command() -> clap::Command;

    /// `--power` where the command measures: Some(the meter, or None for the default).
    fn power(&self) -> Option<Option<&str>>;

    /// Runs it.
    fn run(self, stop: &StopFlag) -> Result<Ending>;

    /// A run's result as a table for the terminal.
    fn table(s: &storbench_report::Summary) -> String;
}

/// A command line parsed, not yet run: what `main` asks of any subcommand.
pub trait Invoked {
    /// As [`CommandLine::power`].
    fn power(&self) -> Option<Option<&str>>;
    fn run(self: Box<Self>, stop: &StopFlag) -> Result<Ending>;
}

impl<C: CommandLine> Invoked for C {
    fn power(&self) -> Option<Option<&str>> {
        CommandLine::power(self)
    }

    fn run(self: Box<Self>, stop: &StopFlag) -> Result<Ending> {
        CommandLine::run(*self, stop)
    }
}

fn invoked_as<C: CommandLine>(m: &clap::ArgMatches) -> Result<Box<dyn Invoked>, clap::Error> {
    Ok(Box::new(C::from_arg_matches(m)?))
}

impl fmt::Debug for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name)
    }
}

/// A plan's options (the library's, in a `Job`) and the command line's flags that define
/// their keys and convert into them.
pub trait Flagged {
    type Flags: clap::Args;
}

/// A kind's options as clap defines them.
pub fn command_of<T: clap::Args>() -> clap::Command {
    T::augment_args(clap::Command::new("plan"))
}

/// The options of the kind `KIND`: what makes a kind's argument struct [`Options`] besides
/// its own methods.
pub trait OfKind: Clone {
    const KIND: &'static Kind;
}

/// What every kind's options share, given by [`OfKind`].
pub trait Shared {
    /// Its kind's entry.
    fn kind(&self) -> &'static Kind;
    fn clone_box(&self) -> Box<dyn Options>;
    fn as_any(&self) -> &dyn Any;
}

impl<T: OfKind + Options> Shared for T {
    fn kind(&self) -> &'static Kind {
        T::KIND
    }

    fn clone_box(&self) -> Box<dyn Options> {
        Box::new(self.clone())
    }

    fn as_any(&self) -> &dyn Any {
        self
    }
}

/// One workload's options as a plan holds them, and what an evaluation asks of them.
pub trait Options: Any + fmt::Debug + Send + Sync + Shared {
    /// The options with configuration `c`'s place and the method's defaults filled in.
    fn for_configuration(&self, c: &Configuration, m: &Method) -> Box<dyn Options>;

    /// Warm-up plus measured phase, from the options or the kind's defaults: the ETA.
    fn expected(&self) -> Duration;

    /// The workload's label when the plan gives none; `swept` is the key a sweep varies,
    /// which the label then leaves out.
    fn label(&self, _swept: Option<&str>) -> String {
        self.kind().name.to_string()
    }

    /// Every check its command makes before it runs, touching nothing.
    fn check(&self) -> Result<()>;

    /// `check`, where earlier workloads of the plan on the same configuration will have made
    /// the files `made` (what their `leaves` names) by the time this one runs.
    fn check_after(&self, _made: &[PathBuf]) -> Result<()> {
        self.check()
    }

    /// A file it makes and keeps for the runs after it (oltp's SQLite database).
    fn leaves(&self) -> Option<PathBuf> {
        None
    }

    /// Whether it needs a filesystem at configuration `c`'s target.
    fn needs_files(&self, _c: &Configuration) -> bool {
        true
    }

    /// How many targets configuration `c` offers a sweep over `targets`, where the kind's
    /// targets are the configuration's (oltp: its urls); None where the workload makes its own.
    fn targets_on(&self, _c: &Configuration) -> Option<usize> {
        None
    }

    /// A sweep point over `targets`: use the first `n`.
    fn use_targets(&mut self, _n: usize) {}

    /// Whether a run leaves its files for a later look (integrity's `keep`), so no later
    /// run of the kind may use the same place.
    fn keeps_files(&self) -> bool {
        false
    }

    /// What must be in place before the settle and idle window (the io file, the loaded
    /// database).
    fn prepare(&self, _stop: &StopFlag) -> Result<()> {
        Ok(())
    }

    /// What a run writes and where, in a few words, for the line an evaluation says before
    /// it starts ("creates /mnt/ssd/storbench-io.dat, 1.0 GiB, kept for later runs"); None
    /// where it writes nothing. Asked after `check` passed.
    fn will_write(&self) -> Option<String>;

    /// Whether the run settles the device itself (after its own preparation inside the run).
    fn settles_itself(&self) -> bool {
        false
    }

    /// Names the run (its bundle, its summary).
    fn name(&mut self, name: String);

    /// The options as a search moves their load; None for a kind with no load (its library
    /// entry lists none).
    fn searching(&self) -> Option<&dyn crate::search::args::Searching> {
        None
    }

    /// Runs into `bundle`.
    fn measure(&self, bundle: &Path, stop: &StopFlag) -> Result<Ran>;
}

impl Clone for Box<dyn Options> {
    fn clone(&self) -> Self {
        self.clone_box()
    }
}

impl dyn Options {
    /// The options as `T`, where they are that kind's.
    pub fn get<T: Options>(&self) -> Option<&T> {
        self.as_any().downcast_ref::<T>()
    }
}

/// A workload table as kind `T`'s options (`kind.parse` of every entry); the kind's
/// `reserved` keys belong to the configuration.
pub fn parse_as<T: DeserializeOwned + Options>(
    src: &Source,
    t: &DeTable,
    span: Range<usize>,
    kind: &Kind,
) -> Result<Box<dyn Options>, PlanError> {
    for key in kind.reserved {
        if let Some((k, _)) = t.get_key_value(*key) {
            let hint = Some("each [[configuration]] says where its data goes; set it there".to_string());
            return Err(src.error(k.span(), format!("`{key}` is not a workload key"), hint));
        }
    }
    let owned = keys_in(&(kind.command)(), &NOT_PLAN_KEYS);
    let mut keys = words(&owned);
    keys.retain(|k| !kind.reserved.contains(k));
    keys.extend(OWN_KEYS);
    typed::<T>(src, t, span, kind.what, &keys).map(|a| Box::new(a) as Box<dyn Options>)
}
