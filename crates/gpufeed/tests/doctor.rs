//! `gpufeed doctor` end to end, through the built binary.
//!
//! Every run points NVML at a library that does not exist (`GPUFEED_NVML_LIB`), so the GPU
//! check reads "no driver" on any machine, and probes the frameworks with a fake
//! interpreter (`GPUFEED_PYTHON`) that answers "not installed" at once, so the tests are
//! fast and the same with or without a GPU or TensorFlow. JSON output is deserialised into
//! the contract's `findings` document (gpufeed-contract), whose types reject unknown
//! fields.

// Test helpers outside `#[test]` fns: a failed unwrap is a failed test.
#![allow(clippy::unwrap_used)]

mod common;

use std::path::{Path, PathBuf};

use common::Run;
use gpufeed_contract::{Finding, Severity};

/// `gpufeed doctor ARGS` with no NVML, the fake interpreter and a clean environment.
fn doctor_command(dir: &Path, args: &[&str]) -> assert_cmd::Command {
    let python = common::fake_python(dir);
    let mut cmd = common::gpufeed();
    cmd.arg("doctor")
        .args(args)
        .env("GPUFEED_NVML_LIB", dir.join("no-libnvidia-ml.so.1"))
        .env("GPUFEED_PYTHON", python)
        .env_remove("CUDA_VISIBLE_DEVICES")
        .env_remove("TF_FORCE_GPU_ALLOW_GROWTH")
        .env_remove("TF_GPU_THREAD_MODE")
        .env_remove("PYTORCH_CUDA_ALLOC_CONF")
        .env_remove("OMP_NUM_THREADS");
    cmd
}

/// Runs `gpufeed doctor ARGS` (see [`doctor_command`]).
fn doctor(dir: &Path, args: &[&str]) -> Run {
    doctor_command(dir, args).output().unwrap().into()
}

/// With `--format json`: exactly one findings document on stdout.
fn json(dir: &Path, args: &[&str]) -> (Option<i32>, Vec<Finding>) {
    let mut all = args.to_vec();
    all.extend(["--format", "json"]);
    let run = doctor(dir, &all);
    let findings = common::findings(&run);
    (run.code, findings)
}

fn find<'a>(findings: &'a [Finding], id: &str) -> Option<&'a Finding> {
    findings.iter().find(|f| f.id == id)
}

/// `gpufeed demo-data DIR --clips 8`.
fn demo(dir: &Path) -> PathBuf {
    let data = dir.join("demo");
    let out = common::gpufeed()
        .args(["demo-data"])
        .arg(&data)
        .args(["--clips", "8"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    data
}

#[test]
fn json_without_a_gpu_is_one_document_with_the_no_driver_finding() {
    let dir = tempfile::tempdir().unwrap();
    let (code, findings) = json(dir.path(), &[]);
    assert!(matches!(code, Some(0 | 1)), "{code:?}");
    let gpu = find(&findings, "gpu-no-driver").unwrap();
    assert_eq!(gpu.severity, Severity::Info);
    assert!(gpu.message.starts_with("no NVIDIA driver found"), "{gpu:?}");
    assert!(gpu.path.is_none() && gpu.line.is_none() && gpu.column.is_none());
    // One finding for the GPU, none of the GPU rules that need one.
    assert_eq!(
        findings.iter().filter(|f| f.id.starts_with("gpu-")).count(),
        1
    );
    assert!(find(&findings, "host-summary").is_some());
    let fw = find(&findings, "framework-not-installed").unwrap();
    assert_eq!(
        fw.message,
        format!(
            "not installed in `{}`: TensorFlow, PyTorch, JAX",
            dir.path().join("python3").display()
        )
    );
    // Every finding carries the contract's fields; no error on a clean run without input.
    assert!(findings.iter().all(|f| !f.message.is_empty()));
    assert!(
        findings.iter().all(|f| f.severity != Severity::Error),
        "{findings:?}"
    );
    assert_eq!(code, Some(0));
    assert!(
        !findings
            .iter()
            .any(|f| f.fix.is_empty() && f.severity != Severity::Info)
    );
}

#[test]
fn missing_data_folder_is_bad_input_named_on_one_line() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-data");
    let run = doctor(dir.path(), &["--data", missing.to_str().unwrap()]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(run.stdout.is_empty(), "{}", run.stdout);
    let errors: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("error:"))
        .collect();
    assert_eq!(
        errors,
        [format!(
            "error: `--data {}`: no such file or folder",
            missing.display()
        )],
        "{}",
        run.stderr
    );
    // Checked before any slow work.
    assert!(!run.stderr.contains("doctor: frameworks"), "{}", run.stderr);
}

#[test]
fn config_with_an_error_finding_exits_1() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.yaml");
    fs_err::write(
        &config,
        "data:\n  pad_to_fixed_length: true\n  max_text_length: 100\n  max_text_tokens: 200\n",
    )
    .unwrap();
    let (code, findings) = json(dir.path(), &["--config", config.to_str().unwrap()]);
    assert_eq!(code, Some(1));
    let f = find(&findings, "text-cap-mismatch").unwrap();
    assert_eq!(f.severity, Severity::Error);
    assert_eq!(f.path.as_deref(), config.to_str());
    assert!(f.line.is_some());
    // A missing config is bad input, not a finding.
    let run = doctor(dir.path(), &["--config", "no-such.yaml"]);
    assert_eq!(run.code, Some(2));
    assert!(run.stderr.contains("no-such.yaml"), "{}", run.stderr);
}

/// The config is read once: given as a named pipe, which gives its text to one reader only
/// (a second open waits for a writer that never comes), the doctor still validates it and
/// finds its error. Before, the app read it for its loader settings and the doctor's config
/// check read it again, and the run never ended.
#[test]
fn the_config_is_read_once() {
    use std::io::Write as _;
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("config.yaml");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let writer = {
        let fifo = fifo.clone();
        std::thread::spawn(move || {
            // Blocks until the doctor opens the pipe; one writer, one text.
            let mut w = std::fs::OpenOptions::new().write(true).open(fifo).unwrap();
            w.write_all(
                b"data:\n  pad_to_fixed_length: true\n  max_text_length: 100\n  max_text_tokens: 200\n",
            )
            .unwrap();
        })
    };
    // Killed past the deadline: a run that waits for a second read ends with no code.
    let run: Run = doctor_command(dir.path(), &["--config", fifo.to_str().unwrap()])
        .args(["--format", "json"])
        .timeout(std::time::Duration::from_secs(120))
        .output()
        .unwrap()
        .into();
    assert!(
        run.code.is_some(),
        "doctor waited for a second read of its config: {}",
        run.stderr
    );
    writer.join().unwrap();
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let findings = common::findings(&run);
    let f = find(&findings, "text-cap-mismatch").unwrap();
    assert_eq!(f.path.as_deref(), fifo.to_str());
}

#[test]
fn demo_data_reports_files_and_a_cold_storage_measurement() {
    let dir = tempfile::tempdir().unwrap();
    let data = demo(dir.path());
    let (code, findings) = json(dir.path(), &["--data", data.to_str().unwrap()]);
    assert_eq!(code, Some(0), "{findings:?}");
    let s = find(&findings, "storage-summary").unwrap();
    // 8 clips and the metadata file.
    assert!(s.message.starts_with("data folder: 9 files, "), "{s:?}");
    assert!(s.path.is_some());
    let measured = s.evidence.contains("O_DIRECT") || s.evidence.contains("posix_fadvise");
    if measured {
        assert!(s.evidence.contains("sequential "), "{}", s.evidence);
        assert!(s.evidence.contains("random 4 KiB "), "{}", s.evidence);
    } else {
        // A file system that allows neither: said so, no figure.
        assert!(find(&findings, "storage-not-measured").is_some(), "{s:?}");
        assert!(!s.evidence.contains("MB/s"), "{}", s.evidence);
    }
    let host = find(&findings, "host-summary").unwrap();
    assert!(host.evidence.contains("data 2."), "{}", host.evidence);
    // No cache yet: how to make one, not a long precompute.
    let r = find(&findings, "runtime-no-cache").unwrap();
    assert!(r.fix.starts_with("gpufeed precompute --data "), "{}", r.fix);
    assert!(!data.join(".gpufeed-cache").exists());
}

#[test]
fn text_groups_by_check_with_a_summary_first() {
    let dir = tempfile::tempdir().unwrap();
    let code = dir.path().join("train.py");
    fs_err::write(
        &code,
        "import time\nfor batch in loader:\n    loss = model(batch)\n    loss.backward()\n    time.sleep(1)\n",
    )
    .unwrap();
    let run = doctor(dir.path(), &["--code", code.to_str().unwrap()]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let out = &run.stdout;
    assert!(out.starts_with("gpufeed doctor: "), "{out}");
    let titles: Vec<&str> = out
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with(' ') && !l.starts_with("gpufeed"))
        .collect();
    assert_eq!(
        titles,
        [
            "GPU",
            "Host",
            "Storage",
            "Frameworks",
            "Environment",
            "Config",
            "Code",
            "Runtime"
        ],
        "{out}"
    );
    assert!(
        out.contains("  info[gpu-no-driver] no NVIDIA driver found"),
        "{out}"
    );
    assert!(out.contains("warning[sleep-in-loop]"), "{out}");
    assert!(
        out.contains("Storage\n  not run: pass `--data DIR`"),
        "{out}"
    );
    // Markdown is the findings renderer's.
    let md = doctor(dir.path(), &["--format", "markdown"]);
    assert!(
        md.stdout.starts_with("# gpufeed findings\n"),
        "{}",
        md.stdout
    );
}

#[test]
fn a_fake_driver_with_a_lost_gpu_is_an_error_naming_it_and_the_others_are_checked() {
    // gpufeed-telemetry's fake NVML: two GPUs, and with FAKE_NVML_LOST_GPU a third that
    // cannot be opened.
    let dir = tempfile::tempdir().unwrap();
    let python = common::fake_python(dir.path());
    let run: Run = common::gpufeed()
        .args(["doctor", "--format", "json"])
        .env("GPUFEED_NVML_LIB", common::fake_nvml())
        .env("FAKE_NVML_LOST_GPU", "1")
        .env("GPUFEED_PYTHON", python)
        .env_remove("CUDA_VISIBLE_DEVICES")
        .output()
        .unwrap()
        .into();
    assert_eq!(run.code, Some(1), "{run:?}");
    let findings = common::findings(&run);
    let lost = find(&findings, "gpu-unreachable").unwrap();
    assert_eq!(lost.severity, Severity::Error);
    assert!(lost.message.starts_with("GPU 2: "), "{lost:?}");
    let names: Vec<&str> = findings
        .iter()
        .filter(|f| f.id == "gpu-inventory")
        .map(|f| f.message.as_str())
        .collect();
    assert_eq!(
        names,
        ["GPU 0: Fake GPU 0, 80.0 GiB", "GPU 1: Fake GPU 1, 24.0 GiB"]
    );
    // The fake's GPU 0 runs under a software power cap and hardware slowdown.
    assert!(find(&findings, "gpu-throttled").is_some());
}

#[test]
fn a_config_that_does_not_load_skips_the_loader_run_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let data = demo(dir.path());
    let config = dir.path().join("broken.yaml");
    fs_err::write(&config, "data: [unclosed\n").unwrap();
    let run = doctor(
        dir.path(),
        &[
            "--config",
            config.to_str().unwrap(),
            "--data",
            data.to_str().unwrap(),
        ],
    );
    assert!(
        run.stdout.contains("does not load") && run.stdout.contains("broken.yaml"),
        "{}",
        run.stdout
    );
}
