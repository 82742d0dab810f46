//! Deterministic fan-out of independent indexed jobs over scoped threads.
//!
//! Job `i`'s result depends only on `i`, results are gathered back in index order, and no
//! floating-point reduction crosses a thread boundary, so the output is bit-identical for
//! any thread count.

use std::ops::Range;

/// Upper bound on worker threads, so a typo cannot spawn thousands of threads.
pub(crate) const MAX_THREADS: usize = 256;

/// Computes `job(i)` for every `i` in `0..count` and returns the results in index order.
///
/// The index range is cut into at most `threads` contiguous chunks (`threads = 0` is treated
/// as 1; more than [`MAX_THREADS`] as [`MAX_THREADS`]). Chunk 0 runs on the calling thread;
/// if the OS refuses to spawn a worker, that worker's chunk is computed on the calling
/// thread instead, so this never fails.
pub(crate) fn map_indexed<T, F>(count: usize, threads: usize, job: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    map_indexed_with(count, threads, || (), |(), i| job(i))
}

/// As [`map_indexed`], with per-chunk scratch state from `init` (e.g. a reusable buffer).
///
/// The job must not let results depend on what earlier jobs left in the scratch state.
pub(crate) fn map_indexed_with<S, T, I, F>(count: usize, threads: usize, init: I, job: F) -> Vec<T>
where
    T: Send,
    I: Fn() -> S + Sync,
    F: Fn(&mut S, usize) -> T + Sync,
{
    let run = |range: Range<usize>| -> Vec<T> {
        let mut scratch = init();
        range.map(|i| job(&mut scratch, i)).collect()
    };
    let threads = threads.clamp(1, count.clamp(1, MAX_THREADS));
    if threads == 1 {
        return run(0..count);
    }
    let chunk = count.div_ceil(threads);
    let ranges: Vec<Range<usize>> = (0..threads)
        .map(|t| (t * chunk).min(count)..((t + 1) * chunk).min(count))
        .filter(|r| !r.is_empty())
        .collect();
    let parts: Vec<Vec<T>> = std::thread::scope(|scope| {
        let run = &run;
        let mut pending = Vec::with_capacity(ranges.len());
        for range in ranges.iter().skip(1).cloned() {
            let job_range = range.clone();
            let spawned = std::thread::Builder::new().spawn_scoped(scope, move || run(job_range));
            pending.push((range, spawned));
        }
        let mut parts = Vec::with_capacity(ranges.len());
        parts.push(run(ranges.first().cloned().unwrap_or(0..0)));
        for (range, spawned) in pending {
            match spawned {
                Ok(handle) => match handle.join() {
                    Ok(part) => parts.push(part),
                    Err(payload) => std::panic::resume_unwind(payload),
                },
                Err(_) => parts.push(run(range)),
            }
        }
        parts
    });
    parts.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn order_is_preserved_for_any_thread_count() {
        let expected: Vec<usize> = (0..103).map(|i| i * i).collect();
        for threads in [0, 1, 2, 3, 7, 64, 500] {
            assert_eq!(map_indexed(103, threads, |i| i * i), expected, "{threads}");
        }
        assert!(map_indexed(0, 4, |i| i).is_empty());
    }
}
