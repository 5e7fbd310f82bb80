use super::expand::runs;
use super::parse::parse;
use super::table::PlanError;
use super::terms::in_plan_terms;
use super::*;
use crate::args::mailbox::MailboxJob;
use crate::args::oltp::OltpJob;
use crate::subcommand::io::args::IoJob;
use storbench_bench::workload::io::Share;
use storbench_bench::workload::io::options::IoOptions;
use storbench_bench::workload::mailbox::MailboxOptions;
use storbench_bench::workload::oltp::options::OltpOptions;

fn dirs() -> (tempfile::TempDir, String, String) {
    let tmp = tempfile::tempdir().unwrap();
    let (a, b) = (tmp.path().join("a"), tmp.path().join("b"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    (tmp, a.display().to_string(), b.display().to_string())
}

fn plan_with(workloads: &str) -> (tempfile::TempDir, String) {
    let (tmp, a, b) = dirs();
    let text = format!(
        "name = \"t\"\n[[configuration]]\nname = \"a\"\ntarget = \"{a}\"\n[[configuration]]\nname = \"b\"\ntarget = \"{b}\"\n{workloads}"
    );
    (tmp, text)
}

fn error(text: &str) -> PlanError {
    parse("plan.toml", text).unwrap_err()
}

#[test]
fn the_quick_plan_runs_the_sqlio_set_oltp_mailbox_and_integrity_three_times_here() {
    let plan = parse("quick", QUICK_PLAN).unwrap();
    let labels: Vec<&str> = plan.workloads.iter().map(|w| w.label.as_str()).collect();
    assert_eq!(labels.len(), 9, "{labels:?}");
    assert_eq!(labels[0], "sqlio-randread-8k-qd4");
    assert_eq!(&labels[6..], ["oltp", "mailbox", "integrity"]);
    let all = runs(&plan);
    assert_eq!(all.len(), 27);
    assert_eq!(all[0].id, "sqlio-randread-8k-qd4.here.r1");
    let a = &all[0].args.get::<IoJob>().expect("an io workload").options;
    let bs = a.bs.as_ref().map(|b| (b.mix.max(), b.mix.is_single()));
    assert_eq!(
        (a.rw, bs, a.iodepth),
        (Some(crate::subcommand::io::args::Rw::Randread), Some((8192, true)), Some(4))
    );
    assert_eq!(a.target.clone(), Some(std::env::current_dir().unwrap().canonicalize().unwrap()));
    assert!(a.profile.is_none());
}

#[test]
fn repetitions_interleave_configurations_and_sweeps_expand_in_order() {
    let (_tmp, text) = plan_with(
        "[method]\nrepetitions = 2\n[[workload]]\nkind = \"io\"\nrw = \"randread\"\nsweep = { iodepth = [1, 16] }\n",
    );
    let plan = parse("plan.toml", &text).unwrap();
    let ids: Vec<String> = runs(&plan).into_iter().map(|r| r.id).collect();
    let w = "io-randread-4k-iodepth-sweep";
    let expect: Vec<String> = [
        "a.iodepth-1.r1",
        "b.iodepth-1.r1",
        "a.iodepth-1.r2",
        "b.iodepth-1.r2",
        "a.iodepth-16.r1",
        "b.iodepth-16.r1",
        "a.iodepth-16.r2",
        "b.iodepth-16.r2",
    ]
    .iter()
    .map(|s| format!("{w}.{s}"))
    .collect();
    assert_eq!(ids, expect);
    let depths: Vec<Option<u32>> =
        runs(&plan).iter().map(|r| r.args.get::<IoJob>().and_then(|a| a.options.iodepth)).collect();
    assert_eq!(depths, [1, 1, 1, 1, 16, 16, 16, 16].map(Some));
}

#[test]
fn the_method_fills_in_what_workloads_leave_out_and_the_command_line_wins() {
    let (_tmp, text) = plan_with(
        "[method]\nmeasure = \"90s\"\nwarmup = 5\nseed = 7\n[[workload]]\nkind = \"oltp\"\nrun_time = \"2m\"\n[[workload]]\nkind = \"mailbox\"\n",
    );
    let mut plan = parse("plan.toml", &text).unwrap();
    let over = Method { seed: Some(9), ..Method::default() };
    plan.method = plan.method.overridden_by(&over);
    let all = runs(&plan);
    let a = &all[0].args.get::<OltpJob>().expect("an oltp workload").options;
    assert_eq!(a.run_time.unwrap().0.as_secs(), 120, "the workload's own run_time wins");
    assert_eq!(a.warmup_time.unwrap().0.as_secs(), 5);
    assert_eq!(a.seed, Some(9));
    assert!(a.path.as_ref().unwrap().ends_with("a/storbench-ds3.db"));
    let mailbox = all.iter().find(|r| r.workload == "mailbox").unwrap();
    let a = &mailbox.args.get::<MailboxJob>().expect("a mailbox workload").options;
    assert_eq!(a.duration.unwrap().0.as_secs(), 90);
    assert!(a.target.as_ref().unwrap().ends_with("a/storbench-mailbox"));
}

#[test]
fn an_unknown_key_is_located_and_the_nearest_key_suggested() {
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"io\"\niodepht = 4\n");
    let e = error(&text);
    assert_eq!((e.line, e.column), (10, 1), "{e}");
    assert!(e.message.contains("unknown key `iodepht`"), "{e}");
    assert!(e.hint.as_deref().unwrap().starts_with("did you mean `iodepth`?"), "{e}");
    let e = error("name = \"x\"\n[method]\nrepetitons = 2\n");
    assert_eq!((e.line, e.column), (3, 1));
    assert!(e.hint.unwrap().contains("`repetitions`"));
}

#[test]
fn a_wrong_type_points_at_the_value() {
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"io\"\niodepth = \"four\"\n");
    let e = error(&text);
    assert_eq!((e.line, e.column), (10, 11), "{e}");
    assert!(e.message.contains("expected u32"), "{e}");
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"io\"\nsweep = { iodepth = [1, \"x\"] }\n");
    let e = error(&text);
    assert_eq!((e.line, e.column), (10, 25), "{e}");
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"io\"\nruntime = \"soon\"\n");
    assert!(error(&text).message.contains("'soon' is not a duration"));
}

#[test]
fn a_missing_or_absent_target_and_other_mistakes_are_refused() {
    let e = error("[[configuration]]\nname = \"a\"\n[[workload]]\nkind = \"io\"\n");
    assert!(e.message.contains("missing field `target`") && e.line == 1, "{e}");
    assert!(e.hint.unwrap().contains("add target"));
    let e =
        error("[[configuration]]\nname = \"a\"\ntarget = \"/no/such/dir\"\n[[workload]]\nkind = \"io\"\n");
    assert_eq!((e.line, e.column), (3, 10), "{e}");
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"disk\"\n");
    assert!(error(&text).message.contains("unknown workload kind `disk`"));
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"io\"\ntarget = \"/tmp\"\n");
    assert!(error(&text).message.contains("`target` is not a workload key"));
    let (_tmp, text) = plan_with("");
    assert!(error(&text).message.contains("no [[workload]]"));
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"io\"\nprofile = \"sqlio\"\nbs = \"4k\"\n");
    assert!(error(&text).message.contains("`bs` is set by the sqlio profile set"));
    let e = error("name = \"x\nworkload = 1\n");
    assert!(e.message.contains("not valid TOML") && e.line == 1, "{e}");
}

#[test]
fn plan_init_documents_every_key_and_parses_once_targets_exist() {
    let example = init::example();
    for key in table::keys_of::<crate::args::mailbox::MailboxArgs>(&[]) {
        if !["target", "log_target"].contains(&key.as_str()) && !table::NOT_PLAN_KEYS.contains(&key.as_str())
        {
            assert!(example.contains(&format!("# {key} = ")), "{key} is not documented");
        }
    }
    for key in
        ["iodepth", "rwmix_read", "n_threads", "db_size", "repetitions", "idle_power", "condition", "storage"]
    {
        assert!(example.contains(&format!("{key} = ")), "{key}");
    }
    let (_tmp, a, b) = dirs();
    let text = example.replace("/mnt/ssd", &a).replace("/mnt/hdd", &b);
    let plan = parse("example", &text).unwrap();
    assert_eq!(plan.configurations.len(), 2);
    assert!(plan.workloads.iter().any(|w| w.label == "randread-depth" && w.points.len() == 6));
}

#[test]
fn labels_sweeps_and_log_targets_that_would_misfile_runs_are_refused() {
    let io = "[[workload]]\nkind = \"io\"\n";
    let (_tmp, text) = plan_with(&format!("{io}label = \"../../x\"\n"));
    assert!(error(&text).message.contains("label `../../x` is not usable"));
    let (_tmp, text) = plan_with(&format!("{io}sweep = {{ iodepth = [4, 4] }}\n"));
    let e = error(&text);
    assert!(e.message.contains("repeats a value") && e.column == 25, "{e}");
    let (_tmp, text) = plan_with(&format!("{io}profile = \"sqlio\"\nsweep = {{ iodepth = [1, 4] }}\n"));
    assert!(error(&text).message.contains("`iodepth` is set by the sqlio profile set"));
    let (_tmp, text) = plan_with(&format!("{io}sweep = {{ profile = [\"sqlio\"] }}\n"));
    assert!(error(&text).message.contains("`profile` cannot be swept"));
    let (_tmp, a, _) = dirs();
    let text = format!("[[configuration]]\nname = \"a\"\ntarget = \"{a}\"\nlog_target = \"/no/logs\"\n{io}");
    let e = error(&text);
    assert_eq!((e.line, e.column), (4, 14), "{e}");
}

#[test]
fn targets_are_made_absolute_and_the_method_is_checked_after_overrides() {
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"io\"\n");
    let plan = parse("plan.toml", &text).unwrap();
    assert!(plan.configurations.iter().all(|c| c.target.is_absolute()));
    let quick = parse("quick", QUICK_PLAN).unwrap();
    assert_eq!(quick.configurations[0].target, std::env::current_dir().unwrap().canonicalize().unwrap());
    let bad = Method { window: Some("steady".into()), ..Method::default() };
    assert_eq!(plan.method.clone().overridden_by(&bad).check().unwrap_err().0, "window");
    let none = Method { repetitions: Some(0), ..Method::default() };
    assert_eq!(plan.method.overridden_by(&none).check().unwrap_err().0, "repetitions");
}

#[test]
fn a_sweep_over_targets_uses_more_databases() {
    let (tmp, a, _) = dirs();
    let text = format!(
        "[[configuration]]\nname = \"a\"\ntarget = \"{a}\"\nurl = [\"postgres://h1/d\", \"postgres://h2/d\"]\n\
         [[workload]]\nkind = \"oltp\"\nsweep = {{ targets = [1, 2] }}\n\
         [[workload]]\nkind = \"mailbox\"\nsweep = {{ targets = [1, 4] }}\n[method]\nrepetitions = 1\n"
    );
    let plan = parse("plan.toml", &text).unwrap();
    let shapes: Vec<String> = runs(&plan)
        .iter()
        .map(|r| match (r.args.get::<OltpJob>(), r.args.get::<MailboxJob>()) {
            (Some(o), _) => format!("{} urls", o.options.url.len()),
            (_, Some(m)) => format!("{} databases", m.options.databases.unwrap()),
            _ => String::new(),
        })
        .collect();
    assert_eq!(shapes, ["1 urls", "2 urls", "1 databases", "4 databases"]);
    assert!(runs(&plan)[1].id.ends_with(".targets-2.r1"));
    let io = format!(
        "[[configuration]]\nname = \"a\"\ntarget = \"{a}\"\n[[workload]]\nkind = \"io\"\nsweep = {{ targets = [1, 2] }}\n"
    );
    let e = error(&io);
    assert!(e.message.contains("an io workload has one target"), "{e}");
    assert!(e.hint.as_deref().is_some_and(|h| h.contains("(oltp, mailbox)")), "{e}");
    let zero = text.replace("targets = [1, 4]", "targets = [0]");
    assert!(error(&zero).message.contains("at least 1"));
    drop(tmp);
}

#[test]
fn a_plan_error_on_a_url_line_shows_the_line_with_its_password_hidden() {
    let (_tmp, a, _) = dirs();
    let text = format!(
        "[[configuration]]\nname = \"a\"\ntarget = \"{a}\"\nurl = [\"postgres://u:Vb3-plan-pw@db/x\", 7]\n"
    );
    let e = error(&text);
    assert_eq!(e.line, 4, "{e}");
    let shown = e.to_string();
    assert!(!shown.contains("Vb3-plan-pw"), "{shown}");
    assert!(shown.contains("postgres://u:***@db/x"), "{shown}");
    // The caret still points at the value in the line as shown.
    let lines: Vec<&str> = shown.lines().collect();
    let caret = lines.iter().position(|l| l.trim_end().ends_with('^')).unwrap();
    let at = lines[caret].find('^').unwrap();
    assert!(lines[caret - 1][at..].starts_with('7'), "{shown}");
}

#[test]
fn the_help_text_names_each_method_default_that_the_runner_uses() {
    use clap::Args;
    let cmd = Method::augment_args(clap::Command::new("run"));
    let help = |id: &str| {
        let arg = cmd.get_arguments().find(|a| a.get_id() == id).expect(id);
        arg.get_help().map(|h| h.to_string()).unwrap_or_default()
    };
    for (id, default) in
        [("idle_settle", Method::IDLE_SETTLE), ("idle_power", Method::IDLE_POWER), ("round", Method::ROUND)]
    {
        let text = help(id);
        let shown = text.split("Default: ").nth(1).and_then(|t| t.split([' ', '.', ';']).next());
        let parsed = shown.and_then(|t| humantime::parse_duration(t).ok());
        assert_eq!(parsed, Some(default), "--{id}'s help must name the default the runner uses: {text}");
    }
    let rule = storbench_bench::run::Rule::SNIA_PTS;
    let steady = format!(
        "{} rounds within {} % of their mean, fitted slope within {} %), at most --measure or {} rounds",
        rule.window,
        rule.max_range_pct,
        rule.max_slope_pct,
        storbench_bench::run::Rule::SNIA_PTS_MAX_ROUNDS
    );
    assert!(
        help("window").split_whitespace().collect::<Vec<_>>().join(" ").contains(&steady),
        "{}",
        help("window")
    );
}

/// The durations a help text (or a comment made of it) names after "Default:", in order.
fn defaults_named(text: &str) -> Vec<std::time::Duration> {
    let flat = text.split_whitespace().collect::<Vec<_>>().join(" ");
    let sentence = flat.split("Default: ").nth(1).and_then(|t| t.split(". ").next()).unwrap_or_default();
    sentence
        .split([' ', ',', ';', '.'])
        .filter(|w| w.starts_with(|c: char| c.is_ascii_digit()))
        .filter_map(|w| humantime::parse_duration(w).ok())
        .collect()
}

/// The help text of option `id` of `T`.
fn help_of<T: clap::Args>(id: &str) -> String {
    let cmd = T::augment_args(clap::Command::new("t"));
    let arg = cmd.get_arguments().find(|a| a.get_id() == id).expect(id);
    arg.get_long_help().or(arg.get_help()).map(|h| h.to_string()).unwrap_or_default()
}

/// The comment `plan init` writes above `key` in the part of the example that starts at `part`.
fn init_comment(example: &str, part: &str, key: &str) -> String {
    let from = &example[example.find(part).expect(part)..];
    let block = &from[..from.find(&format!("\n# {key} = ")).expect(key)];
    let comment = block.rsplit("\n\n").next().unwrap_or_default();
    comment.lines().map(|l| l.trim_start_matches('#')).collect::<Vec<_>>().join(" ")
}

#[test]
fn the_help_text_plan_init_and_the_eta_name_each_workload_default_that_validation_uses() {
    use crate::args::integrity::IntegrityArgs;
    use crate::args::mailbox::MailboxArgs;
    use crate::args::oltp::OltpRunArgs;
    use crate::subcommand::io::args::IoArgs;
    use storbench_bench::workload::integrity::IntegrityOptions;
    let example = init::example();
    let kinds = [
        ("io", help_of::<IoArgs> as fn(&str) -> String),
        ("oltp", help_of::<OltpRunArgs>),
        ("mailbox", help_of::<MailboxArgs>),
        ("integrity", help_of::<IntegrityArgs>),
    ];
    let options: [(&str, &str, &[std::time::Duration]); 9] = [
        ("io", "runtime", &[IoOptions::RUNTIME]),
        ("io", "ramp", &[IoOptions::RAMP]),
        ("oltp", "run_time", &[OltpOptions::RUN_TIME]),
        ("oltp", "warmup_time", &[OltpOptions::WARMUP_TIME]),
        ("oltp", "settle_time", &[OltpRunArgs::SETTLE_TIME]),
        ("mailbox", "duration", &[MailboxOptions::DURATION, MailboxOptions::STRESS_DURATION]),
        ("mailbox", "max_warmup", &[MailboxOptions::MAX_WARMUP]),
        ("integrity", "duration", &[IntegrityOptions::DURATION]),
        ("integrity", "delay_threshold", &[IntegrityOptions::DELAY_THRESHOLD]),
    ];
    for (kind, id, defaults) in options {
        let help = kinds.iter().find(|(k, _)| *k == kind).map(|(_, help)| help(id)).unwrap();
        assert_eq!(defaults_named(&help), defaults, "{kind} {id}'s help must name its default: {help}");
        let part = format!("kind = \"{kind}\" workload");
        let comment = init_comment(&example, &part, id);
        assert_eq!(defaults_named(&comment), defaults, "plan init's {kind} {id}: {comment}");
    }
    let (_tmp, text) = plan_with(
        "[[workload]]\nkind = \"io\"\n[[workload]]\nkind = \"oltp\"\n[[workload]]\nkind = \"mailbox\"\n\
         [[workload]]\nkind = \"mailbox\"\ntest = \"stress\"\n[[workload]]\nkind = \"integrity\"\n",
    );
    let plan = parse("plan.toml", &text).unwrap();
    let expected: Vec<std::time::Duration> = runs(&plan)
        .iter()
        .filter(|r| r.configuration == 0 && r.repetition == 1)
        .map(|r| r.expected)
        .collect();
    // The ETA counts half the mailbox's warm-up limit: its caches usually fill well before.
    assert_eq!(
        expected,
        [
            IoOptions::RUNTIME + IoOptions::RAMP,
            OltpOptions::RUN_TIME + OltpOptions::WARMUP_TIME,
            MailboxOptions::DURATION + MailboxOptions::MAX_WARMUP / 2,
            MailboxOptions::STRESS_DURATION + MailboxOptions::MAX_WARMUP / 2,
            IntegrityOptions::DURATION,
        ]
    );
}

#[test]
fn the_io_steady_state_help_names_the_snia_rule_the_runner_applies() {
    let rule = storbench_bench::run::Rule::SNIA_PTS;
    let help = help_of::<crate::subcommand::io::args::IoArgs>("steady_state")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    for said in [
        format!(
            "the last {} rounds' IOPS must lie within {} % of their mean",
            rule.window, rule.max_range_pct
        ),
        format!("at most {} % of the mean", rule.max_slope_pct),
        format!("(default: {} rounds)", storbench_bench::run::Rule::SNIA_PTS_MAX_ROUNDS),
        format!("reports its last {} rounds", rule.window),
    ] {
        assert!(help.contains(&said), "--steady-state's help must say {said:?}: {help}");
    }
}

#[test]
fn a_workloads_own_message_names_plan_keys_where_it_named_flags_but_leaves_quoted_commands() {
    let said = "--bs 1000 is not a multiple of the 512-byte sector; pass --buffered, or check with \
                `storbench io --target x --buffered`; --no-such-flag stays";
    assert_eq!(
        in_plan_terms(said),
        "bs 1000 is not a multiple of the 512-byte sector; pass buffered, or check with \
         `storbench io --target x --buffered`; --no-such-flag stays"
    );
    assert_eq!(in_plan_terms("--n-threads 0: --pct-newcustomers"), "n_threads 0: pct_newcustomers");
    assert_eq!(in_plan_terms("--mailbox-size and --log-target"), "mailbox_size and log_target");
}

#[test]
fn two_configurations_on_one_directory_however_spelled_are_refused() {
    let (tmp, a, b) = dirs();
    let link = tmp.path().join("link-to-a");
    std::os::unix::fs::symlink(&a, &link).unwrap();
    let spellings = [format!("{a}/"), format!("{a}/../a/."), link.display().to_string()];
    for second in spellings {
        let text = format!(
            "name = \"t\"\n[[configuration]]\nname = \"x\"\ntarget = \"{a}\"\n[[configuration]]\nname = \"y\"\ntarget = \"{second}\"\n[[workload]]\nkind = \"io\"\n"
        );
        let e = error(&text);
        assert!(
            e.message.contains("configuration `y`'s target")
                && e.message.contains("same place as configuration `x`'s"),
            "{second}: {e}"
        );
        assert_eq!(e.line, 7, "{second}: points at y's target");
    }
    // A log target on another configuration's target is the same storage too.
    let text = format!(
        "name = \"t\"\n[[configuration]]\nname = \"x\"\ntarget = \"{a}\"\n[[configuration]]\nname = \"y\"\ntarget = \"{b}\"\nlog_target = \"{a}\"\n[[workload]]\nkind = \"io\"\n"
    );
    assert!(error(&text).message.contains("configuration `y`'s log_target"), "{}", error(&text));
    // One configuration's databases and logs in one place stay allowed.
    let text = format!(
        "name = \"t\"\n[[configuration]]\nname = \"x\"\ntarget = \"{a}\"\nlog_target = \"{a}\"\n[[workload]]\nkind = \"io\"\n"
    );
    assert!(parse("plan.toml", &text).is_ok());
}

/// The text a help names after "Default: " up to the sentence's end.
fn default_said(help: &str) -> Option<String> {
    let flat = help.split_whitespace().collect::<Vec<_>>().join(" ");
    flat.split("Default: ")
        .nth(1)
        .map(|t| t.trim_end_matches('.').split(". ").next().unwrap_or(t).to_string())
}

/// The default clap fills in for option `id` of `T` when it is not given.
fn clap_default<T: clap::Args>(id: &str) -> Option<String> {
    let cmd = T::augment_args(clap::Command::new("t"));
    let arg = cmd.get_arguments().find(|a| a.get_id() == id).expect(id);
    arg.get_default_values().first().map(|v| v.to_string_lossy().into_owned())
}

#[test]
fn the_seed_shape_and_size_defaults_are_each_defined_once_and_named_wherever_users_read_them() {
    use crate::args::integrity::IntegrityArgs;
    use crate::args::mailbox::MailboxArgs;
    use crate::args::oltp::{OltpFidelityArgs, OltpGenArgs, OltpLoadArgs, OltpRunArgs};
    use crate::subcommand::io::args::IoArgs;
    use storbench_bench::rng::DEFAULT_SEED;
    let seed = DEFAULT_SEED.to_string();
    let example = init::example();
    let said = [
        ("io", "rw", help_of::<IoArgs>("rw"), IoOptions::RW.to_string()),
        ("io", "bs", help_of::<IoArgs>("bs"), IoOptions::BS.to_string()),
        ("io", "iodepth", help_of::<IoArgs>("iodepth"), IoOptions::IODEPTH.to_string()),
        ("io", "seed", help_of::<IoArgs>("seed"), seed.clone()),
        ("oltp", "seed", help_of::<OltpRunArgs>("seed"), seed.clone()),
        ("oltp", "db_size", help_of::<OltpRunArgs>("db_size"), OltpOptions::DB_SIZE.to_string()),
        ("mailbox", "seed", help_of::<MailboxArgs>("seed"), seed.clone()),
        ("integrity", "seed", help_of::<IntegrityArgs>("seed"), seed.clone()),
    ];
    for (kind, id, help, default) in &said {
        assert_eq!(default_said(help).as_ref(), Some(default), "{kind} --{id}'s help: {help}");
        let comment = init_comment(&example, &format!("kind = \"{kind}\" workload"), id);
        assert_eq!(default_said(&comment).as_ref(), Some(default), "plan init's {kind} {id}: {comment}");
    }
    assert_eq!(default_said(&help_of::<Method>("seed")).as_deref(), Some(seed.as_str()), "[method] seed");
    // The commands whose clap fills the default in show it as clap does.
    for (command, value) in [
        (clap_default::<OltpGenArgs>("seed"), &seed),
        (clap_default::<OltpLoadArgs>("seed"), &seed),
        (clap_default::<OltpFidelityArgs>("seed"), &seed),
        (clap_default::<OltpGenArgs>("db_size"), &OltpOptions::DB_SIZE.to_string()),
        (clap_default::<OltpLoadArgs>("db_size"), &OltpOptions::DB_SIZE.to_string()),
        (clap_default::<OltpFidelityArgs>("db_size"), &OltpOptions::DB_SIZE.to_string()),
    ] {
        assert_eq!(command.as_ref(), Some(value));
    }
    // What validation and the evaluation's labels make of a job that sets nothing.
    let io = IoJob::default();
    let job = &crate::subcommand::io::validate::validate(&io).unwrap().jobs[0].spec;
    assert_eq!((job.iodepth, job.seed, job.reads), (IoOptions::IODEPTH, DEFAULT_SEED, Share::READS));
    assert_eq!(
        job.block_sizes.max(),
        IoOptions::BS.parse::<crate::subcommand::io::args::BlockSizes>().unwrap().mix.max()
    );
    assert_eq!(job.name, format!("{}-{}-qd{}", IoOptions::RW, IoOptions::BS, IoOptions::IODEPTH));
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"io\"\n");
    let plan = parse("plan.toml", &text).unwrap();
    assert_eq!(
        plan.workloads[0].label,
        format!("io-{}-{}-qd{}", IoOptions::RW, IoOptions::BS, IoOptions::IODEPTH)
    );
    assert_eq!(plan.method.seed.unwrap_or(DEFAULT_SEED), DEFAULT_SEED);
}

/// The plan-wide workloads below, with `set` lines added to configuration `b`.
fn plan_with_set(set: &str) -> (tempfile::TempDir, String) {
    let (tmp, a, b) = dirs();
    let text = format!(
        "name = \"t\"\n[[configuration]]\nname = \"a\"\ntarget = \"{a}\"\n[[configuration]]\nname = \"b\"\ntarget = \"{b}\"\n{set}\n\
         [[workload]]\nkind = \"oltp\"\nn_threads = 17\n\
         [[workload]]\nkind = \"mailbox\"\nlabel = \"mail\"\nmailboxes = 500\nsweep = {{ threads = [1, 2] }}\n\
         [[workload]]\nkind = \"io\"\nprofile = \"sqlio\"\nruntime = \"30s\"\n"
    );
    (tmp, text)
}

#[test]
fn a_configuration_sets_workload_keys_of_its_own_by_kind_or_label() {
    let (_tmp, text) = plan_with_set(
        "set.oltp = { n_threads = 73 }\nset.mailbox = { mailboxes = 540 }\nset.mail = { mailboxes = 550 }\nset.io = { runtime = \"5s\" }",
    );
    let plan = parse("plan.toml", &text).unwrap();
    let all = runs(&plan);
    let on = |ci: usize, label: &str| -> Vec<&super::expand::PlannedRun> {
        all.iter()
            .filter(|r| r.configuration == ci && r.workload.starts_with(label) && r.repetition == 1)
            .collect()
    };
    let threads = |r: &super::expand::PlannedRun| r.args.get::<OltpJob>().and_then(|a| a.options.n_threads);
    assert_eq!((threads(on(0, "oltp")[0]), threads(on(1, "oltp")[0])), (Some(17), Some(73)));
    assert!(plan.configurations[0].own_values.is_empty());
    assert_eq!(
        plan.configurations[1].own_values,
        ["io: runtime = \"5s\"", "mail: mailboxes = 550", "mailbox: mailboxes = 540", "oltp: n_threads = 73"]
    );
    // By label over kind, at every point of the sweep, which keeps its own values.
    for (ci, mailboxes) in [(0, 500), (1, 550)] {
        let points: Vec<(Option<u64>, Option<u32>)> = on(ci, "mail")
            .iter()
            .map(|r| {
                r.args.get::<MailboxJob>().map_or((None, None), |a| (a.options.mailboxes, a.options.threads))
            })
            .collect();
        assert_eq!(points, [(Some(mailboxes), Some(1)), (Some(mailboxes), Some(2))], "configuration {ci}");
    }
    // Every job of a profile set, and the ETA, take a configuration's own runtime.
    let sqlio_b = on(1, "sqlio");
    assert_eq!(sqlio_b.len(), 6);
    for r in sqlio_b {
        let a = &r.args.get::<IoJob>().expect(&r.id).options;
        assert_eq!(a.runtime.map(|s| s.0), Some(std::time::Duration::from_secs(5)));
        assert_eq!(r.expected, std::time::Duration::from_secs(5) + IoOptions::RAMP, "{}", r.id);
        assert!(a.rw.is_some() && a.bs.is_some(), "the profile's own job: {a:?}");
    }
    assert_eq!(on(0, "sqlio")[0].expected, std::time::Duration::from_secs(30) + IoOptions::RAMP);
}

#[test]
fn a_configurations_own_values_are_checked_as_the_workloads_and_located() {
    let cases = [
        ("set.oltpp = { n_threads = 2 }", "`set.oltpp` names no workload of the plan", "oltp, mail, mailbox"),
        (
            "set.oltp = { n_thread = 2 }",
            "an oltp workload: unknown key `n_thread`",
            "did you mean `n_threads`?",
        ),
        ("set.oltp = { kind = \"io\" }", "`kind` cannot be set per configuration", "kind, label, sweep"),
        ("set.mail = { threads = 4 }", "`threads` cannot be set per configuration", "threads"),
        ("set.io = { bs = \"64k\" }", "`bs` cannot be set per configuration", "rw, bs, iodepth"),
        ("set.oltp = { url = [\"postgres://x@h/d\"] }", "`url` is not a workload key", "configuration"),
        ("set.oltp = { n_threads = \"many\" }", "an oltp workload", "numbers"),
        ("set = 3", "set must be a table", ""),
    ];
    for (set, message, hint) in cases {
        let (_tmp, text) = plan_with_set(set);
        let e = error(&text);
        assert!(e.message.contains(message), "{set}: {e}");
        assert!(e.hint.as_deref().unwrap_or_default().contains(hint), "{set}: {e}");
        assert_eq!(e.line, 8, "{set}: points at the configuration's `set` line: {e}");
    }
}

#[test]
fn a_plans_rw_and_bs_are_checked_as_they_are_read_and_a_bad_one_names_the_key_and_the_choices() {
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"io\"\nrw = \"randomread\"\n");
    let e = error(&text);
    assert!(e.message.contains("unknown rw 'randomread'; use read, write, randread"), "{e}");
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"io\"\nbs = \"4k/60:64k\"\n");
    assert!(error(&text).message.contains("each part of a mix is SIZE/WEIGHT"), "{}", error(&text));
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"io\"\nrw = \"readwrite\"\nbs = \"4k/60:64k/40\"\n");
    let plan = parse("p", &text).unwrap();
    let a = runs(&plan)[0].args.get::<IoJob>().cloned().expect("an io workload").options;
    assert_eq!(
        (a.rw, a.bs.map(|b| b.to_string())),
        (Some(crate::subcommand::io::args::Rw::Mixed), Some("4k/60:64k/40".into()))
    );
}

/// A plan of `configurations` (TOML, `@A` and `@B` standing for two directories) and one io
/// workload.
fn plan_of(configurations: &str) -> (tempfile::TempDir, String) {
    let (tmp, a, b) = dirs();
    let configurations = configurations.replace("@A", &a).replace("@B", &b);
    (tmp, format!("name = \"t\"\n{configurations}[[workload]]\nkind = \"io\"\n"))
}

#[test]
fn a_condition_defaults_to_normal_or_its_streams_and_a_storage_to_the_first_on_its_target() {
    let (_tmp, text) = plan_of(
        "[[configuration]]\nname = \"ssd\"\ntarget = \"@A\"\n\
         [[configuration]]\nname = \"ssd-bg\"\ntarget = \"@A/.\"\nbackground = [\"io:rate=40MiB\"]\n\
         [[configuration]]\nname = \"ssd-vol\"\ntarget = \"@A\"\ncondition = \"vol-rebuild\"\nbackground = [\"io:rate=40MiB\", \"io:rw=read\"]\n\
         [[configuration]]\nname = \"hdd\"\ntarget = \"@B\"\n\
         [[configuration]]\nname = \"other\"\ntarget = \"@B\"\nstorage = \"mirror\"\ncondition = \"ctlr rebuild\"\nbackground = [\"io:rate=1MiB\"]\n",
    );
    let plan = parse("plan.toml", &text).unwrap();
    let got: Vec<(&str, &str)> = plan.configurations.iter().map(|c| (c.storage(), c.condition())).collect();
    assert_eq!(
        got,
        [
            ("ssd", "normal"),
            ("ssd", "io:rate=40MiB"),
            ("ssd", "vol-rebuild"),
            ("hdd", "normal"),
            ("mirror", "ctlr rebuild")
        ]
    );
    assert!(plan.configurations.iter().all(|c| c.condition.is_some() && c.storage.is_some()));
}

#[test]
fn a_condition_or_storage_that_cannot_head_a_column_is_refused_naming_the_key() {
    let bad = [
        ("condition = \"\"", "condition is empty"),
        ("condition = \"  \"", "condition is empty"),
        ("condition = \"re\\u001bbuild\"", "condition holds a control character (U+001B)"),
        ("condition = \"a\\nb\"", "condition holds a control character (U+000A)"),
        ("storage = \"\"", "storage is empty"),
        ("condition = \"a rebuild that goes on and on for many hours\"", "condition is longer than 40"),
        ("condition = 3", "expected a string"),
    ];
    for (line, said) in bad {
        let (_tmp, text) = plan_of(&format!("[[configuration]]\nname = \"x\"\ntarget = \"@A\"\n{line}\n"));
        let e = error(&text);
        assert!(e.message.contains(said), "{line}: {e}");
        assert_eq!(e.line, 5, "{line}: points at the key's line: {e}");
        if !line.ends_with('3') {
            assert!(e.hint.as_deref().unwrap().contains("= \"rebuild\""), "{line}: says the fix: {e}");
        }
    }
}

#[test]
fn one_storage_in_one_condition_twice_is_refused_whatever_the_streams() {
    // Two rebuild rates labelled alike: the report would have two figures for one cell.
    let (_tmp, text) = plan_of(
        "[[configuration]]\nname = \"slow\"\ntarget = \"@A\"\ncondition = \"rebuild\"\nbackground = [\"io:rate=1MiB\"]\n\
         [[configuration]]\nname = \"fast\"\ntarget = \"@A\"\ncondition = \"rebuild\"\nbackground = [\"io:rate=9MiB\"]\n",
    );
    let e = error(&text);
    assert!(
        e.message
            .contains("configurations `slow` and `fast` both measure storage `slow` in condition `rebuild`"),
        "{e}"
    );
    assert_eq!(e.line, 10, "points at fast's condition: {e}");
    assert!(e.hint.as_deref().unwrap().contains("condition = \"rebuild-40MiB\""), "{e}");
    // Named as one storage on two targets, both normal: refused at the name.
    let (_tmp, text) = plan_of(
        "[[configuration]]\nname = \"a\"\ntarget = \"@A\"\nstorage = \"s\"\n\
         [[configuration]]\nname = \"b\"\ntarget = \"@B\"\nstorage = \"s\"\n",
    );
    let e = error(&text);
    assert!(e.message.contains("in condition `normal`") && e.line == 7, "{e}");
    // Apart by their conditions, the same two are fine.
    let (_tmp, text) = plan_of(
        "[[configuration]]\nname = \"a\"\ntarget = \"@A\"\nstorage = \"s\"\n\
         [[configuration]]\nname = \"b\"\ntarget = \"@B\"\nstorage = \"s\"\ncondition = \"degraded\"\n",
    );
    assert!(parse("plan.toml", &text).is_ok());
}

#[test]
fn a_workload_searches_with_the_command_lines_keys_and_a_search_it_cannot_run_is_refused_at_its_line() {
    let io = "[[workload]]\nkind = \"io\"\nengine = \"null\"\nramp = 0\nruntime = \"0.3s\"\n";
    let searched = format!(
        "{io}search = \"iodepth\"\nlatency_limit = [\"p99<=50ms\", \"read:mean<=5ms\"]\nsearch_step_time = \"0.2s\"\n"
    );
    let (_tmp, text) = plan_with(&searched);
    let plan = parse("plan.toml", &text).unwrap();
    let w = &plan.workloads[0];
    assert_eq!(w.label, "io-randread-4k-iodepth-search", "the searched depth is not in the label");
    let s = w.search.as_ref().expect("a search");
    assert_eq!(s.search, Some(storbench_bench::run::search::Load::Iodepth));
    let limits: Vec<String> = s.latency_limit.iter().map(ToString::to_string).collect();
    assert_eq!(limits, ["p99<=50ms", "read:mean<=5ms"]);
    let all = runs(&plan);
    assert!(all.iter().all(|r| r.search.is_some()));
    // The ETA counts the search at its longest: 12 steps of 0.2 s, 2 confirmations of 0.3 s.
    assert_eq!(all[0].expected, std::time::Duration::from_millis(12 * 200 + 2 * 300));
    let one = format!("{io}search = \"threads\"\nlatency_limit = \"p99<=1s\"\n");
    assert_eq!(
        parse("plan.toml", &plan_with(&one).1).unwrap().workloads[0]
            .search
            .as_ref()
            .unwrap()
            .latency_limit
            .len(),
        1
    );

    // Each refusal: the workloads' line it points at (the table starts at line 8) and its words.
    let refused = |workloads: &str, line: u32, words: &str| {
        let e = error(&plan_with(workloads).1);
        assert!(
            e.message.contains(words) || e.hint.as_deref().is_some_and(|h| h.contains(words)),
            "{words}: {e}"
        );
        assert_eq!(e.line, line, "{words}: {e}");
    };
    refused(&format!("{io}search = \"depth\"\nlatency_limit = \"p99<=1s\"\n"), 13, "unknown variant `depth`");
    refused(&format!("{io}search = \"iodepth\"\nlatency_limit = \"p99<5ms\"\n"), 14, "e.g. p99<=50ms");
    refused(&format!("{io}search = \"iodepth\"\nlatency_limit = 5\n"), 14, "or a list of them");
    refused(&format!("{io}search = \"iodepth\"\n"), 13, "`search` needs a `latency_limit`");
    refused(&format!("{io}latency_limit = \"p99<=1s\"\n"), 13, "`latency_limit` needs `search`");
    refused(
        &format!("{io}search = \"iodepth\"\nlatency_limit = \"trim:p99<=5ms\"\n"),
        14,
        "io has no request type `trim`",
    );
    refused(
        &format!("{io}io_size = \"4k\"\nsearch = \"iodepth\"\nlatency_limit = \"p99<=1s\"\n"),
        14,
        "drop io_size",
    );
    let oltp = "[[workload]]\nkind = \"oltp\"\nsearch = \"iodepth\"\nlatency_limit = \"p99<=50ms\"\n";
    refused(oltp, 10, "oltp has no such load; it has threads");
    let integrity =
        "[[workload]]\nkind = \"integrity\"\nsearch = \"threads\"\nlatency_limit = \"p99<=50ms\"\n";
    refused(integrity, 10, "search works on io, oltp, mailbox, replay or wal workloads");
    let swept = format!("{io}sweep = {{ search = [\"iodepth\"] }}\n");
    refused(&swept, 13, "`search` cannot be swept");
    let required = format!("{io}[requirements]\n\"io.search_load\" = \">= 4\"\n");
    refused(&required, 14, "io runs no search");
    let (_tmp, text) = plan_with_set("set.io = { latency_limit = \"p99<=1s\" }");
    let e = error(&text);
    assert!(e.message.contains("`latency_limit` cannot be set per configuration"), "{e}");
    assert!(crate::plan::init::example().contains("# latency_limit = <LIMIT>"), "plan init lists the keys");
}

/// The field names a serde struct deserializes, asked of its `Deserialize` impl.
fn serde_fields<T: serde::de::DeserializeOwned>() -> Vec<&'static str> {
    use serde::de::{Error, Visitor, value};
    struct Ask(Vec<&'static str>);
    impl<'de> serde::Deserializer<'de> for &mut Ask {
        type Error = value::Error;
        fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, value::Error> {
            Err(value::Error::custom("not a struct"))
        }
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _: &'static str,
            fields: &'static [&'static str],
            _: V,
        ) -> Result<V::Value, value::Error> {
            self.0 = fields.to_vec();
            Err(value::Error::custom("fields taken"))
        }
        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf option
            unit unit_struct newtype_struct seq tuple tuple_struct map enum identifier ignored_any
        }
    }
    let mut ask = Ask(Vec::new());
    let _ = T::deserialize(&mut ask);
    ask.0
}

/// The flags of `F` are the keys of the library's options `O`, no more and no fewer.
fn flags_are_keys<F: clap::Args, O: serde::de::DeserializeOwned>(at_least: usize) {
    let mut flags = table::keys_of::<F>(&table::NOT_PLAN_KEYS);
    let mut keys: Vec<String> = serde_fields::<O>().into_iter().map(String::from).collect();
    flags.sort();
    keys.sort();
    assert!(keys.len() >= at_least, "{keys:?}");
    assert_eq!(flags, keys, "{}", std::any::type_name::<O>());
}

#[test]
fn every_replay_trace_flag_is_a_key_of_the_librarys_options_and_a_plan_table_reaches_them() {
    use storbench_bench::blocktrace::options::ReplayTraceOptions;
    flags_are_keys::<crate::args::trace::ReplayTraceArgs, ReplayTraceOptions>(10);
    let (_tmp, text) =
        plan_with("[[workload]]\nkind = \"replay-trace\"\ntrace = \"t.sbtrace\"\nfast = true\niodepth = 8\n");
    let plan = parse("p.toml", &text).unwrap();
    let job = runs(&plan)[0].args.get::<crate::args::trace::ReplayTraceJob>().unwrap().clone();
    assert_eq!((job.options.fast, job.options.iodepth), (true, Some(8)));
    assert_eq!(job.options.trace, std::path::Path::new("t.sbtrace"));
    // A plan meets the same refusals as the flags: a depth without fast.
    let (_tmp, text) =
        plan_with("[[workload]]\nkind = \"replay-trace\"\ntrace = \"t.sbtrace\"\niodepth = 8\n");
    let job = runs(&parse("p.toml", &text).unwrap())[0].args.clone();
    let e = job.check().unwrap_err().to_string();
    assert!(e.contains("--iodepth 8 is for --fast"), "{e}");
}

#[test]
fn every_integrity_flag_but_the_crash_cycles_is_a_key_of_the_librarys_options() {
    use storbench_bench::workload::integrity::{IntegrityOptions, IntegrityPreset};
    flags_are_keys::<crate::args::integrity::IntegrityArgs, IntegrityOptions>(20);
    let (_tmp, text) =
        plan_with("[[workload]]\nkind = \"integrity\"\npreset = \"big\"\nengine = \"psync\"\nkeep = true\n");
    let job = runs(&parse("p.toml", &text).unwrap())[0]
        .args
        .get::<crate::args::integrity::IntegrityJob>()
        .unwrap()
        .clone();
    assert_eq!(job.options.preset, Some(IntegrityPreset::Big));
    assert_eq!(job.options.engine, Some(storbench_bench::engine::EngineKind::Psync));
    assert!(job.options.keep && job.cli.crash_after.is_none());
}

#[test]
fn every_mailbox_flag_is_a_key_of_the_librarys_options_and_a_plan_table_reaches_them() {
    use storbench_bench::workload::mailbox::TestType;
    flags_are_keys::<crate::args::mailbox::MailboxArgs, MailboxOptions>(30);
    let (_tmp, text) = plan_with(
        "[[workload]]\nkind = \"mailbox\"\ntest = \"soft_recovery\"\nengine = \"psync\"\nlog_files = 3\n",
    );
    let job = runs(&parse("p.toml", &text).unwrap())[0].args.get::<MailboxJob>().unwrap().clone();
    assert_eq!(job.options.test, Some(TestType::SoftRecovery));
    assert_eq!(
        (job.options.engine, job.options.log_files),
        (Some(storbench_bench::engine::EngineKind::Psync), Some(3))
    );
    // The flag's spelling of the test is the key's too.
    let (_tmp, text) = plan_with("[[workload]]\nkind = \"mailbox\"\ntest = \"soft-recovery\"\n");
    assert!(parse("p.toml", &text).is_ok());
}

#[test]
fn every_replay_flag_is_a_key_of_the_librarys_options_and_a_plan_table_reaches_them() {
    use storbench_bench::workload::replay::log::Format;
    use storbench_bench::workload::replay::options::{Pacing, ReplayOptions};
    flags_are_keys::<crate::subcommand::replay::args::ReplayArgs, ReplayOptions>(20);
    let (_tmp, text) = plan_with(
        "[[workload]]\nkind = \"replay\"\nlogs = [\"a.log\"]\nformat = \"pg-csvlog\"\npath = \"shop.db\"\n\
         mode = \"time-sync\"\nspeed = 2.0\nallow_statement = [\"SET GLOBAL\"]\n",
    );
    let plan = parse("p.toml", &text).unwrap();
    let job = runs(&plan)[0].args.get::<crate::subcommand::replay::args::ReplayJob>().unwrap().clone();
    let o = &job.options;
    assert_eq!((o.format, o.pacing(), o.speed), (Some(Format::PgCsvlog), Pacing::TimeSync, Some(2.0)));
    assert_eq!(o.allow_statement, ["SET GLOBAL"]);
    assert!(o.db().path.unwrap().ends_with("shop.db"), "the SQLite file, in the configuration's target");
}

#[test]
fn every_oltp_flag_but_the_command_lines_own_is_a_key_of_the_librarys_options() {
    flags_are_keys::<crate::args::oltp::OltpRunArgs, OltpOptions>(28);
    let (_tmp, text) =
        plan_with("[[workload]]\nkind = \"oltp\"\nn_threads = 4\nrestock = \"N\"\nsteady_state = \"5s\"\n");
    let job = runs(&parse("p.toml", &text).unwrap())[0].args.get::<OltpJob>().unwrap().clone();
    assert_eq!((job.options.n_threads, job.options.restock.map(|y| y.0)), (Some(4), Some(false)));
    assert!(job.options.path.unwrap().ends_with("storbench-ds3.db"), "SQLite in the configuration's target");
    assert!(job.cli.record.is_none() && job.cli.out_filename.is_none());
}

#[test]
fn every_io_flag_but_verbose_is_a_key_of_the_librarys_options() {
    flags_are_keys::<crate::subcommand::io::args::IoArgs, IoOptions>(26);
    let (_tmp, text) = plan_with(
        "[[workload]]\nkind = \"io\"\nengine = \"psync\"\nrate_profile = [10, 20]\nfdatasync = 2.5\n",
    );
    let job = runs(&parse("p.toml", &text).unwrap())[0].args.get::<IoJob>().unwrap().clone();
    assert_eq!(job.options.engine, Some(storbench_bench::engine::EngineKind::Psync));
    assert_eq!(job.options.rate_profile.map(|p| p.0), Some(vec![10.0, 20.0]));
    assert_eq!((job.options.fdatasync, job.cli.verbose), (Some(2.5), false));
}

#[test]
fn every_wal_flag_is_a_key_of_the_librarys_options_and_every_key_a_flag() {
    use storbench_bench::workload::wal::WalOptions;
    flags_are_keys::<crate::subcommand::wal::args::WalArgs, WalOptions>(9);
    // And a plan's wal table reaches the run as those options.
    let (_tmp, text) = plan_with(
        "[[workload]]\nkind = \"wal\"\nsync_method = \"fsync\"\nbs = \"4k\"\nwriters = 2\nruntime = 1\n",
    );
    let plan = parse("p.toml", &text).unwrap();
    let job = runs(&plan)[0].args.get::<crate::subcommand::wal::args::WalJob>().unwrap().clone();
    assert_eq!(job.options.sync_method.as_deref(), Some("fsync"));
    assert_eq!((job.options.bs.map(|b| b.0), job.options.writers), (Some(4096), Some(2)));
    let spec = job.options.spec().unwrap();
    assert_eq!((spec.sizes.as_slice(), spec.writers.as_slice()), ([4096].as_slice(), [2].as_slice()));
}

#[test]
fn the_readmes_requirements_name_labels_and_figures_its_example_plan_really_has() {
    let readme = include_str!("../../../../README.md");
    let block = |from: &str| -> &str {
        let at = readme.find(from).unwrap_or_else(|| panic!("README has no {from:?}"));
        &readme[at..at + readme[at..].find("```").unwrap()]
    };
    let (_tmp, a, b) = dirs();
    let plan = block("name = \"ssd-vs-hdd\"").replace("/mnt/ssd", &a).replace("/mnt/hdd", &b);
    let requirements = block("[requirements]             #");
    assert!(requirements.contains("\"oltp.opm\"") && requirements.contains(".iops\""), "{requirements}");
    // The example plan runs io and oltp; the requirements also judge a mailbox and an integrity run.
    let text = format!(
        "{plan}\n[[workload]]\nkind = \"mailbox\"\n[[workload]]\nkind = \"integrity\"\n{requirements}"
    );
    if let Err(e) = parse("README.md", &text) {
        panic!("README's requirements do not fit its plan: {e}");
    }
}

#[test]
fn help_prose_is_one_line_per_paragraph_for_the_terminal_to_wrap_and_examples_keep_their_lines() {
    let text = "The first line\nand its next.\n\nExamples:\n  storbench io\n  storbench run\n- a list item\nafter it";
    assert_eq!(
        crate::root::reflow(text),
        "The first line and its next.\n\nExamples:\n  storbench io\n  storbench run\n- a list item after it"
    );
    let wal = crate::root::command().find_subcommand("wal").unwrap().get_long_about().unwrap().to_string();
    assert!(
        wal.contains("a log file, each made durable") && wal.contains("\n  storbench wal --target"),
        "{wal}"
    );
}

#[test]
fn a_requirement_relative_to_a_condition_no_configuration_runs_under_is_refused_at_its_line() {
    let (_tmp, a, _b) = dirs();
    let plan = |second: &str| {
        format!(
            "[[configuration]]\nname = \"ssd\"\ntarget = \"{a}\"\n{second}\
             [[workload]]\nkind = \"io\"\nlabel = \"rr\"\n\
             [requirements]\n\"rr.iops\" = \">= 50 % of normal during vol-rebuild\"\n"
        )
    };
    let degraded = format!(
        "[[configuration]]\nname = \"ssd-rebuild\"\nstorage = \"ssd\"\ntarget = \"{a}\"\ncondition = \"vol-rebuild\"\n\
         background = [\"io:rate=10MiB\"]\n"
    );
    let p = parse("p.toml", &plan(&degraded)).unwrap();
    assert_eq!(p.requirements.len(), 1);
    let e = error(&plan(""));
    assert!(e.message.contains("no configuration runs under `vol-rebuild`"), "{e}");
    assert!(e.message.contains("the plan's conditions are normal"), "{e}");
    assert_eq!(e.line, 8, "the requirement's line: {e}");
}

#[test]
fn every_key_a_kind_offers_in_a_plan_is_one_its_options_read() {
    // A key offered (by the kind's flags) but not read by its plan type was refused as
    // "unknown field", with a hint naming the key itself (`capture`, `background_wait`).
    for kind in crate::registry::KINDS {
        let skip = [kind.reserved, &table::NOT_PLAN_KEYS].concat();
        for key in table::keys_in(&(kind.command)(), &skip) {
            let (_tmp, text) = plan_with(&format!("[[workload]]\nkind = \"{}\"\n{key} = true\n", kind.name));
            if let Err(e) = parse("p.toml", &text) {
                assert!(
                    !e.message.contains("unknown field") && !e.message.contains("unknown key"),
                    "{} offers `{key}` but does not read it: {e}",
                    kind.name
                );
            }
        }
    }
}

#[test]
fn a_plan_with_problems_in_several_tables_says_every_one_with_its_line() {
    let (_tmp, a, b) = dirs();
    let text = format!(
        "name = \"t\"\nsettings = 1\n[[configuration]]\nname = \"a\"\ntarget = \"{a}\"\ntarget_dir = \"x\"\n\
         [[configuration]]\nname = \"b\"\ntarget = \"{b}\"\n[[workload]]\nkind = \"io\"\niodepht = 4\n\
         [[workload]]\nkind = \"wal\"\n"
    );
    let e = error(&text);
    // The first problem in the plan's order, the others with it, each at its own line.
    assert_eq!((e.line, e.message.as_str()), (2, "unknown key `settings` at the top of the plan"));
    let also: Vec<(u32, &str)> = e.also().map(|p| (p.line, p.message.as_str())).collect();
    assert_eq!(also.len(), 2, "{e}");
    assert!(also[0].0 == 6 && also[0].1.contains("unknown key `target_dir`"), "{also:?}");
    assert!(also[1].0 == 12 && also[1].1.contains("unknown key `iodepht`"), "{also:?}");
    let said = e.to_string();
    assert!(said.contains("plan.toml:6:") && said.contains("plan.toml:12:"), "{said}");
    // One problem alone is said as before.
    let (_tmp, one) = plan_with("[[workload]]\nkind = \"io\"\niodepht = 4\n");
    assert!(error(&one).next.is_none());
}

#[test]
fn a_plan_error_points_at_the_line_as_written_with_its_shard_placeholder() {
    let was = r#"target = "/s{shard}" x"#;
    // `target = "/s1" x`: the x is column 22 as written, 16 as parsed (17 for shard 12).
    assert_eq!(super::parse::written_column(was, "1", 16), 22);
    assert_eq!(super::parse::written_column(was, "12", 17), 22);
    assert_eq!(super::parse::written_column(was, "1", 3), 3, "before the placeholder nothing moves");
}
