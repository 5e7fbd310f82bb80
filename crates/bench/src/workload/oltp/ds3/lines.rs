//! DS3's console lines, so scripts that parse DS3's output keep working: the periodic stat
//! line and the Final line, from storbench's counters.
//!
//! Figures follow DS3's definitions: n_overall counts completed orders (rolled-back purchases
//! included), opm = floor(60·n/et) since the clock (re)started, rt_tot_lastn_max the slowest of
//! the last 100 orders, rt_tot_sampled the mean response time over the last stat interval.
//! Where DS3 prints −2147483648 for an average over nothing, storbench prints n/a.
//! `n_reviewbrowse` counts review searches and review look-ups together, as DS3's counter does.

use crate::workload::oltp::users::{OltpRecorder, TxnKind};

/// What the previous stat line saw, for rt_tot_sampled.
#[derive(Debug, Clone, Copy, Default)]
pub struct Sampled {
    orders: u64,
    rt_sum_ns: u64,
}

impl Sampled {
    pub fn of(r: &OltpRecorder) -> Self {
        Sampled { orders: r.orders, rt_sum_ns: r.order_rt_sum_ns }
    }
}

/// floor(1000 × mean seconds), i.e. whole ms; n/a over nothing.
fn avg_ms(sum_ns: u64, n: u64) -> String {
    sum_ns.checked_div(n).map_or_else(|| "n/a".into(), |mean| (mean / 1_000_000).to_string())
}

fn opm(r: &OltpRecorder, et_s: f64) -> u64 {
    if et_s > 0.0 { (60.0 * r.orders as f64 / et_s).floor() as u64 } else { 0 }
}

fn rollback_pct(r: &OltpRecorder) -> String {
    if r.orders == 0 {
        "  n/a".into()
    } else {
        format!("{:5.1}", 100.0 * r.rollbacks as f64 / r.orders as f64)
    }
}

fn lastn_max_ms(r: &OltpRecorder) -> String {
    r.last_orders.iter().map(|o| o.1).max().map_or_else(|| "n/a".into(), |ns| (ns / 1_000_000).to_string())
}

fn sampled_ms(r: &OltpRecorder, prev: Sampled) -> String {
    let n = r.orders.saturating_sub(prev.orders);
    if n == 0 { "0".into() } else { avg_ms(r.order_rt_sum_ns.saturating_sub(prev.rt_sum_ns), n) }
}

/// The figures of one periodic line, formatted as DS3 prints them.
pub struct Periodic {
    et: String,
    n_overall: u64,
    opm: u64,
    lastn_max: String,
    avg: String,
    sampled: String,
    rollbacks: u64,
    pct: String,
}

impl Periodic {
    pub fn of(r: &OltpRecorder, et_s: f64, prev: Sampled) -> Self {
        Periodic {
            et: format!("{et_s:7.1}"),
            n_overall: r.orders,
            opm: opm(r, et_s),
            lastn_max: lastn_max_ms(r),
            avg: avg_ms(r.order_rt_sum_ns, r.orders),
            sampled: sampled_ms(r, prev),
            rollbacks: r.rollbacks,
            pct: rollback_pct(r),
        }
    }

    /// The values in line order, padded as the line prints them.
    fn values(&self) -> [String; 8] {
        [
            self.et.clone(),
            self.n_overall.to_string(),
            self.opm.to_string(),
            self.lastn_max.clone(),
            self.avg.clone(),
            self.sampled.clone(),
            self.rollbacks.to_string(),
            self.pct.clone(),
        ]
    }

    /// `et=  60.0 n_overall=1234 opm=1234 rt_tot_lastn_max_msec=12 rt_tot_avg_msec=3
    /// rt_tot_sampled=3 rollbacks: n=5 %=  0.4 `
    pub fn line(&self) -> String {
        const KEYS: [&str; 8] = [
            "et=",
            " n_overall=",
            " opm=",
            " rt_tot_lastn_max_msec=",
            " rt_tot_avg_msec=",
            " rt_tot_sampled=",
            " rollbacks: n=",
            " %=",
        ];
        let mut line: String = KEYS.iter().zip(self.values()).map(|(k, v)| format!("{k}{v}")).collect();
        line.push(' ');
        line
    }

    /// A row of DS3's `out_filename` CSV (header `CSV_HEADER`), laid out as DS3 writes it: the
    /// lines' time stamp (empty without --log-timestamp, else ending in a space), a space and
    /// the padded et in the first field, then the other seven figures, comma-separated without
    /// spaces. Eight fields under eight names.
    pub fn csv_row(&self, stamp: &str) -> String {
        format!("{stamp} {}", self.values().join(","))
    }
}

/// DS3's time stamps of its lines (`log_timestamp`), each followed by a space: UTC with
/// milliseconds, and the local time as .NET's `MM/dd/yyyy h:mm:ss tt` prints it.
pub const UTC_STAMP: &str = "%Y-%m-%dT%H:%M:%S%.3fZ ";
pub const LOCAL_STAMP: &str = "%m/%d/%Y %-I:%M:%S %p ";

/// DS3's header of the `out_filename` CSV, as DS3 writes it.
pub const CSV_HEADER: &str = "datetime et, n_overall, opm, rt_tot_lastn_max_msec, rt_tot_avg_msec, rt_tot_sampled, n_rollbacks_overall, rollback_pct";

/// The periodic line of `r` over `et_s` seconds.
pub fn periodic(r: &OltpRecorder, et_s: f64, prev: Sampled) -> String {
    Periodic::of(r, et_s, prev).line()
}

fn calls(r: &OltpRecorder, kinds: &[TxnKind]) -> (u64, u64) {
    kinds.iter().map(|&k| r.txn(k)).fold((0, 0), |(n, s), t| (n + t.calls, s + t.sum_ns))
}

/// DS3's Final line (after `Final (<when>): `).
pub fn final_fields(r: &OltpRecorder, et_s: f64, prev: Sampled) -> String {
    let one = |k| calls(r, &[k]);
    let (login, newcust, member, browse, purchase) = (
        one(TxnKind::Login),
        one(TxnKind::NewCustomer),
        one(TxnKind::NewMember),
        one(TxnKind::Browse),
        one(TxnKind::Purchase),
    );
    let reviewbrowse = calls(r, &[TxnKind::ReviewBrowse, TxnKind::GetReviews]);
    let (newreview, helpful) = (one(TxnKind::NewReview), one(TxnKind::NewHelpfulness));
    format!(
        "et={et_s:7.1} n_overall={} opm={} rt_tot_lastn_max={} rt_tot_avg={} n_login_overall={} \
         n_newcust_overall={} n_newmember_overall={} n_browse_overall={} n_reviewbrowse={} n_newreviews={} \
         n_newhelpfulness={} n_purchase_overall={} rt_login_avg_msec={} rt_newcust_avg_msec={} \
         rt_rewmember_avg_msec={} rt_browse_avg_msec={} rt_reviewbrowse_avg_msec={} rt_newreview_avg_msec={} \
         rt_newhelpfulness={} rt_purchase_avg_msec={} rt_tot_sampled={} n_rollbacks_overall={} rollback_rate = {}%",
        r.orders,
        opm(r, et_s),
        lastn_max_ms(r),
        avg_ms(r.order_rt_sum_ns, r.orders),
        login.0,
        newcust.0,
        member.0,
        browse.0,
        reviewbrowse.0,
        newreview.0,
        helpful.0,
        purchase.0,
        avg_ms(login.1, login.0),
        avg_ms(newcust.1, newcust.0),
        avg_ms(member.1, member.0),
        avg_ms(browse.1, browse.0),
        avg_ms(reviewbrowse.1, reviewbrowse.0),
        avg_ms(newreview.1, newreview.0),
        avg_ms(helpful.1, helpful.0),
        avg_ms(purchase.1, purchase.0),
        sampled_ms(r, prev),
        r.rollbacks,
        rollback_pct(r)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recorder() -> OltpRecorder {
        let mut r = OltpRecorder::default();
        for (i, rt_ms) in [10u64, 30, 20].into_iter().enumerate() {
            r.record_order(i as u64, rt_ms * 1_000_000);
            r.record_call(TxnKind::Purchase, rt_ms * 1_000_000);
        }
        r.purchases = 3;
        r.rollbacks = 1;
        r
    }

    #[test]
    fn the_periodic_line_has_ds3s_fields_and_definitions() {
        let line = periodic(&recorder(), 30.0, Sampled::default());
        assert_eq!(
            line,
            "et=   30.0 n_overall=3 opm=6 rt_tot_lastn_max_msec=30 rt_tot_avg_msec=20 rt_tot_sampled=20 rollbacks: n=1 %= 33.3 "
        );
    }

    #[test]
    fn time_stamps_read_as_ds3_prints_them() {
        let t = jiff::civil::date(2026, 11, 24).at(14, 5, 7, 250_000_000);
        assert_eq!(t.strftime(LOCAL_STAMP).to_string(), "11/24/2026 2:05:07 PM ");
        let utc = t.to_zoned(jiff::tz::TimeZone::UTC).unwrap().timestamp();
        assert_eq!(utc.strftime(UTC_STAMP).to_string(), "2026-11-24T14:05:07.250Z ");
    }

    #[test]
    fn the_csv_row_holds_the_periodic_figures() {
        let figures = Periodic::of(&recorder(), 30.0, Sampled::default());
        assert_eq!(figures.csv_row(""), "    30.0,3,6,30,20,20,1, 33.3");
        let row = figures.csv_row("2026-11-22T10:00:00.000Z ");
        assert_eq!(row, "2026-11-22T10:00:00.000Z     30.0,3,6,30,20,20,1, 33.3");
        assert_eq!(CSV_HEADER.split(", ").count(), row.split(',').count(), "a field for every name");
    }

    #[test]
    fn sampled_covers_only_orders_since_the_previous_line() {
        let mut r = recorder();
        let prev = Sampled::of(&r);
        r.record_order(9, 50_000_000);
        assert!(periodic(&r, 40.0, prev).contains("rt_tot_sampled=50 "));
        assert!(periodic(&r, 40.0, Sampled::of(&r)).contains("rt_tot_sampled=0 "));
    }

    #[test]
    fn averages_over_nothing_print_n_a_instead_of_ds3s_int_min() {
        let line = final_fields(&OltpRecorder::default(), 0.0, Sampled::default());
        assert!(line.contains("rt_login_avg_msec=n/a"), "{line}");
        assert!(line.contains("n_overall=0 opm=0"), "{line}");
        assert!(!line.contains("-2147483648"));
        let line = final_fields(&recorder(), 60.0, Sampled::default());
        assert!(line.contains("n_purchase_overall=3 "), "{line}");
        assert!(line.contains("rt_purchase_avg_msec=20 "), "{line}");
        assert!(line.ends_with("n_rollbacks_overall=1 rollback_rate =  33.3%"), "{line}");
    }
}
