//! Latency as the report model holds it apart from any picture: a run's spectrum of one
//! request type (its latency at each quantile), and the request types a workload's latency
//! histograms are kept by, which each workload declares (`Reported::latency_types`) and
//! `render::spectrum` draws.

/// A run's latencies of one request type at each of `render::spectrum::quantiles(count)`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Spectrum {
    /// How many latencies the histogram holds.
    pub count: u64,
    /// (quantile 0..=1, latency ns), quantile rising; the last is the maximum (quantile 1).
    pub points: Vec<(f64, u64)>,
}

/// The request types a workload's latency histograms are kept by, as its spectra draw them
/// (each workload declares its own: `Reported::latency_types`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum LatencyTypes {
    /// Its histograms' tags, each with what it is: `("read", "reads")`.
    Tags(&'static [(&'static str, &'static str)]),
    /// Types of the workload's own naming, each under [`REPLAY_TYPE`] and its escaped name (a
    /// replay's requests).
    Named,
}

/// A replay's request types are its own, each under this prefix and its escaped name.
pub(crate) const REPLAY_TYPE: &str = "type.";

impl LatencyTypes {
    /// What the histogram `tag` is, where a picture draws it.
    pub fn name_of(self, tag: &str) -> Option<String> {
        match self {
            LatencyTypes::Named => tag.strip_prefix(REPLAY_TYPE).map(str::to_string),
            LatencyTypes::Tags(types) => {
                types.iter().find(|(t, _)| *t == tag).map(|(_, name)| name.to_string())
            }
        }
    }

    /// Whether there are several, each drawn in its own picture and file.
    pub(crate) fn several(self) -> bool {
        match self {
            LatencyTypes::Named => true,
            LatencyTypes::Tags(types) => types.len() > 1,
        }
    }
}
