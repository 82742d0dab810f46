//! The generator card: a datasheet for the seeded generator (parameters, fault families, the
//! determinism algorithm, measured properties, known limits). Every figure in it is computed
//! when the card is rendered, from the generator itself.

use std::fmt::Write;

use crate::episode::Episode;
use crate::protocol::{EpisodeOptions, FetchPageArgs};
use crate::record::{Generator, Row, RowJson};
use crate::task::{FaultFamily, TaskSpec, task, tasks};

/// Page-drift solvability measured over a range of seeds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DriftMeasure {
    /// Seeds measured.
    pub seeds: u64,
    /// Seeds where one pass over the pages misses at least one record.
    pub single_pass_misses: u64,
    /// Seeds where cycling through the pages recovers every record within the budget.
    pub recovered_within_budget: u64,
    /// Largest number of requests the recovery needed.
    pub max_requests_needed: u32,
}

/// Measures T6's drift: one pass vs re-fetching cyclically until all records are held.
pub fn measure_drift(seeds: std::ops::Range<u64>) -> Option<DriftMeasure> {
    let t = task("T6_page_drift")?;
    let mut m = DriftMeasure {
        seeds: 0,
        single_pass_misses: 0,
        recovered_within_budget: 0,
        max_requests_needed: 0,
    };
    for seed in seeds {
        m.seeds += 1;
        let mut ep = Episode::new(t, seed, EpisodeOptions::default());
        let mut held = vec![false; t.total_rows as usize];
        let mut unique = 0u32;
        let mut page = 0u32;
        while unique < t.total_rows {
            page = page % t.total_pages() + 1;
            let Ok(resp) = ep.fetch_page(FetchPageArgs {
                page: i64::from(page),
                page_size: None,
            }) else {
                break;
            };
            for row in resp.rows {
                if let Row::Record(r) = row
                    && !std::mem::replace(&mut held[r.index as usize], true)
                {
                    unique += 1;
                }
            }
            if ep.counts().requests == t.total_pages() && unique < t.total_rows {
                m.single_pass_misses += 1;
            }
        }
        if unique == t.total_rows {
            m.recovered_within_budget += 1;
            m.max_requests_needed = m.max_requests_needed.max(ep.counts().requests);
        }
    }
    Some(m)
}

fn fault_text(f: &FaultFamily) -> String {
    match *f {
        FaultFamily::None => "none".into(),
        FaultFamily::Pagination => "pagination (no fault)".into(),
        FaultFamily::Duplicates {
            duplicate_rate,
            cross_page_duplicate_rate,
        } => {
            format!("duplicates: rate {duplicate_rate}, cross-page {cross_page_duplicate_rate}")
        }
        FaultFamily::RateLimit { faults } => format!("rate_limit: {faults} × 429"),
        FaultFamily::ServerError { faults } => format!("server_error: {faults} × 500"),
        FaultFamily::PageDrift => "page_drift".into(),
        FaultFamily::TotalsTrap => "totals_trap".into(),
        FaultFamily::Mixed {
            rate_limit_faults,
            duplicate_rate,
            cross_page_duplicate_rate,
        } => {
            format!(
                "mixed: {rate_limit_faults} × 429 + duplicates {duplicate_rate} / {cross_page_duplicate_rate}"
            )
        }
        FaultFamily::Adaptive => "adaptive: stress engine, escalating arm".into(),
    }
}

fn mean_row_bytes(t: &'static TaskSpec) -> f64 {
    let g = Generator::new(t, 0);
    let total: usize = g
        .truth()
        .map(|r| {
            serde_json::to_string(&RowJson {
                task: t,
                row: &Row::Record(r),
            })
            .map_or(0, |s| s.len() + 1)
        })
        .sum();
    total as f64 / f64::from(t.total_rows)
}

/// Renders the generator card as Markdown.
pub fn generator_card() -> String {
    let mut md = String::new();
    let _ = writeln!(md, "# ComtradeBench generator card\n");
    let _ = writeln!(
        md,
        "A datasheet for a seeded procedural generator, not a static corpus. Every record, page and injected fault is a pure \
         function of `(task_id, seed)` and the episode's options; ground truth is regenerated from the seed, never stored.\n"
    );
    let _ = writeln!(md, "## Tasks\n");
    let _ = writeln!(
        md,
        "| task_id | page_size | max_requests | total_rows | pages | rate_limit_qps | paging_mode | query (reporter, partner, flow, hs, year) | fault family |"
    );
    let _ = writeln!(md, "|---|---|---|---|---|---|---|---|---|");
    for t in tasks() {
        let q = &t.query;
        let _ = writeln!(
            md,
            "| {} | {} | {} | {} | {} | {} | {} | {}, {}, {}, \"{}\", {} | {} |",
            t.task_id,
            t.page_size,
            t.max_requests,
            t.total_rows,
            t.total_pages(),
            t.rate_limit_qps,
            serde_json::to_value(t.paging_mode)
                .ok()
                .and_then(|v| v.as_str().map(String::from))
                .unwrap_or_default(),
            q.reporter,
            q.partner,
            q.flow,
            q.hs,
            q.year,
            fault_text(&t.fault)
        );
    }
    let _ = writeln!(md, "\n## Records\n");
    let _ = writeln!(
        md,
        "Canonical record `i` (0 ≤ i < total_rows): `year` (the query year, integer), `reporter`, `partner`, `flow`, `hs`, \
         `cmdCode` (= hs), `tradeValue` ∈ [0, 1 000 000), `netWeight` ∈ [0, 50 000), `qty` ∈ [0, 10 000), \
         `record_id = \"{{task_id}}-{{i:06}}\"`. Primary key: (year, reporter, partner, flow, hs, record_id). \
         Ground truth G(task, seed) is exactly records 0..total_rows−1.\n"
    );
    let _ = writeln!(md, "## Determinism algorithm\n");
    let _ = writeln!(
        md,
        "1. key = SHA-256 of the UTF-8 string `comtrade:{{task_id}}:{{seed}}` (seed in decimal), 32 bytes."
    );
    let _ = writeln!(
        md,
        "2. A *stream* is ChaCha8 (20→8 rounds, the `rand_chacha` 0.9 `ChaCha8Rng`) seeded with the key, stream number set with `set_stream`, read from position 0 with `next_u64` (two little-endian 32-bit words, low word first)."
    );
    let _ = writeln!(
        md,
        "3. Record `i` reads stream 0 from 32-bit word position `8·i` (`set_word_pos`): `tradeValue = below(1_000_000)`, then `netWeight = below(50_000)`, then `qty = below(10_000)`. Any record is O(1); a range of records is one sequential read. (A rejection redraw in `below`, odds below 10⁻¹³ per draw, reads on into the next words.)"
    );
    let _ = writeln!(
        md,
        "4. `below(n)` is Lemire's multiply-and-reject: `m = x·n` (128-bit); if `low64(m) < n`, let `t = (2⁶⁴ − n) mod n` and redraw while `low64(m) < t`; return `high64(m)`."
    );
    let _ = writeln!(
        md,
        "5. The r-th valid request (1-based; requests rejected for budget or arguments are not counted) reads stream `2³² + r`, in this order: the page-drift permutation (Fisher–Yates over 0..total_rows, from the last index down, `j = below(i+1)`), then own-page duplicates, then cross-page duplicates (for each copy: source = `below(len)`, position = `below(current_len + 1)`)."
    );
    let _ = writeln!(
        md,
        "6. The fault plan reads stream `2³³`: shuffle the candidate ordinals 1..=total_pages+k−1 and keep the first k, sorted.\n"
    );
    let _ = writeln!(md, "## Fault families\n");
    let _ = writeln!(
        md,
        "- **rate_limit / server_error**: the planned valid requests answer 429 / 500 with `retry: true` (429 adds `retry_after_s: 1`); repeating the call succeeds unless it is itself planned. Candidates 1..=total_pages+k−1 guarantee that an agent completing one pass meets exactly the k planned faults."
    );
    let _ = writeln!(
        md,
        "- **duplicates**: each served page gets max(1, round(rate·len)) copies of its own rows and, after the first served page, max(1, round(cross_rate·len)) copies of rows of the previously served page, at seeded positions (Python rounding, half to even). Canonical rows are never removed or overwritten."
    );
    let _ = writeln!(
        md,
        "- **page_drift**: every valid request slices its own seeded permutation of the full set."
    );
    let _ = writeln!(
        md,
        "- **totals_trap**: every served page starts with one totals row: partner \"WLD\", hs and cmdCode \"TOTAL\", sums of the page's tradeValue/netWeight/qty, record_id `{{task_id}}-TOTAL-{{page:04}}`, `is_total: true`, `isTotal: true`."
    );
    let _ = writeln!(
        md,
        "- **budget**: once max_requests (or the quota) is spent every fetch answers `{{status: 429, error: \"request budget exhausted\", retry: false}}` without data. Every call spends one unit, rejected ones included."
    );
    let _ = writeln!(
        md,
        "- **arguments**: page < 1 or page_size outside 1..=1000 → 422; `retry: true` under the `legacy` interface (as released: the same envelope as a transient fault), `false` under `strict`."
    );
    let _ = writeln!(
        md,
        "- **adaptive** (T9_adaptive_adversary): the stress engine's escalating arm on the clean substrate: a linear ramp of intensity 0 → 1 over the task's pages, driven by pages newly served (a fault cancels one), with fault probability 0.05 + 0.30·i (HTTP 429, retry true), duplicate copies at rate 0.20·i of the page's rows, and a totals-row distractor once i ≥ 0.70. Step randomness: ChaCha8 keyed by SHA-256 of `\"{{seed}}:{{step}}\"`, step = valid request ordinal − 1 (paper A.11).\n"
    );
    let _ = writeln!(md, "## Measured properties\n");
    if let Some(d) = measure_drift(0..1000) {
        let _ = writeln!(
            md,
            "- Page drift (T6, seeds 0..{}): one pass over the {} pages misses records on {} of {} seeds ({:.1}%); cycling through the pages recovers all {} records within the budget of {} on {} of {} seeds ({:.1}%), needing at most {} requests.",
            d.seeds - 1,
            task("T6_page_drift").map_or(0, TaskSpec::total_pages),
            d.single_pass_misses,
            d.seeds,
            100.0 * d.single_pass_misses as f64 / d.seeds as f64,
            task("T6_page_drift").map_or(0, |t| t.total_rows),
            task("T6_page_drift").map_or(0, |t| t.max_requests),
            d.recovered_within_budget,
            d.seeds,
            100.0 * d.recovered_within_budget as f64 / d.seeds as f64,
            d.max_requests_needed
        );
    }
    let _ = writeln!(md, "\n## Known limits\n");
    if let Some(t7) = task("T7_totals_trap") {
        let _ = writeln!(
            md,
            "- **T7 re-emission bound.** At L2 with the `full` protocol an agent must re-emit all {} records in one call, about {:.0} bytes of JSON each (seed 0). Under a per-episode output-token budget this caps recall regardless of ability; `benchaudit audit` computes the cap with a tokenizer. The `ids` and `chunked` submission protocols lift it.",
            t7.total_rows,
            mean_row_bytes(t7)
        );
    }
    let _ = writeln!(
        md,
        "- `rate_limit_qps` is advisory, as released: the pure core has no clock; rate limiting is expressed as injected 429s."
    );
    let _ = writeln!(
        md,
        "- `paging_mode` is descriptive, as released: pages are addressed from 1 in both modes and the task's page size is authoritative (the argument is echoed)."
    );
    let _ = writeln!(
        md,
        "- Generator- and template-level contamination remain possible: the algorithm is public by design."
    );
    md
}
