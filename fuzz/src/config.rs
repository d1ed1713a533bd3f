//! Training configs (YAML): [`gpufeed_config::check`], the parser, the schema and the
//! semantic checks, as `validate`, `profile` and the loader read a config.

use std::path::Path;

/// Reads `data` as a config.
pub fn run(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else {
        // Not UTF-8 is one error before the parser (`check_file`); nothing to fuzz.
        return;
    };
    let path = Path::new("fuzz-config.yaml");
    if let Err(rejected) = gpufeed_config::check(text, path) {
        assert!(!rejected.errors.is_empty(), "rejected with no error");
        // Lines as YAML counts them: `\r\n`, `\n` and a lone `\r` each end one.
        let lines = text.matches('\n').count() + text.matches('\r').count()
            - text.matches("\r\n").count()
            + 1;
        for error in &rejected.errors {
            let message = error.to_string();
            assert!(
                message.contains("fuzz-config.yaml"),
                "no file in: {message}"
            );
            if let gpufeed_config::ConfigError::Invalid { line, .. } = error {
                assert!(
                    (1..=lines).contains(line),
                    "line {line} of a {lines}-line file: {message}"
                );
            }
        }
    }
}
