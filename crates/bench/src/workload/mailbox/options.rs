//! The mailbox workload's options as a user gives them, in a plan's workload table or as
//! `storbench mailbox`'s flags (the command line converts its flags into this type): each
//! absent one takes the default of the Jetstress generation (`preset`) or of the test. The
//! command line validates them into a run plan against the machine (capacity, memory).

use super::TestType;
use crate::engine::EngineKind;
use crate::units::{ByteSize, Seconds};
use serde::Deserialize;
use std::path::PathBuf;
use std::time::Duration;

/// The keys of a mailbox workload. Their help is `storbench mailbox --help`'s, one flag per
/// key (target and log_target are a plan configuration's).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MailboxOptions {
    pub target: Option<PathBuf>,
    pub log_target: Option<PathBuf>,
    /// The Jetstress generation: 2007, 2010 or 2013 (the default).
    pub preset: Option<String>,
    pub test: Option<TestType>,
    pub mailboxes: Option<u64>,
    pub mailbox_size: Option<ByteSize>,
    pub capacity_pct: Option<u32>,
    pub iops_per_mailbox: Option<f64>,
    pub threads: Option<u32>,
    pub databases: Option<u32>,
    pub duration: Option<Seconds>,
    /// Steady-state rounds of this length.
    pub steady_state: Option<Seconds>,
    pub max_warmup: Option<Seconds>,
    pub cache_size: Option<ByteSize>,
    pub checkpoint_depth: Option<ByteSize>,
    pub mix: Option<String>,
    pub lazy_commits: Option<u32>,
    pub bdm_rate: Option<ByteSize>,
    pub db_read_avg_ms: Option<f64>,
    pub db_read_max_ms: Option<f64>,
    pub log_write_avg_ms: Option<f64>,
    pub log_write_max_ms: Option<f64>,
    pub page_fault_stalls: Option<f64>,
    pub sample_window: Option<Seconds>,
    pub log_files: Option<u32>,
    pub tune: bool,
    pub trial_duration: Option<Seconds>,
    pub keep: bool,
    pub no_verify: bool,
    pub engine: Option<EngineKind>,
    pub seed: Option<u64>,
}

impl MailboxOptions {
    /// The defaults of the phases, each defined once: validation, the evaluation's ETA and
    /// the help text (held to them by a test) take them from here.
    pub const DURATION: Duration = Duration::from_secs(2 * 3600);
    pub const STRESS_DURATION: Duration = Duration::from_secs(24 * 3600);
    pub const MAX_WARMUP: Duration = Duration::from_secs(600);

    /// The measured phase: `duration`, else under steady state its cap of rounds, else the
    /// test type's default.
    pub fn duration_or_default(&self) -> Duration {
        let default =
            if self.test == Some(TestType::Stress) { Self::STRESS_DURATION } else { Self::DURATION };
        crate::run::Rule::measured_length(self.steady_state.map(|r| r.0), self.duration.map(|d| d.0), default)
    }

    /// Whether the test has a figure per round for a steady state to judge: the performance
    /// and stress tests' transactional IOPS (a backup or soft recovery does a fixed amount of
    /// work, and tuning's trials are short fixed runs).
    pub fn has_rounds(&self) -> bool {
        matches!(self.test, None | Some(TestType::Performance | TestType::Stress)) && !self.tune
    }

    pub fn max_warmup_or_default(&self) -> Duration {
        self.max_warmup.map_or(Self::MAX_WARMUP, |d| d.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_measured_phase_follows_the_test_and_a_steady_state_cap_and_only_transactional_tests_have_rounds() {
        let o = MailboxOptions::default();
        assert_eq!(o.duration_or_default(), MailboxOptions::DURATION);
        let stress = MailboxOptions { test: Some(TestType::Stress), ..o.clone() };
        assert_eq!(stress.duration_or_default(), MailboxOptions::STRESS_DURATION);
        let steady = MailboxOptions { steady_state: Some(Seconds(Duration::from_secs(60))), ..o.clone() };
        assert_eq!(steady.duration_or_default(), Duration::from_secs(25 * 60), "25 rounds");
        assert!(o.has_rounds() && stress.has_rounds());
        assert!(!MailboxOptions { test: Some(TestType::Backup), ..o.clone() }.has_rounds());
        assert!(!MailboxOptions { tune: true, ..o }.has_rounds());
    }
}
