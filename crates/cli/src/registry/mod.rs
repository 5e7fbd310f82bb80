//! The workloads storbench has, one entry each ([`KINDS`]): what a plan, `plan init`, an
//! evaluation's checks, its ETA and its runs need of a kind. They dispatch here instead of
//! each matching on the kinds, so a new workload is its options, its command and one entry
//! (README: "How to add a workload").
//!
//! What an entry holds ([`kind::Kind`], with its options as [`kind::Options`]) is `kind`'s;
//! each kind fills it in its own `subcommand/<kind>/entry.rs`, listed in `subcommand::KINDS`.

pub mod kind;

use kind::{Invoked, Kind};

pub use crate::subcommand::KINDS;

/// The kind named `name` (a plan's `kind = "..."`).
pub fn by_name(name: &str) -> Option<&'static Kind> {
    KINDS.iter().copied().find(|k| k.name == name)
}

pub use storbench_bench::workload::registry::names_listed;

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
    by_name(name).map(|k| (k.invoked)(sub))
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
            assert!(std::ptr::eq(super::by_name(kind.name).unwrap(), *kind));
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
        use crate::plan::table::{NOT_PLAN_KEYS, keys_in};
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
