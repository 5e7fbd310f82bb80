//! The PostgreSQL connection layer without a load: error kinds and URLs. What needs a loaded
//! database (claims, counters, sessions) is tested with DS3's load in
//! `workload::oltp::ds3::postgres`.

use super::*;

#[test]
fn sqlstates_map_to_kinds() {
    for (code, kind) in [
        ("40P01", DbErrorKind::Deadlock),
        ("40001", DbErrorKind::Deadlock),
        ("57P01", DbErrorKind::Connection),
        ("08006", DbErrorKind::Connection),
        ("28P01", DbErrorKind::Auth),
        ("3D000", DbErrorKind::Missing),
        ("42P01", DbErrorKind::Missing),
        ("42883", DbErrorKind::Missing),
        ("23505", DbErrorKind::Query),
    ] {
        assert_eq!(kind_of_sqlstate(code), kind, "{code}");
    }
}

#[test]
fn urls_are_parsed_and_shown_without_the_password() {
    let pg = Postgres::new("postgres://bench:s3cret@db.example:6543/ds3").unwrap();
    assert_eq!(pg.describe(), "postgres://bench@db.example:6543/ds3");
    assert_eq!(pg.config.get_password(), Some(&b"s3cret"[..]));
    for bad in
        ["mysql://root@h/db", "postgres://h:5432/db", "postgres://u@h:5432/", "postgres://u@h:notaport/db"]
    {
        let e = Postgres::new(bad).err().unwrap_or_else(|| panic!("{bad} was accepted"));
        assert_eq!(e.kind, DbErrorKind::Connection, "{bad}: {e}");
        assert!(e.message.contains("postgres://user"), "{bad}: {e}");
    }
    let long = format!("postgres://u@h/{}", "x".repeat(60));
    assert!(Postgres::new(&long).err().unwrap().message.contains("too long"));
}
