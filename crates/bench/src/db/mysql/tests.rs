//! The MariaDB/MySQL connection layer without a load: URLs. What needs a loaded database
//! (ownership, counters, sessions) is tested with DS3's load in `workload::oltp::ds3::mysql`.

use super::*;

#[test]
fn urls_parse_and_never_show_the_password() {
    let m = Mysql::new("mysql://bench:s%40cret@db.example:3307/ds3").unwrap();
    assert_eq!(
        (m.host.as_str(), m.port, m.user.as_str(), m.pass.as_deref()),
        ("db.example", 3307, "bench", Some("s@cret"))
    );
    assert_eq!(m.describe(), "mysql://bench@db.example:3307/ds3");
    assert!(!format!("{m:?}").contains("cret"));
    let m = Mysql::new("mariadb://root@[::1]/test").unwrap();
    assert_eq!((m.host.as_str(), m.port), ("::1", 3306));
    for bad in [
        "postgres://a@b/c",
        "mysql://host/db",
        "mysql://u:pw@host:xx/db",
        "mysql://u:pw@host/",
        "mysql://u@h/a-b",
    ] {
        let e = Mysql::new(bad).unwrap_err();
        assert_eq!(e.kind, DbErrorKind::Connection, "{bad}");
        assert!(e.message.contains("mysql://user[:password]@host"), "{bad}: {e}");
        assert!(!e.message.contains("pw@"), "{bad}: {e}");
    }
}
