//! `cmd:COMMAND`: the user's command beside the run (`run::CommandStream`), run by `sh -c`
//! from the measured phase's start. Its program is checked before the run: one that is not
//! there or cannot be executed is refused (exit 2), since the shell would only say so once the
//! run had started.

use crate::Error;
use crate::command;
use crate::run::StopFlag;
use std::path::Path;
use std::time::Duration;

/// How long the shell may take to say whether it finds a program.
const LOOKUP_LIMIT: Duration = Duration::from_secs(5);

pub(super) fn parse(rest: &str) -> Result<String, String> {
    match rest.trim() {
        "" => Err("give the command after cmd:, e.g. cmd:btrfs replace start -B 2 /dev/loop2 /mnt".into()),
        _ => Ok(rest.into()),
    }
}

/// The command's program can start: a path to an executable regular file, or a name the shell
/// finds (on PATH, or one of its builtins). A command that begins with shell syntax (a
/// subshell, a variable) is left to the shell.
pub(super) fn check(name: &str, command: &str) -> Result<(), Error> {
    let Some(program) = program_of(command) else { return Ok(()) };
    let found = if program.contains('/') { executable(Path::new(program)) } else { shell_finds(program) };
    match found {
        true => Ok(()),
        false => refuse!(
            "background stream {name}: `{program}` cannot start: it is not installed, not on PATH or not \
             executable; install it, give its full path, or make it executable"
        ),
    }
}

/// The command's first word after any `NAME=value` assignments, when it is a plain word.
fn program_of(command: &str) -> Option<&str> {
    let word = command.split_whitespace().find(|w| !is_assignment(w))?;
    let plain = |c: char| c.is_alphanumeric() || "/._-+:@%,".contains(c);
    word.chars().all(plain).then_some(word)
}

fn is_assignment(word: &str) -> bool {
    word.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
    })
}

fn executable(path: &Path) -> bool {
    let regular = std::fs::metadata(path).is_ok_and(|m| m.is_file());
    regular && rustix::fs::access(path, rustix::fs::Access::EXEC_OK).is_ok()
}

/// Whether `sh` finds `program` as it would run it (`command -v`: PATH, builtins, keywords).
pub fn shell_finds(program: &str) -> bool {
    let spec = command::Spec::new("sh", ["-c", "command -v -- \"$1\"", "sh", program], LOOKUP_LIMIT);
    command::run(&spec, &StopFlag::new()).is_ok_and(|f| f.succeeded())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commands_program_is_its_first_plain_word_after_assignments() {
        assert_eq!(program_of("btrfs replace start -B 2 /dev/loop2 /mnt"), Some("btrfs"));
        assert_eq!(program_of("LC_ALL=C /sbin/mdadm --add /dev/md0 /dev/sdb"), Some("/sbin/mdadm"));
        assert_eq!(program_of("(cd /tmp && make)"), None, "shell syntax is left to the shell");
        assert_eq!(program_of("$HOME/bin/rebuild"), None);
    }

    #[test]
    fn a_program_that_is_missing_or_not_executable_is_refused_and_a_builtin_is_not() {
        assert!(check("bg1", "sleep 1").is_ok());
        assert!(check("bg1", "exit 3").is_ok(), "a shell builtin starts");
        let err = check("bg1", "no-such-program-storbench --now").unwrap_err().to_string();
        assert!(err.contains("bg1") && err.contains("`no-such-program-storbench` cannot start"), "{err}");
        let dir = tempfile::tempdir().unwrap();
        let script = dir.path().join("rebuild.sh");
        std::fs::write(&script, "#!/bin/sh\n").unwrap();
        let text = format!("{} --go", script.display());
        assert!(check("bg1", &text).is_err(), "not executable");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(check("bg1", &text).is_ok());
    }
}
