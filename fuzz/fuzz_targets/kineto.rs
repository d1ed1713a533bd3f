#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| gpufeed_fuzz::kineto::run(data));
