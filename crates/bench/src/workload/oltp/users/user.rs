//! One emulated customer's order, DS3's sequence (spec §3.2): log in or register, maybe join
//! the membership, browse, read and write reviews, look up prices, buy, think.
//!
//! One uniform draw `u` per order decides every optional step, as in DS3, so members, new
//! reviews and ratings all fall inside the new-customer band. Each database call is timed
//! here and only here, retries of a deadlocked call included; the order's response time is
//! the sum of its timed calls except the price look-up.

use super::recorder::TxnKind;
use super::spec::OltpSpec;
use crate::db::{DbErrorKind, DbResult};
use crate::rng::{WorkerRng, below, between, unit};
use crate::workload::oltp::datagen::new_customer;
use crate::workload::oltp::ds3::{Browse, NewReview, Purchase, ReviewOrder, ReviewSearch, Session};
use crate::workload::oltp::words;
use std::time::{Duration, Instant};

/// Attempts of a call that keeps deadlocking before the order is abandoned (DS3's 10).
const MAX_TRIES: u32 = 10;
/// Most items one purchase buys (DS3's cap).
const MAX_ITEMS: u64 = 10;

/// What an order did, handed to the recorder after it ends.
#[derive(Debug, Default)]
pub(super) struct OrderLog {
    /// (call, ns) of every successful call.
    pub calls: Vec<(TxnKind, u64)>,
    /// Kinds of failed attempts that were retried.
    pub retried: Vec<&'static str>,
    pub rt_ns: u64,
    pub purchased: bool,
    pub rolled_back: bool,
}

pub(super) struct User<'a> {
    spec: &'a OltpSpec,
    /// Every choice of the workload.
    rng: WorkerRng,
    /// Pauses between retries, apart so that retries do not shift the workload's choices.
    jitter: WorkerRng,
    log: OrderLog,
    prices: Vec<(i64, i64)>,
}

impl<'a> User<'a> {
    pub(super) fn new(spec: &'a OltpSpec, rng: WorkerRng, jitter: WorkerRng) -> Self {
        User { spec, rng, jitter, log: OrderLog::default(), prices: Vec::new() }
    }

    /// Runs one order; on success its log, on failure the error that ended it (with the log
    /// of what was done before, for the retried-error counts).
    pub(super) fn order(&mut self, s: &mut dyn Session) -> (OrderLog, DbResult<()>) {
        self.log = OrderLog::default();
        let result = self.steps(s);
        (std::mem::take(&mut self.log), result)
    }

    /// Think time after an order: U[0, 2·think_time).
    pub(super) fn think(&mut self) -> Duration {
        let mean = self.spec.think_time.as_secs_f64();
        Duration::from_secs_f64(unit(&mut self.rng) * 2.0 * mean)
    }

    fn steps(&mut self, s: &mut dyn Session) -> DbResult<()> {
        let spec = self.spec;
        let u = unit(&mut self.rng) * 100.0;
        let customer = if u >= spec.pct_newcustomers { self.login(s)? } else { self.register(s)? };
        if !spec.ds2_mode && u <= spec.pct_newmember {
            self.join(s)?;
        }
        self.browse(s)?;
        if !spec.ds2_mode {
            self.reviews(s, customer, u)?;
        }
        self.purchase(s, customer)
    }

    fn call<T>(
        &mut self,
        kind: TxnKind,
        s: &mut dyn Session,
        f: impl FnMut(&mut dyn Session) -> DbResult<T>,
    ) -> DbResult<T> {
        timed(&mut self.log, &mut self.jitter, kind, s, f)
    }

    fn login(&mut self, s: &mut dyn Session) -> DbResult<i64> {
        let user = format!("user{}", between(&mut self.rng, 1, self.spec.max_customer));
        let login = self.call(TxnKind::Login, s, |s| s.login(&user, "password"))?;
        if login.customer_id == 0 {
            return Err(crate::db::DbError::new(
                DbErrorKind::Missing,
                format!(
                    "login of {user} found no customer: the database was loaded at another size than this run's"
                ),
            ));
        }
        Ok(login.customer_id)
    }

    /// A new customer; a taken user name is retried with a new number, all tries in one
    /// timed call, since the user waited for them all.
    fn register(&mut self, s: &mut dyn Session) -> DbResult<i64> {
        let (rng, max) = (&mut self.rng, self.spec.max_customer);
        timed(&mut self.log, &mut self.jitter, TxnKind::NewCustomer, s, |s| {
            register_with(rng, max, |c| s.new_customer(c))
        })
    }

    /// A random customer joins (DS3 picks any customer, not the one logged in), retried until
    /// one who is not yet a member is found; one timed call.
    fn join(&mut self, s: &mut dyn Session) -> DbResult<()> {
        let (rng, max) = (&mut self.rng, self.spec.max_customer);
        timed(&mut self.log, &mut self.jitter, TxnKind::NewMember, s, |s| {
            loop {
                let id = between(rng, 1, max) as i64;
                if s.new_member(id, between(rng, 1, 3) as u8)? {
                    return Ok(());
                }
            }
        })
    }

    /// U[1, 2·mean − 1]: DS3's "mean `mean`" draw.
    fn around(&mut self, mean: u32) -> u32 {
        between(&mut self.rng, 1, (2 * u64::from(mean)).saturating_sub(1).max(1)) as u32
    }

    fn pick<'w>(&mut self, list: &'w [&'static str]) -> &'w str {
        list[below(&mut self.rng, list.len() as u64) as usize]
    }

    fn browse(&mut self, s: &mut dyn Session) -> DbResult<()> {
        for _ in 0..self.around(self.spec.n_searches) {
            let batch = self.around(self.spec.search_batch_size);
            let text;
            let by = match below(&mut self.rng, 3) {
                0 => Browse::Category(between(&mut self.rng, 1, 16) as u8),
                1 => {
                    text = format!("{} {}", self.pick(words::first_names()), self.pick(words::last_names()));
                    Browse::Actor(&text)
                }
                _ => {
                    text = format!("{} {}", self.pick(words::title_words()), self.pick(words::title_words()));
                    Browse::Title(&text)
                }
            };
            self.call(TxnKind::Browse, s, |s| s.browse(by, batch))?;
        }
        Ok(())
    }

    fn reviews(&mut self, s: &mut dyn Session, customer: i64, u: f64) -> DbResult<()> {
        let spec = self.spec;
        for _ in 0..self.around(spec.n_reviews) {
            let batch = self.around(spec.search_batch_size);
            let by = if below(&mut self.rng, 2) == 0 {
                ReviewSearch::Actor(self.pick(words::last_names()))
            } else {
                ReviewSearch::Title(self.pick(words::title_words()))
            };
            self.call(TxnKind::ReviewBrowse, s, |s| s.review_search(by, batch, spec.search_depth))?;
        }
        let stars = between(&mut self.rng, 1, 5) as u8;
        for _ in 0..self.around(spec.n_reviews) {
            let batch = self.around(spec.search_batch_size);
            let order = [ReviewOrder::Helpful, ReviewOrder::Stars(stars), ReviewOrder::Date]
                [below(&mut self.rng, 3) as usize];
            let prod = self.hot_weighted_product();
            self.call(TxnKind::GetReviews, s, |s| s.get_reviews(prod, order, batch))?;
        }
        if u <= spec.pct_newreviews {
            let review = self.new_review(customer);
            self.call(TxnKind::NewReview, s, |s| s.new_review(&review))?;
        }
        if u <= spec.pct_newhelpfulness {
            let review = between(&mut self.rng, 1, 20 * spec.max_product) as i64;
            let rating = between(&mut self.rng, 1, 10) as u8;
            self.call(TxnKind::NewHelpfulness, s, |s| s.new_helpfulness(review, customer, rating))?;
        }
        Ok(())
    }

    fn new_review(&mut self, customer: i64) -> NewReview {
        let mut words_of = |n: usize| {
            let mut t = String::with_capacity(n * 7);
            for i in 0..n {
                if i > 0 {
                    t.push(' ');
                }
                t.push_str(self.pick(words::review_words()));
            }
            t
        };
        let (summary, text) = (words_of(3), words_of(25));
        NewReview {
            prod_id: between(&mut self.rng, 1, self.spec.max_product) as i64,
            stars: between(&mut self.rng, 1, 5) as u8,
            customer_id: customer,
            summary,
            text,
        }
    }

    /// A product where every 10,000th id is ten times as likely (DS3's hot sellers).
    fn hot_weighted_product(&mut self) -> i64 {
        let n = self.spec.max_product;
        let hot = n / 10_000;
        let x = below(&mut self.rng, n + 9 * hot);
        if x < n { x as i64 + 1 } else { (((x - n) / 9 + 1) * 10_000) as i64 }
    }

    fn purchase(&mut self, s: &mut dyn Session, customer: i64) -> DbResult<()> {
        let n = u64::from(self.around(self.spec.n_line_items)).min(MAX_ITEMS);
        let items: Vec<(i64, u16)> =
            (0..n).map(|_| (self.hot_weighted_product(), between(&mut self.rng, 1, 3) as u16)).collect();
        let ids: Vec<i64> = items.iter().map(|i| i.0).collect();
        let mut prices = std::mem::take(&mut self.prices);
        self.call(TxnKind::PriceQuery, s, |s| s.prices(&ids, &mut prices))?;
        let order = Purchase::priced(customer, items, &prices);
        self.prices = prices;
        let id = self.call(TxnKind::Purchase, s, |s| s.purchase(&order))?;
        self.log.purchased = true;
        self.log.rolled_back = id.is_none();
        Ok(())
    }
}

/// Times `f` (the one place a user reads the clock for a call), retrying it after a short
/// random pause while it deadlocks; the pauses count in the call's time, as the user waits.
fn timed<T>(
    log: &mut OrderLog,
    jitter: &mut WorkerRng,
    kind: TxnKind,
    s: &mut dyn Session,
    mut f: impl FnMut(&mut dyn Session) -> DbResult<T>,
) -> DbResult<T> {
    let t0 = Instant::now();
    let mut attempt = 1;
    loop {
        match f(s) {
            Err(e) if e.kind == DbErrorKind::Deadlock && attempt < MAX_TRIES => {
                log.retried.push(e.kind.as_str());
                std::thread::sleep(Duration::from_millis(below(jitter, 100)));
                attempt += 1;
            }
            other => {
                let ns = t0.elapsed().as_nanos() as u64;
                if other.is_ok() {
                    log.calls.push((kind, ns));
                    if kind != TxnKind::PriceQuery {
                        log.rt_ns += ns;
                    }
                }
                return other;
            }
        }
    }
}

/// Draws new customers until `try_name` takes one: the first name from DS3's space
/// `newuser<U[1,max_customer]>`, each retry from a space twice as large as the last. DS3 draws
/// from the same space for ever, so once a long run has registered about as many customers as
/// the size holds, nearly every name is taken and the retries never end; a real site's names
/// keep growing with it, and so does this space.
fn register_with(
    rng: &mut WorkerRng,
    max_customer: u64,
    mut try_name: impl FnMut(&crate::workload::oltp::ds3::NewCustomer) -> DbResult<Option<i64>>,
) -> DbResult<i64> {
    let mut names = max_customer.max(1);
    loop {
        if let Some(id) = try_name(&new_customer(rng, names))? {
            return Ok(id);
        }
        names = names.saturating_mul(2);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_run_past_the_sizes_customers_still_finds_a_free_name_in_a_few_tries() {
        let mut rng = crate::rng::stream(5, 0);
        // Every name of the size's space is taken, as after a long run.
        let max = 1_000u64;
        let mut tries = 0;
        let id = register_with(&mut rng, max, |c| {
            tries += 1;
            let n: u64 = c.username.strip_prefix("newuser").unwrap().parse().unwrap();
            Ok((n > max).then_some(n as i64))
        })
        .unwrap();
        assert!(id > max as i64 && tries < 20, "{tries} tries");
        // A free first draw is DS3's: U[1, max_customer].
        let first = register_with(&mut rng, max, |c| Ok(Some(c.username[7..].parse().unwrap()))).unwrap();
        assert!((1..=max as i64).contains(&first));
    }

    fn user(max_product: u64) -> User<'static> {
        let spec = Box::leak(Box::new(OltpSpec { max_product, ..OltpSpec::default() }));
        User::new(spec, crate::rng::stream(3, 0), crate::rng::stream(3, 1))
    }

    #[test]
    fn hot_products_are_ten_times_as_likely_as_others() {
        let mut u = user(100_000);
        let mut hot = 0u64;
        let mut one_cold = 0u64;
        let draws = 2_000_000;
        for _ in 0..draws {
            let p = u.hot_weighted_product();
            assert!((1..=100_000).contains(&p));
            if p == 50_000 {
                hot += 1;
            }
            if p == 12_345 {
                one_cold += 1;
            }
        }
        // 100,090 slots: a hot id has 10 of them, a cold one 1.
        let expect_hot = draws as f64 * 10.0 / 100_090.0;
        assert!((hot as f64 - expect_hot).abs() < expect_hot * 0.2, "hot {hot} vs {expect_hot}");
        assert!(one_cold < hot / 4, "cold {one_cold} vs hot {hot}");
    }

    #[test]
    fn mean_draws_stay_within_one_and_twice_the_mean_less_one() {
        let mut u = user(10);
        let draws: Vec<u32> = (0..10_000).map(|_| u.around(3)).collect();
        assert!(draws.iter().all(|d| (1..=5).contains(d)));
        let mean = draws.iter().sum::<u32>() as f64 / draws.len() as f64;
        assert!((mean - 3.0).abs() < 0.1, "{mean}");
        assert!((0..100).all(|_| u.around(1) == 1));
    }
}
