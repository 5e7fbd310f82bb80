//! A replay into its bundle: the requests of the logs sent with each second recorded, and the
//! finished summary, for [`crate::run::measure`]. A replay that failed (its requests not sent or
//! failing, a log it could not read) keeps its summary; its status says it failed.

use super::{Connect, ReplayError, ReplaySpec, Source, entry};
use crate::run::StopFlag;
use crate::run::measure::{Finished, Recording};
use crate::run::record::{End, Recordable};
use storbench_report::Summary;

/// Replays `sources` through `connect`, each second into the bundle; its finished summary.
pub fn record(
    rec: &mut Recording,
    first: Summary,
    spec: &ReplaySpec,
    (sources, connect): (Vec<Source>, Connect),
    stop: &StopFlag,
) -> Result<Finished, ReplayError> {
    let out = super::run(spec, sources, connect, &mut rec.sampler, stop, &mut |iv| {
        rec.bundle.recorded(iv, entry::WORKLOAD.name, &iv.interval.data.tally());
    })?;
    let ended_at = jiff::Timestamp::now().to_string();
    let end = End::of(&ended_at, &out, &out.detail);
    let summary = super::summary::summary(first, &out, &ended_at);
    Ok(Finished { summary, end: Some(end), unsaid: Vec::new(), failure: None })
}
