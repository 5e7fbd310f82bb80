//! The workloads storbench has, one entry each ([`KINDS`]): what a plan, `plan init`, an
//! evaluation's checks, its ETA and its runs need of a kind. They dispatch here instead of
//! each matching on the kinds, so a new workload is its options, its command and one entry
//! (README: "How to add a workload").
//!
//! A [`Kind`] is the static part (its name, its plan keys as its flags define them, how a plan
//! table becomes its options); [`Options`] is one workload's options as a plan holds them: the
//! library's options type in an `args::Job`, implemented in `subcommand/<kind>/entry.rs`.

use crate::measure::Ran;
use crate::plan::parse::{PlanError, Source};
use crate::plan::{Configuration, Method};
use crate::subcommand::{self, Ending};
use anyhow::Result;
use std::any::Any;
use std::fmt;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;
use storbench_bench::run::StopFlag;
use storbench_bench::workload::registry::Workload;
use toml::de::DeTable;

pub use subcommand::KINDS;

/// The kind named `name` (a plan's `kind = "..."`).
pub fn kind(name: &str) -> Option<&'static Kind> {
    KINDS.iter().copied().find(|k| k.name == name)
}

pub use storbench_bench::workload::registry::{names_listed, rebuild_of};

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
            parse: crate::plan::parse::parse_as::<T>,
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

/// Every kind's subcommand added to `cli`, first in the help as in [`KINDS`].
pub fn with_subcommands(cli: clap::Command) -> clap::Command {
    let others: Vec<String> = cli.get_subcommands().map(|s| s.get_name().to_owned()).collect();
    let cli = others
        .iter()
        .enumerate()
        .fold(cli, |cli, (i, name)| cli.mut_subcommand(name, |s| s.display_order(KINDS.len() + i)));
    KINDS.iter().enumerate().fold(cli, |cli, (i, k)| cli.subcommand((k.subcommand)().display_order(i)))
}

/// The subcommand `matches` names, where it is a kind's.
pub fn invoked(matches: &clap::ArgMatches) -> Option<Result<Box<dyn Invoked>, clap::Error>> {
    let (name, sub) = matches.subcommand()?;
    kind(name).map(|k| (k.invoked)(sub))
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
    fn searching(&self) -> Option<&dyn crate::search::Searching> {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kind_is_found_by_name_documented_by_plan_init_and_parsed_into_its_own_options() {
        let dir = tempfile::tempdir().unwrap();
        let example = crate::plan::init::example();
        for (i, kind) in KINDS.iter().enumerate() {
            assert!(KINDS[..i].iter().all(|k| k.name != kind.name), "{} twice", kind.name);
            assert!(std::ptr::eq(super::kind(kind.name).unwrap(), *kind));
            let section = format!("# ---- Every key of a kind = \"{}\" workload ----", kind.name);
            assert!(example.contains(&section), "plan init documents {}", kind.name);
            let text = format!(
                "[[configuration]]\nname = \"c\"\ntarget = \"{}\"\n[[workload]]\nkind = \"{}\"\n",
                dir.path().display(),
                kind.name
            );
            let plan = crate::plan::parse::parse("plan.toml", &text).unwrap();
            assert!(std::ptr::eq(plan.workloads[0].args.kind(), *kind), "{}", kind.name);
            for key in kind.reserved {
                let with = format!("{text}{key} = \"x\"\n");
                let e = crate::plan::parse::parse("plan.toml", &with).unwrap_err();
                assert!(e.message.contains("is not a workload key"), "{}'s {key}: {e}", kind.name);
            }
            // A requirement may name a figure its library entry reports, with a limit of its
            // sort (a word for a verdict, else a number); the other sort is refused.
            let figure = (kind.workload.reported.figures)()[0];
            let (fits, misfits) = if figure.is_word() { ("pass", "1") } else { ("1", "pass") };
            let required = |limit: &str| {
                let with = format!("{text}[requirements]\n\"{}.{}\" = \"{limit}\"\n", kind.name, figure.name);
                crate::plan::parse::parse("plan.toml", &with)
            };
            assert!(required(fits).is_ok_and(|p| p.requirements.len() == 1), "{}.{}", kind.name, figure.name);
            assert!(required(misfits).is_err(), "{}.{} = {misfits}", kind.name, figure.name);
            // A search may move each load its library entry lists; a kind with none is refused.
            let searched = |load: &str| {
                let with = format!("{text}search = \"{load}\"\nlatency_limit = \"p99<=50ms\"\n");
                crate::plan::parse::parse("plan.toml", &with)
            };
            for load in kind.workload.loads {
                assert!(searched(load.name()).is_ok(), "{} by {}", kind.name, load.name());
            }
            if kind.workload.loads.is_empty() {
                let e = searched("threads").unwrap_err();
                assert!(e.message.contains("has no load to search"), "{}: {e}", kind.name);
            }
        }
        // The command line has an entry for each of the library's workloads, in its order.
        let library = storbench_bench::workload::registry::WORKLOADS.iter().map(|w| w.name);
        assert!(KINDS.iter().map(|k| k.name).eq(library));
        assert_eq!(
            names_listed(),
            "\"io\", \"oltp\", \"mailbox\", \"integrity\", \"replay\", \"replay-trace\" or \"wal\""
        );
        let text = format!(
            "[[configuration]]\nname = \"c\"\ntarget = \"{}\"\n[[workload]]\nkind = \"trace\"\n",
            dir.path().display()
        );
        let e = crate::plan::parse::parse("plan.toml", &text).unwrap_err();
        assert_eq!(e.message, "unknown workload kind `trace`");
        assert_eq!(
            e.hint.as_deref(),
            Some(
                "kind is \"io\", \"oltp\", \"mailbox\", \"integrity\", \"replay\", \"replay-trace\" or \"wal\""
            )
        );
    }

    #[test]
    fn every_flag_of_a_kind_is_a_plan_key_and_every_plan_key_a_flag() {
        use crate::plan::parse::{NOT_PLAN_KEYS, keys_in};
        for kind in KINDS {
            // The flags of the command that runs it (`oltp run` for oltp; `oltp load` and
            // the like have their own).
            let cmd = (kind.subcommand)();
            let flags = keys_in(cmd.find_subcommand("run").unwrap_or(&cmd), &NOT_PLAN_KEYS);
            let mut keys = keys_in(&(kind.command)(), &NOT_PLAN_KEYS);
            if !kind.workload.loads.is_empty() {
                keys.extend(crate::plan::search::keys());
            }
            let without_key: Vec<&String> = flags.iter().filter(|f| !keys.contains(f)).collect();
            let without_flag: Vec<&String> = keys.iter().filter(|k| !flags.contains(k)).collect();
            assert!(without_key.is_empty(), "{}: flags without a plan key: {without_key:?}", kind.name);
            assert!(without_flag.is_empty(), "{}: plan keys without a flag: {without_flag:?}", kind.name);
        }
    }

    #[test]
    fn each_kind_says_what_it_will_write_and_where() {
        let dir = tempfile::tempdir().unwrap();
        let at = dir.path().canonicalize().unwrap();
        let text = format!(
            "[[configuration]]\nname = \"c\"\ntarget = \"{}\"\n\
             [[workload]]\nkind = \"io\"\nsize = \"64MiB\"\n\
             [[workload]]\nkind = \"io\"\nsize = \"64MiB\"\nrw = \"read\"\n\
             [[workload]]\nkind = \"oltp\"\n\
             [[workload]]\nkind = \"mailbox\"\nmailboxes = 10\nmailbox_size = \"10MB\"\n\
             [[workload]]\nkind = \"integrity\"\ndata_size = \"16MiB\"\ndata_max = \"32MiB\"\n\
             data_growth = \"8MiB\"\nlog_size = \"8MiB\"\n",
            at.display()
        );
        let plan = crate::plan::parse::parse("plan.toml", &text).unwrap();
        let said: Vec<Option<String>> = crate::plan::expand::runs(&plan)
            .iter()
            .filter(|r| r.repetition == 1)
            .map(|r| r.args.will_write())
            .collect();
        let at = at.display();
        assert_eq!(
            said[0].as_deref(),
            Some(format!("creates and fills {at}/storbench-io.dat, 64MiB, kept for later runs").as_str())
        );
        assert_eq!(said[1], said[0], "the file a reading job finds missing is created all the same");
        let oltp = said[2].as_deref().unwrap();
        assert!(
            oltp.contains(&format!("{at}/storbench-ds3.db (SQLite")) && oltp.contains("(10MB)"),
            "{oltp}"
        );
        let mailbox = said[3].as_deref().unwrap();
        assert!(
            mailbox.contains(&format!("in {at}/storbench-mailbox"))
                && mailbox.ends_with("removed after each run")
        );
        let integrity = said[4].as_deref().unwrap();
        assert_eq!(
            integrity,
            format!(
                "a data file and a log of up to 40MiB in all in {at}/storbench-integrity, removed after the run"
            )
        );
    }
}
