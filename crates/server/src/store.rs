//! The app-owned episode store: every open episode, addressed by an unguessable id, under a
//! cap with idle expiry.
//!
//! Eviction is reported, never silent: an episode that leaves the store (pushed out by the cap
//! or idle too long) leaves a tombstone, so a later request for it answers 410 with the reason
//! instead of 404 or, worse, a fresh episode. Tombstones are bounded too (oldest forgotten
//! first); past that window an old id answers 404.
//!
//! Eviction is least-recently-used by a second-chance queue: the queue holds every open id
//! with the time it was queued; touching an episode only updates its `last_used`, and eviction
//! pops the queue front, re-queuing (with its newer time) any episode touched since it was
//! queued — an approximation of LRU in which an episode used since it was queued is always
//! passed over. Every touch costs O(1) and every eviction amortised O(1).

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::hash::{BuildHasher, Hasher, RandomState};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use benchaudit_comtrade::{Episode, EpisodeOptions, TaskSpec};
use benchaudit_scoring::RewardScorer;
use tokio::time::Instant;

use crate::answer::SubmitAnswer;

/// An episode's public name: 128 random bits, written as 32 lowercase hex digits. Random so
/// that one client cannot guess, read or submit another client's episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EpisodeId(u128);

impl EpisodeId {
    /// A fresh random id (OS randomness through uuid v4, with the version bits overwritten
    /// by more randomness from a per-process keyed hash so all 128 bits vary).
    pub fn random() -> Self {
        let base = uuid::Uuid::new_v4().as_u128();
        let mut h = RandomState::new().build_hasher();
        h.write_u128(base);
        // uuid v4 fixes 6 bits (version and variant); xor in 64 more keyed-random bits.
        EpisodeId(base ^ u128::from(h.finish()))
    }
}

impl fmt::Display for EpisodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:032x}", self.0)
    }
}

/// Why a string is not an episode id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadEpisodeId;

impl FromStr for EpisodeId {
    type Err = BadEpisodeId;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s.len() != 32
            || !s
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        {
            return Err(BadEpisodeId);
        }
        u128::from_str_radix(s, 16)
            .map(EpisodeId)
            .map_err(|_| BadEpisodeId)
    }
}

/// Why an episode is no longer in the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gone {
    /// Pushed out, least recently used first, to make room under the cap.
    Evicted,
    /// Idle longer than the idle timeout.
    Expired,
}

impl Gone {
    /// The word the 410 body uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Gone::Evicted => "evicted",
            Gone::Expired => "expired",
        }
    }
}

/// Why a lookup found no episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Never existed here (or left so long ago that its tombstone was forgotten).
    Unknown,
    /// Existed and left the store; answering 410 keeps a client from silently restarting.
    Gone(Gone),
}

/// Limits of the store.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StoreLimits {
    /// Most episodes open at once; creating one more evicts the least recently used.
    pub max_episodes: usize,
    /// An episode untouched this long expires; `None` keeps episodes until evicted.
    pub idle_timeout: Option<Duration>,
    /// How many departed ids are remembered to answer 410 rather than 404.
    pub max_tombstones: usize,
    /// Bytes that `append_results` may hold across all open chunked episodes (each episode is
    /// also capped by `benchaudit_comtrade`'s own per-episode limit).
    pub max_append_bytes: usize,
}

impl Default for StoreLimits {
    fn default() -> Self {
        StoreLimits {
            max_episodes: 200_000,
            idle_timeout: Some(Duration::from_secs(30 * 60)),
            max_tombstones: 200_000,
            max_append_bytes: 1 << 30,
        }
    }
}

/// The mutable state of one episode.
#[derive(Debug)]
pub struct EpisodeState {
    /// The pure state machine of `benchaudit_comtrade`.
    pub episode: Episode,
    /// Which scorer gives the submission its `reward`.
    pub reward: RewardScorer,
    /// The submit answer, kept so `GET /v1/episodes/{id}` can show the scores (boxed: most
    /// episodes in the store have not submitted yet and should stay small).
    pub result: Option<Box<SubmitAnswer>>,
}

/// One open episode: its state behind its own lock (requests on different episodes never
/// wait for each other) and its last use, readable without that lock.
#[derive(Debug)]
pub struct Slot {
    /// The episode's name (kept here so a holder of the slot can report it).
    pub id: EpisodeId,
    /// Store time (microseconds since the store's epoch, strictly increasing across touches)
    /// of the last request; drives LRU and expiry.
    last_used: AtomicU64,
    /// A std mutex: held only for synchronous work on the episode, never across `.await`.
    state: Mutex<EpisodeState>,
    /// Bytes this episode holds from `append_results`, counted in the store-wide pool.
    appended: AtomicUsize,
    /// The store-wide count of appended bytes; released when the slot is dropped.
    pool: Arc<AtomicUsize>,
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.pool
            .fetch_sub(*self.appended.get_mut(), Ordering::Relaxed);
    }
}

impl Slot {
    /// Locks the episode. A panic while it was held (a bug) leaves the state usable: the
    /// episode's invariants are restored at every return of its methods.
    pub fn lock(&self) -> MutexGuard<'_, EpisodeState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Counts of departures since start, for `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Departures {
    /// Episodes evicted under the cap.
    pub evicted: u64,
    /// Episodes expired for idleness.
    pub expired: u64,
}

#[derive(Debug, Default)]
struct Index {
    open: HashMap<EpisodeId, Arc<Slot>>,
    /// Every open id once, with the `last_used` it had when queued; roughly oldest first.
    order: VecDeque<(EpisodeId, u64)>,
    gone: HashMap<EpisodeId, Gone>,
    gone_order: VecDeque<EpisodeId>,
    departures: Departures,
    /// The last time handed out by `tick`.
    last_tick: u64,
}

/// The store. Cheap to share behind an `Arc`; one std mutex guards the index (held for a hash
/// lookup or an O(1) queue step, never across `.await`), and each episode has its own lock.
#[derive(Debug)]
pub struct EpisodeStore {
    limits: StoreLimits,
    epoch: Instant,
    index: Mutex<Index>,
    /// Appended bytes held by all slots (including departed slots still referenced).
    appended: Arc<AtomicUsize>,
}

impl EpisodeStore {
    /// An empty store.
    pub fn new(limits: StoreLimits) -> Self {
        let limits = StoreLimits {
            max_episodes: limits.max_episodes.max(1),
            ..limits
        };
        EpisodeStore {
            limits,
            epoch: Instant::now(),
            index: Mutex::new(Index::default()),
            appended: Arc::new(AtomicUsize::new(0)),
        }
    }

    /// The limits in force.
    pub fn limits(&self) -> StoreLimits {
        self.limits
    }

    fn now_us(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_micros()).unwrap_or(u64::MAX)
    }

    /// The store time of a touch: the clock in microseconds, nudged so that every touch gets a
    /// distinct, increasing time (two touches in the same microsecond stay ordered, so "used
    /// since queued" is exact). Touches happen only under the index lock.
    fn tick(&self, index: &mut Index) -> u64 {
        let t = self.now_us().max(index.last_tick.saturating_add(1));
        index.last_tick = t;
        t
    }

    fn index(&self) -> MutexGuard<'_, Index> {
        self.index.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn idle_us(&self) -> Option<u64> {
        self.limits
            .idle_timeout
            .map(|d| u64::try_from(d.as_micros()).unwrap_or(u64::MAX))
    }

    /// Opens an episode, evicting the least recently used ones if the store is full.
    pub fn create(
        &self,
        task: &'static TaskSpec,
        seed: u64,
        options: EpisodeOptions,
        reward: RewardScorer,
    ) -> Arc<Slot> {
        // Build the episode before taking the index lock: it hashes the task key.
        let episode = Episode::new(task, seed, options);
        let mut index = self.index();
        let now = self.tick(&mut index);
        self.sweep_locked(&mut index, now, usize::MAX);
        while index.open.len() >= self.limits.max_episodes {
            if !self.evict_one_locked(&mut index) {
                break;
            }
        }
        let id = loop {
            let id = EpisodeId::random();
            if !index.open.contains_key(&id) && !index.gone.contains_key(&id) {
                break id;
            }
        };
        let slot = Arc::new(Slot {
            id,
            last_used: AtomicU64::new(now),
            state: Mutex::new(EpisodeState {
                episode,
                reward,
                result: None,
            }),
            appended: AtomicUsize::new(0),
            pool: Arc::clone(&self.appended),
        });
        index.open.insert(id, Arc::clone(&slot));
        index.order.push_back((id, now));
        slot
    }

    /// Finds an open episode and marks it used. An episode idle past the timeout expires here
    /// even if the background sweep has not reached it yet.
    pub fn get(&self, id: EpisodeId) -> Result<Arc<Slot>, Missing> {
        let idle = self.idle_us();
        let mut index = self.index();
        if let Some(last) = index
            .open
            .get(&id)
            .map(|slot| slot.last_used.load(Ordering::Relaxed))
        {
            let now = self.tick(&mut index);
            if idle.is_some_and(|idle| now.saturating_sub(last) > idle) {
                self.depart_locked(&mut index, id, Gone::Expired);
                return Err(Missing::Gone(Gone::Expired));
            }
            if let Some(slot) = index.open.get(&id) {
                slot.last_used.store(now, Ordering::Relaxed);
                return Ok(Arc::clone(slot));
            }
        }
        Err(index
            .gone
            .get(&id)
            .map_or(Missing::Unknown, |g| Missing::Gone(*g)))
    }

    /// Reserves `bytes` of the store-wide append pool for `slot`; false when the pool is full.
    /// Call with the slot's lock held, and `release_appended` once the bytes are consumed.
    pub fn reserve_appended(&self, slot: &Slot, bytes: usize) -> bool {
        let max = self.limits.max_append_bytes;
        let ok = self
            .appended
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(bytes).filter(|n| *n <= max)
            })
            .is_ok();
        if ok {
            slot.appended.fetch_add(bytes, Ordering::Relaxed);
        }
        ok
    }

    /// Returns `bytes` reserved for an append that was then refused.
    pub fn unreserve_appended(&self, slot: &Slot, bytes: usize) {
        let n = slot
            .appended
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |held| {
                Some(held.saturating_sub(bytes))
            });
        let held = n.unwrap_or(0);
        self.appended.fetch_sub(held.min(bytes), Ordering::Relaxed);
    }

    /// Returns every byte `slot` reserved (its chunks were consumed by the submission).
    pub fn release_appended(&self, slot: &Slot) {
        let n = slot.appended.swap(0, Ordering::Relaxed);
        self.appended.fetch_sub(n, Ordering::Relaxed);
    }

    /// Appended bytes held across the store.
    pub fn appended_bytes(&self) -> usize {
        self.appended.load(Ordering::Relaxed)
    }

    /// Number of open episodes.
    pub fn len(&self) -> usize {
        self.index().open.len()
    }

    /// Whether no episode is open.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Departures since start.
    pub fn departures(&self) -> Departures {
        self.index().departures
    }

    /// Expires every episode idle past the timeout; returns how many left. Works in batches so
    /// a mass expiry never holds the index lock for long.
    pub fn sweep_expired(&self) -> usize {
        let mut total = 0;
        loop {
            let mut index = self.index();
            let now = self.now_us();
            let n = self.sweep_locked(&mut index, now, 4096);
            drop(index);
            total += n;
            if n < 4096 {
                return total;
            }
        }
    }

    /// Expires up to `budget` idle episodes from the queue front. An entry touched since it
    /// was queued goes to the back with its newer time; an entry already departed is dropped.
    fn sweep_locked(&self, index: &mut Index, now: u64, budget: usize) -> usize {
        let Some(idle) = self.idle_us() else { return 0 };
        let mut expired = 0;
        while expired < budget {
            let Some(&(id, stamp)) = index.order.front() else {
                break;
            };
            if now.saturating_sub(stamp) <= idle {
                break;
            }
            index.order.pop_front();
            let Some(slot) = index.open.get(&id) else {
                continue;
            };
            let last = slot.last_used.load(Ordering::Relaxed);
            if last > stamp {
                index.order.push_back((id, last));
                continue;
            }
            self.depart_locked(index, id, Gone::Expired);
            expired += 1;
        }
        expired
    }

    /// Evicts the episode at the front of the queue, giving every episode touched since it
    /// was queued a second chance at the back. Returns whether one was evicted. Terminates:
    /// touches happen only under the index lock, which the caller holds, so a re-queued entry
    /// is evictable when it comes round again.
    fn evict_one_locked(&self, index: &mut Index) -> bool {
        while let Some((id, stamp)) = index.order.pop_front() {
            let Some(slot) = index.open.get(&id) else {
                continue;
            };
            let last = slot.last_used.load(Ordering::Relaxed);
            if last > stamp {
                index.order.push_back((id, last));
                continue;
            }
            self.depart_locked(index, id, Gone::Evicted);
            return true;
        }
        false
    }

    fn depart_locked(&self, index: &mut Index, id: EpisodeId, reason: Gone) {
        if index.open.remove(&id).is_none() {
            return;
        }
        match reason {
            Gone::Evicted => index.departures.evicted += 1,
            Gone::Expired => index.departures.expired += 1,
        }
        if self.limits.max_tombstones == 0 {
            return;
        }
        while index.gone_order.len() >= self.limits.max_tombstones {
            if let Some(old) = index.gone_order.pop_front() {
                index.gone.remove(&old);
            }
        }
        index.gone.insert(id, reason);
        index.gone_order.push_back(id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use benchaudit_comtrade::task;

    fn store(max: usize, idle: Option<u64>, tombstones: usize) -> EpisodeStore {
        EpisodeStore::new(StoreLimits {
            max_episodes: max,
            idle_timeout: idle.map(Duration::from_millis),
            max_tombstones: tombstones,
            max_append_bytes: 100,
        })
    }

    fn open(s: &EpisodeStore) -> EpisodeId {
        let t = task("T3_duplicates").expect("registry");
        s.create(t, 1, EpisodeOptions::default(), RewardScorer::F1)
            .id
    }

    #[test]
    fn ids_round_trip_and_reject_other_shapes() {
        let id = EpisodeId::random();
        assert_eq!(id.to_string().parse::<EpisodeId>(), Ok(id));
        assert_ne!(EpisodeId::random(), EpisodeId::random());
        for bad in [
            "",
            "abc",
            &"0".repeat(31),
            &"0".repeat(33),
            &"G".repeat(32),
            &"A".repeat(32),
            "+0000000000000000000000000000001",
        ] {
            assert_eq!(bad.parse::<EpisodeId>(), Err(BadEpisodeId), "{bad:?}");
        }
    }

    #[tokio::test(start_paused = true)]
    async fn cap_evicts_least_recently_used_and_reports_it() {
        let s = store(3, None, 10);
        let (a, b, c) = (open(&s), open(&s), open(&s));
        tokio::time::advance(Duration::from_millis(5)).await;
        s.get(a).expect("open"); // a is now the most recently used
        let d = open(&s);
        assert_eq!(s.get(b).map(|_| ()), Err(Missing::Gone(Gone::Evicted)));
        for id in [a, c, d] {
            assert!(s.get(id).is_ok());
        }
        assert_eq!(s.len(), 3);
        assert_eq!(
            s.departures(),
            Departures {
                evicted: 1,
                expired: 0
            }
        );
        assert_eq!(
            s.get(EpisodeId::random()).map(|_| ()),
            Err(Missing::Unknown)
        );
    }

    #[tokio::test(start_paused = true)]
    async fn touches_in_the_same_instant_still_order_eviction() {
        // The clock does not move at all here: order comes from the strictly increasing ticks.
        let s = store(2, Some(1000), 10);
        let (a, b) = (open(&s), open(&s));
        s.get(a).expect("open");
        let c = open(&s);
        assert_eq!(s.get(b).map(|_| ()), Err(Missing::Gone(Gone::Evicted)));
        assert!(s.get(a).is_ok() && s.get(c).is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn idle_episodes_expire_lazily_and_by_sweep() {
        let s = store(100, Some(1000), 10);
        let (a, b, c) = (open(&s), open(&s), open(&s));
        tokio::time::advance(Duration::from_millis(600)).await;
        s.get(c).expect("fresh");
        tokio::time::advance(Duration::from_millis(600)).await;
        // a: idle 1200 ms > 1000, expires on access; b expires by sweep; c was used 600 ms ago.
        assert_eq!(s.get(a).map(|_| ()), Err(Missing::Gone(Gone::Expired)));
        assert_eq!(s.sweep_expired(), 1);
        assert_eq!(s.get(b).map(|_| ()), Err(Missing::Gone(Gone::Expired)));
        assert!(s.get(c).is_ok());
        assert_eq!(
            s.departures(),
            Departures {
                evicted: 0,
                expired: 2
            }
        );
    }

    #[tokio::test(start_paused = true)]
    async fn append_pool_is_bounded_and_freed_with_the_slot() {
        let s = store(1, None, 10);
        let t = task("T3_duplicates").expect("registry");
        let slot = s.create(t, 1, EpisodeOptions::default(), RewardScorer::F1);
        assert!(s.reserve_appended(&slot, 60));
        assert!(!s.reserve_appended(&slot, 41));
        assert!(s.reserve_appended(&slot, 40));
        assert_eq!(s.appended_bytes(), 100);
        s.release_appended(&slot);
        assert_eq!(s.appended_bytes(), 0);
        assert!(s.reserve_appended(&slot, 70));
        let _other = s.create(t, 2, EpisodeOptions::default(), RewardScorer::F1); // evicts `slot`
        assert_eq!(s.appended_bytes(), 70, "still referenced here");
        drop(slot);
        assert_eq!(s.appended_bytes(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn tombstones_are_bounded() {
        let s = store(1, None, 2);
        let ids: Vec<EpisodeId> = (0..5).map(|_| open(&s)).collect();
        assert_eq!(s.get(ids[0]).map(|_| ()), Err(Missing::Unknown));
        assert_eq!(s.get(ids[1]).map(|_| ()), Err(Missing::Unknown));
        assert_eq!(s.get(ids[2]).map(|_| ()), Err(Missing::Gone(Gone::Evicted)));
        assert_eq!(s.get(ids[3]).map(|_| ()), Err(Missing::Gone(Gone::Evicted)));
        assert!(s.get(ids[4]).is_ok());
        assert_eq!(s.departures().evicted, 4);
    }

    #[tokio::test(start_paused = true)]
    async fn eviction_queue_stays_proportional_to_open_episodes() {
        let s = store(50, Some(10_000), 10);
        let ids: Vec<EpisodeId> = (0..50).map(|_| open(&s)).collect();
        for round in 0..20u64 {
            tokio::time::advance(Duration::from_millis(7)).await;
            for id in &ids[(round as usize % 5)..] {
                let _ = s.get(*id);
            }
            let _ = open(&s);
        }
        let index = s.index();
        assert_eq!(index.open.len(), 50);
        assert!(
            index.order.len() <= 50 + 20,
            "queue grew to {}",
            index.order.len()
        );
    }
}
