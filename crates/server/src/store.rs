//! The app-owned episode store: every open episode, addressed by an unguessable id, under a
//! cap with idle expiry.
//!
//! Eviction is reported, never silent: every id this store ever issued answers 410 once its
//! episode has left (pushed out by the cap, idle too long, or its MCP session closed), never 404
//! or, worse, a fresh episode — without remembering every departed id. An id is a creation
//! counter and a keyed MAC of it ([`EpisodeId`]): a well-formed id whose MAC verifies was issued
//! here, so if it is not open it is gone. A bounded window of recent departures remembers *why*
//! (the 410's `reason`); past it the reason is `departed`.
//!
//! Eviction is least-recently-used by a second-chance queue: the queue holds every open id
//! with the time it was queued; touching an episode only updates its `last_used`, and eviction
//! pops the queue front, re-queuing (with its newer time) any episode touched since it was
//! queued — an approximation of LRU in which an episode used since it was queued is always
//! passed over. Every touch costs O(1) and every eviction amortised O(1).
//!
//! Why one long file: the store's index, eviction queue, tombstones and id MAC share one lock
//! and one invariant (every issued id answers 410 once gone); a quarter of it is the tests of
//! that invariant.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use benchaudit_comtrade::{Episode, EpisodeOptions, TaskSpec};
use benchaudit_scoring::RewardScorer;
use hmac::{Hmac, Mac};
use sha2::Sha256;
use tokio::time::Instant;

use crate::answer::SubmitAnswer;

/// An episode's public name, 32 lowercase hex digits: the store's creation counter (high 64
/// bits, from 1) and the first 64 bits of HMAC-SHA-256 of that counter under the store's key
/// (low 64 bits). Unguessable without the key — one client cannot read or submit another
/// client's episode, at 2^-64 per guess — and self-certifying, so the store knows an id it
/// issued without keeping it. The counter is visible: an id tells how many episodes were
/// created before it, nothing else. A new server process draws a new key, so ids of an
/// earlier process are unknown to it (404).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct EpisodeId(u128);

impl EpisodeId {
    /// The creation counter the id carries (verified or not).
    pub fn counter(self) -> u64 {
        (self.0 >> 64) as u64
    }

    fn tag(self) -> u64 {
        self.0 as u64
    }
}

/// Mints and verifies [`EpisodeId`]s under a key drawn once per store.
struct IdKey(Hmac<Sha256>);

impl IdKey {
    /// A key of OS randomness (uuid v4 draws from the OS generator; two of them give 244
    /// random bits).
    fn random() -> Self {
        let mut key = [0u8; 32];
        key[..16].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        key[16..].copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        IdKey(Hmac::<Sha256>::new_from_slice(&key).unwrap_or_else(|_| {
            // HMAC takes keys of any length; this branch cannot run.
            unreachable!("HMAC accepts 32-byte keys")
        }))
    }

    fn mac(&self, counter: u64) -> Hmac<Sha256> {
        let mut mac = self.0.clone();
        mac.update(b"benchaudit episode id v1");
        mac.update(&counter.to_be_bytes());
        mac
    }

    fn mint(&self, counter: u64) -> EpisodeId {
        let digest = self.mac(counter).finalize().into_bytes();
        let mut tag = [0u8; 8];
        tag.copy_from_slice(&digest[..8]);
        EpisodeId((u128::from(counter) << 64) | u128::from(u64::from_be_bytes(tag)))
    }

    /// Whether this key issued `id` (constant-time comparison of the tag).
    fn issued(&self, id: EpisodeId) -> bool {
        self.mac(id.counter())
            .verify_truncated_left(&id.tag().to_be_bytes())
            .is_ok()
    }
}

impl fmt::Debug for IdKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("IdKey(..)")
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
    /// Its `/mcp` session ended (nothing else could address it).
    Closed,
    /// Issued here and gone, left so long ago that the reason is no longer remembered.
    Departed,
}

impl Gone {
    /// The word the 410 body uses.
    pub fn as_str(self) -> &'static str {
        match self {
            Gone::Evicted => "evicted",
            Gone::Expired => "expired",
            Gone::Closed => "closed",
            Gone::Departed => "departed",
        }
    }

    /// Why, in words, for the 410 message.
    pub fn explain(self) -> &'static str {
        match self {
            Gone::Evicted => "the server's cap on open episodes was reached",
            Gone::Expired => "idle longer than the server's idle timeout",
            Gone::Closed => "its MCP session ended",
            Gone::Departed => "evicted or expired a while ago",
        }
    }
}

/// Why a lookup found no episode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Missing {
    /// Never issued by this store (or by an earlier process of this server).
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
    /// How many recent departures remember their reason (evicted, expired, closed); every
    /// departed id answers 410 regardless, older ones with reason `departed`.
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
    /// Who plays (the create request's `agent`), for a recorder.
    pub agent: Option<Box<str>>,
    /// When the episode was created (a recorded episode's wall time starts here).
    pub created: std::time::Instant,
}

/// One open episode: its state behind its own lock (requests on different episodes never
/// wait for each other) and its last use, readable without that lock.
#[derive(Debug)]
pub struct Slot {
    /// The episode's name (kept here so a holder of the slot can report it).
    pub id: EpisodeId,
    /// The episode's options, fixed at creation (readable without the lock).
    pub options: EpisodeOptions,
    /// Store time (microseconds since the store's epoch, strictly increasing across touches)
    /// of the last request; drives LRU and expiry.
    last_used: AtomicU64,
    /// An async mutex: a request waiting for a busy episode (one being scored) yields its
    /// worker thread instead of blocking it, so one episode's load never stalls the server.
    state: Arc<tokio::sync::Mutex<EpisodeState>>,
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
    /// Locks the episode, waiting asynchronously while another request holds it.
    pub async fn lock(&self) -> tokio::sync::MutexGuard<'_, EpisodeState> {
        self.state.lock().await
    }

    /// Locks the episode for work that moves to a blocking thread (scoring, chunk assembly).
    pub async fn lock_owned(&self) -> tokio::sync::OwnedMutexGuard<EpisodeState> {
        Arc::clone(&self.state).lock_owned().await
    }
}

/// Counts of departures since start, for `/metrics`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Departures {
    /// Episodes evicted under the cap.
    pub evicted: u64,
    /// Episodes expired for idleness.
    pub expired: u64,
    /// Episodes of `/mcp` sessions that ended.
    pub closed: u64,
}

#[derive(Debug, Default)]
struct Index {
    open: HashMap<EpisodeId, Arc<Slot>>,
    /// Every open id once, with the `last_used` it had when queued; roughly oldest first.
    order: VecDeque<(EpisodeId, u64)>,
    /// Recent departures and their reasons (bounded by `max_tombstones`).
    gone: HashMap<EpisodeId, Gone>,
    gone_order: VecDeque<EpisodeId>,
    departures: Departures,
    /// Creation counter of the next episode (ids carry it; 0 is never issued).
    next: u64,
    /// The last time handed out by `tick`.
    last_tick: u64,
}

/// The store. Cheap to share behind an `Arc`; one std mutex guards the index (held for a hash
/// lookup or an O(1) queue step, never across `.await`), and each episode has its own lock.
#[derive(Debug)]
pub struct EpisodeStore {
    limits: StoreLimits,
    key: IdKey,
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
            key: IdKey::random(),
            epoch: Instant::now(),
            index: Mutex::new(Index {
                next: 1,
                ..Index::default()
            }),
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
        agent: Option<Box<str>>,
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
        let id = self.key.mint(index.next);
        index.next = index.next.saturating_add(1);
        let slot = Arc::new(Slot {
            id,
            options,
            last_used: AtomicU64::new(now),
            state: Arc::new(tokio::sync::Mutex::new(EpisodeState {
                episode,
                reward,
                result: None,
                agent,
                created: std::time::Instant::now(),
            })),
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
        // Verify before locking: a forged id costs one MAC and never touches the index.
        if !self.key.issued(id) {
            return Err(Missing::Unknown);
        }
        let idle = self.idle_us();
        let mut index = self.index();
        if id.counter() >= index.next {
            return Err(Missing::Unknown);
        }
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
        // Issued here and not open: gone, for a remembered reason or an old one.
        Err(Missing::Gone(
            index.gone.get(&id).copied().unwrap_or(Gone::Departed),
        ))
    }

    /// Removes an episode nothing can address any more (its `/mcp` session ended).
    pub fn close(&self, id: EpisodeId) {
        let mut index = self.index();
        self.depart_locked(&mut index, id, Gone::Closed);
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
        let d = &mut index.departures;
        match reason {
            Gone::Evicted => d.evicted = d.evicted.saturating_add(1),
            Gone::Expired => d.expired = d.expired.saturating_add(1),
            Gone::Closed => d.closed = d.closed.saturating_add(1),
            Gone::Departed => {}
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
        s.create(t, 1, EpisodeOptions::default(), RewardScorer::F1, None)
            .id
    }

    #[test]
    fn ids_round_trip_and_reject_other_shapes() {
        let s = store(10, None, 10);
        let (a, b) = (open(&s), open(&s));
        assert_eq!(a.to_string().parse::<EpisodeId>(), Ok(a));
        assert_ne!(a, b);
        assert_eq!((a.counter(), b.counter()), (1, 2));
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
                ..Departures::default()
            }
        );
    }

    #[tokio::test(start_paused = true)]
    async fn forged_and_foreign_ids_are_unknown() {
        let s = store(3, None, 10);
        let a = open(&s);
        // Another store (another server process) has another key.
        let other = store(3, None, 10);
        let foreign = open(&other);
        assert_eq!(foreign.counter(), a.counter());
        assert_ne!(foreign, a);
        assert_eq!(s.get(foreign).map(|_| ()), Err(Missing::Unknown));
        // A valid counter with a wrong tag, a flipped bit, and all zeros.
        let forged = EpisodeId((u128::from(a.counter()) << 64) | u128::from(a.tag() ^ 1));
        assert_eq!(s.get(forged).map(|_| ()), Err(Missing::Unknown));
        assert_eq!(
            s.get(EpisodeId(a.0 ^ (1 << 100))).map(|_| ()),
            Err(Missing::Unknown)
        );
        assert_eq!(s.get(EpisodeId(0)).map(|_| ()), Err(Missing::Unknown));
        // A counter not issued yet, even with a tag this key would give it.
        let future = s.key.mint(1000);
        assert_eq!(s.get(future).map(|_| ()), Err(Missing::Unknown));
        assert!(s.get(a).is_ok());
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
                expired: 2,
                ..Departures::default()
            }
        );
    }

    #[tokio::test(start_paused = true)]
    async fn append_pool_is_bounded_and_freed_with_the_slot() {
        let s = store(1, None, 10);
        let t = task("T3_duplicates").expect("registry");
        let slot = s.create(t, 1, EpisodeOptions::default(), RewardScorer::F1, None);
        assert!(s.reserve_appended(&slot, 60));
        assert!(!s.reserve_appended(&slot, 41));
        assert!(s.reserve_appended(&slot, 40));
        assert_eq!(s.appended_bytes(), 100);
        s.release_appended(&slot);
        assert_eq!(s.appended_bytes(), 0);
        assert!(s.reserve_appended(&slot, 70));
        let _other = s.create(t, 2, EpisodeOptions::default(), RewardScorer::F1, None); // evicts `slot`
        assert_eq!(s.appended_bytes(), 70, "still referenced here");
        drop(slot);
        assert_eq!(s.appended_bytes(), 0);
    }

    #[tokio::test(start_paused = true)]
    async fn every_departed_id_stays_gone_past_the_tombstone_window() {
        let s = store(1, None, 2);
        let ids: Vec<EpisodeId> = (0..5).map(|_| open(&s)).collect();
        // The reason is remembered for the last two departures only; all four are gone.
        assert_eq!(
            s.get(ids[0]).map(|_| ()),
            Err(Missing::Gone(Gone::Departed))
        );
        assert_eq!(
            s.get(ids[1]).map(|_| ()),
            Err(Missing::Gone(Gone::Departed))
        );
        assert_eq!(s.get(ids[2]).map(|_| ()), Err(Missing::Gone(Gone::Evicted)));
        assert_eq!(s.get(ids[3]).map(|_| ()), Err(Missing::Gone(Gone::Evicted)));
        assert!(s.get(ids[4]).is_ok());
        assert_eq!(s.departures().evicted, 4);
        let index = s.index();
        assert!(index.gone.len() <= 2 && index.gone_order.len() <= 2);
        drop(index);
        s.close(ids[4]);
        assert_eq!(s.get(ids[4]).map(|_| ()), Err(Missing::Gone(Gone::Closed)));
        assert_eq!(s.departures().closed, 1);
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
