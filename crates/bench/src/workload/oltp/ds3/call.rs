//! One DS3 call as a value: what `oltp run --record` writes for every call a user makes, what
//! a replay of such a log (or of a web tier's log, mapped to calls) runs again. Its JSON form
//! is `{"type": "<call>", "params": {...}}`; numbers may come as text and lists as text with
//! commas, as a web server's query string gives them.
//!
//! A call that created a row remembers the id it got (`id`) where the recording knew it, so a
//! replay can take the id its own database gave instead in the session's later calls
//! ([`Ids`]): a customer registered and then buying, a review written and then rated.

use super::{Browse, NewCustomer, NewReview, Purchase, ReviewOrder, ReviewSearch, Session};
use crate::db::DbResult;
use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize};
use std::collections::HashMap;
use std::str::FromStr;

/// A DS3 call and its arguments.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", content = "params", rename_all = "snake_case")]
pub enum Call {
    Login {
        username: String,
        password: String,
    },
    NewCustomer {
        #[serde(flatten)]
        customer: Box<NewCustomer>,
        /// The id the recording got.
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "some_int")]
        id: Option<i64>,
    },
    NewMember {
        #[serde(deserialize_with = "int")]
        customer_id: i64,
        #[serde(deserialize_with = "int")]
        level: u8,
    },
    BrowseByCategory {
        #[serde(deserialize_with = "int")]
        category: u8,
        #[serde(deserialize_with = "int")]
        batch: u32,
    },
    BrowseByActor {
        actor: String,
        #[serde(deserialize_with = "int")]
        batch: u32,
    },
    BrowseByTitle {
        title: String,
        #[serde(deserialize_with = "int")]
        batch: u32,
    },
    ReviewsByActor {
        actor: String,
        #[serde(deserialize_with = "int")]
        batch: u32,
        #[serde(deserialize_with = "int")]
        depth: u32,
    },
    ReviewsByTitle {
        title: String,
        #[serde(deserialize_with = "int")]
        batch: u32,
        #[serde(deserialize_with = "int")]
        depth: u32,
    },
    /// Most helpful first.
    GetReviews {
        #[serde(deserialize_with = "int")]
        prod_id: i64,
        #[serde(deserialize_with = "int")]
        batch: u32,
    },
    /// Only reviews of `stars` stars.
    GetReviewsByStars {
        #[serde(deserialize_with = "int")]
        prod_id: i64,
        #[serde(deserialize_with = "int")]
        stars: u8,
        #[serde(deserialize_with = "int")]
        batch: u32,
    },
    /// Newest first.
    GetReviewsByDate {
        #[serde(deserialize_with = "int")]
        prod_id: i64,
        #[serde(deserialize_with = "int")]
        batch: u32,
    },
    NewReview {
        #[serde(flatten)]
        review: NewReview,
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "some_int")]
        id: Option<i64>,
    },
    NewHelpfulness {
        #[serde(deserialize_with = "int")]
        review_id: i64,
        #[serde(deserialize_with = "int")]
        customer_id: i64,
        #[serde(deserialize_with = "int")]
        rating: u8,
    },
    Prices {
        #[serde(deserialize_with = "ints")]
        prod_ids: Vec<i64>,
    },
    /// The totals as the caller worked them out from `prices`; where a log has none (a web
    /// tier's log: its page looked the prices up itself), the replay looks them up as that
    /// page did, in the same request.
    Purchase {
        #[serde(deserialize_with = "int")]
        customer_id: i64,
        #[serde(deserialize_with = "ints")]
        prod_ids: Vec<i64>,
        #[serde(deserialize_with = "ints")]
        quantities: Vec<u16>,
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "some_int")]
        net_cents: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "some_int")]
        tax_cents: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none", deserialize_with = "some_int")]
        total_cents: Option<i64>,
    },
}

/// Each call's type name, as the log writes it.
pub const CALL_TYPES: [&str; 15] = [
    "login",
    "new_customer",
    "new_member",
    "browse_by_category",
    "browse_by_actor",
    "browse_by_title",
    "reviews_by_actor",
    "reviews_by_title",
    "get_reviews",
    "get_reviews_by_stars",
    "get_reviews_by_date",
    "new_review",
    "new_helpfulness",
    "prices",
    "purchase",
];

/// The ids a replayed session's database gave where the recording got others: recorded id ->
/// this replay's.
#[derive(Debug, Default)]
pub struct Ids {
    customers: HashMap<i64, i64>,
    reviews: HashMap<i64, i64>,
}

impl Ids {
    fn customer(&self, recorded: i64) -> i64 {
        self.customers.get(&recorded).copied().unwrap_or(recorded)
    }

    fn review(&self, recorded: i64) -> i64 {
        self.reviews.get(&recorded).copied().unwrap_or(recorded)
    }

    fn remember(map: &mut HashMap<i64, i64>, recorded: Option<i64>, got: Option<i64>) {
        if let (Some(r), Some(g)) = (recorded, got)
            && r != g
        {
            map.insert(r, g);
        }
    }
}

impl Call {
    /// Its type name: the per-type figures' key.
    pub fn kind(&self) -> &'static str {
        let i = match self {
            Call::Login { .. } => 0,
            Call::NewCustomer { .. } => 1,
            Call::NewMember { .. } => 2,
            Call::BrowseByCategory { .. } => 3,
            Call::BrowseByActor { .. } => 4,
            Call::BrowseByTitle { .. } => 5,
            Call::ReviewsByActor { .. } => 6,
            Call::ReviewsByTitle { .. } => 7,
            Call::GetReviews { .. } => 8,
            Call::GetReviewsByStars { .. } => 9,
            Call::GetReviewsByDate { .. } => 10,
            Call::NewReview { .. } => 11,
            Call::NewHelpfulness { .. } => 12,
            Call::Prices { .. } => 13,
            Call::Purchase { .. } => 14,
        };
        CALL_TYPES[i]
    }

    /// Runs the call on `s`, with the ids `ids` says this database gave in place of the
    /// recorded ones (and noting those it gives now). An answer that is no row (a login that
    /// matches nobody, a taken user name, an order rolled back for want of stock) is an answer,
    /// not an error, as it was for the site.
    pub fn run(&self, s: &mut dyn Session, ids: &mut Ids) -> DbResult<()> {
        match self {
            Call::BrowseByCategory { category, batch } => {
                s.browse(Browse::Category(*category), *batch).map(drop)
            }
            Call::BrowseByActor { actor, batch } => s.browse(Browse::Actor(actor), *batch).map(drop),
            Call::BrowseByTitle { title, batch } => s.browse(Browse::Title(title), *batch).map(drop),
            Call::GetReviews { prod_id, batch } => {
                s.get_reviews(*prod_id, ReviewOrder::Helpful, *batch).map(drop)
            }
            Call::GetReviewsByStars { prod_id, stars, batch } => {
                s.get_reviews(*prod_id, ReviewOrder::Stars(*stars), *batch).map(drop)
            }
            Call::GetReviewsByDate { prod_id, batch } => {
                s.get_reviews(*prod_id, ReviewOrder::Date, *batch).map(drop)
            }
            Call::Login { username, password } => s.login(username, password).map(drop),
            Call::NewCustomer { customer, id } if customer.region == 0 => {
                let region = if customer.country == "US" { 1 } else { 2 };
                let customer = Box::new(NewCustomer { region, ..(**customer).clone() });
                Call::NewCustomer { customer, id: *id }.run(s, ids)
            }
            Call::NewCustomer { customer, id } => {
                let got = s.new_customer(customer)?;
                Ids::remember(&mut ids.customers, *id, got);
                Ok(())
            }
            Call::NewMember { customer_id, level } => {
                s.new_member(ids.customer(*customer_id), *level).map(drop)
            }
            Call::ReviewsByActor { actor, batch, depth } => {
                s.review_search(ReviewSearch::Actor(actor), *batch, *depth).map(drop)
            }
            Call::ReviewsByTitle { title, batch, depth } => {
                s.review_search(ReviewSearch::Title(title), *batch, *depth).map(drop)
            }
            Call::NewReview { review, id } => {
                let review = NewReview { customer_id: ids.customer(review.customer_id), ..review.clone() };
                let got = s.new_review(&review)?;
                Ids::remember(&mut ids.reviews, *id, Some(got));
                Ok(())
            }
            Call::NewHelpfulness { review_id, customer_id, rating } => {
                s.new_helpfulness(ids.review(*review_id), ids.customer(*customer_id), *rating).map(drop)
            }
            Call::Prices { prod_ids } => s.prices(prod_ids, &mut Vec::new()),
            Call::Purchase { customer_id, prod_ids, quantities, net_cents, tax_cents, total_cents } => {
                let items: Vec<(i64, u16)> =
                    prod_ids.iter().copied().zip(quantities.iter().copied()).collect();
                let customer = ids.customer(*customer_id);
                let order = match (net_cents, tax_cents, total_cents) {
                    (Some(net), Some(tax), Some(total)) => Purchase {
                        customer_id: customer,
                        items,
                        net_cents: *net,
                        tax_cents: *tax,
                        total_cents: *total,
                    },
                    _ => {
                        let mut prices = Vec::with_capacity(prod_ids.len());
                        s.prices(prod_ids, &mut prices)?;
                        Purchase::priced(customer, items, &prices)
                    }
                };
                s.purchase(&order).map(drop)
            }
        }
    }

    /// The call as JSON `{"type": ..., "params": {...}}`.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A whole number from a JSON number or from text (a query string's value).
pub(super) fn int<'de, D: Deserializer<'de>, T: FromStr>(d: D) -> Result<T, D::Error> {
    let text = Raw::deserialize(d)?.text();
    parse_int(&text).map_err(D::Error::custom)
}

fn some_int<'de, D: Deserializer<'de>>(d: D) -> Result<Option<i64>, D::Error> {
    int(d).map(Some)
}

/// A list of whole numbers from a JSON list or from text with commas (`1,2,3`).
fn ints<'de, D: Deserializer<'de>, T: FromStr>(d: D) -> Result<Vec<T>, D::Error> {
    #[derive(Deserialize)]
    #[serde(untagged)]
    enum List {
        Items(Vec<Raw>),
        Text(String),
    }
    let texts: Vec<String> = match List::deserialize(d)? {
        List::Items(items) => items.into_iter().map(Raw::text).collect(),
        List::Text(t) if t.trim().is_empty() => Vec::new(),
        List::Text(t) => t.split(',').map(str::to_string).collect(),
    };
    texts.iter().map(|t| parse_int(t)).collect::<Result<_, _>>().map_err(D::Error::custom)
}

fn parse_int<T: FromStr>(text: &str) -> Result<T, String> {
    text.trim().parse().map_err(|_| format!("{text:?} is not a whole number in range"))
}

/// A number or text, as text.
#[derive(Deserialize)]
#[serde(untagged)]
enum Raw {
    Number(serde_json::Number),
    Text(String),
}

impl Raw {
    fn text(self) -> String {
        match self {
            Raw::Number(n) => n.to_string(),
            Raw::Text(t) => t,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_reads_back_as_it_was_written_and_its_kind_is_its_json_type() {
        let calls = [
            Call::Login { username: "user7".into(), password: "password".into() },
            Call::NewCustomer {
                customer: Box::new(NewCustomer {
                    username: "newuser3".into(),
                    zip: 12345,
                    region: 1,
                    gender: 'F',
                    ..Default::default()
                }),
                id: Some(20_001),
            },
            Call::NewMember { customer_id: 4, level: 2 },
            Call::BrowseByCategory { category: 3, batch: 10 },
            Call::BrowseByActor { actor: "ADAM GRANT".into(), batch: 5 },
            Call::BrowseByTitle { title: "ALIEN WIND".into(), batch: 5 },
            Call::ReviewsByActor { actor: "GRANT".into(), batch: 5, depth: 500 },
            Call::ReviewsByTitle { title: "WIND".into(), batch: 5, depth: 500 },
            Call::GetReviews { prod_id: 9, batch: 5 },
            Call::GetReviewsByStars { prod_id: 9, stars: 4, batch: 5 },
            Call::GetReviewsByDate { prod_id: 9, batch: 5 },
            Call::NewReview {
                review: NewReview {
                    prod_id: 1,
                    stars: 5,
                    customer_id: 2,
                    summary: "a b".into(),
                    text: "c".into(),
                },
                id: Some(77),
            },
            Call::NewHelpfulness { review_id: 77, customer_id: 2, rating: 9 },
            Call::Prices { prod_ids: vec![1, 2] },
            Call::Purchase {
                customer_id: 2,
                prod_ids: vec![1, 2],
                quantities: vec![3, 1],
                net_cents: Some(100),
                tax_cents: Some(8),
                total_cents: Some(108),
            },
        ];
        let mut kinds: Vec<&str> = Vec::new();
        for call in &calls {
            let json = call.to_json();
            let back: Call = serde_json::from_str(&json).unwrap_or_else(|e| panic!("{json}: {e}"));
            assert_eq!(&back, call, "{json}");
            let value: serde_json::Value = serde_json::from_str(&json).unwrap();
            assert_eq!(value["type"], call.kind(), "{json}");
            kinds.push(call.kind());
        }
        assert_eq!(kinds, CALL_TYPES, "one call of each type, in order");
    }

    #[test]
    fn numbers_may_come_as_text_and_lists_as_text_with_commas() {
        let json =
            r#"{"type":"purchase","params":{"customer_id":"12","prod_ids":"4, 5","quantities":["1",2]}}"#;
        let call: Call = serde_json::from_str(json).unwrap();
        assert_eq!(
            call,
            Call::Purchase {
                customer_id: 12,
                prod_ids: vec![4, 5],
                quantities: vec![1, 2],
                net_cents: None,
                tax_cents: None,
                total_cents: None
            }
        );
        for bad in [
            r#"{"type":"new_member","params":{"customer_id":"x","level":1}}"#,
            r#"{"type":"new_member","params":{"customer_id":1,"level":300}}"#,
            r#"{"type":"new_member","params":{"customer_id":1}}"#,
            r#"{"type":"fly","params":{}}"#,
        ] {
            assert!(serde_json::from_str::<Call>(bad).is_err(), "{bad} is refused");
        }
    }
}
