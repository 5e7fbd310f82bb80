//! CUSTOMERS, and the driver's new customers: one `Person` draw serves both, so the generator and
//! the driver share the letter, phone and card rules.
//!
//! The generator puts ids 1..=n/2 in the US and the rest in the rest of the world (DS3's
//! Install_DVDStore split, one file each); the driver picks US or not 50/50, states only from
//! the 50 states, older ages and DS2.1's expiry years (DS3 §3.2 step 1).

use super::csv::Csv;
use super::{Chunk, Layout, Stream};
use crate::rng::{self, Rng, WorkerRng};
use crate::workload::oltp::ds3::NewCustomer;
use crate::workload::oltp::size::RowCounts;

/// Customers per chunk (about 350 KB of CSV).
const CHUNK: u64 = 2_048;

/// 50 states and DC (DS3 draws from 51 entries; new customers from the first 50).
const STATES: [&str; 51] = [
    "AL", "AK", "AZ", "AR", "CA", "CO", "CT", "DE", "FL", "GA", "HI", "ID", "IL", "IN", "IA", "KS", "KY",
    "LA", "ME", "MD", "MA", "MI", "MN", "MS", "MO", "MT", "NE", "NV", "NH", "NJ", "NM", "NY", "NC", "ND",
    "OH", "OK", "OR", "PA", "RI", "SC", "SD", "TN", "TX", "UT", "VT", "VA", "WA", "WV", "WI", "WY", "DC",
];

const COUNTRIES: [&str; 10] =
    ["Australia", "Canada", "Chile", "China", "France", "Germany", "Japan", "Russia", "South Africa", "UK"];

/// What differs between the generator's customers and the driver's new ones.
struct Rules {
    states: u64,
    expiry_years: (u64, u64),
    max_age: u64,
}

const GENERATED: Rules = Rules { states: 51, expiry_years: (2015, 2019), max_age: 90 };
const NEW: Rules = Rules { states: 50, expiry_years: (2008, 2012), max_age: 99 };

/// One customer's random fields.
struct Person {
    first: [u8; 6],
    last: [u8; 10],
    city: [u8; 7],
    phone: u64,
    us: bool,
    state: &'static str,
    zip: u32,
    country: &'static str,
    card_type: u8,
    card: u64,
    expiry: (u16, u8),
    age: u8,
    income: u32,
    gender: u8,
}

/// Uppercase letters, two from each 64-bit draw.
fn letters(rng: &mut WorkerRng, out: &mut [u8]) {
    for pair in out.chunks_mut(2) {
        let x = rng.next_u64();
        for (i, b) in pair.iter_mut().enumerate() {
            *b = b'A' + rng::below32((x >> (32 * i)) as u32, 26) as u8;
        }
    }
}

impl Person {
    fn draw(rng: &mut WorkerRng, us: bool, rules: &Rules) -> Person {
        let (mut first, mut last, mut city) = ([0; 6], [0; 10], [0; 7]);
        letters(rng, &mut first);
        letters(rng, &mut last);
        letters(rng, &mut city);
        let phone = rng::between(rng, 1_000_000_000, 9_999_999_999);
        let (state, zip, country) = if us {
            (STATES[rng::below(rng, rules.states) as usize], rng::between(rng, 10_000, 99_999) as u32, "US")
        } else {
            ("", 0, COUNTRIES[rng::below(rng, COUNTRIES.len() as u64) as usize])
        };
        Person {
            first,
            last,
            city,
            phone,
            us,
            state,
            zip,
            country,
            card_type: rng::between(rng, 1, 5) as u8,
            card: rng::between(rng, 1_000_000_000_000_000, 9_999_999_999_999_999),
            expiry: (
                rng::between(rng, rules.expiry_years.0, rules.expiry_years.1) as u16,
                rng::between(rng, 1, 12) as u8,
            ),
            age: rng::between(rng, 18, rules.max_age) as u8,
            income: 20_000 * rng::between(rng, 1, 5) as u32,
            gender: if rng::below(rng, 2) == 0 { b'M' } else { b'F' },
        }
    }

    fn region(&self) -> u8 {
        if self.us { 1 } else { 2 }
    }

    /// The CSV row of customer `id`.
    fn write(&self, id: u64, w: &mut Csv<'_>) {
        w.int(id).text(&self.first).text(&self.last);
        w.put_int(self.phone).put(b" Dell Way").sep();
        w.text(b"").text(&self.city).text(self.state.as_bytes());
        if self.us {
            w.int(u64::from(self.zip))
        } else {
            w.text(b"00000")
        };
        w.text(self.country.as_bytes()).int(u64::from(self.region()));
        w.put(&self.last).put(b"@dell.com").sep();
        w.int(self.phone).int(u64::from(self.card_type)).int(self.card);
        w.put_int(u64::from(self.expiry.0)).put(b"/").put_2(self.expiry.1).sep();
        w.put(b"user").put_int(id).sep().text(b"password");
        w.int(u64::from(self.age)).int(u64::from(self.income)).text(&[self.gender]);
        w.end();
    }
}

/// The US half and the rest-of-the-world half.
pub(super) fn layout(c: &RowCounts) -> Layout {
    let us = c.customers / 2;
    Layout::new(CHUNK, &[(1, us), (us + 1, c.customers - us)])
}

pub(super) fn write(seed: u64, chunk: &Chunk, w: &mut Csv<'_>) -> u64 {
    let mut rng = super::chunk_rng(seed, Stream::Customers, chunk.index);
    for id in chunk.ids.clone() {
        Person::draw(&mut rng, chunk.segment == 0, &GENERATED).write(id, w);
    }
    chunk.ids.end - chunk.ids.start
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// A customer for the driver's NEW_CUSTOMER call (DS3 §3.2 step 1): like a generated one, but
/// US or not 50/50, a state among the 50, age 18..=99, expiry year 2008..=2012, and the user
/// name `newuser<U[1,names]>` (DS3: `names` is the size's customer count).
pub fn new_customer(rng: &mut WorkerRng, names: u64) -> NewCustomer {
    let us = rng::below(rng, 2) == 0;
    let p = Person::draw(rng, us, &NEW);
    let user = rng::between(rng, 1, names.max(1));
    NewCustomer {
        firstname: text(&p.first),
        lastname: text(&p.last),
        address1: format!("{} Dell Way", p.phone),
        address2: String::new(),
        city: text(&p.city),
        state: p.state.to_string(),
        zip: p.zip,
        country: p.country.to_string(),
        region: p.region(),
        email: format!("{}@dell.com", text(&p.last)),
        phone: p.phone.to_string(),
        creditcardtype: p.card_type,
        creditcard: p.card.to_string(),
        creditcardexpiration: format!("{}/{:02}", p.expiry.0, p.expiry.1),
        username: format!("newuser{user}"),
        password: "password".to_string(),
        age: p.age,
        income: p.income,
        gender: char::from(p.gender),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_customers_follow_the_drivers_rules() {
        let mut rng = rng::stream(3, 9);
        let mut us = 0;
        for _ in 0..2_000 {
            let c = new_customer(&mut rng, 500);
            let n: u64 = c.username.strip_prefix("newuser").unwrap().parse().unwrap();
            assert!((1..=500).contains(&n), "{c:?}");
            assert!(
                (18..=99).contains(&c.age) && [20_000, 40_000, 60_000, 80_000, 100_000].contains(&c.income)
            );
            let year: u16 = c.creditcardexpiration[..4].parse().unwrap();
            let month: u8 = c.creditcardexpiration[5..].parse().unwrap();
            assert!(
                (2008..=2012).contains(&year)
                    && (1..=12).contains(&month)
                    && c.creditcardexpiration.len() == 7
            );
            assert_eq!(c.address1, format!("{} Dell Way", c.phone));
            assert_eq!(c.email, format!("{}@dell.com", c.lastname));
            assert!(c.firstname.len() == 6 && c.lastname.len() == 10 && c.city.len() == 7);
            assert!(c.firstname.bytes().chain(c.lastname.bytes()).all(|b| b.is_ascii_uppercase()));
            assert!(c.phone.len() == 10 && c.creditcard.len() == 16 && (1..=5).contains(&c.creditcardtype));
            assert!(c.password == "password" && c.address2.is_empty() && "MF".contains(c.gender));
            if c.region == 1 {
                us += 1;
                assert!(STATES[..50].contains(&c.state.as_str()) && c.country == "US");
                assert!((10_000..=99_999).contains(&c.zip));
            } else {
                assert!(
                    c.region == 2
                        && c.state.is_empty()
                        && c.zip == 0
                        && COUNTRIES.contains(&c.country.as_str())
                );
            }
        }
        assert!((900..1_100).contains(&us), "{us} of 2000 in the US");
    }
}
