//! The command line: clap derive, doc comments are the help text.
//!
//! Every subcommand of the contract in docs/contract.md is registered here, built or not,
//! so that `--help` shows the whole tool and scripts get a stable interface.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Find out why a GPU is starving during training, prove it with numbers, and feed it.
#[derive(Debug, Parser)]
#[command(name = "gpufeed", version, about, long_about = None, max_term_width = 100)]
pub struct Cli {
    /// The command to run.
    #[command(subcommand)]
    pub command: Command,
}

/// Output format of a report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum Format {
    /// A short human report, verdict first.
    #[default]
    Text,
    /// Exactly one JSON document on stdout.
    Json,
}

/// Output format of a findings report.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum FindingsFormat {
    /// A human report.
    #[default]
    Text,
    /// Exactly one JSON document on stdout.
    Json,
    /// Markdown, for issues and pull requests.
    Markdown,
}

/// The training run's inputs, shared by `analyze` and `doctor`.
#[derive(Debug, Clone, Default, Args)]
pub struct RunInputs {
    /// Dataset folder (LJSpeech layout, or a manifest); `analyze` with no input at all (or
    /// with `--demo`) uses a generated demo dataset kept in the user cache folder
    /// (`$XDG_CACHE_HOME/gpufeed`, else `~/.cache/gpufeed`)
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Training config (YAML)
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Training code to lint
    #[arg(long)]
    pub code: Option<PathBuf>,
}

/// The output format of a command that prints a text report or one JSON document.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct Output {
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// What a trace file holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum KindArg {
    /// GPU utilisation samples (nvidia-smi CSV or a gpufeed JSONL recording).
    Util,
    /// Step or batch times, one per line or one column of a CSV; for a step recording
    /// (`StepTimer.save`), its step times after the warm-up, without the phases.
    Steps,
    /// A PyTorch profiler (Kineto) Chrome trace, `.json` or `.json.gz`, or a folder of
    /// per-rank traces of one run
    Pytorch,
    /// A TensorFlow profiler trace (`plugins/profile/RUN/*.xplane.pb` or `*.trace.json.gz`),
    /// its run folder or its log folder (the latest run)
    Tensorflow,
}

/// Which format `gpufeed synth-trace` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SynthFlavor {
    /// PyTorch profiler (Kineto) Chrome trace JSON
    Pytorch,
    /// TensorFlow's trace viewer JSON
    Tensorflow,
    /// TensorFlow's `*.xplane.pb` (an XSpace protobuf)
    Xplane,
}

/// Arguments of the hidden `gpufeed synth-trace`: a generated profiler trace with known
/// truth (`gpufeed_kineto::synth`), for tests outside Rust (TensorFlow's converter).
#[derive(Debug, Args)]
pub struct SynthTraceArgs {
    /// The case: compute-bound, input-bound, transfer-bound, sync-bound, launch-bound,
    /// host-bound, oscillating or straggler
    pub case: String,
    /// The file to write
    pub out: PathBuf,
    /// Its format
    #[arg(long, value_enum, default_value = "pytorch")]
    pub flavor: SynthFlavor,
    /// Which rank of the case to write
    #[arg(long, default_value_t = 0)]
    pub rank: usize,
}

/// Arguments of the hidden `gpufeed synth-job`.
#[derive(Debug, Args)]
pub struct SynthJobArgs {
    /// The folder to write the ranks' traces into (made if absent)
    pub out: PathBuf,
    /// Ranks
    #[arg(long, default_value_t = 8, value_parser = clap::value_parser!(u32).range(1..))]
    pub ranks: u32,
    /// Uncompressed JSON per rank, about (`64MB`, `1GB`, `4GiB`)
    #[arg(long, default_value = "64MB", value_parser = gpufeed_stats::size::parse_size)]
    pub rank_size: u64,
    /// The straggler: this rank's kernels take `--slowdown` times as long, and the others
    /// wait for it inside their all-reduce
    #[arg(long, default_value_t = 3)]
    pub straggler: u32,
    /// How much slower the straggler's kernels are
    #[arg(long, default_value_t = 2.2)]
    pub slowdown: f64,
    /// Kernels per step (a transformer's step launches thousands)
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u32).range(1..))]
    pub kernels: u32,
    /// Write plain `*.json` instead of gzip
    #[arg(long)]
    pub plain: bool,
}

/// The commands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run everything and write one report: summary.md, report.json, report.html
    Analyze(AnalyzeArgs),
    /// Print the JSON Schema of a `--format json` document (with no NAME: list them)
    Schema(SchemaArgs),
    /// List the rules of `validate`, `lint` and `doctor`, or explain one with its fix and an
    /// example
    #[command(
        after_help = "Examples:\n  gpufeed rules                     # every rule: id, severity, command, why\n  gpufeed rules host-sync-in-loop   # one rule: why, fix, code that fires it and code that does not"
    )]
    Rules(RulesArgs),
    /// Check GPU, host, storage, frameworks, environment, config and code, with concrete fixes
    Doctor(DoctorArgs),
    /// Validate a training config (the trainer's YAML) and optionally fix it in place
    Validate(ValidateArgs),
    /// Find code that starves the GPU in Python training scripts (a real Python parser)
    Lint(LintArgs),
    /// Watch GPU utilisation live: oscillation period, idle gaps, throttling, host load
    Monitor(MonitorArgs),
    /// Run a command and watch the GPUs and the host while it runs
    Watch(WatchArgs),
    /// Explain a running training job without restarting it: sample its Python stacks
    ///
    /// Reads the Python stacks of process PID and of its child processes (DataLoader
    /// workers, pools) with py-spy, never stopping them, for the window (default 10 s at
    /// 100 Hz); a launcher's PID (torchrun, accelerate, mpirun) is followed to its training
    /// processes. Each sample of the training thread is classified (data wait, sync,
    /// compute, checkpoint/logging, other) and judged like `trace` judges a StepTimer
    /// recording: input-bound at 5 % / 20 % of the samples waiting for data (TF Profiler).
    /// Needs the right to read the process: the same user, sudo, or in a container
    /// `--cap-add SYS_PTRACE`.
    Attach(AttachArgs),
    /// Analyse a GPU utilisation log, a profiler trace, a step-time log or a step recording
    /// you already have
    ///
    /// Reads an `nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv -lms 100`
    /// log (with or without header and units, any column order, several GPUs interleaved),
    /// a utilisation log as people write it (a header such as `gpu_utilization[%]`,
    /// `gpu_util` or `util`, repeated or not; timestamps in epoch seconds or milliseconds;
    /// none, with `--interval`), job output (LSF, Slurm) with `date; nvidia-smi` tables,
    /// `nvidia-smi dmon` output (`-s u`, with `-o DT` for times), the cluster's own DCGM
    /// metrics (`dcgmi dmon -e 203,1002,1004` output, a Prometheus range query of
    /// dcgm-exporter's series saved as JSON, or asked of the server with `--prometheus URL`;
    /// each GPU judged by its SM activity where recorded), a gpufeed JSONL recording, a step recording of your own loop (the Python
    /// `gpufeed.StepTimer`'s `timer.save(PATH)`, format in docs/step-phases.md), or a list of
    /// step times (one number per line, or one column of a CSV; milliseconds unless the
    /// header says `s` or `us`). Reports the verdict first, then the figures behind it:
    /// utilisation mean and percentiles, idle gaps, the period of any oscillation; or
    /// step-time statistics, outliers and the period of any cyclic stall. A utilisation
    /// verdict judges the training phase: the idle start-up and the idle minutes after the
    /// job ended are named and left out.
    ///
    /// A step recording gets the verdict of `gpufeed profile step` (input-bound,
    /// transfer-bound, compute-bound or oscillating; undetermined when no `data_wait` was
    /// timed) with its evidence and fix, then the phases. A phase's name sets its category:
    /// `data_wait` is input; `h2d_copy`, `device_copy` and any name containing `copy`, `h2d`,
    /// `to_device` or `transfer` are copies; any other name is compute. Input + copies at
    /// 5 % / 20 % of the step are moderately / highly input-bound (TF Profiler).
    ///
    /// Also reads profiler traces (docs/framework-traces.md): a PyTorch profiler trace
    /// (`*.pt.trace.json[.gz]`) or a folder of per-rank ones, and a TensorFlow profile:
    /// `*.xplane.pb`, `*.trace.json.gz`, their `plugins/profile/RUN/` folder, or the log
    /// folder (its latest run). Gives HTA's GPU time breakdowns, where the GPU idles inside
    /// each step and why, and the verdict with its fix.
    Trace(TraceArgs),
    /// Compare two traces of one job, before and after a change: step times, speedup,
    /// shares, causes, and the prediction made from BEFORE against AFTER's step
    ///
    /// Takes two traces of the same kind, each as `gpufeed trace` reads it: profiler
    /// traces (or their folders), step recordings (`StepTimer.save`), step-time lists or
    /// utilisation logs. Gives each one's median and p95 step and the speedup (BEFORE's
    /// median step over AFTER's; the ratio of samples per second when the batch sizes
    /// differ; none for utilisation logs, whose utilisation and idle shares are compared),
    /// the shares that changed, the causes that went away or appeared, and BEFORE's
    /// estimate of the fixed step (`if_fixed`, docs/what-if.md) for the cause that went
    /// away, against AFTER's measured median step.
    #[command(
        after_help = "Examples:\n  gpufeed compare before/ after/                  # two profiler trace folders\n  gpufeed compare steps0.jsonl steps4.jsonl --format json"
    )]
    Compare(CompareArgs),
    /// Generate a small speech-like dataset in LJSpeech layout
    #[command(name = "demo-data")]
    DemoData(DemoDataArgs),
    /// Precompute features (the mel; linear, energy, F0, waveform on request) and tokens
    /// into a persistent, sharded cache, on all cores
    Precompute(PrecomputeArgs),
    /// Compute the mel spectrogram of one audio file into a float32 .npy (frames, n_mels)
    Mel(MelArgs),
    /// Write a generated profiler trace with known truth (for tests)
    #[command(name = "synth-trace", hide = true)]
    SynthTrace(SynthTraceArgs),
    /// Write a generated job of N ranks' profiler traces of any size, with a straggler;
    /// prints what the generator did as JSON (for benchmarks)
    #[command(name = "synth-job", hide = true)]
    SynthJob(SynthJobArgs),
    /// Profile the data pipeline or the training step
    #[command(subcommand)]
    Profile(ProfileCommand),
}

/// `gpufeed profile ...`
#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// Profile the data loader: batch times, stage breakdown, benchmark grid
    Data(ProfileDataArgs),
    /// Profile the training step: data wait, copy, forward, loss, backward, optimizer
    Step(ProfileStepArgs),
}

/// Arguments of `gpufeed attach`.
#[derive(Debug, Args)]
pub struct AttachArgs {
    /// The training process (or its launcher: torchrun, accelerate, mpirun)
    pub pid: u32,
    /// How long to sample: seconds (`10`) or a duration (`10s`, `2m`)
    #[arg(long, default_value = "10", value_parser = window)]
    pub duration: std::time::Duration,
    /// Stack samples per second (1-1000)
    #[arg(long, default_value_t = 100.0)]
    pub rate: f64,
    /// Keep going: one window of `--duration` after another, the verdict refreshed after
    /// each, until Ctrl-C or the target exits (text: a redrawn panel on a terminal, a line
    /// per window otherwise; JSON: one document per line)
    #[arg(long)]
    pub live: bool,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// Arguments of `gpufeed trace`.
#[derive(Debug, Args)]
pub struct TraceArgs {
    /// The log or profiler trace to analyse (a file, or a folder of profiler traces)
    #[arg(required_unless_present_any = ["prometheus", "merge"])]
    pub file: Option<PathBuf>,
    /// What the file holds; detected from the content when absent
    #[arg(long, value_enum)]
    pub kind: Option<KindArg>,
    /// Sampling interval of a utilisation log without timestamps, such as `100ms`, `1s`,
    /// `60s` or plain seconds (`nvidia-smi -l 1` samples every `1s`); a log with
    /// timestamps is timed by them
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub interval: Option<f64>,
    /// Ask a Prometheus server (plain http, `http://HOST:9090`) for dcgm-exporter's
    /// `DCGM_FI_DEV_GPU_UTIL`, `DCGM_FI_PROF_SM_ACTIVE` and
    /// `DCGM_FI_PROF_PIPE_TENSOR_ACTIVE` per GPU over a range, instead of reading a file;
    /// each GPU is judged by its SM activity where there is some
    #[arg(long, value_name = "URL", conflicts_with = "file")]
    pub prometheus: Option<String>,
    /// With `--prometheus`: the series to ask for, as PromQL label matchers (`job="train"`,
    /// `pod=~"trainer-.*"`, `Hostname="node7"`)
    #[arg(
        long,
        value_name = "LABELS",
        requires = "prometheus",
        default_value = ""
    )]
    pub selector: String,
    /// With `--prometheus`: the range's start, how long ago (`1h`, `30m`) or a time (Unix
    /// seconds, or RFC 3339 such as `2026-11-27T10:00:00Z`)
    #[arg(
        long,
        value_name = "WHEN",
        requires = "prometheus",
        default_value = "1h"
    )]
    pub since: String,
    /// With `--prometheus`: the range's end, how long ago (`0s`: now) or a time
    #[arg(
        long,
        value_name = "WHEN",
        requires = "prometheus",
        default_value = "0s"
    )]
    pub until: String,
    /// With `--prometheus`: the resolution (raised so that no series holds more than the
    /// 11,000 points Prometheus answers with)
    #[arg(long, value_name = "DURATION", value_parser = duration, requires = "prometheus", default_value = "15s")]
    pub step: f64,
    /// A folder of profiler traces: files read at once (default: the cores). Each file is
    /// kept only as its summary once read, so memory holds at most this many traces
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub jobs: Option<u32>,
    /// A task of an array job over a folder of profiler traces: summarise only slice I of N
    /// of its trace files (`0/8`), or `auto`: I and N from a Slurm job array
    /// (SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT, or with SLURM_ARRAY_TASK_MIN/MAX)
    /// or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX with JOB_COMPLETIONS). Writes a
    /// part (`--out`); `--merge` makes the job's report from all the parts
    #[arg(
        long,
        value_name = "I/N|auto",
        requires = "out",
        conflicts_with = "prometheus"
    )]
    pub shard: Option<String>,
    /// With `--shard`: the part to write, a `profiler-part` JSON document (`gpufeed schema
    /// profiler-part`); a folder (every task given the same): `DIR/part-IIIII-of-N.json`
    #[arg(long, value_name = "PART.json", requires = "shard")]
    pub out: Option<PathBuf>,
    /// The step after an array job: the job's report from the parts its tasks wrote (files,
    /// or folders of `*.json` parts), equal to a single run over the whole folder. Every
    /// task's part must be there, once
    #[arg(long, value_name = "PART", num_args = 1.., conflicts_with_all = ["file", "prometheus", "shard"])]
    pub merge: Vec<PathBuf>,
    /// The output format.
    #[command(flatten)]
    pub output: Output,
}

/// Arguments of `gpufeed compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// The trace before the change
    pub before: PathBuf,
    /// The trace after it (of the same kind)
    pub after: PathBuf,
    /// The output format.
    #[command(flatten)]
    pub output: Output,
}

/// `--interval DURATION`, in seconds.
fn duration(text: &str) -> Result<f64, gpufeed_stats::duration::DurationError> {
    gpufeed_stats::duration::parse_duration(text)
}

/// `--duration DURATION` as a `Duration`.
fn window(text: &str) -> Result<std::time::Duration, gpufeed_stats::duration::DurationError> {
    duration(text).map(std::time::Duration::from_secs_f64)
}

/// Arguments of `gpufeed analyze`.
#[derive(Debug, Args)]
pub struct AnalyzeArgs {
    /// The dataset, config and code.
    #[command(flatten)]
    pub inputs: RunInputs,
    /// The output format: `json` prints the report's document (`report.json`) on stdout
    #[command(flatten)]
    pub output: Output,
    /// Report folder: summary.md, report.json, report.html
    #[arg(long, default_value = "gpufeed-report")]
    pub out: PathBuf,
    /// Fewer steps and batches, and no benchmark grid
    #[arg(long)]
    pub quick: bool,
    /// Also run gpufeed's demo: the generated dataset (without `--data`) and the `tiny`
    /// model's training step. With no input at all, `analyze` runs it anyway; given your
    /// own data, config, code, trace or job, only with `--demo`, since its figures are of
    /// another model and loop than yours
    #[arg(long)]
    pub demo: bool,
    /// A GPU utilisation log (nvidia-smi CSV or gpufeed JSONL) to analyse, as `gpufeed
    /// trace` does, instead of sampling the GPUs during the step profile; or a step
    /// recording of your own loop (`StepTimer.save`), or a PyTorch or TensorFlow profiler
    /// trace (a `.json` / `.json.gz` file, TensorFlow's `*.xplane.pb`, or a folder of
    /// per-rank traces), whose verdict
    /// then stands in for the demo model's step profile (which does not run)
    #[arg(long, value_name = "PATH")]
    pub trace: Option<PathBuf>,
    /// A running training job to sample first, as `gpufeed attach PID` does (before
    /// gpufeed's own stages load the machine); its verdict is ranked with the other causes
    #[arg(long, value_name = "PID")]
    pub attach: Option<u32>,
    /// How long to sample `--attach`: seconds (`10`) or a duration (`30s`, `2m`)
    #[arg(long, value_name = "DURATION", default_value = "10", value_parser = window, requires = "attach")]
    pub attach_duration: std::time::Duration,
}

/// Arguments of `gpufeed doctor`.
#[derive(Debug, Args)]
pub struct DoctorArgs {
    /// The dataset, config and code.
    #[command(flatten)]
    pub inputs: RunInputs,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: FindingsFormat,
}

/// Arguments of `gpufeed validate`.
#[derive(Debug, Args)]
pub struct ValidateArgs {
    /// The config file
    pub file: PathBuf,
    /// Rewrite the file with the fixes, keeping comments and unknown keys
    #[arg(long)]
    pub fix: bool,
    /// With --fix: print the diff instead of writing
    #[arg(long)]
    pub dry_run: bool,
    /// Cores of the machine that trains (judges `num_workers`); without it, this machine's
    /// count is an assumption and those findings are info
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub cores: Option<u32>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// Arguments of `gpufeed lint`.
#[derive(Debug, Args)]
pub struct LintArgs {
    /// Files or folders to lint
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format
    #[arg(long, value_enum, default_value_t)]
    pub format: Format,
}

/// Arguments of `gpufeed monitor`.
#[derive(Debug, Args)]
pub struct MonitorArgs {
    /// Sampling interval, such as `100ms`, `1s` or plain seconds [default: 100ms]
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub interval: Option<f64>,
    /// The sampling interval in milliseconds: an alias of `--interval`, kept for scripts
    #[arg(long, value_name = "MS", conflicts_with = "interval")]
    pub interval_ms: Option<u64>,
    /// Stop after this many seconds and print the end report
    #[arg(long)]
    pub duration: Option<f64>,
    /// Record every sample to this JSONL file
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// One line per interval instead of the live view
    #[arg(long)]
    pub plain: bool,
    /// Serve Prometheus metrics on this address (e.g. 0.0.0.0:9400)
    #[arg(long)]
    pub prometheus: Option<String>,
    /// Replay a recording (gpufeed JSONL or nvidia-smi CSV) instead of reading the GPUs
    #[arg(long, conflicts_with = "synthetic")]
    pub replay: Option<PathBuf>,
    /// Speed of --replay or --synthetic: a factor (`10` plays ten seconds per second), or
    /// `max` (no waiting)
    #[arg(long)]
    pub speed: Option<String>,
    /// Use a synthetic source: stable, oscillating, bursty, starved or idle, with optional
    /// parameters, e.g. `oscillating:period=1.5,low=2,high=40` (see gpufeed-telemetry's
    /// `synthetic` module)
    #[arg(long)]
    pub synthetic: Option<String>,
    /// The output format.
    #[command(flatten)]
    pub output: Output,
    /// No progress lines, only the report (`gpufeed trace` of a host-only recording).
    #[arg(skip)]
    pub quiet: bool,
}

/// Arguments of `gpufeed watch`.
#[derive(Debug, Args)]
pub struct WatchArgs {
    /// Sampling interval, such as `100ms`, `1s` or plain seconds [default: 100ms]
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub interval: Option<f64>,
    /// The sampling interval in milliseconds: an alias of `--interval`, kept for scripts
    #[arg(long, value_name = "MS", conflicts_with = "interval")]
    pub interval_ms: Option<u64>,
    /// Record every sample to this JSONL file
    #[arg(long)]
    pub record: Option<PathBuf>,
    /// Stack samples per second of the command's Python processes (as `gpufeed attach`,
    /// over the whole run; about 1.3 MB of memory per hour at each sample per second)
    #[arg(long, value_name = "HZ", default_value_t = 10.0)]
    pub attach_rate: f64,
    /// Do not sample the command's Python stacks
    #[arg(long)]
    pub no_attach: bool,
    /// The output format.
    #[command(flatten)]
    pub output: Output,
    /// The command to run, after `--`
    #[arg(last = true, required = true)]
    pub command: Vec<String>,
}

/// Arguments of `gpufeed demo-data`.
#[derive(Debug, Args)]
pub struct DemoDataArgs {
    /// Folder to create
    pub dir: PathBuf,
    /// Number of clips (the default makes two whole batches of the default batch_size, 56)
    #[arg(long, default_value_t = gpufeed_app::analyze::DEMO_CLIPS)]
    pub clips: usize,
    /// Random seed
    #[arg(long, default_value_t = 0)]
    pub seed: u64,
    /// The output format.
    #[command(flatten)]
    pub output: Output,
}

/// Arguments of `gpufeed precompute`.
#[derive(Debug, Args)]
pub struct PrecomputeArgs {
    /// Dataset folder or manifest, in any layout of `--layout` (detected when not given)
    #[arg(long)]
    pub data: PathBuf,
    /// The dataset's layout: ljspeech, libritts, vctk, common_voice, nemo, kaldi, lhotse,
    /// webdataset, huggingface, table or gpufeed (default: detected from what `--data`
    /// holds; the config's `data.layout`)
    #[arg(long)]
    pub layout: Option<String>,
    /// Which column holds what: by name (`audio=path,text=sentence,speaker=client_id`) or,
    /// for a headerless file, by position (`id,text,speaker`). Roles: id, audio, text,
    /// normalized_text, phonemes, speaker, language, offset, duration, channel, _
    #[arg(long)]
    pub columns: Option<String>,
    /// VCTK 0.92: the microphone to read, mic1 or mic2 (default mic2)
    #[arg(long)]
    pub mic: Option<String>,
    /// Arrays to cache per item, from one decode: mel (always), linear, energy, f0 (pYIN
    /// F0 and voicing; f0:yin), wav (16-bit, hop-aligned; wav:float32); mel:float16,
    /// mel:bfloat16, linear:float16 and linear:bfloat16 store half the bytes.
    /// Comma-separated (default: the config's `data.features`, else mel)
    #[arg(long, value_delimiter = ',')]
    pub features: Option<Vec<String>>,
    /// The largest share of items that may be left out (bad lines, audio that does not
    /// decode) before the run fails (default 0.05; 1 accepts any)
    #[arg(long, value_parser = parse_share)]
    pub max_skipped: Option<f64>,
    /// The output format: the summary, or the `precompute` document (`gpufeed schema
    /// precompute`)
    #[command(flatten)]
    pub output: Output,
    /// Training config (YAML)
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Cache folder
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Parallel jobs (default: number of cores)
    #[arg(long)]
    pub jobs: Option<usize>,
    /// What to do with an item that fails: skip it or stop
    #[arg(long, default_value = "skip")]
    pub on_error: String,
    /// Process only slice I of N of the shards (e.g. 0/4), or `auto`: I and N from a Slurm
    /// job array (SLURM_ARRAY_TASK_ID with SLURM_ARRAY_TASK_COUNT, or with
    /// SLURM_ARRAY_TASK_MIN/MAX) or a Kubernetes Indexed Job (JOB_COMPLETION_INDEX with
    /// JOB_COMPLETIONS, which the Job sets to its `completions`)
    #[arg(long, conflicts_with = "merge")]
    pub shard: Option<String>,
    /// The step after an array job: write the manifest from the shards the tasks built,
    /// computing nothing; every shard missing or damaged is named (exit 2)
    #[arg(long)]
    pub merge: bool,
    /// Utterances per cache shard (256); smaller shards spread a small dataset over more
    /// array tasks. Every task and the merge must be given the same value
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub shard_items: Option<u32>,
}

/// Arguments of `gpufeed mel`.
#[derive(Debug, Args)]
pub struct MelArgs {
    /// The WAV file
    pub wav: PathBuf,
    /// Output .npy file
    #[arg(long)]
    pub out: PathBuf,
    /// Training config (YAML) with the audio settings
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// The output format.
    #[command(flatten)]
    pub output: Output,
}

/// Arguments of `gpufeed profile data`.
#[derive(Debug, Args)]
pub struct ProfileDataArgs {
    /// Dataset folder (precomputed first if needed)
    #[arg(long, conflicts_with = "cache")]
    pub data: Option<PathBuf>,
    /// Feature cache folder
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Training config (YAML)
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Batch size
    #[arg(long)]
    pub batch_size: Option<usize>,
    /// Loader worker threads
    #[arg(long)]
    pub workers: Option<usize>,
    /// Batches to time
    #[arg(long)]
    pub batches: Option<usize>,
    /// Run the batch size × workers grid and recommend settings
    #[arg(long)]
    pub benchmark: bool,
    /// Simulate a consumer (a GPU step) that computes this many ms per batch
    #[arg(long, default_value_t = 0.0)]
    pub consumer_ms: f64,
    /// The output format.
    #[command(flatten)]
    pub output: Output,
}

/// Arguments of `gpufeed profile step`.
#[derive(Debug, Args)]
pub struct ProfileStepArgs {
    /// Dataset folder
    #[arg(long)]
    pub data: Option<PathBuf>,
    /// Training config (YAML)
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Model preset: tiny or small
    #[arg(long, default_value = "tiny")]
    pub model: String,
    /// Device of the model: cpu or cuda:N
    #[arg(long, default_value = "cpu")]
    pub device: String,
    /// Device where batches are prepared: cpu or cuda:N
    #[arg(long)]
    pub data_device: Option<String>,
    /// Utterances per batch (default: the config's `batch_size`)
    #[arg(long)]
    pub batch_size: Option<usize>,
    /// Compute precision: f32, bf16 or f16
    #[arg(long, default_value = "f32")]
    pub dtype: String,
    /// Steps to time
    #[arg(long)]
    pub steps: Option<usize>,
    /// Warm-up steps, not timed
    #[arg(long)]
    pub warmup: Option<usize>,
    /// Do not synchronise the device before reading each phase timer: the phases then show
    /// launch times on a GPU, and the step time shows the overlap that syncing removes
    #[arg(long)]
    pub no_sync: bool,
    /// The output format.
    #[command(flatten)]
    pub output: Output,
}

impl Command {
    /// The command line name, for messages (`profile data`, `trace`, ...).
    #[must_use]
    pub fn name(&self) -> &'static str {
        match self {
            Self::Analyze(_) => "analyze",
            Self::Doctor(_) => "doctor",
            Self::Validate(_) => "validate",
            Self::Lint(_) => "lint",
            Self::Monitor(_) => "monitor",
            Self::Watch(_) => "watch",
            Self::Attach(_) => "attach",
            Self::Trace(_) => "trace",
            Self::Rules(_) => "rules",
            Self::Compare(_) => "compare",
            Self::DemoData(_) => "demo-data",
            Self::Precompute(_) => "precompute",
            Self::Mel(_) => "mel",
            Self::SynthTrace(_) => "synth-trace",
            Self::SynthJob(_) => "synth-job",
            Self::Profile(ProfileCommand::Data(_)) => "profile data",
            Self::Profile(ProfileCommand::Step(_)) => "profile step",
            Self::Schema(_) => "schema",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_is_well_formed() {
        Cli::command().debug_assert();
    }
}

/// `gpufeed schema`.
#[derive(Debug, Args)]
#[command(
    after_help = "Examples:\n  gpufeed schema                    # the documents, their versions and writers\n  gpufeed schema profile-data       # one schema (JSON Schema draft 2020-12)\n  gpufeed schema --out docs/schemas # all of them, as NAME.json"
)]
pub struct SchemaArgs {
    /// The document (`gpufeed schema` lists them)
    pub name: Option<String>,
    /// Write every schema as DIR/NAME.json instead
    #[arg(long, value_name = "DIR", conflicts_with = "name")]
    pub out: Option<PathBuf>,
}

/// Arguments of `gpufeed rules`.
#[derive(Debug, Args)]
pub struct RulesArgs {
    /// The rule to explain (`gpufeed rules` lists them)
    pub id: Option<String>,
    /// The output format.
    #[command(flatten)]
    pub output: Output,
}

/// A share between 0 and 1 (`--max-skipped`).
fn parse_share(s: &str) -> Result<f64, String> {
    match s.trim().parse::<f64>() {
        Ok(x) if (0.0..=1.0).contains(&x) => Ok(x),
        _ => Err(format!(
            "`{s}`: expected a share between 0 and 1, e.g. 0.1 for 10 %"
        )),
    }
}
