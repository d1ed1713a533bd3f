// Builds the fake NVML of `fake_nvml.c` for a test process. Shared, through `include!`, by
// the NVML tests of gpufeed-telemetry (`tests/nvml_fake.rs`) and the CLI tests of gpufeed
// (`tests/common/mod.rs`), which are test targets of different crates.

/// The fake `libnvidia-ml.so.1` (two made-up GPUs; `fake_nvml.c`'s header says what they
/// report), compiled with the system C compiler once per test process.
pub fn fake_nvml() -> &'static std::path::Path {
    static LIB: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    LIB.get_or_init(|| {
        let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("fake_nvml");
        fs_err::create_dir_all(&dir).unwrap();
        // The source is embedded, so the including crate needs no path to it. Written and
        // built under names of this process's own, then renamed: test processes that build
        // it at the same time never load a half-written library.
        let src = dir.join(format!("fake_nvml.{}.c", std::process::id()));
        fs_err::write(&src, include_str!("fake_nvml.c")).unwrap();
        let tmp = dir.join(format!("libnvidia-ml.so.1.{}", std::process::id()));
        let out = std::process::Command::new("cc")
            .args(["-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o"])
            .arg(&tmp)
            .arg(&src)
            .output()
            .unwrap_or_else(|e| {
                panic!(
                    "cannot run `cc` ({e}): the NVML tests build a fake NVML from C; install gcc"
                )
            });
        assert!(
            out.status.success(),
            "`cc` failed on fake_nvml.c:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let _ = fs_err::remove_file(&src);
        let lib = dir.join("libnvidia-ml.so.1");
        fs_err::rename(&tmp, &lib).unwrap();
        lib
    })
}
