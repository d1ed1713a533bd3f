//! The errors of reading a trace: each names the file, and the byte offset where it helps.

use std::path::PathBuf;

/// Why a trace could not be read.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The file could not be opened or read.
    #[error("Failed to read `{path}`: {cause}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The cause, in the message (not a `source`, which anyhow's `{:#}` would print
        /// again).
        cause: std::io::Error,
    },
    /// The file is JSON (or not) but not a Chrome trace.
    #[error(
        "`{path}` is not a profiler trace: {reason}\n\nhint: give a PyTorch profiler trace \
         (`prof.export_chrome_trace(...)` or `tensorboard_trace_handler`'s `*.pt.trace.json`), \
         a TensorFlow profiler `*.xplane.pb` or `*.trace.json.gz`, or a folder of them"
    )]
    NotATrace {
        /// The file.
        path: PathBuf,
        /// What was found instead.
        reason: String,
    },
    /// A trace event that is not valid JSON, or has a field of the wrong type.
    #[error("`{path}`: bad trace event at byte {offset}: {message}")]
    BadEvent {
        /// The file.
        path: PathBuf,
        /// Byte offset of the event in the (decompressed) JSON.
        offset: u64,
        /// serde_json's message.
        message: String,
    },
    /// The trace holds more than the reader keeps from one file (see
    /// [`read::MAX_EVENTS`](crate::read::MAX_EVENTS)): memory stays bounded whatever its size.
    #[error(
        "`{path}`: more than {what} by byte {offset}, the most gpufeed keeps from one trace; \
         profile fewer steps (`torch.profiler.schedule(..., active=N)`) or pass a shorter trace"
    )]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Byte offset where the limit was crossed (in the decompressed JSON).
        offset: u64,
        /// The limit: `33554432 events`, `512 MiB of names`.
        what: String,
    },
    /// An xplane file that ends inside its first plane: nothing whole to read.
    #[error(
        "`{path}` looks cut off: its {bytes} bytes end inside the plane that starts at byte \
         {offset}, before any whole plane of the XSpace\n\nhint: was the job killed while the \
         profiler wrote? Profile again and let `tf.profiler.experimental.stop()` return"
    )]
    CutOff {
        /// The file.
        path: PathBuf,
        /// Its length.
        bytes: u64,
        /// Where the plane the file ends in starts.
        offset: u64,
    },
    /// A file a profiler wrote beside its trace that is no trace (TF Profiler's analysis
    /// files, TensorFlow's memory profile): one line, what it is and what gpufeed reads.
    #[error("`{path}` is {what}, not a profiler trace: gpufeed reads {reads}")]
    NotTraceFile {
        /// The file.
        path: PathBuf,
        /// What it is.
        what: String,
        /// What gpufeed reads instead.
        reads: String,
    },
    /// The temporary file that holds a trace's events while it is analysed could not be
    /// written or read back.
    #[error(
        "Failed to keep the events of `{path}` in a temporary file: {cause}\n\nhint: gpufeed \
         keeps a trace's events in the temporary folder while it analyses it (about half the \
         size of its JSON); set `TMPDIR` to a folder that exists, is writable and has room"
    )]
    Spill {
        /// The trace.
        path: PathBuf,
        /// The cause, in the message (not a `source`, which would print it twice).
        cause: std::io::Error,
    },
    /// A folder without any trace file.
    #[error(
        "`{path}` holds no `*.json`, `*.json.gz` or `*.xplane.pb` trace file\n\nhint: point at the folder \
         your profiler wrote (`tensorboard_trace_handler(DIR)`, or TensorFlow's \
         `LOGDIR/plugins/profile/RUN`)"
    )]
    EmptyFolder {
        /// The folder.
        path: PathBuf,
    },
}

/// Result of this crate.
pub type Result<T> = std::result::Result<T, Error>;
