//! Resident memory of a piece of work, for the hostile-size tests: the kernel's peak
//! resident set (`VmHWM` of `/proc/self/status`), reset before the work by writing `5` to
//! `/proc/self/clear_refs` (Linux 4.0+). Work in other threads of the process counts too, so
//! the tests that measure hold one lock and the bounds leave room for the test harness.

use std::sync::Mutex;

static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// Runs `work` and returns its result with the growth of the peak resident set during it,
/// in bytes; `None` for the growth where `/proc` cannot tell (not Linux).
pub fn peak_growth<T>(work: impl FnOnce() -> T) -> (T, Option<u64>) {
    let _guard = ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let before = status_kib("VmRSS:");
    #[allow(clippy::disallowed_methods)] // a failure is an answer here (no measure)
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let out = work();
    let peak = status_kib("VmHWM:");
    let growth = match (reset, before, peak) {
        (true, Some(before), Some(peak)) => Some(peak.saturating_sub(before) * 1024),
        _ => None,
    };
    (out, growth)
}

fn status_kib(field: &str) -> Option<u64> {
    #[allow(clippy::disallowed_methods)] // a failure is an answer here (`None`)
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line[field.len()..]
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse()
        .ok()
}
