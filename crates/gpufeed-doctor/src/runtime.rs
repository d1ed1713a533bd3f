//! The runtime check: a short run of gpufeed's loader on the dataset's precomputed cache,
//! judged by the step-time verdict of `gpufeed-stats` (as `gpufeed profile data`).
//!
//! The binary runs the loader (this crate does not depend on it) and hands over a
//! [`RuntimeFacts`]; the rules are pure. Without a cache the check says how to build one:
//! `doctor` never starts a long precompute.
//!
//! The batches are pulled as fast as the consumer can take them (no simulated GPU step).
//! Such a consumer sees the workers' batches finish together, then waits for the next
//! round, so its waits cycle every round whatever the loader does: they give the
//! throughput, and the verdict judges the time a worker takes to make each batch (as
//! `gpufeed profile data` with no consumer). A cycle there is the loader's, whatever the
//! model. Whether the training is *input-bound* needs its step time:
//! `gpufeed profile data --consumer-ms STEP` answers that.
//!
//! ```
//! use gpufeed_doctor::runtime::{RuntimeFacts, check};
//!
//! let f = check(&RuntimeFacts::NoCache { data: "data".into() });
//! assert_eq!(f[0].id, "runtime-no-cache");
//! assert!(f[0].fix.starts_with("gpufeed precompute --data data"));
//! ```

use std::path::PathBuf;

use gpufeed_stats::{PartialBatches, StepAnalysis, StepVerdict};

use gpufeed_findings::finding::Finding;
use gpufeed_findings::rules::finding;

/// A loader run.
#[derive(Debug, Clone, PartialEq)]
pub struct LoaderRun {
    /// The cache folder.
    pub cache: PathBuf,
    /// Utterances in the cache.
    pub items: usize,
    /// Batch size.
    pub batch_size: usize,
    /// Worker threads.
    pub workers: usize,
    /// Batches of warm-up, not timed.
    pub warmup: usize,
    /// The time a worker took to make each timed batch, analysed (ms): the whole batches
    /// only.
    pub work: StepAnalysis,
    /// The consumer's mean wait per batch, ms (all timed batches).
    pub mean_wait_ms: f64,
    /// The epoch-tail batches left out of `work`, when some were short.
    pub partial: Option<PartialBatches>,
    /// Items delivered in the timed batches.
    pub samples: usize,
    /// Samples per second over the timed batches.
    pub samples_per_s: f64,
}

/// What the runtime check found.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum RuntimeFacts {
    /// No `--data`.
    #[default]
    NotRun,
    /// No complete cache for the dataset.
    NoCache {
        /// The dataset.
        data: PathBuf,
    },
    /// The loader failed.
    Failed {
        /// The cache folder.
        cache: PathBuf,
        /// The error.
        error: String,
    },
    /// The loader ran.
    Measured(Box<LoaderRun>),
}

/// The rules over the runtime facts.
#[must_use]
pub fn check(facts: &RuntimeFacts) -> Vec<Finding> {
    match facts {
        RuntimeFacts::NotRun => Vec::new(),
        RuntimeFacts::NoCache { data } => vec![
            finding(
                "runtime-no-cache",
                "the dataset has no precomputed cache, so the loader was not run",
            )
            .in_file(data)
            .evidence(format!(
                "no complete cache for the config's feature settings beside `{}`",
                data.display()
            ))
            .fix(format!(
                "gpufeed precompute --data {}  # then run gpufeed doctor again",
                data.display()
            )),
        ],
        RuntimeFacts::Failed { cache, error } => vec![
            finding("runtime-failed", "the loader failed on the cache")
                .in_file(cache)
                .evidence(error.clone())
                .fix(gpufeed_findings::rules::rule_info("runtime-failed").map_or("", |r| r.fix)),
        ],
        RuntimeFacts::Measured(run) => vec![measured(run)],
    }
}

/// "40 batches: 20 whole of 56 items, and 20 epoch-tail batches of 8 items left out of
/// the figures", or "40 batches of 56 items".
fn batches(r: &LoaderRun) -> String {
    let n = r.work.summary.n;
    match r.partial {
        Some(p) => format!(
            "{} batches: {n} whole of {} items (batch_size {}), and {} left out of the figures",
            n + p.count,
            p.whole_items,
            r.batch_size,
            p.describe()
        ),
        None => {
            // Every batch holds the same number of items.
            let per = r.samples / n.max(1);
            let small = if per < r.batch_size {
                format!(
                    " (the dataset holds fewer than batch_size {})",
                    r.batch_size
                )
            } else {
                String::new()
            };
            format!("{n} batches of {per} items{small}")
        }
    }
}

fn measured(r: &LoaderRun) -> Finding {
    let s = &r.work.summary;
    let evidence = format!(
        "{} after {} warm-up, {} worker(s), {} utterances: {:.0} samples/s, a batch every {:.3} ms; a worker takes {:.3} ms per batch (mean; p95 {:.3} ms, max {:.3} ms, cv {:.2}){}",
        batches(r),
        r.warmup,
        r.workers,
        r.items,
        r.samples_per_s,
        r.mean_wait_ms,
        s.mean,
        s.p95,
        s.max,
        s.cv,
        r.work.period.map_or_else(String::new, |p| format!(
            "; a cycle every {} batches (autocorrelation {:.2})",
            p.period.round(),
            p.strength
        ))
    );
    let f = match r.work.verdict {
        StepVerdict::Stable => finding(
            "runtime-loader-stable",
            &format!("the loader is stable at {:.0} samples/s", r.samples_per_s),
        ),
        StepVerdict::Oscillating => finding(
            "runtime-loader-oscillating",
            &format!(
                "the loader oscillates: a cycle every {} batches ({:.0} samples/s)",
                r.work.period.map_or(0.0, |p| p.period.round()),
                r.samples_per_s
            ),
        ),
        StepVerdict::Unstable => finding(
            "runtime-loader-unstable",
            &format!(
                "the loader delivers {:.0} samples/s, but its batch times vary (cv {:.2})",
                r.samples_per_s, s.cv
            ),
        ),
    };
    let fix = match r.work.verdict {
        StepVerdict::Stable => String::new(),
        StepVerdict::Oscillating => format!(
            "gpufeed profile data --cache {} --benchmark  # measures workers and prefetch, prints the settings to use",
            r.cache.display()
        ),
        StepVerdict::Unstable => format!(
            "gpufeed profile data --cache {} --consumer-ms STEP_MS  # with your step time",
            r.cache.display()
        ),
    };
    f.in_file(&r.cache).evidence(evidence).fix(fix)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(ms: &[f64]) -> RuntimeFacts {
        RuntimeFacts::Measured(Box::new(LoaderRun {
            cache: "c".into(),
            items: 100,
            batch_size: 8,
            workers: 2,
            warmup: 4,
            work: gpufeed_stats::analyze_steps(ms).unwrap(),
            mean_wait_ms: 1.0,
            partial: None,
            samples: 8 * ms.len(),
            samples_per_s: 1000.0,
        }))
    }

    /// The demo's 64 items in batches of 56 once said "40 batches of 32 items (batch_size
    /// 56)" and "oscillates: a cycle every 2 batches".
    #[test]
    fn an_epoch_tail_is_named_not_averaged_nor_a_cycle() {
        let items: Vec<usize> = (0..40).map(|i| if i % 2 == 0 { 56 } else { 8 }).collect();
        let ms: Vec<f64> = items
            .iter()
            .enumerate()
            .map(|(i, &n)| {
                if n == 56 {
                    30.0 + 0.1 * (i % 3) as f64
                } else {
                    0.02
                }
            })
            .collect();
        let (work, partial) = gpufeed_stats::analyze_batches(&ms, &items).unwrap();
        let f = check(&RuntimeFacts::Measured(Box::new(LoaderRun {
            cache: "c".into(),
            items: 64,
            batch_size: 56,
            workers: 2,
            warmup: 4,
            work,
            mean_wait_ms: 15.0,
            partial,
            samples: items.iter().sum(),
            samples_per_s: 1000.0,
        })));
        assert_eq!(f[0].id, "runtime-loader-stable", "{f:?}");
        assert!(
            f[0].evidence.starts_with(
                "40 batches: 20 whole of 56 items (batch_size 56), and 20 epoch-tail batches of 8 \
                 items left out of the figures after 4 warm-up"
            ),
            "{}",
            f[0].evidence
        );
        assert!(!f[0].evidence.contains("32 items"), "{}", f[0].evidence);
    }

    #[test]
    fn a_dataset_smaller_than_a_batch_says_so() {
        let ms = vec![3.0; 20];
        let mut facts = run(&ms);
        if let RuntimeFacts::Measured(r) = &mut facts {
            r.samples = 5 * ms.len();
        }
        let f = check(&facts);
        assert!(
            f[0].evidence
                .starts_with("20 batches of 5 items (the dataset holds fewer than batch_size 8)"),
            "{}",
            f[0].evidence
        );
    }

    #[test]
    fn verdicts_become_findings() {
        let steady: Vec<f64> = (0..40).map(|i| 5.0 + 0.01 * f64::from(i % 3)).collect();
        assert_eq!(check(&run(&steady))[0].id, "runtime-loader-stable");
        // A stall every 4 batches: the seeds' pattern.
        let cycle: Vec<f64> = (0..40)
            .map(|i| if i % 4 == 0 { 20.0 } else { 1.0 })
            .collect();
        let f = check(&run(&cycle));
        assert_eq!(f[0].id, "runtime-loader-oscillating", "{f:?}");
        assert!(
            f[0].evidence.contains("a cycle every 4 batches"),
            "{}",
            f[0].evidence
        );
        // Irregular stalls.
        let noisy: Vec<f64> = (0..40u32)
            .map(|i| {
                if [3, 17, 18, 31].contains(&i) {
                    30.0
                } else {
                    2.0
                }
            })
            .collect();
        assert_eq!(check(&run(&noisy))[0].id, "runtime-loader-unstable");
    }

    #[test]
    fn no_cache_failure_and_not_run() {
        assert!(check(&RuntimeFacts::NotRun).is_empty());
        let f = check(&RuntimeFacts::Failed {
            cache: "c".into(),
            error: "shard `x` is damaged".into(),
        });
        assert_eq!(f[0].id, "runtime-failed");
        assert_eq!(f[0].evidence, "shard `x` is damaged");
    }
}
