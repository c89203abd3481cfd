//! Traces of `manual_find` (what `manual_hits` pages through and
//! `only_unscanned_from_trace_id` refers to) and the query cache, in memory:
//! a trace lives `TRACE_TTL_SEC` seconds and at most `TRACE_MAX_KEEP` are
//! kept (the oldest goes first). A cache entry points at a trace, so it
//! expires with it, and remembers the index generation it was computed on,
//! so any change to the manuals invalidates it.

use std::collections::{HashMap, VecDeque};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The cache key: what decides the answer of a search.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CacheKey {
    /// The query's terms, sorted: word order, case, width and punctuation
    /// do not make a different query.
    pub terms: Vec<String>,
    /// Each other phrasing's terms, sorted, in the order given.
    pub phrasings: Vec<Vec<String>>,
    pub manual_id: Option<String>,
    pub expand_scope: bool,
    pub max_candidates: u64,
    pub only_unscanned_from: Option<String>,
    /// Whether the dense signal took part (its vectors become ready after
    /// the index does).
    pub dense: bool,
}

pub struct Store<T> {
    ttl: Duration,
    keep: usize,
    traces: HashMap<String, (Instant, Arc<T>)>,
    order: VecDeque<String>,
    cache: HashMap<CacheKey, (u64, String)>,
    next: u64,
    /// Makes ids differ between runs of the server.
    salt: u64,
}

impl<T> Store<T> {
    pub fn new(ttl: Duration, keep: usize) -> Self {
        let salt = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(0)
            ^ u64::from(std::process::id());
        Store {
            ttl,
            keep: keep.max(1),
            traces: HashMap::new(),
            order: VecDeque::new(),
            cache: HashMap::new(),
            next: 0,
            salt,
        }
    }

    fn expire(&mut self, now: Instant) {
        while let Some(id) = self.order.front() {
            let old = self
                .traces
                .get(id)
                .is_none_or(|(t, _)| now.duration_since(*t) >= self.ttl);
            if old || self.order.len() > self.keep {
                let id = self.order.pop_front().unwrap_or_default();
                self.traces.remove(&id);
            } else {
                break;
            }
        }
        let traces = &self.traces;
        self.cache.retain(|_, (_, id)| traces.contains_key(id));
    }

    /// A fresh, unguessable-enough id (traces are per process and in memory).
    pub fn new_id(&mut self) -> String {
        self.next += 1;
        let h = blake3::hash(format!("{}:{}", self.salt, self.next).as_bytes());
        format!("tr_{}", &h.to_hex()[..16])
    }

    pub fn put(&mut self, id: String, trace: T) -> Arc<T> {
        let now = Instant::now();
        let t = Arc::new(trace);
        self.traces.insert(id.clone(), (now, t.clone()));
        self.order.push_back(id);
        self.expire(now);
        t
    }

    pub fn get(&mut self, id: &str) -> Option<Arc<T>> {
        self.expire(Instant::now());
        self.traces.get(id).map(|(_, t)| t.clone())
    }

    /// The trace cached for `key`, if it was computed on `generation`.
    pub fn cached(&mut self, key: &CacheKey, generation: u64) -> Option<(String, Arc<T>)> {
        self.expire(Instant::now());
        let (g, id) = self.cache.get(key)?;
        if *g != generation {
            self.cache.remove(key);
            return None;
        }
        let id = id.clone();
        self.traces.get(&id).map(|(_, t)| (id.clone(), t.clone()))
    }

    pub fn remember(&mut self, key: CacheKey, generation: u64, id: String) {
        self.cache.insert(key, (generation, id));
    }

    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.traces.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(q: &str) -> CacheKey {
        CacheKey {
            terms: vec![q.into()],
            phrasings: Vec::new(),
            manual_id: None,
            expand_scope: true,
            max_candidates: 200,
            only_unscanned_from: None,
            dense: false,
        }
    }

    #[test]
    fn trace_max_keep_drops_the_oldest() {
        let mut s: Store<u32> = Store::new(Duration::from_secs(60), 2);
        let ids: Vec<String> = (0..3).map(|_| s.new_id()).collect();
        for (i, id) in ids.iter().enumerate() {
            s.put(id.clone(), i as u32);
        }
        assert_eq!(s.len(), 2);
        assert!(s.get(&ids[0]).is_none());
        assert_eq!(*s.get(&ids[2]).unwrap(), 2);
    }

    #[test]
    fn trace_ttl_expires_traces_and_their_cache_entries() {
        let mut s: Store<u32> = Store::new(Duration::from_millis(30), 10);
        let id = s.new_id();
        s.put(id.clone(), 7);
        s.remember(key("a"), 1, id.clone());
        assert!(s.cached(&key("a"), 1).is_some());
        std::thread::sleep(Duration::from_millis(40));
        assert!(s.get(&id).is_none());
        assert!(s.cached(&key("a"), 1).is_none());
    }

    #[test]
    fn cache_entries_of_an_older_index_generation_are_dropped() {
        let mut s: Store<u32> = Store::new(Duration::from_secs(60), 10);
        let id = s.new_id();
        s.put(id.clone(), 1);
        s.remember(key("a"), 1, id);
        assert!(s.cached(&key("a"), 2).is_none());
        assert!(s.cached(&key("a"), 1).is_none(), "removed for good");
    }

    #[test]
    fn ids_are_distinct() {
        let mut s: Store<u32> = Store::new(Duration::from_secs(60), 10);
        assert_ne!(s.new_id(), s.new_id());
    }
}
