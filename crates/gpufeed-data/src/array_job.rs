//! `precompute --shard auto`: this run's slice of the shards, from the scheduler that
//! started it as one task of an array job.
//!
//! | scheduler | I | N |
//! |---|---|---|
//! | Slurm job array (`sbatch --array=0-7`) | (`SLURM_ARRAY_TASK_ID` - `SLURM_ARRAY_TASK_MIN`) / `SLURM_ARRAY_TASK_STEP` | `SLURM_ARRAY_TASK_COUNT`, else (`SLURM_ARRAY_TASK_MAX` - `SLURM_ARRAY_TASK_MIN`) / `SLURM_ARRAY_TASK_STEP` + 1 |
//! | Kubernetes Indexed Job (`completionMode: Indexed`) | `JOB_COMPLETION_INDEX` | `JOB_COMPLETIONS` |
//!
//! Slurm sets all five of its variables in every task of an array (MIN defaults to 0 and
//! STEP to 1 here when absent). An array that is not a range (`--array=1,3,8`) has no
//! dense index: its count and its bounds disagree, and that is an error, not a guess.
//! A `%` throttle (`--array=0-15%4`) changes nothing.
//!
//! Kubernetes gives an Indexed Job's pods their index (`JOB_COMPLETION_INDEX`) but no
//! variable with the number of completions, so gpufeed reads `JOB_COMPLETIONS`, which the
//! Job's pod template sets to the same number as `spec.completions`
//! (`deploy/kubernetes/precompute-job.yaml` does).
//!
//! ```
//! use gpufeed_data::array_job::detect;
//! let env = |k: &str| match k {
//!     "SLURM_ARRAY_TASK_ID" => Some("5".to_owned()),
//!     "SLURM_ARRAY_TASK_MIN" => Some("1".to_owned()),
//!     "SLURM_ARRAY_TASK_MAX" => Some("8".to_owned()),
//!     _ => None,
//! };
//! let job = detect(env).unwrap();
//! assert_eq!((job.shard.index, job.shard.count), (4, 8));
//! assert!(job.source.starts_with("Slurm job array"));
//! ```

use crate::error::DataError;
use crate::precompute::ShardSpec;

/// Slurm: this task's id in the array.
pub const SLURM_ID: &str = "SLURM_ARRAY_TASK_ID";
/// Slurm: the number of tasks in the array.
pub const SLURM_COUNT: &str = "SLURM_ARRAY_TASK_COUNT";
/// Slurm: the array's lowest task id.
pub const SLURM_MIN: &str = "SLURM_ARRAY_TASK_MIN";
/// Slurm: the array's highest task id.
pub const SLURM_MAX: &str = "SLURM_ARRAY_TASK_MAX";
/// Slurm: the step between task ids (`--array=0-15:4`).
pub const SLURM_STEP: &str = "SLURM_ARRAY_TASK_STEP";
/// Kubernetes Indexed Job: this pod's completion index.
pub const K8S_INDEX: &str = "JOB_COMPLETION_INDEX";
/// Kubernetes: the number of completions, set by the Job's pod template (no standard
/// variable carries it).
pub const K8S_COUNT: &str = "JOB_COMPLETIONS";

/// The slice an array task owns, and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArrayTask {
    /// `I/N`.
    pub shard: ShardSpec,
    /// The scheduler and the variables read, for the run's log, e.g.
    /// `Slurm job array (SLURM_ARRAY_TASK_ID=5, SLURM_ARRAY_TASK_MIN=1, ...)`.
    pub source: String,
}

/// The variables `--shard auto` reads, for messages.
const EXPECTED: &str = "expected SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT (or \
    SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_MAX), which Slurm sets in each task of \
    `sbatch --array=0-N`, or JOB_COMPLETION_INDEX with JOB_COMPLETIONS from a Kubernetes \
    Indexed Job (Kubernetes sets the index; set JOB_COMPLETIONS in the pod's env to the \
    Job's `completions`, as deploy/kubernetes/precompute-job.yaml does); outside an array \
    job pass `--shard I/N`";

fn fail(message: String) -> DataError {
    DataError::ArrayJob { message }
}

/// Reads `name` through `env` as a whole number; `None` when unset or empty.
fn number(env: &impl Fn(&str) -> Option<String>, name: &str) -> Result<Option<u64>, DataError> {
    match env(name) {
        None => Ok(None),
        Some(v) if v.trim().is_empty() => Ok(None),
        Some(v) => v.trim().parse().map(Some).map_err(|_| {
            fail(format!(
                "`{name}={}` is not a whole number; {EXPECTED}",
                v.escape_debug()
            ))
        }),
    }
}

/// The slice of this array task, from the environment as `env` reads it
/// (`|k| std::env::var(k).ok()` in the binary).
pub fn detect(env: impl Fn(&str) -> Option<String>) -> Result<ArrayTask, DataError> {
    let slurm = number(&env, SLURM_ID)?;
    let k8s = number(&env, K8S_INDEX)?;
    match (slurm, k8s) {
        (Some(_), Some(_)) => Err(fail(format!(
            "both {SLURM_ID} (Slurm) and {K8S_INDEX} (Kubernetes) are set, so which \
             scheduler started this run is unclear; unset one, or pass `--shard I/N`"
        ))),
        (Some(id), None) => slurm_task(&env, id),
        (None, Some(index)) => {
            let count = number(&env, K8S_COUNT)?.ok_or_else(|| {
                fail(format!(
                    "{K8S_INDEX}={index} is set but {K8S_COUNT} is not: Kubernetes gives a \
                     pod its index but not the number of completions; set {K8S_COUNT} in \
                     the pod's env to the Job's `completions` (see \
                     deploy/kubernetes/precompute-job.yaml), or pass `--shard I/N`"
                ))
            })?;
            let source =
                format!("Kubernetes Indexed Job ({K8S_INDEX}={index}, {K8S_COUNT}={count})");
            shard(index, count, &source)
        }
        (None, None) => Err(fail(format!(
            "no array-job index in the environment; {EXPECTED}"
        ))),
    }
}

/// A Slurm array task `id`.
fn slurm_task(env: &impl Fn(&str) -> Option<String>, id: u64) -> Result<ArrayTask, DataError> {
    let min = number(env, SLURM_MIN)?;
    let max = number(env, SLURM_MAX)?;
    let count = number(env, SLURM_COUNT)?;
    let step = number(env, SLURM_STEP)?.unwrap_or(1);
    let mut read = vec![format!("{SLURM_ID}={id}")];
    for (name, v) in [
        (SLURM_MIN, min),
        (SLURM_MAX, max),
        (SLURM_STEP, Some(step).filter(|_| env(SLURM_STEP).is_some())),
        (SLURM_COUNT, count),
    ] {
        if let Some(v) = v {
            read.push(format!("{name}={v}"));
        }
    }
    let source = format!("Slurm job array ({})", read.join(", "));
    if step == 0 {
        return Err(fail(format!("{source}: a step of 0 is not an array")));
    }
    let low = min.unwrap_or(0);
    let not_a_range = |why: &str| {
        fail(format!(
            "{source}: {why}, so this task has no index in 0..N; submit a plain range \
             such as `sbatch --array=0-7` (a `%` limit is fine), or pass `--shard I/N`"
        ))
    };
    if id < low || !(id - low).is_multiple_of(step) {
        return Err(not_a_range("the task id is not on the array's range"));
    }
    let index = (id - low) / step;
    let from_bounds = match max {
        Some(high) if high < low => return Err(not_a_range("the highest id is below the lowest")),
        Some(high) => Some((high - low) / step + 1),
        None => None,
    };
    let count = match (count, from_bounds) {
        (Some(c), Some(b)) if c != b => {
            return Err(not_a_range(&format!(
                "the array has {c} tasks but its bounds span {b} (a list such as \
                 `--array=1,3,8`?)"
            )));
        }
        (Some(c), _) | (None, Some(c)) => c,
        (None, None) => {
            return Err(fail(format!(
                "{SLURM_ID}={id} is set but neither {SLURM_COUNT} nor {SLURM_MIN} and \
                 {SLURM_MAX} are, so the number of tasks is unknown; {EXPECTED}"
            )));
        }
    };
    shard(index, count, &source)
}

fn shard(index: u64, count: u64, source: &str) -> Result<ArrayTask, DataError> {
    let too_big = || fail(format!("{source}: index {index} of {count} is too large"));
    let (i, n) = (
        usize::try_from(index).map_err(|_| too_big())?,
        usize::try_from(count).map_err(|_| too_big())?,
    );
    if n == 0 || i >= n {
        return Err(fail(format!(
            "{source}: index {index} is not below the count {count}; the count must be the \
             number of tasks (indices 0 to count - 1), or pass `--shard I/N`"
        )));
    }
    Ok(ArrayTask {
        shard: ShardSpec { index: i, count: n },
        source: source.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: Vec<(String, String)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |k| vars.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
    }

    fn ok(vars: &[(&str, &str)]) -> (usize, usize) {
        let t = detect(env(vars)).unwrap();
        (t.shard.index, t.shard.count)
    }

    fn err(vars: &[(&str, &str)]) -> String {
        detect(env(vars)).unwrap_err().to_string()
    }

    #[test]
    fn slurm_arrays() {
        // sbatch --array=0-3: everything Slurm sets.
        let all = [
            (SLURM_ID, "2"),
            (SLURM_MIN, "0"),
            (SLURM_MAX, "3"),
            (SLURM_STEP, "1"),
            (SLURM_COUNT, "4"),
        ];
        assert_eq!(ok(&all), (2, 4));
        let t = detect(env(&all)).unwrap();
        assert_eq!(
            t.source,
            "Slurm job array (SLURM_ARRAY_TASK_ID=2, SLURM_ARRAY_TASK_MIN=0, \
             SLURM_ARRAY_TASK_MAX=3, SLURM_ARRAY_TASK_STEP=1, SLURM_ARRAY_TASK_COUNT=4)"
        );
        // ID and COUNT alone: a 0-based array.
        assert_eq!(ok(&[(SLURM_ID, "3"), (SLURM_COUNT, "4")]), (3, 4));
        // --array=1-8: MIN/MAX.
        assert_eq!(
            ok(&[(SLURM_ID, "1"), (SLURM_MIN, "1"), (SLURM_MAX, "8")]),
            (0, 8)
        );
        // --array=10-40:10 with a throttle: 10, 20, 30, 40.
        assert_eq!(
            ok(&[
                (SLURM_ID, "30"),
                (SLURM_MIN, "10"),
                (SLURM_MAX, "40"),
                (SLURM_STEP, "10"),
                (SLURM_COUNT, "4"),
            ]),
            (2, 4)
        );
    }

    #[test]
    fn slurm_arrays_that_are_not_ranges() {
        // --array=1,3,8: 3 tasks, bounds spanning 8.
        let e = err(&[
            (SLURM_ID, "3"),
            (SLURM_MIN, "1"),
            (SLURM_MAX, "8"),
            (SLURM_COUNT, "3"),
        ]);
        assert!(
            e.contains("has 3 tasks but its bounds span 8") && e.contains("--array=0-7"),
            "{e}"
        );
        let e = err(&[(SLURM_ID, "4"), (SLURM_COUNT, "4")]);
        assert!(e.contains("index 4 is not below the count 4"), "{e}");
        let e = err(&[
            (SLURM_ID, "5"),
            (SLURM_MIN, "0"),
            (SLURM_MAX, "9"),
            (SLURM_STEP, "2"),
        ]);
        assert!(e.contains("not on the array's range"), "{e}");
        let e = err(&[(SLURM_ID, "2")]);
        assert!(
            e.contains("SLURM_ARRAY_TASK_ID=2 is set but neither SLURM_ARRAY_TASK_COUNT"),
            "{e}"
        );
        let e = err(&[(SLURM_ID, "x1"), (SLURM_COUNT, "4")]);
        assert!(
            e.contains("`SLURM_ARRAY_TASK_ID=x1` is not a whole number"),
            "{e}"
        );
    }

    #[test]
    fn kubernetes_indexed_jobs() {
        let t = detect(env(&[(K8S_INDEX, "1"), (K8S_COUNT, "3")])).unwrap();
        assert_eq!((t.shard.index, t.shard.count), (1, 3));
        assert_eq!(
            t.source,
            "Kubernetes Indexed Job (JOB_COMPLETION_INDEX=1, JOB_COMPLETIONS=3)"
        );
        let e = err(&[(K8S_INDEX, "1")]);
        assert!(
            e.contains("JOB_COMPLETION_INDEX=1 is set but JOB_COMPLETIONS is not")
                && e.contains("precompute-job.yaml"),
            "{e}"
        );
        let e = err(&[(K8S_INDEX, "3"), (K8S_COUNT, "3")]);
        assert!(e.contains("index 3 is not below the count 3"), "{e}");
    }

    #[test]
    fn none_or_both_is_an_error_naming_the_variables() {
        let e = err(&[]);
        assert!(e.starts_with("`--shard auto`: no array-job index"), "{e}");
        for var in [
            SLURM_ID,
            SLURM_COUNT,
            SLURM_MIN,
            SLURM_MAX,
            K8S_INDEX,
            K8S_COUNT,
        ] {
            assert!(e.contains(var), "{var}: {e}");
        }
        // Empty counts as unset.
        assert!(err(&[(SLURM_ID, " ")]).contains("no array-job index"));
        let e = err(&[(SLURM_ID, "0"), (SLURM_COUNT, "2"), (K8S_INDEX, "0")]);
        assert!(e.contains("both SLURM_ARRAY_TASK_ID"), "{e}");
    }
}
