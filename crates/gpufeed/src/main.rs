//! The `gpufeed` binary: everything is in the library.
fn main() -> std::process::ExitCode {
    gpufeed::main()
}
