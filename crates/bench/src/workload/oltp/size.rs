//! `--db-size`: DVD Store's named and numbered sizes and the row counts each implies.
//!
//! The rules are DS3's (Install_DVDStore.pl and the driver agree on them): a size in MB scales
//! the S base (20,000 customers, 1,000 orders a month, 10,000 products) by N/10; exactly 1 GB
//! is the M base; a size over 1 GB scales the L base (200 M customers, 10 M orders a month,
//! 1 M products) by N/100. So products grow 100 times faster per MB in MB mode than in GB mode;
//! that discontinuity is DS3's and is kept for comparability.

use std::fmt;
use std::str::FromStr;

/// A database size as DS3 names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbSize {
    /// `<n>MB`, 1..=1023 (S = 10MB).
    Mb(u32),
    /// `<n>GB`, 1..=4095 (M = 1GB, L = 100GB).
    Gb(u32),
}

/// Rows of every table at a size. Orderlines, cust_hist and review helpfulness are random in
/// number; their counts here are the expected values (the generator reports the exact ones).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RowCounts {
    pub customers: u64,
    pub orders_per_month: u64,
    pub products: u64,
}

/// Months of order history (orders are dated in one year, one file per month).
pub const MONTHS: u64 = 12;
/// Share of customers that are members, percent (DS3 `$par_Pct_Member`).
pub const MEMBER_PCT: u64 = 10;
/// Reviews per product (DS3 `$par_Avg_Reviews`).
pub const REVIEWS_PER_PRODUCT: u64 = 20;

impl DbSize {
    pub const S: DbSize = DbSize::Mb(10);
    pub const M: DbSize = DbSize::Gb(1);
    pub const L: DbSize = DbSize::Gb(100);

    pub fn counts(self) -> RowCounts {
        match self {
            DbSize::Mb(n) => {
                let n = u64::from(n);
                RowCounts { customers: 2_000 * n, orders_per_month: 100 * n, products: 1_000 * n }
            }
            DbSize::Gb(1) => RowCounts { customers: 2_000_000, orders_per_month: 100_000, products: 100_000 },
            DbSize::Gb(n) => {
                let n = u64::from(n);
                RowCounts { customers: 2_000_000 * n, orders_per_month: 100_000 * n, products: 10_000 * n }
            }
        }
    }
}

impl RowCounts {
    pub fn orders(&self) -> u64 {
        self.orders_per_month * MONTHS
    }
    pub fn members(&self) -> u64 {
        self.customers * MEMBER_PCT / 100
    }
    pub fn reviews(&self) -> u64 {
        self.products * REVIEWS_PER_PRODUCT
    }
    /// Expected order lines: U[1,9] per order, mean 5.
    pub fn orderlines_expected(&self) -> u64 {
        self.orders() * 5
    }
    /// Expected helpfulness ratings: U[3,40]-1 per review, mean 20.5.
    pub fn helpfulness_expected(&self) -> u64 {
        self.reviews() * 41 / 2
    }
}

impl FromStr for DbSize {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        let t = s.trim().to_ascii_uppercase();
        let bad = || {
            format!(
                "'{s}' is not a DVD Store size; use S (10MB), M (1GB), L (100GB), or a number with \
                 MB (1-1023) or GB (1-4095), such as 50MB or 20GB"
            )
        };
        let named = match t.as_str() {
            "S" | "SMALL" => Some(DbSize::S),
            "M" | "MEDIUM" => Some(DbSize::M),
            "L" | "LARGE" => Some(DbSize::L),
            _ => None,
        };
        if let Some(size) = named {
            return Ok(size);
        }
        let (num, unit) = t.split_at(t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?);
        let n: u32 = num.parse().map_err(|_| bad())?;
        match unit.trim() {
            "MB" | "M" if (1..=1023).contains(&n) => Ok(DbSize::Mb(n)),
            "GB" | "G" if (1..=4095).contains(&n) => Ok(DbSize::Gb(n)),
            _ => Err(bad()),
        }
    }
}

impl fmt::Display for DbSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DbSize::Mb(n) => write!(f, "{n}MB"),
            DbSize::Gb(n) => write!(f, "{n}GB"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn counts(s: &str) -> RowCounts {
        s.parse::<DbSize>().unwrap().counts()
    }

    #[test]
    fn named_sizes_have_ds3s_row_counts() {
        let s = counts("S");
        assert_eq!(
            (s.customers, s.orders(), s.products, s.members(), s.reviews()),
            (20_000, 12_000, 10_000, 2_000, 200_000)
        );
        let m = counts("m");
        assert_eq!(
            (m.customers, m.orders(), m.products, m.reviews()),
            (2_000_000, 1_200_000, 100_000, 2_000_000)
        );
        let l = counts("L");
        assert_eq!(
            (l.customers, l.orders(), l.products, l.members()),
            (200_000_000, 120_000_000, 1_000_000, 20_000_000)
        );
    }

    #[test]
    fn custom_sizes_follow_the_mb_and_gb_rules_with_their_discontinuity() {
        let mb500 = counts("500MB");
        assert_eq!(
            (mb500.customers, mb500.orders(), mb500.products, mb500.reviews()),
            (1_000_000, 600_000, 500_000, 10_000_000)
        );
        let gb14 = counts("14GB");
        assert_eq!((gb14.customers, gb14.orders_per_month, gb14.products), (28_000_000, 1_400_000, 140_000));
        let gb20 = counts("20gb");
        assert_eq!((gb20.customers, gb20.orders(), gb20.products), (40_000_000, 24_000_000, 200_000));
        assert_eq!(counts("10MB"), counts("S"));
        assert_eq!(counts("1GB"), counts("M"));
        assert_eq!(counts("100GB"), counts("L"));
    }

    #[test]
    fn out_of_range_and_malformed_sizes_are_refused_with_the_accepted_forms() {
        for bad in ["0MB", "1024MB", "4096GB", "10TB", "10", "big", "", "-5MB", "1.5GB"] {
            let e = bad.parse::<DbSize>().unwrap_err();
            assert!(e.contains("S (10MB)"), "{bad}: {e}");
        }
        assert_eq!("15MB".parse::<DbSize>().unwrap().to_string(), "15MB");
    }
}
