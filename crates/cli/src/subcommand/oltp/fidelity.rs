//! `storbench oltp fidelity`: the storage work of storbench's calls beside that of DS3's own
//! SQL, by the server's counters, per call type and per order.

use super::db_size;
use crate::args::oltp::OltpFidelityArgs;
use anyhow::{Context, Result, bail};
use serde_json::json;
use storbench_bench::db::BackendKind;
use storbench_bench::db::DbResult;
use storbench_bench::db::mysql::Mysql;
use storbench_bench::db::postgres::Postgres;
use storbench_bench::run::Ending;
use storbench_bench::workload::oltp::ds3::open::{backend_of_url, read_password_file, urls};
use storbench_bench::workload::oltp::ds3::{Ds3Database, Session};
use storbench_bench::workload::oltp::users::OltpSpec;
use storbench_bench::workload::oltp::users::fidelity::{
    Call, Measured, Replay, WorkCounters, measure, record_orders,
};

/// Where DS3's PostgreSQL functions are in its checkout.
const PG_FUNCTIONS: &str = "pgsqlds3/build/pgsqlds3_create_sp.sql";

pub(super) fn fidelity(a: &OltpFidelityArgs) -> Result<Ending> {
    let counts = db_size(&a.db_size)?.counts();
    if a.orders == 0 || a.repeat == 0 {
        bail!("--orders and --repeat must be at least 1");
    }
    let urls = urls(&a.db.url);
    let [url] = urls.as_slice() else {
        bail!("oltp fidelity measures one server: give one --url (postgres://... or mysql://...)");
    };
    let password =
        a.db.password_file.as_deref().map(read_password_file).transpose().map_err(anyhow::Error::msg)?;
    storbench_bench::secret::remember_in(url);
    let spec = OltpSpec {
        max_customer: counts.customers,
        max_product: counts.products,
        seed: a.seed,
        ..OltpSpec::default()
    };
    let calls = record_orders(&spec, a.orders);
    let (ours, ds3) = match a
        .db
        .backend
        .map(BackendKind::from)
        .map_or_else(|| backend_of_url(url), Ok)
        .map_err(anyhow::Error::msg)?
    {
        BackendKind::Postgres => {
            let pg = Postgres::new(url)?;
            let pg = match &password {
                Some(p) => pg.with_password(p),
                None => pg,
            };
            let functions = ds3_functions(a)?;
            // DS3's functions are dropped before each reset (a reset refuses a database holding
            // objects storbench did not create) and created again after it.
            let installed = std::cell::Cell::new(false);
            let install = |on: bool| -> DbResult<()> {
                if installed.replace(false) {
                    pg.remove_ds3()?;
                }
                if on {
                    pg.install_ds3(&functions)?;
                    installed.set(true);
                }
                Ok(())
            };
            both(
                &pg,
                &calls,
                (a.orders, a.repeat),
                || pg.work_counters(),
                || pg.connect_ds3(),
                install,
                &spec,
            )?
        }
        BackendKind::Mysql => {
            let my = Mysql::new(url)?;
            let my = match &password {
                Some(p) => my.with_password(p),
                None => my,
            };
            both(
                &my,
                &calls,
                (a.orders, a.repeat),
                || my.work_counters(),
                || my.connect_ds3(),
                |_| Ok(()),
                &spec,
            )?
        }
        BackendKind::Sqlite => {
            bail!("oltp fidelity compares with DS3's SQL on a server; DS3 has no SQLite edition: give --url")
        }
    };
    if a.json {
        tell!("{}", serde_json::to_string_pretty(&as_json(&ours, &ds3))?);
    } else {
        tell!("{}", table(&ours, &ds3, a.repeat));
    }
    Ok(Ending::Ok)
}

/// DS3's PostgreSQL functions, from the checkout `--ds3-source` names.
fn ds3_functions(a: &OltpFidelityArgs) -> Result<String> {
    let Some(dir) = &a.ds3_source else {
        bail!(
            "on PostgreSQL, DS3's own functions are the reference: give --ds3-source DIR, a checkout of \
             github.com/dvdstore/ds3 (the ds3/ directory, which holds {PG_FUNCTIONS})"
        );
    };
    let path = dir.join(PG_FUNCTIONS);
    let limit = storbench_bench::input::TEXT_LIMIT;
    storbench_bench::input::read_text(&path, limit).with_context(|| {
        format!("--ds3-source {}: reading {} (is it DS3's ds3/ directory?)", dir.display(), path.display())
    })
}

/// Measures storbench's calls, then DS3's, each batch from the state after the load; leaves
/// the database in that state.
fn both(
    db: &dyn Ds3Database,
    calls: &[Call],
    (orders, repeat): (u64, u32),
    counters: impl Fn() -> DbResult<Box<dyn WorkCounters>>,
    connect_ds3: impl Fn() -> DbResult<Box<dyn Session>>,
    install_ds3: impl Fn(bool) -> DbResult<()>,
    spec: &OltpSpec,
) -> Result<(Measured, Measured)> {
    let shape = db.shape().with_context(|| format!("opening {}", db.describe()))?;
    if shape.customers != spec.max_customer || shape.products != spec.max_product || !shape.ds3 {
        bail!(
            "{} holds {} customers and {} products{}, not the DS3 data set of --db-size; load it with `oltp load` at that size",
            db.describe(),
            shape.customers,
            shape.products,
            if shape.ds3 { "" } else { " (a DS2 load)" }
        );
    }
    let _writer = db.lock_writer()?;
    let reset = || db.reset().map(drop);
    let ours = measure(
        calls,
        orders,
        repeat,
        &mut Replay { reset: &reset, connect: &|| db.connect(), counters: counters()?.as_mut() },
    )
    .context("replaying storbench's calls")?;
    let reset_ds3 = || install_ds3(false).and_then(|()| db.reset()).and_then(|_| install_ds3(true));
    let ds3 = measure(
        calls,
        orders,
        repeat,
        &mut Replay { reset: &reset_ds3, connect: &connect_ds3, counters: counters()?.as_mut() },
    )
    .context("replaying DS3's SQL");
    install_ds3(false).and_then(|()| db.reset()).context("resetting the database after the measurement")?;
    let ds3 = ds3?;
    Ok((ours, ds3))
}

/// One counter's figure per unit: None when the batch changed it less than the empty batch
/// did (below the noise).
type Figure = Option<f64>;

/// Each batch's figures per call, and the whole orders' per order.
fn per_unit(m: &Measured) -> Vec<(&'static str, u64, u64, Vec<Figure>)> {
    m.batches
        .iter()
        .map(|b| {
            let unit = if b.name == "order" { m.orders } else { b.calls }.max(1) as f64;
            let figures = b.delta.iter().zip(&b.below_noise).map(|(d, &below)| (!below).then_some(d / unit));
            (b.name, b.calls, b.errors, figures.collect())
        })
        .collect()
}

/// A figure as the table shows it.
fn shown(f: Figure) -> String {
    f.map_or_else(|| "below noise".to_owned(), |v| format!("{v:.1}"))
}

/// The table of both sides' figures, with its note.
fn table(ours: &Measured, ds3: &Measured, repeat: u32) -> String {
    let mut t = crate::output::new_table(&["calls", "counter", "storbench", "DS3's SQL", "ratio"]);
    for ((name, calls, errors, o), (_, _, ds3_errors, d)) in per_unit(ours).into_iter().zip(per_unit(ds3)) {
        let unit = if name == "order" { "per order" } else { "per call" };
        let mut first = true;
        for ((counter, o), d) in ours.counters.iter().zip(o).zip(d) {
            if o.unwrap_or(0.0) < 0.005 && d.unwrap_or(0.0) < 0.005 {
                continue;
            }
            let label = if first {
                let refused = if errors + ds3_errors > 0 {
                    format!(", refused {errors} / {ds3_errors}")
                } else {
                    String::new()
                };
                format!("{name} ({calls}, {unit}{refused})")
            } else {
                String::new()
            };
            first = false;
            let ratio = match (o, d) {
                (Some(o), Some(d)) if d > 1e-9 => format!("{:.2}", o / d),
                _ => "-".into(),
            };
            t.add_row(vec![label, counter.to_string(), shown(o), shown(d), ratio]);
        }
    }
    format!(
        "{t}\nCounters are the server's own, read before and after each batch of calls on one session, each \
         batch from the state after the load, less an empty batch's change; medians of {} repeats. {} orders. \
         \"below noise\": the batch changed the counter less than the empty batch did.",
        repeat, ours.orders
    )
}

fn as_json(ours: &Measured, ds3: &Measured) -> serde_json::Value {
    let side = |m: &Measured| {
        per_unit(m)
            .into_iter()
            .map(|(name, calls, errors, figures)| {
                let values: serde_json::Map<_, _> = m
                    .counters
                    .iter()
                    .zip(&figures)
                    .map(|(c, v)| (c.to_string(), json!(v.unwrap_or(0.0))))
                    .collect();
                let below: Vec<&str> =
                    m.counters.iter().zip(&figures).filter(|(_, v)| v.is_none()).map(|(c, _)| *c).collect();
                json!({ "calls": name, "count": calls, "refused": errors, "per": if name == "order" { "order" } else { "call" }, "counters": values, "below_noise": below })
            })
            .collect::<Vec<_>>()
    };
    json!({ "orders": ours.orders, "storbench": side(ours), "ds3": side(ds3) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use storbench_bench::workload::oltp::users::fidelity::Batch;

    fn side(read: f64, below: bool) -> Measured {
        let batch = |name, calls| Batch {
            name,
            calls,
            errors: 0,
            delta: vec![2.0 * calls as f64, read],
            below_noise: vec![false, below],
        };
        Measured {
            counters: vec!["xact_commit", "blks_read"],
            orders: 1,
            batches: vec![batch("new member", 1)],
        }
    }

    #[test]
    fn a_figure_below_the_noise_is_said_so_and_never_printed_as_a_count() {
        let text = table(&side(0.0, true), &side(62.0, false), 3);
        let row = text.lines().find(|l| l.contains("blks_read")).expect("the blks_read row");
        assert!(row.contains("below noise") && row.contains("62.0"), "{row}");
        let json = as_json(&side(0.0, true), &side(62.0, false));
        assert_eq!(json["storbench"][0]["below_noise"], serde_json::json!(["blks_read"]));
        assert_eq!(json["storbench"][0]["counters"]["blks_read"], 0.0);
        assert_eq!(json["ds3"][0]["below_noise"], serde_json::json!([]));
    }
}
