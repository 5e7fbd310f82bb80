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

/// How many names a thread keeps to share: a record of another's making may name as many as
/// it likes, and past these each is its own allocation, freed with its line.
const KEPT: usize = 4096;

/// `s` as the one shared name of its text.
pub fn name(s: &str) -> Name {
    READ.with(|read| {
        let mut read = read.borrow_mut();
        match read.get(s) {
            Some(n) => n.clone(),
            None => {
                let n: Name = Arc::from(s);
                if read.len() < KEPT {
                    read.insert(n.clone());
                }
                n
            }
        }
    })
}

/// `counts` with names of their own, as a `Tally` holds them.
pub fn owned(counts: &Counts) -> BTreeMap<String, u64> {
    counts.iter().map(|(k, n)| (k.to_string(), *n)).collect()
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

/// An interval line's counts by name, in the names' order, their names shared: a few a line,
/// each line's in one allocation of their own size (a map's node holds eleven).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts(Box<[(Name, u64)]>);

impl Counts {
    /// The count named `name`, where the line has one.
    pub fn get(&self, name: &str) -> Option<&u64> {
        let at = self.0.binary_search_by(|(k, _)| (**k).cmp(name)).ok()?;
        Some(&self.0[at].1)
    }

    /// Each count with its name, in the names' order.
    pub fn iter(&self) -> impl Iterator<Item = (&Name, &u64)> {
        self.0.iter().map(|(k, n)| (k, n))
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// As a map would have them: sorted by name, the last of a name kept.
impl FromIterator<(Name, u64)> for Counts {
    fn from_iter<I: IntoIterator<Item = (Name, u64)>>(iter: I) -> Counts {
        let mut counts: Vec<(Name, u64)> = iter.into_iter().collect();
        counts.sort_by(|a, b| a.0.cmp(&b.0));
        // The sort keeps a name's counts in their order; the one kept takes the last's value.
        counts.dedup_by(|later, kept| {
            let same = later.0 == kept.0;
            if same {
                kept.1 = later.1;
            }
            same
        });
        Counts(counts.into_boxed_slice())
    }
}

impl<const N: usize> From<[(Name, u64); N]> for Counts {
    fn from(counts: [(Name, u64); N]) -> Counts {
        counts.into_iter().collect()
    }
}

impl<'a> IntoIterator for &'a Counts {
    type Item = (&'a Name, &'a u64);
    type IntoIter =
        std::iter::Map<std::slice::Iter<'a, (Name, u64)>, fn(&'a (Name, u64)) -> (&'a Name, &'a u64)>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(k, n)| (k, n))
    }
}

impl std::ops::Index<&str> for Counts {
    type Output = u64;
    fn index(&self, name: &str) -> &u64 {
        self.get(name).unwrap_or_else(|| panic!("no count {name}"))
    }
}

impl serde::Serialize for Counts {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_map(self.iter())
    }
}

impl<'de> de::Deserialize<'de> for Counts {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Counts, D::Error> {
        struct Map;
        impl<'de> Visitor<'de> for Map {
            type Value = Counts;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("counts by name")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Counts, A::Error> {
                let mut out = Vec::with_capacity(map.size_hint().unwrap_or(0));
                while let Some((Read(k), v)) = map.next_entry::<Read, u64>()? {
                    out.push((k, v));
                }
                Ok(out.into_iter().collect())
            }
        }
        d.deserialize_map(Map)
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_lines_names_are_shared_its_counts_sorted_and_the_names_kept_are_bounded() {
        let line: Counts = serde_json::from_str(r#"{"write.ios": 2, "read.ios": 7, "read.ios": 9}"#).unwrap();
        // As a map reads them: sorted by name, the last of a name kept.
        assert_eq!(
            line.iter().map(|(k, n)| (&**k, *n)).collect::<Vec<_>>(),
            [("read.ios", 9), ("write.ios", 2)]
        );
        assert_eq!((line.get("read.ios"), line.get("errors")), (Some(&9), None));
        assert_eq!(serde_json::to_string(&line).unwrap(), r#"{"read.ios":9,"write.ios":2}"#);
        let again: Counts = serde_json::from_str(r#"{"read.ios": 1}"#).unwrap();
        let first = line.iter().next().unwrap().0;
        assert!(Arc::ptr_eq(first, again.iter().next().unwrap().0), "one allocation for one name");
        // A record naming more than the thread keeps still reads; the kept set stops growing.
        std::thread::spawn(|| {
            let many: Vec<Name> = (0..KEPT + 10).map(|i| name(&format!("n{i}"))).collect();
            assert_eq!(READ.with(|r| r.borrow().len()), KEPT);
            assert!(!Arc::ptr_eq(&many[KEPT + 1], &name(&format!("n{}", KEPT + 1))));
            assert!(Arc::ptr_eq(&many[0], &name("n0")));
        })
        .join()
        .unwrap();
    }
}
