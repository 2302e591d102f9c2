//! qid → topic position for both parsers. Lines of one topic are usually contiguous, so the
//! previous qid is checked before the hash map.

use rustc_hash::FxHashMap;

#[derive(Default)]
pub(crate) struct TopicIndex {
    by_qid: FxHashMap<Box<[u8]>, usize>,
    last: Option<(Vec<u8>, usize)>,
}

impl TopicIndex {
    /// The position of `qid`; a new qid gets `add()`, which must return the position it used.
    /// The check against the previous qid is inlined into the parsers' line loops (it answers
    /// almost every line); the map lookup is not.
    #[inline(always)]
    pub fn get_or_add(&mut self, qid: &[u8], add: impl FnOnce() -> usize) -> usize {
        if let Some((last, index)) = &self.last {
            if super::hash::bytes_eq(last, qid) {
                return *index;
            }
        }
        self.get_or_add_slow(qid, add)
    }

    #[inline(never)]
    fn get_or_add_slow(&mut self, qid: &[u8], add: impl FnOnce() -> usize) -> usize {
        let index = match self.by_qid.get(qid) {
            Some(&i) => i,
            None => {
                let i = add();
                self.by_qid.insert(qid.into(), i);
                i
            }
        };
        match &mut self.last {
            Some((last, last_index)) => {
                last.clear();
                last.extend_from_slice(qid);
                *last_index = index;
            }
            None => self.last = Some((qid.to_vec(), index)),
        }
        index
    }
}
