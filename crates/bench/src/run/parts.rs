//! Interval data kept per part of a run (each target database of an OLTP run, each mailbox
//! database), with the parts' sum beside them so that every reader needs no merge of its own.

use super::IntervalData;

#[derive(Debug, Clone, Default)]
pub struct Parts<T> {
    /// Every part merged.
    pub total: T,
    pub parts: Vec<T>,
}

impl<T: IntervalData> Parts<T> {
    pub fn new(parts: Vec<T>) -> Self {
        let mut total = T::default();
        parts.iter().for_each(|p| total.merge(p));
        Parts { total, parts }
    }
}

impl<T: IntervalData> IntervalData for Parts<T> {
    const HEADLINE: super::Headline = T::HEADLINE;

    fn merge(&mut self, other: &Self) {
        self.total.merge(&other.total);
        if self.parts.len() < other.parts.len() {
            self.parts.resize_with(other.parts.len(), T::default);
        }
        for (mine, theirs) in self.parts.iter_mut().zip(&other.parts) {
            mine.merge(theirs);
        }
    }

    fn ops(&self) -> u64 {
        self.total.ops()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::run::Count;

    #[test]
    fn parts_merge_part_by_part_and_keep_their_sum() {
        let mut a = Parts::<Count>::default();
        a.merge(&Parts::new(vec![Count(1), Count(2)]));
        a.merge(&Parts::new(vec![Count(10), Count(20)]));
        assert_eq!(a.parts, [Count(11), Count(22)]);
        assert_eq!((a.total.0, a.ops()), (33, 33));
    }
}
