//! What a user thread counts: orders, rollbacks, each transaction type's calls and latency,
//! the order response time (DS3's rt_tot), errors by kind and reconnects. One recorder per
//! thread per interval; merging is exact.

use crate::metrics::{ErrorTally, LatencyHistogram};

/// A database call a user makes and times.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnKind {
    Login,
    NewCustomer,
    NewMember,
    Browse,
    ReviewBrowse,
    GetReviews,
    NewReview,
    NewHelpfulness,
    Purchase,
    /// The price look-up before a purchase: timed, but outside the order's response time, as
    /// in DS3.
    PriceQuery,
}

pub const TXN_KINDS: [TxnKind; 10] = [
    TxnKind::Login,
    TxnKind::NewCustomer,
    TxnKind::NewMember,
    TxnKind::Browse,
    TxnKind::ReviewBrowse,
    TxnKind::GetReviews,
    TxnKind::NewReview,
    TxnKind::NewHelpfulness,
    TxnKind::Purchase,
    TxnKind::PriceQuery,
];

impl TxnKind {
    pub fn as_str(self) -> &'static str {
        match self {
            TxnKind::Login => "login",
            TxnKind::NewCustomer => "new_customer",
            TxnKind::NewMember => "new_member",
            TxnKind::Browse => "browse",
            TxnKind::ReviewBrowse => "review_browse",
            TxnKind::GetReviews => "get_reviews",
            TxnKind::NewReview => "new_review",
            TxnKind::NewHelpfulness => "new_helpfulness",
            TxnKind::Purchase => "purchase",
            TxnKind::PriceQuery => "price_query",
        }
    }

    fn index(self) -> usize {
        self as usize
    }
}

/// Calls of one transaction type.
#[derive(Clone, Debug, Default)]
pub struct TxnCounters {
    pub calls: u64,
    /// Exact sum, for DS3's averages (the histogram's mean is bucketed).
    pub sum_ns: u64,
    pub latency: LatencyHistogram,
}

impl TxnCounters {
    fn merge(&mut self, o: &TxnCounters) {
        self.calls += o.calls;
        self.sum_ns += o.sum_ns;
        self.latency.merge(&o.latency);
    }
}

/// Orders kept for DS3's "max response time of the last 100 orders".
pub const LAST_N: usize = 100;

/// One thread's (or, merged, many threads') counters over an interval.
#[derive(Clone, Debug, Default)]
pub struct OltpRecorder {
    /// Completed orders, rolled-back purchases included (DS3's n_overall).
    pub orders: u64,
    pub purchases: u64,
    /// Purchases rolled back because an item was out of stock.
    pub rollbacks: u64,
    /// Orders abandoned because a call failed (after retries).
    pub failed_orders: u64,
    /// Response time of completed orders: the sum of their timed calls.
    pub order_rt: LatencyHistogram,
    pub order_rt_sum_ns: u64,
    pub txns: [TxnCounters; 10],
    /// Failed calls by kind (`deadlock`, `connection`, `query`, ...), retried ones included.
    pub errors: ErrorTally,
    pub reconnects: u64,
    /// (completion ns since the run's start, response time ns) of the latest orders, at most
    /// `LAST_N`, oldest first.
    pub last_orders: Vec<(u64, u64)>,
}

impl OltpRecorder {
    pub fn txn(&self, kind: TxnKind) -> &TxnCounters {
        &self.txns[kind.index()]
    }

    #[inline]
    pub fn record_call(&mut self, kind: TxnKind, ns: u64) {
        let t = &mut self.txns[kind.index()];
        t.calls += 1;
        t.sum_ns += ns;
        t.latency.record(ns);
    }

    pub fn record_order(&mut self, end_ns: u64, rt_ns: u64) {
        self.orders += 1;
        self.order_rt.record(rt_ns);
        self.order_rt_sum_ns += rt_ns;
        if self.last_orders.len() == LAST_N {
            self.last_orders.remove(0);
        }
        self.last_orders.push((end_ns, rt_ns));
    }

    pub fn merge(&mut self, o: &OltpRecorder) {
        self.orders += o.orders;
        self.purchases += o.purchases;
        self.rollbacks += o.rollbacks;
        self.failed_orders += o.failed_orders;
        self.order_rt.merge(&o.order_rt);
        self.order_rt_sum_ns += o.order_rt_sum_ns;
        for (a, b) in self.txns.iter_mut().zip(&o.txns) {
            a.merge(b);
        }
        self.errors.merge(&o.errors);
        self.reconnects += o.reconnects;
        self.last_orders.extend_from_slice(&o.last_orders);
        self.last_orders.sort_unstable();
        let excess = self.last_orders.len().saturating_sub(LAST_N);
        self.last_orders.drain(..excess);
    }
}

impl crate::run::IntervalData for OltpRecorder {
    /// DS3's orders per minute.
    const HEADLINE: crate::run::Headline = crate::run::Headline { name: "OPM", per_op_per_s: 60.0 };

    fn merge(&mut self, other: &Self) {
        OltpRecorder::merge(self, other)
    }
    fn ops(&self) -> u64 {
        self.orders
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_keeps_exact_sums_and_only_the_latest_hundred_orders() {
        let mut a = OltpRecorder::default();
        let mut b = OltpRecorder::default();
        for i in 0..80 {
            a.record_order(i * 2, 1_000 + i);
            b.record_order(i * 2 + 1, 5_000 + i);
        }
        a.record_call(TxnKind::Login, 10);
        b.record_call(TxnKind::Login, 30);
        a.merge(&b);
        assert_eq!(a.orders, 160);
        assert_eq!(a.last_orders.len(), LAST_N);
        assert_eq!(a.last_orders.first().unwrap().0, 60, "the oldest kept is the 100th latest");
        assert_eq!(a.last_orders.last().unwrap().0, 159);
        assert_eq!((a.txn(TxnKind::Login).calls, a.txn(TxnKind::Login).sum_ns), (2, 40));
        assert_eq!(a.order_rt.count(), 160);
    }
}
