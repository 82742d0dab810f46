//! Generating every page of T2 (SPEC §11 context for the episode target).
use benchaudit_comtrade::{Episode, EpisodeOptions, FetchPageArgs, Generator, task};

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
