//! `storbench`: the command line. Exit codes: 0 ok, 1 a pass/fail check failed (such as data
//! verification), 2 an error (bad input, an unusable target), 130 interrupted (what was
//! measured is kept, marked incomplete).

/// A line on stderr for the person at the terminal. A closed stderr (`2>&1 | head -1`) is not
/// an error: the line is dropped and the run goes on, so its results are still written. Said
/// during a run, it is in the run's output.log too, and only there while a profile set or an
/// evaluation shows one line per run (`console`).
macro_rules! say {
    ($($t:tt)*) => { $crate::console::to_stderr(format_args!($($t)*)) };
}

/// A line on stderr that reaches the person even while a run's output goes only to its log
/// (a warning, the stop notice): see `console`.
macro_rules! alert {
    ($($t:tt)*) => { $crate::console::to_terminal(format_args!($($t)*)) };
}

/// A line on stdout; a reader that closed the pipe is not an error (see `say!`).
macro_rules! tell {
    ($($t:tt)*) => { $crate::console::to_stdout(format_args!($($t)*), true) };
}

/// Text on stdout with no newline added; a closed pipe is not an error.
macro_rules! tell_raw {
    ($($t:tt)*) => { $crate::console::to_stdout(format_args!($($t)*), false) };
}

mod args;
mod cluster;
mod console;
mod live;
mod measure;
mod output;
mod plan;
mod power;
mod preflight;
mod registry;
mod root;
mod search;
mod shard;
mod subcommand;

use clap::FromArgMatches;
use storbench_bench::run::StopFlag;

fn main() {
    exit(real_main());
}

/// Ends the process: every outside command still running (a power meter's, a crash cycle's
/// writer and command) is ended with it, and everything each started.
fn exit(code: i32) -> ! {
    power::stop();
    storbench_bench::command::end_all();
    std::process::exit(code)
}

fn real_main() -> i32 {
    quiet_panics();
    let given: Vec<std::ffi::OsString> = std::env::args_os().collect();
    remember_secrets(&given);
    let argv = match args::oltp::expand_config_files(given) {
        Ok(argv) => argv,
        Err(e) => {
            say!("error: {e}");
            return 2;
        }
    };
    remember_secrets(&argv);
    let argv = match shard::prepare(argv) {
        Ok(argv) => argv,
        Err(e) => {
            say!("error: {e}");
            return 2;
        }
    };
    let matched = root::command().try_get_matches_from(argv);
    let listen = matched.as_ref().ok().and_then(metrics_listen);
    let invoked = match matched.and_then(|m| invoked(&m)) {
        Ok(invoked) => invoked,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { 2 } else { 0 };
        }
    };
    if let Some(spec) = invoked.0.power()
        && let Err(e) = power::start(spec)
    {
        say!("error: {}", output::reason(&e));
        return 2;
    }
    if let Some(addr) = listen
        && let Err(e) = live::serve(&addr)
    {
        say!("error: {e}");
        return 2;
    }
    let stop = StopFlag::new();
    on_interrupt(stop.clone());
    // An evaluation's targets and workloads come from its plan: a remedy names the plan's key.
    let how: &dyn Fn(_) -> String = if ["run", "plan"].contains(&invoked.1.as_str()) {
        &plan::configuration::key_for
    } else {
        &output::flag_for
    };
    let result = invoked.0.run(&stop);
    match result {
        Ok(storbench_bench::run::Ending::Ok) => 0,
        Ok(storbench_bench::run::Ending::CheckFailed) => 1,
        Ok(storbench_bench::run::Ending::Interrupted) => {
            say!("interrupted: the bundle keeps what was measured (summary.json has \"complete\": false)");
            130
        }
        Ok(storbench_bench::run::Ending::InterruptedKeeping(kept)) => {
            say!("interrupted: {kept}");
            130
        }
        Ok(storbench_bench::run::Ending::InterruptedBeforeRun) => {
            say!("interrupted before the run started: nothing was measured");
            130
        }
        Err(e) => {
            say!("error: {}", output::reason_worded(&e, how));
            2
        }
    }
}

/// The command line parsed, ready to run, and its subcommand's name: a workload's through
/// its registry entry, the others (run, plan, report...) here.
fn invoked(m: &clap::ArgMatches) -> Result<(Box<dyn registry::kind::Invoked>, String), clap::Error> {
    let name = m.subcommand_name().unwrap_or_default().to_string();
    let invoked = match registry::invoked(m) {
        Some(kind) => kind?,
        None => Box::new(root::Cli::from_arg_matches(m)?.command),
    };
    Ok((invoked, name))
}

/// `--metrics-listen` wherever the command line has it: a measuring command's output options
/// (`io`, `oltp run`, ...) or `run`'s, however deep its subcommand.
fn metrics_listen(m: &clap::ArgMatches) -> Option<String> {
    match m.try_get_one::<String>("metrics_listen") {
        Ok(Some(addr)) => Some(addr.clone()),
        _ => m.subcommand().and_then(|(_, sub)| metrics_listen(sub)),
    }
}

impl registry::kind::Invoked for root::Command {
    fn power(&self) -> Option<Option<&str>> {
        None
    }

    fn run(self: Box<Self>, stop: &StopFlag) -> anyhow::Result<storbench_bench::run::Ending> {
        match *self {
            root::Command::Run(a) => subcommand::evaluation::run(&a, stop),
            root::Command::Plan(c) => subcommand::plan::run(c),
            root::Command::Report(a) => subcommand::report::run(&a),
            root::Command::Compare(a) => subcommand::compare::run(&a),
            root::Command::Summarize(a) => subcommand::summarize::run(&a),
            root::Command::Merge(a) => subcommand::merge::run(&a),
            root::Command::Capture(a) => subcommand::trace::capture(&a, stop),
            root::Command::Fingerprint(a) => subcommand::trace::fingerprint(&a),
            root::Command::Decide(a) => subcommand::decide::run(&a),
        }
    }
}

/// Before anything can echo them: every password in a URL storbench is handed (--url,
/// --power, a config file's lines) or in the variables it reads them from is hidden from
/// then on, wherever it turns up.
fn remember_secrets(argv: &[std::ffi::OsString]) {
    for arg in argv {
        storbench_bench::secret::remember_in(&arg.to_string_lossy());
    }
    for var in ["PGPASSWORD", "MYSQL_PWD", "STORBENCH_REDFISH_PASSWORD"] {
        if let Ok(password) = std::env::var(var) {
            storbench_bench::secret::remember(&password);
        }
    }
}

/// First Ctrl-C (or SIGTERM/SIGHUP): stop the run and keep its results. Second: quit now.
fn on_interrupt(stop: StopFlag) {
    let _ = ctrlc::set_handler(move || {
        if stop.is_stopped() {
            exit(130);
        }
        alert!("\nstopping; keeping what was measured (press Ctrl-C again to quit at once)");
        stop.stop();
    });
}

/// A panic is a bug: say so in one line, without a backtrace, and exit 2.
fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info.location().map(|l| format!(" at {}:{}", l.file(), l.line())).unwrap_or_default();
        alert!("error: internal error{at}: {msg}. This is a bug in storbench; please report it.");
        exit(2);
    }));
}
