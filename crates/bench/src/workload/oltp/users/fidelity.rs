//! How much storage work an order asks of a server, by the server's own counters: the one
//! entry point is [`measure`].
//!
//! The calls of `orders` orders are drawn once by the users' own `User` (same seed, same
//! choices as a run's first thread) against a recorder that stands in for the database. Those
//! calls are then replayed on a session, one call type at a time and then whole, each batch
//! from the state right after the load (`reset`), with the server's cumulative counters read
//! before and after it. The same calls replayed on a second kind of session (DS3's own SQL)
//! give the figures to compare with. A replay is one session on an idle server, so every
//! change of a counter is the batch's; the cost of opening and closing a session and of
//! reading the counters is measured with an empty batch before each batch and taken off, and
//! each batch is repeated, its median kept.
//!
//! The noise. The first session after a reset pays for what the database then loads once
//! (PostgreSQL reads its catalogues from disk into the new database's buffers: 25 blocks on
//! the test server, against none for the next session), so an empty session runs first and
//! the empty batch measured after it costs what the batch's own session costs. What remains
//! (a background worker's reads landing in one window or the other) can still make the empty
//! batch's change larger than a small batch's: such a figure is reported as zero and marked
//! below the noise, never as a negative count. (PostgreSQL 15's `pg_stat_force_next_flush`
//! is not needed: a session's statistics are flushed as it ends, before it leaves
//! `pg_stat_activity`, and the counters are read only once every session has left.)

use super::spec::OltpSpec;
use super::user::User;
use crate::db::{DbError, DbErrorKind, DbResult};
use crate::rng::stream;
use crate::workload::oltp::ds3::{
    Browse, Login, NewCustomer, NewReview, Purchase, ReviewOrder, ReviewSearch, Session,
};

/// A server's cumulative counters of the work it did, read on a connection of their own.
pub trait WorkCounters {
    /// (name as the server spells it, value) of every counter, always in the same order. A
    /// server whose statistics lag (PostgreSQL's arrive when a session ends) waits here until
    /// the sessions that did the work are gone.
    fn read(&mut self) -> DbResult<Vec<(&'static str, f64)>>;
}

/// One call of an order, with its arguments: what a user asked of the database.
#[derive(Debug, Clone, PartialEq)]
pub enum Call {
    Login(String),
    NewCustomer(Box<NewCustomer>),
    NewMember(i64, u8),
    BrowseCategory(u8, u32),
    BrowseActor(String, u32),
    BrowseTitle(String, u32),
    ReviewsByActor(String, u32, u32),
    ReviewsByTitle(String, u32, u32),
    GetReviews(i64, ReviewOrder, u32),
    NewReview(NewReview),
    NewHelpfulness(i64, i64, u8),
    Prices(Vec<i64>),
    Purchase(Purchase),
}

/// The call types in the order a table shows them.
pub const CALL_TYPES: [&str; 15] = [
    "login",
    "new customer",
    "new member",
    "browse by category",
    "browse by actor",
    "browse by title",
    "reviews by actor",
    "reviews by title",
    "reviews, most helpful",
    "reviews by stars",
    "reviews by date",
    "new review",
    "new helpfulness",
    "prices",
    "purchase",
];

impl Call {
    pub fn kind(&self) -> &'static str {
        let i = match self {
            Call::Login(_) => 0,
            Call::NewCustomer(_) => 1,
            Call::NewMember(..) => 2,
            Call::BrowseCategory(..) => 3,
            Call::BrowseActor(..) => 4,
            Call::BrowseTitle(..) => 5,
            Call::ReviewsByActor(..) => 6,
            Call::ReviewsByTitle(..) => 7,
            Call::GetReviews(_, ReviewOrder::Helpful, _) => 8,
            Call::GetReviews(_, ReviewOrder::Stars(_), _) => 9,
            Call::GetReviews(_, ReviewOrder::Date, _) => 10,
            Call::NewReview(_) => 11,
            Call::NewHelpfulness(..) => 12,
            Call::Prices(_) => 13,
            Call::Purchase(_) => 14,
        };
        CALL_TYPES[i]
    }

    /// Runs the call on `s`; what it returns is not kept.
    pub fn run(&self, s: &mut dyn Session) -> DbResult<()> {
        match self {
            Call::Login(user) => s.login(user, "password").map(drop),
            Call::NewCustomer(c) => s.new_customer(c).map(drop),
            Call::NewMember(id, level) => s.new_member(*id, *level).map(drop),
            Call::BrowseCategory(c, batch) => s.browse(Browse::Category(*c), *batch).map(drop),
            Call::BrowseActor(a, batch) => s.browse(Browse::Actor(a), *batch).map(drop),
            Call::BrowseTitle(t, batch) => s.browse(Browse::Title(t), *batch).map(drop),
            Call::ReviewsByActor(w, batch, depth) => {
                s.review_search(ReviewSearch::Actor(w), *batch, *depth).map(drop)
            }
            Call::ReviewsByTitle(w, batch, depth) => {
                s.review_search(ReviewSearch::Title(w), *batch, *depth).map(drop)
            }
            Call::GetReviews(prod, order, batch) => s.get_reviews(*prod, *order, *batch).map(drop),
            Call::NewReview(r) => s.new_review(r).map(drop),
            Call::NewHelpfulness(review, customer, rating) => {
                s.new_helpfulness(*review, *customer, *rating).map(drop)
            }
            Call::Prices(ids) => s.prices(ids, &mut Vec::new()),
            Call::Purchase(p) => s.purchase(p).map(drop),
        }
    }
}

/// Stands in for the database while the user draws its orders: it keeps every call and
/// answers as a loaded database would (user `userN` is customer N, every new name is free,
/// every product costs $10). A new customer's later calls go under a loaded customer's id,
/// so that a batch of one call type, replayed without the new customers, finds every
/// customer it names; the rows written are the same.
struct Recorder {
    calls: Vec<Call>,
    new_customers: i64,
    max_customer: i64,
}

impl Session for Recorder {
    fn login(&mut self, username: &str, _password: &str) -> DbResult<Login> {
        self.calls.push(Call::Login(username.to_owned()));
        let id = username.trim_start_matches("user").parse().unwrap_or(1);
        Ok(Login { customer_id: id, history_rows: 0 })
    }
    fn new_customer(&mut self, c: &NewCustomer) -> DbResult<Option<i64>> {
        self.calls.push(Call::NewCustomer(Box::new(c.clone())));
        self.new_customers += 1;
        Ok(Some(1 + self.new_customers % self.max_customer))
    }
    fn new_member(&mut self, customer_id: i64, level: u8) -> DbResult<bool> {
        self.calls.push(Call::NewMember(customer_id, level));
        Ok(true)
    }
    fn browse(&mut self, by: Browse<'_>, batch: u32) -> DbResult<u32> {
        self.calls.push(match by {
            Browse::Category(c) => Call::BrowseCategory(c, batch),
            Browse::Actor(a) => Call::BrowseActor(a.to_owned(), batch),
            Browse::Title(t) => Call::BrowseTitle(t.to_owned(), batch),
        });
        Ok(0)
    }
    fn review_search(&mut self, by: ReviewSearch<'_>, batch: u32, depth: u32) -> DbResult<u32> {
        self.calls.push(match by {
            ReviewSearch::Actor(w) => Call::ReviewsByActor(w.to_owned(), batch, depth),
            ReviewSearch::Title(w) => Call::ReviewsByTitle(w.to_owned(), batch, depth),
        });
        Ok(0)
    }
    fn get_reviews(&mut self, prod_id: i64, order: ReviewOrder, batch: u32) -> DbResult<u32> {
        self.calls.push(Call::GetReviews(prod_id, order, batch));
        Ok(0)
    }
    fn new_review(&mut self, r: &NewReview) -> DbResult<i64> {
        self.calls.push(Call::NewReview(r.clone()));
        Ok(1)
    }
    fn new_helpfulness(&mut self, review_id: i64, customer_id: i64, rating: u8) -> DbResult<i64> {
        self.calls.push(Call::NewHelpfulness(review_id, customer_id, rating));
        Ok(1)
    }
    fn prices(&mut self, prod_ids: &[i64], out: &mut Vec<(i64, i64)>) -> DbResult<()> {
        self.calls.push(Call::Prices(prod_ids.to_vec()));
        out.clear();
        out.extend(prod_ids.iter().map(|&p| (p, 1_000)));
        Ok(())
    }
    fn purchase(&mut self, p: &Purchase) -> DbResult<Option<i64>> {
        self.calls.push(Call::Purchase(p.clone()));
        Ok(Some(1))
    }
    fn set_restock(&mut self, _on: bool) -> DbResult<()> {
        Ok(())
    }
}

/// The calls of `orders` orders as the first thread of a run with `spec` makes them.
pub fn record_orders(spec: &OltpSpec, orders: u64) -> Vec<Call> {
    let mut rec =
        Recorder { calls: Vec::new(), new_customers: 0, max_customer: spec.max_customer.max(1) as i64 };
    let mut user = User::new(spec, stream(spec.seed, 0), stream(spec.seed, 1));
    for _ in 0..orders {
        // The recorder never fails.
        let _ = user.order(&mut rec);
    }
    rec.calls
}

/// What one batch of calls cost the server.
#[derive(Debug, Clone, PartialEq)]
pub struct Batch {
    /// A call type of [`CALL_TYPES`], or "order" for the whole orders.
    pub name: &'static str,
    pub calls: u64,
    /// Calls the database refused (DS3's PURCHASE raises an error for an item out of stock).
    pub errors: u64,
    /// The change of each counter over the batch, the empty batch's taken off; never below
    /// zero.
    pub delta: Vec<f64>,
    /// Per counter: the batch changed it less than the empty batch did (the median over the
    /// repeats), so its figure, shown as zero, is below the noise.
    pub below_noise: Vec<bool>,
}

/// Everything one kind of session cost, per call type and for the whole orders.
#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    /// Counter names, in the order of every `delta`.
    pub counters: Vec<&'static str>,
    pub orders: u64,
    pub batches: Vec<Batch>,
}

/// What a replay needs of a database: a way back to the state after the load, sessions of
/// the kind measured, and the counters.
pub struct Replay<'a> {
    pub reset: &'a dyn Fn() -> DbResult<()>,
    pub connect: &'a dyn Fn() -> DbResult<Box<dyn Session>>,
    pub counters: &'a mut dyn WorkCounters,
}

/// Replays `calls` (the calls of `orders` orders) type by type and then whole, each batch
/// `repeat` times; a counter's figure is its median over the repeats.
pub fn measure(calls: &[Call], orders: u64, repeat: u32, r: &mut Replay<'_>) -> DbResult<Measured> {
    let mut counters = Vec::new();
    let mut batches = Vec::new();
    let mut all: Vec<(&'static str, Vec<&Call>)> = CALL_TYPES
        .iter()
        .map(|&name| (name, calls.iter().filter(|c| c.kind() == name).collect::<Vec<_>>()))
        .filter(|(_, picked)| !picked.is_empty())
        .collect();
    all.push(("order", calls.iter().collect()));
    for (name, picked) in &all {
        let mut runs = Vec::new();
        for _ in 0..repeat.max(1) {
            let (names, errors, delta) = one_batch(r, picked)?;
            counters = names;
            runs.push((errors, delta));
        }
        let medians: Vec<f64> =
            (0..counters.len()).map(|i| median(runs.iter().map(|(_, d)| d[i]).collect())).collect();
        batches.push(Batch {
            name,
            calls: picked.len() as u64,
            errors: runs[0].0,
            delta: medians.iter().map(|&d| d.max(0.0)).collect(),
            below_noise: medians.iter().map(|&d| d < 0.0).collect(),
        });
    }
    Ok(Measured { counters, orders, batches })
}

/// One batch from the state after the load: each counter's change over the calls, less its
/// change over an empty batch taken just before from the same state (opening and closing a
/// session, reading the counters), after a first empty session that pays for what the
/// database loads once after a reset.
fn one_batch(r: &mut Replay<'_>, picked: &[&Call]) -> DbResult<(Vec<&'static str>, u64, Vec<f64>)> {
    (r.reset)()?;
    replay(r, &[])?;
    let start = r.counters.read()?;
    replay(r, &[])?;
    let before = r.counters.read()?;
    let errors = replay(r, picked)?;
    let after = r.counters.read()?;
    let names = start.iter().map(|(n, _)| *n).collect();
    let delta = start.iter().zip(&before).zip(&after).map(|(((_, s), (_, b)), (_, a))| (a - b) - (b - s));
    Ok((names, errors, delta.collect()))
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    let n = values.len();
    if n % 2 == 1 { values[n / 2] } else { (values[n / 2 - 1] + values[n / 2]) / 2.0 }
}

/// Runs `calls` on a new session, closed at the end; returns how many the database refused.
/// A lost connection ends the replay with an error: its figures would be incomplete.
fn replay(r: &Replay<'_>, calls: &[&Call]) -> DbResult<u64> {
    let mut session = (r.connect)()?;
    let mut errors = 0;
    for call in calls {
        match call.run(session.as_mut()) {
            Ok(()) => {}
            Err(e) if e.kind == DbErrorKind::Connection => {
                return Err(DbError::new(e.kind, format!("{} during the replay: {e}", call.kind())));
            }
            Err(_) => errors += 1,
        }
    }
    drop(session);
    Ok(errors)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    /// A server's one counter: each session costs 5, the first after a reset 50 more (cold
    /// catalogues), the second `noise` more (a background worker's reads landing there), each
    /// call `per_call`.
    #[derive(Default)]
    struct Server {
        count: f64,
        sessions_since_reset: u32,
        per_call: f64,
        noise: f64,
    }

    struct Fake(Arc<Mutex<Server>>);

    impl Fake {
        fn call<T: Default>(&mut self) -> DbResult<T> {
            let mut s = self.0.lock().unwrap();
            s.count += s.per_call;
            Ok(T::default())
        }
    }

    impl Session for Fake {
        fn login(&mut self, _: &str, _: &str) -> DbResult<Login> {
            self.call::<()>().map(|()| Login { customer_id: 1, history_rows: 0 })
        }
        fn new_customer(&mut self, _: &NewCustomer) -> DbResult<Option<i64>> {
            self.call()
        }
        fn new_member(&mut self, _: i64, _: u8) -> DbResult<bool> {
            self.call()
        }
        fn browse(&mut self, _: Browse<'_>, _: u32) -> DbResult<u32> {
            self.call()
        }
        fn review_search(&mut self, _: ReviewSearch<'_>, _: u32, _: u32) -> DbResult<u32> {
            self.call()
        }
        fn get_reviews(&mut self, _: i64, _: ReviewOrder, _: u32) -> DbResult<u32> {
            self.call()
        }
        fn new_review(&mut self, _: &NewReview) -> DbResult<i64> {
            self.call()
        }
        fn new_helpfulness(&mut self, _: i64, _: i64, _: u8) -> DbResult<i64> {
            self.call()
        }
        fn prices(&mut self, _: &[i64], _: &mut Vec<(i64, i64)>) -> DbResult<()> {
            self.call()
        }
        fn purchase(&mut self, _: &Purchase) -> DbResult<Option<i64>> {
            self.call()
        }
        fn set_restock(&mut self, _: bool) -> DbResult<()> {
            Ok(())
        }
    }

    struct Counter(Arc<Mutex<Server>>);

    impl WorkCounters for Counter {
        fn read(&mut self) -> DbResult<Vec<(&'static str, f64)>> {
            Ok(vec![("blks_read", self.0.lock().unwrap().count)])
        }
    }

    /// `measure` of 20 orders on the fake server: each batch's name, calls, blks_read and
    /// whether that was below the noise.
    fn measured(per_call: f64, noise: f64) -> Vec<(&'static str, u64, f64, bool)> {
        let server = Arc::new(Mutex::new(Server { per_call, noise, ..Server::default() }));
        let reset = || {
            server.lock().unwrap().sessions_since_reset = 0;
            Ok(())
        };
        let connect = || -> DbResult<Box<dyn Session>> {
            let mut s = server.lock().unwrap();
            s.sessions_since_reset += 1;
            s.count += 5.0
                + match s.sessions_since_reset {
                    1 => 50.0,
                    2 => s.noise,
                    _ => 0.0,
                };
            Ok(Box::new(Fake(server.clone())))
        };
        let calls = record_orders(&OltpSpec::default(), 20);
        let mut counters = Counter(server.clone());
        let m =
            measure(&calls, 20, 3, &mut Replay { reset: &reset, connect: &connect, counters: &mut counters })
                .unwrap();
        m.batches.iter().map(|b| (b.name, b.calls, b.delta[0], b.below_noise[0])).collect()
    }

    #[test]
    fn what_the_first_session_after_a_reset_loads_is_not_taken_off_a_batch() {
        for (name, calls, delta, below) in measured(2.0, 0.0) {
            assert_eq!((delta, below), (2.0 * calls as f64, false), "{name} ({calls} calls)");
        }
    }

    #[test]
    fn a_batch_that_changed_a_counter_less_than_the_empty_batch_is_zero_and_below_the_noise() {
        let batches = measured(2.0, 30.0);
        for (name, calls, delta, below) in &batches {
            let own = 2.0 * *calls as f64;
            assert_eq!(*below, own < 30.0, "{name} ({calls} calls): {delta}");
            assert_eq!(*delta, (own - 30.0).max(0.0), "{name} ({calls} calls)");
        }
        assert!(batches.iter().any(|b| b.3) && batches.iter().any(|b| !b.3), "{batches:?}");
    }

    #[test]
    fn recorded_orders_follow_the_seed_and_the_mix() {
        let spec = OltpSpec { seed: 7, ..OltpSpec::default() };
        let calls = record_orders(&spec, 200);
        assert_eq!(calls, record_orders(&spec, 200), "the same seed draws the same calls");
        assert_ne!(calls, record_orders(&OltpSpec { seed: 8, ..spec.clone() }, 200));
        let count = |name: &str| calls.iter().filter(|c| c.kind() == name).count();
        // Every order ends in one price look-up and one purchase, and starts with a login or
        // a new customer (20 % by default).
        assert_eq!(count("purchase"), 200);
        assert_eq!(count("prices"), 200);
        assert_eq!(count("login") + count("new customer"), 200);
        assert!((20..=60).contains(&count("new customer")), "{}", count("new customer"));
        // Browses: U[1, 5] per order, mean 3.
        let browses = count("browse by category") + count("browse by actor") + count("browse by title");
        assert!((500..=700).contains(&browses), "{browses}");
    }
}
