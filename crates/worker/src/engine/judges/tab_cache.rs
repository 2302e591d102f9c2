//! Which cache a judge job (or a remote lost-in-the-middle run) uses: the browser's IndexedDB
//! only when the user consented to keeping replies ("Keep replies in this browser"), else one
//! memory cache that every job of this worker shares for the tab's life, so a rerun in the same
//! tab still pays nothing and a reload or a closed tab leaves nothing behind.

use ragscope_judge::{CacheStore, MemoryCache};
use std::cell::RefCell;
use std::rc::Rc;

thread_local! {
    // The worker is one thread: this is the tab's cache, alive as long as the worker (or until
    // "Forget everything", which replaces it).
    static TAB: RefCell<Rc<MemoryCache>> = RefCell::new(Rc::new(MemoryCache::new()));
}

/// The cache for a job: `kept()` (the persistent store) when `keep`, else the tab's.
pub fn choose(keep: bool, kept: impl FnOnce() -> Rc<dyn CacheStore>) -> Rc<dyn CacheStore> {
    if keep {
        kept()
    } else {
        TAB.with(|c| c.borrow().clone())
    }
}

/// "Forget everything": the tab's replies go too (a job still running keeps the cache it
/// started with until it stops, which the same click asks it to).
pub fn forget() {
    TAB.with(|c| *c.borrow_mut() = Rc::new(MemoryCache::new()));
}

#[cfg(test)]
mod tests {
    use super::*;
    use ragscope_judge::{CacheKey, CachedReply};

    fn reply(body: &str) -> CachedReply {
        CachedReply {
            provider: "openai".into(),
            model: "m".into(),
            task: "umbrela".into(),
            template_version: "1".into(),
            sample: 0,
            received_ms: 1,
            body: body.into(),
        }
    }

    #[test]
    fn without_consent_every_job_shares_the_tabs_memory_and_the_kept_store_is_never_made() {
        let never = || -> Rc<dyn CacheStore> { panic!("the kept store was asked for") };
        let first = choose(false, never);
        let key = CacheKey("k".into());
        futures::executor::block_on(first.put(key.clone(), reply("{\"a\":1}"))).unwrap();
        // A second job of the same tab finds the first one's reply.
        let second = choose(false, never);
        let got = futures::executor::block_on(second.get(key)).unwrap();
        assert_eq!(got.map(|r| r.body), Some("{\"a\":1}".to_string()));
    }

    #[test]
    fn with_consent_the_kept_store_is_used_and_the_tabs_memory_is_not() {
        let kept = Rc::new(MemoryCache::new());
        let store = choose(true, || kept.clone());
        let key = CacheKey("kept-only".into());
        futures::executor::block_on(store.put(key.clone(), reply("{}"))).unwrap();
        assert_eq!(kept.len(), 1);
        let tab = choose(false, || unreachable!());
        assert!(futures::executor::block_on(tab.get(key)).unwrap().is_none());
    }

    #[test]
    fn forgetting_empties_the_tabs_memory() {
        let key = CacheKey("forgotten".into());
        let before = choose(false, || unreachable!());
        futures::executor::block_on(before.put(key.clone(), reply("{}"))).unwrap();
        forget();
        let after = choose(false, || unreachable!());
        assert!(futures::executor::block_on(after.get(key))
            .unwrap()
            .is_none());
    }
}
