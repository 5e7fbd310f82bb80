//! The names in a record's interval lines (its counts' and its histograms' tags): the same
//! few on every line, so each is one shared allocation ([`Name`]), made once per thread as
//! lines are read. A merge holds a hundred shards' records at once, and one string a name
//! a line was a fifth of its memory.

use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use std::cell::RefCell;
use std::collections::{BTreeMap, HashSet};
use std::fmt;
use std::sync::Arc;

/// A count's or a histogram's name in an interval line.
pub type Name = Arc<str>;

thread_local! {
    /// The names this thread has read: few (a workload's counts and tags, a part's each).
    static READ: RefCell<HashSet<Name>> = RefCell::new(HashSet::new());
}

/// `s` as the one shared name of its text.
pub fn name(s: &str) -> Name {
    READ.with(|read| {
        let mut read = read.borrow_mut();
        match read.get(s) {
            Some(n) => n.clone(),
            None => {
                let n: Name = Arc::from(s);
                read.insert(n.clone());
                n
            }
        }
    })
}

/// A name read from the record, shared.
struct Read(Name);

impl<'de> de::Deserialize<'de> for Read {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Read, D::Error> {
        struct Text;
        impl Visitor<'_> for Text {
            type Value = Read;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a name")
            }
            fn visit_str<E: de::Error>(self, s: &str) -> Result<Read, E> {
                Ok(Read(name(s)))
            }
        }
        d.deserialize_str(Text)
    }
}

/// An interval line's counts, their names shared.
pub fn counts<'de, D: Deserializer<'de>>(d: D) -> Result<BTreeMap<Name, u64>, D::Error> {
    struct Counts;
    impl<'de> Visitor<'de> for Counts {
        type Value = BTreeMap<Name, u64>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("counts by name")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut out = BTreeMap::new();
            while let Some((Read(k), v)) = map.next_entry::<Read, u64>()? {
                out.insert(k, v);
            }
            Ok(out)
        }
    }
    d.deserialize_map(Counts)
}

/// An interval line's histogram tags, shared.
pub fn names<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<Name>, D::Error> {
    struct Names;
    impl<'de> Visitor<'de> for Names {
        type Value = Vec<Name>;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a list of names")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
            while let Some(Read(n)) = seq.next_element::<Read>()? {
                out.push(n);
            }
            Ok(out)
        }
    }
    d.deserialize_seq(Names)
}
