//! The choice: among the configurations that meet every requirement in their normal
//! condition (a rebuild's configuration is its storage judged again), the one to buy (the
//! lowest price where every one has a price, else the lowest active power, else the most
//! headroom on its binding requirement, where a lead the runs' spread does not confirm is a
//! tie, said so), what a unit of work costs on each, the best of each kind, and each pair
//! compared as the reference reports put it ("+91.8 % OPM, -51 % active power, +184 % OPM per
//! watt"). Where the runs' ranges overlap, or too few runs stand behind a side, a headline's
//! difference and every figure made of it (per watt) say so.

use super::{Best, ConfigurationDecision, Decision};
use crate::evaluation::{Evaluation, Group, difference};
use crate::format::{given, num, pct};
use crate::input::ReportInput;

/// Fills in the costs, the best of each kind, the choice and why.
pub(super) fn choose(d: &mut Decision, input: &ReportInput) {
    let e = &input.evaluation;
    for c in &mut d.configurations {
        c.costs = costs(c, e);
    }
    // A degraded condition is the same storage judged again, not another one to buy.
    let fits: Vec<&ConfigurationDecision> = d
        .configurations
        .iter()
        .filter(|c| c.meets == Some(true) && c.condition == crate::evaluation::NORMAL)
        .collect();
    d.best = best(&fits, e);
    let ranked = rank(&fits, input);
    d.chosen = ranked.first().map(|(c, _)| c.name.clone());
    d.why = why(d, &ranked);
}

/// The configurations that meet everything, best first, with what ranked them: the lowest
/// price, else the lowest active power, else the most headroom, where a lead in headroom that
/// the runs' spread does not confirm is a tie, broken by plan order and said so.
fn rank<'a>(
    fits: &[&'a ConfigurationDecision],
    input: &ReportInput,
) -> Vec<(&'a ConfigurationDecision, String)> {
    if fits.iter().all(|c| c.price.is_some()) {
        let by = |c: &ConfigurationDecision| c.price.unwrap_or(0.0);
        return sorted(fits, by, |c| format!("at the lowest price, {}", price(c)));
    }
    if fits.iter().all(|c| c.active_w.is_some()) {
        let w = |c: &ConfigurationDecision| c.active_w.unwrap_or(0.0);
        return sorted(fits, w, |c| format!("with the lowest active power, {} W", num(w(c))));
    }
    let mut ranked = sorted(
        fits,
        |c| -headroom(c).unwrap_or(f64::INFINITY),
        |c| match headroom(c) {
            Some(m) => format!("with the most headroom on its binding requirement ({} to spare)", pct(m)),
            None => "with no margin to rank it by".into(),
        },
    );
    let Some(lead) = ranked.first().map(|(c, _)| *c) else { return ranked };
    let tied: Vec<&str> = ranked[1..]
        .iter()
        .filter(|(c, _)| !apart(input, &lead.name, &c.name))
        .map(|(c, _)| c.name.as_str())
        .collect();
    if tied.is_empty() {
        return ranked;
    }
    // Equal within the spread: the first of them in plan order, saying why.
    let first = fits.iter().find(|c| c.name == lead.name || tied.contains(&c.name.as_str())).copied();
    let first = first.unwrap_or(lead);
    let others: Vec<&str> =
        std::iter::once(lead.name.as_str()).chain(tied).filter(|n| *n != first.name).collect();
    let how = format!(
        "equal within the runs' spread to {} (no headline of theirs differs beyond it) and, with no price \
         or power given to prefer one, named first in plan order",
        others.join(" and ")
    );
    ranked.retain(|(c, _)| c.name != first.name);
    ranked.insert(0, (first, how));
    ranked
}

/// `fits` ordered by `key`, lowest first, each with what ranked it.
fn sorted<'a>(
    fits: &[&'a ConfigurationDecision],
    key: impl Fn(&ConfigurationDecision) -> f64,
    how: impl Fn(&ConfigurationDecision) -> String,
) -> Vec<(&'a ConfigurationDecision, String)> {
    let mut ranked: Vec<(&ConfigurationDecision, f64)> = fits.iter().map(|c| (*c, key(c))).collect();
    ranked.sort_by(|a, b| a.1.total_cmp(&b.1));
    ranked.into_iter().map(|(c, _)| (c, how(c))).collect()
}

/// Whether configurations `a` and `b` differ beyond the runs' spread (with enough runs to
/// claim it) on the headline of some workload point both measured, on disks of their own.
fn apart(input: &ReportInput, a: &str, b: &str) -> bool {
    if input.one_disk(a, b).is_some() {
        return false;
    }
    crate::evaluation::points(&input.evaluation).iter().any(|p| {
        let of = |name: &str| p.groups.iter().find(|g| g.configuration == name);
        let (Some(ga), Some(gb)) = (of(a), of(b)) else { return false };
        headline_difference(ga, gb).is_some_and(|d| d.claimed())
    })
}

/// `a`'s median headline against `b`'s.
fn headline_difference(a: &Group<'_>, b: &Group<'_>) -> Option<crate::evaluation::Difference> {
    let h = a.reported()?.headline.as_ref()?;
    difference(&a.spread()?, &b.spread()?, h.higher_is_better)
}

/// The smallest margin among its met requirements.
fn headroom(c: &ConfigurationDecision) -> Option<f64> {
    c.verdicts.iter().filter_map(|v| v.margin_pct).reduce(f64::min)
}

fn price(c: &ConfigurationDecision) -> String {
    let amount = c.price.map(given).unwrap_or_default();
    match &c.currency {
        Some(cur) => format!("{amount} {cur}"),
        None => amount,
    }
}

fn why(d: &Decision, ranked: &[(&ConfigurationDecision, String)]) -> String {
    let first: String = d.window.iter().chain(&d.incomplete).map(|s| format!("{s} ")).collect();
    first + &judged(d, ranked)
}

/// The choice and what each other configuration showed.
fn judged(d: &Decision, ranked: &[(&ConfigurationDecision, String)]) -> String {
    let mut text = match ranked.first() {
        None if d.configurations.is_empty() => return "No configuration was measured.".into(),
        None => "No configuration meets every requirement.".to_string(),
        Some((c, how)) if d.requirements.is_empty() => {
            format!(
                "No requirements were given, so each configuration meets them; {} is chosen, {how}.",
                c.name
            )
        }
        Some((c, how)) => {
            // Alone, nothing ranked it: say its price rather than "the lowest".
            let how = match (ranked.len(), c.price) {
                (1, Some(_)) => format!("the only one that does, at {}", price(c)),
                (1, None) => "the only one that does".into(),
                _ => how.clone(),
            };
            let binding =
                c.binding.as_deref().map(|b| format!(" Its binding requirement: {b}.")).unwrap_or_default();
            format!("{} meets every requirement, {how}.{binding}", c.name)
        }
    };
    for c in d.configurations.iter().filter(|c| Some(&c.name) != d.chosen.as_ref()) {
        let on = |m: Option<bool>| c.verdicts.iter().filter(move |v| v.met == m);
        let said: Vec<String> = match c.meets {
            Some(true) if c.condition != crate::evaluation::NORMAL => {
                vec![format!(
                    "{} ({} during {}) also meets every requirement",
                    c.name, c.storage, c.condition
                )]
            }
            Some(true) => vec![format!("{} also meets every requirement", c.name)],
            Some(false) => c
                .failed
                .iter()
                .map(|f| format!("{} fails: {f}", c.name))
                .chain(on(Some(false)).map(|v| format!("{} fails {}: {}", c.name, v.requirement, v.text)))
                .collect(),
            None => {
                c.unfinished
                    .iter()
                    .map(|u| format!("{} is not shown either way: {u}", c.name))
                    .chain(on(None).map(|v| {
                        format!("{}: {} is not shown either way: {}", c.name, v.requirement, v.text)
                    }))
                    .collect()
            }
        };
        for s in said {
            text.push_str(&format!(" {s}."));
        }
    }
    text
}

/// What a unit of work costs on `c`: per 1,000 of each workload's headline (where higher is
/// better; a swept workload at its best point) and per TB of capacity.
fn costs(c: &ConfigurationDecision, e: &Evaluation) -> Vec<String> {
    let Some(p) = c.price else { return Vec::new() };
    let cur = c.currency.as_deref().unwrap_or("");
    let mut out = Vec::new();
    let mine: Vec<Group<'_>> = e.groups().into_iter().filter(|g| g.configuration == c.name).collect();
    for workload in crate::evaluation::workloads(e) {
        // A swept workload at its best point.
        let best = mine
            .iter()
            .filter(|g| g.workload == workload)
            .filter_map(|g| Some((g.reported()?.headline.clone()?, g.spread()?.median)))
            .filter(|(h, m)| h.higher_is_better && *m > 0.0)
            .max_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((h, median)) = best {
            out.push(format!("{} {cur} per 1,000 {} ({workload})", num(p / median * 1000.0), h.metric));
        }
    }
    if let Some(bytes) = c.capacity_bytes.filter(|b| *b > 0) {
        out.push(format!("{} {cur} per TB", num(p / (bytes as f64 / 1e12))));
    }
    out
}

/// The lowest price, the lowest active power and the best per watt on each workload among
/// the configurations that meet everything (where two or more do).
fn best(fits: &[&ConfigurationDecision], e: &Evaluation) -> Vec<Best> {
    if fits.len() < 2 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let lowest = |f: &dyn Fn(&ConfigurationDecision) -> Option<f64>| {
        fits.iter().filter_map(|c| Some((*c, f(c)?))).min_by(|a, b| a.1.total_cmp(&b.1))
    };
    if let Some((c, _)) = lowest(&|c| c.price) {
        out.push(Best { what: "lowest price".into(), configuration: c.name.clone(), value: price(c) });
    }
    if let Some((c, w)) = lowest(&|c| c.active_w) {
        out.push(Best {
            what: "lowest active power".into(),
            configuration: c.name.clone(),
            value: format!("{} W", num(w)),
        });
    }
    for point in crate::evaluation::points(e) {
        let mut per_watt: Vec<_> = point
            .groups
            .iter()
            .filter(|g| fits.iter().any(|c| c.name == g.configuration))
            .filter_map(|g| Some((g, g.reported()?.per_watt?, g.reported()?.headline.clone()?)))
            .collect();
        per_watt.sort_by(|a, b| b.1.total_cmp(&a.1));
        // Per watt is made of the headline: where the headline's lead over the next is not
        // claimed, neither is this.
        let caveat = match per_watt.as_slice() {
            [(a, ..), (b, ..), ..] => headline_difference(a, b).map_or("", |d| unclaimed(&d)),
            _ => "",
        };
        if let Some((g, w, h)) = per_watt.first() {
            out.push(Best {
                what: format!(
                    "best {} per watt on {}{}",
                    h.metric,
                    point.workload,
                    crate::evaluation::at(point.sweep)
                ),
                configuration: g.configuration.to_string(),
                value: format!("{} {}/W{caveat}", num(*w), h.metric),
            });
        }
    }
    out
}

/// Each pair of configurations on each workload point, in plan order; a pair that ran on one
/// disk says so.
pub(super) fn comparisons(input: &ReportInput) -> Vec<String> {
    let e = &input.evaluation;
    let mut out = Vec::new();
    for point in crate::evaluation::points(e) {
        let place = format!("{}{}", point.workload, crate::evaluation::at(point.sweep));
        for (i, x) in point.groups.iter().enumerate() {
            for y in &point.groups[i + 1..] {
                // The better one first, as the reference reports put it.
                let (a, b) = if better(y, x) { (y, x) } else { (x, y) };
                if let Some(s) = pair(a, b) {
                    let disk = input.one_disk(a.configuration, b.configuration);
                    let one = disk.map(|d| format!(" (both on one disk, {d}: not a difference of storage)"));
                    let one = one.unwrap_or_default();
                    out.push(format!("{} vs {} on {place}: {s}{one}", a.configuration, b.configuration));
                }
            }
        }
    }
    out
}

/// Whether `a`'s median headline is better than `b`'s.
fn better(a: &Group<'_>, b: &Group<'_>) -> bool {
    let higher = a.reported().and_then(|r| r.headline.as_ref()).is_none_or(|h| h.higher_is_better);
    match (a.spread(), b.spread()) {
        (Some(x), Some(y)) if higher => x.median > y.median,
        (Some(x), Some(y)) => x.median < y.median,
        _ => false,
    }
}

/// "+91.8 % OPM, -51 % active power, +184 % OPM per watt" for `a` against `b`; where the
/// headline's difference is not claimed, it and the per-watt figure made of it say why.
fn pair(a: &Group<'_>, b: &Group<'_>) -> Option<String> {
    let (sa, sb) = (a.spread()?, b.spread()?);
    let (ra, rb) = (a.reported()?, b.reported()?);
    let h = ra.headline.as_ref()?;
    let d = difference(&sa, &sb, h.higher_is_better)?;
    let caveat = unclaimed(&d);
    let mut parts = vec![format!("{} {}{caveat}", signed(d.pct), h.metric)];
    let change = |x: Option<f64>, y: Option<f64>| Some(signed(100.0 * (x? - y?) / y.filter(|v| *v > 0.0)?));
    if let Some(c) = change(ra.active_watts, rb.active_watts) {
        parts.push(format!("{c} active power"));
    }
    if let Some(c) = change(ra.per_watt, rb.per_watt) {
        parts.push(format!("{c} {} per watt{caveat}", h.metric));
    }
    Some(parts.join(", "))
}

/// Why a difference is not claimed, said beside it and beside every figure made of it; empty
/// where it is claimed.
fn unclaimed(d: &crate::evaluation::Difference) -> &'static str {
    if d.within_spread {
        " (not distinguishable: the runs' ranges overlap)"
    } else if d.few {
        " (fewer than 3 runs each: not claimed)"
    } else {
        ""
    }
}

fn signed(v: f64) -> String {
    format!("{}{}", if v < 0.0 { "-" } else { "+" }, pct(v))
}
