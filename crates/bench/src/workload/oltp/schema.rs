//! The DVD Store (DS3) tables as data: their names, column names in load order, and the typed
//! field values the generator hands to loaders. Each backend writes its own DDL from these.

/// A DS3 table. `DS2_TABLES` is the subset without membership and reviews.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Table {
    Categories,
    Products,
    Inventory,
    Customers,
    Orders,
    Orderlines,
    CustHist,
    Membership,
    Reviews,
    ReviewsHelpfulness,
    /// Written only by the restock trigger during runs; never generated.
    Reorder,
}

/// Every generated table, in the order a loader should fill them (parents first).
pub const ALL_TABLES: [Table; 10] = [
    Table::Categories,
    Table::Products,
    Table::Inventory,
    Table::Customers,
    Table::Orders,
    Table::Orderlines,
    Table::CustHist,
    Table::Membership,
    Table::Reviews,
    Table::ReviewsHelpfulness,
];

/// The tables of a DS2-mode database (no membership, no reviews): the first seven.
pub const DS2_TABLES: &[Table] = ALL_TABLES.split_at(7).0;

impl Table {
    /// The table's name in SQL (DS3 spells them in upper case; SQL folds them).
    pub fn sql_name(self) -> &'static str {
        match self {
            Table::Categories => "categories",
            Table::Products => "products",
            Table::Inventory => "inventory",
            Table::Customers => "customers",
            Table::Orders => "orders",
            Table::Orderlines => "orderlines",
            Table::CustHist => "cust_hist",
            Table::Membership => "membership",
            Table::Reviews => "reviews",
            Table::ReviewsHelpfulness => "reviews_helpfulness",
            Table::Reorder => "reorder",
        }
    }

    /// Column names in DS3's column order (which is also the CSV column order).
    pub fn columns(self) -> &'static [&'static str] {
        match self {
            Table::Categories => &["category", "categoryname"],
            Table::Products => &[
                "prod_id",
                "category",
                "title",
                "actor",
                "price",
                "special",
                "common_prod_id",
                "membership_item",
            ],
            Table::Inventory => &["prod_id", "quan_in_stock", "sales"],
            Table::Customers => &[
                "customerid",
                "firstname",
                "lastname",
                "address1",
                "address2",
                "city",
                "state",
                "zip",
                "country",
                "region",
                "email",
                "phone",
                "creditcardtype",
                "creditcard",
                "creditcardexpiration",
                "username",
                "password",
                "age",
                "income",
                "gender",
            ],
            Table::Orders => &["orderid", "orderdate", "customerid", "netamount", "tax", "totalamount"],
            Table::Orderlines => &["orderlineid", "orderid", "prod_id", "quantity", "orderdate"],
            Table::CustHist => &["customerid", "orderid", "prod_id"],
            Table::Membership => &["customerid", "membershiptype", "expiredate"],
            Table::Reviews => &[
                "review_id",
                "prod_id",
                "review_date",
                "stars",
                "customerid",
                "review_summary",
                "review_text",
            ],
            Table::ReviewsHelpfulness => &["review_helpfulness_id", "review_id", "customerid", "helpfulness"],
            Table::Reorder => {
                &["prod_id", "date_low", "quan_low", "date_reordered", "quan_reordered", "date_expected"]
            }
        }
    }
}

/// The 16 fixed categories, ids 1..=16.
pub const CATEGORIES: [&str; 16] = [
    "Action",
    "Animation",
    "Children",
    "Classics",
    "Comedy",
    "Documentary",
    "Drama",
    "Family",
    "Foreign",
    "Games",
    "Horror",
    "Music",
    "New",
    "Sci-Fi",
    "Sports",
    "Travel",
];

/// A calendar date (DS3 writes `YYYY/MM/DD`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Date {
    pub year: u16,
    pub month: u8,
    pub day: u8,
}

/// One value of a generated row. Text borrows from the generator's buffers, so a row is only
/// valid during the call that receives it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Field<'a> {
    Int(i64),
    Text(&'a str),
    /// An amount in cents, written with two decimals (`12.34`).
    Cents(i64),
    Date(Date),
    /// An empty CSV field; DS3's text-format loaders store it as '' (not NULL) in text
    /// columns and it occurs only there (ADDRESS2, STATE outside the US).
    Empty,
}
