//! Generating pages (SPEC §11 context for the episode target) and how a page's cost grows:
//! linearly with its page size, not at all with the size of the record set.
use benchaudit_comtrade::{Episode, EpisodeOptions, FetchPageArgs, Generator, TaskSpec, task};

fn main() {
    divan::main();
}

#[divan::bench]
fn t2_all_pages() -> usize {
    let t = task("T2_multi_page").expect("registry");
    let mut ep = Episode::new(t, divan::black_box(0), EpisodeOptions::default());
    (1..=5)
        .map(|p| {
            ep.fetch_page(FetchPageArgs {
                page: p,
                page_size: None,
            })
            .map_or(0, |r| r.rows.len())
        })
        .sum()
}

#[divan::bench]
fn t2_truth() -> u64 {
    let t = task("T2_multi_page").expect("registry");
    Generator::new(t, divan::black_box(0))
        .truth()
        .map(|r| r.qty)
        .sum()
}

/// T2_multi_page with another page size and record count (same id prefix, query, fault).
fn resized(page_size: u32, total_rows: u32) -> &'static TaskSpec {
    let base = task("T2_multi_page").expect("registry");
    Box::leak(Box::new(TaskSpec {
        page_size,
        total_rows,
        ..base.clone()
    }))
}

/// One episode that never runs out of budget.
fn episode(t: &'static TaskSpec) -> Episode {
    let options = EpisodeOptions {
        max_requests: Some(u32::MAX),
        ..EpisodeOptions::default()
    };
    Episode::new(t, 0, options)
}

/// A served page with its REST body (what `GET /v1/episodes/{id}/pages/{page}` computes), by
/// rows per page, in a record set of a million.
#[divan::bench(args = [10, 50, 100, 250, 500, 1000, 2000, 5000])]
fn page_by_size(bencher: divan::Bencher, rows: u32) {
    let mut ep = episode(resized(rows, 1_000_000));
    let mut body = Vec::new();
    bencher.bench_local(|| {
        let page = ep
            .fetch_page(FetchPageArgs {
                page: divan::black_box(7),
                page_size: None,
            })
            .expect("served");
        body.clear();
        page.write_json(ep.task(), &mut body);
        body.len()
    });
}

/// The same 500-row page (the middle one) in record sets of different sizes.
#[divan::bench(args = [2_345, 100_000, 1_000_000, 100_000_000])]
fn page_by_total_rows(bencher: divan::Bencher, total_rows: u32) {
    let t = resized(500, total_rows);
    let mut ep = episode(t);
    let middle = i64::from(t.total_pages() / 2);
    let mut body = Vec::new();
    bencher.bench_local(|| {
        let page = ep
            .fetch_page(FetchPageArgs {
                page: divan::black_box(middle),
                page_size: None,
            })
            .expect("served");
        body.clear();
        page.write_json(ep.task(), &mut body);
        body.len()
    });
}

/// T1's page 1, the comparison's largest body (800 rows, 134 KB): serving it (rows generated,
/// faults injected) and writing its REST body, apart, so each half's cost shows.
#[divan::bench]
fn t1_page_serve(bencher: divan::Bencher) {
    let mut ep = episode(task("T1_single_page").expect("registry"));
    bencher.bench_local(|| {
        ep.fetch_page(FetchPageArgs {
            page: divan::black_box(1),
            page_size: None,
        })
        .map_or(0, |p| p.rows.len())
    });
}

/// See [`t1_page_serve`]: the body of the same page, written into a fresh buffer as REST does.
#[divan::bench]
fn t1_page_write(bencher: divan::Bencher) {
    let mut ep = episode(task("T1_single_page").expect("registry"));
    let page = ep
        .fetch_page(FetchPageArgs {
            page: 1,
            page_size: None,
        })
        .expect("served");
    bencher.bench_local(|| {
        let mut body = Vec::new();
        page.write_json(ep.task(), &mut body);
        body.len()
    });
}
