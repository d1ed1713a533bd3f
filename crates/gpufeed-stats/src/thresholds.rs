//! The one table of thresholds, each with its source.
//!
//! Every verdict in gpufeed compares a measured figure with a constant from this module;
//! no other crate holds a threshold literal. Each constant is declared once, through the
//! `thresholds!` macro, which also puts it into [`TABLE`] together with its unit, what it
//! means and where it comes from, so the table printed in reports and the value used in code
//! cannot drift apart.
//!
//! Sources are cited as in `research/gpu-tools.md` and `research/myxtts.md`. Where a value
//! is gpufeed's own judgement, the source says so and gives the reasoning.

use serde::Serialize;

/// One row of the thresholds table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Threshold {
    /// The constant's name in this module.
    pub name: &'static str,
    /// Its value.
    pub value: f64,
    /// Unit of `value` (`%`, `pp` for percentage points, `ratio`, `z`, ...).
    pub unit: &'static str,
    /// What crossing it means.
    pub meaning: &'static str,
    /// Where the value comes from.
    pub source: &'static str,
}

macro_rules! thresholds {
    ($( $(#[$doc:meta])* $name:ident = $value:expr, $unit:expr, $meaning:expr, $source:expr; )*) => {
        $( $(#[$doc])* pub const $name: f64 = $value; )*
        /// Every threshold of gpufeed, in declaration order.
        pub const TABLE: &[Threshold] = &[
            $( Threshold {
                name: stringify!($name),
                value: $name,
                unit: $unit,
                meaning: $meaning,
                source: $source,
            }, )*
        ];
    };
}

thresholds! {
    /// A utilisation sample below this is idle.
    IDLE_UTIL_PCT = 10.0, "%",
        "a utilisation sample below this counts as idle",
        "SageMaker Debugger LowGPUUtilization rule: p5 < 10 % marks the GPU as idle part of the time (smdebug rule docs)";
    /// A utilisation sample at or above this is busy.
    BUSY_UTIL_PCT = 80.0, "%",
        "a utilisation sample at or above this counts as busy",
        "DCGM feature overview: SM activity >= 0.8 is necessary (not sufficient) for effective use; applied here to the duty-cycle reading, which can only overstate activity";
    /// Mean utilisation below this is starved.
    STARVED_MEAN_UTIL_PCT = 50.0, "%",
        "mean utilisation below this, without a cycle or bursts, is `starved`",
        "Nsight Systems gpu_time_util rule (< 50 %) and torch_tb_profiler low-utilisation flag (< 0.5)";
    /// A p95 below the idle level means the GPU hardly works at all.
    IDLE_P95_UTIL_PCT = 10.0, "%",
        "p95 utilisation below this is `idle`: the GPU is idle at least 95 % of the time; an idle GPU gets no period (its 0/1 % readings are noise, not a cycle)",
        "same idle level as IDLE_UTIL_PCT (SageMaker p5 < 10 %), applied to the p95";
    /// Samples the training phase needs for the job's idle edges to be left out.
    TRAINING_MIN_SAMPLES = 10.0, "samples",
        "job start and end: the leading and trailing runs of idle samples (below IDLE_UTIL_PCT) are the job starting up and the minutes after it ended; they are named and left out of the verdict (and the period), which judges the samples between them, when at least this many remain and each edge is longer than every idle gap between them (else it is part of the cycle); with fewer, the whole log is judged",
        "gpufeed judgement: real logs begin with seconds of 0 % while the job loads (CUDA context, data, model) and often end with minutes of 0 % after training stopped (issue 26); judged with the rest, these edges are two idle gaps and a large swing, the signature of `bursty`. Below 10 samples p5 and p95 are the minimum and maximum, and no cycle can be found (STEPS_MIN_JUDGED), so such a short phase is no basis for a verdict of its own";
    /// Idle share of a job's start-up or end stretch.
    EDGE_IDLE_SHARE = 0.95, "ratio",
        "the job's start-up (or end) stretch may hold warm-up blips: it is idle for at least this share of its samples, with fewer than TRAINING_MIN_SAMPLES non-idle ones",
        "same 95 % as IDLE_P95_UTIL_PCT (a stretch idle 95 % of the time is idle); real logs (a 0.1 s log with 8 samples of warm-up inside 36 s of start-up, issue 26) split a strict all-idle edge at the first blip, and the start-up then reads as an idle gap of the training";
    /// An idle stretch this long inside a log separates two phases of work.
    PHASE_BREAK_S = 60.0, "s",
        "an idle stretch (below IDLE_UTIL_PCT) lasting at least this long (and at least two samples) between busy stretches is a break between phases (evaluation on the CPU, a restart, another job), not a stall of the training steps: it is named, with its length, and left out of the verdict's figures, which judge the busy phases",
        "Horovod's stall inspector calls ranks that have not progressed for 60 s stalled (HOROVOD_STALL_CHECK_TIME_SECONDS, default 60): a training step that waits longer is no longer slow but stopped. The step-level stalls the verdict is about (a data wait, a GC pause, a checkpoint write) last milliseconds to seconds; real logs (issue 26: a 15 s log with 2-27 min idle stretches between five busy ones) read as `bursty` when these breaks are judged as stalls";
    /// Swing (p95 - p5) at or above this is large.
    SWING_LARGE_PP = 20.0, "pp",
        "p95 - p5 at or above this is a large swing (needed for `oscillating` and `bursty`)",
        "gpufeed judgement: SageMaker's fluctuation test (p95 > 70 and p5 < 10) needs a 60 pp swing and misses a GPU swinging 2-40 %, the pattern the seeds reported; 20 pp is a fifth of the scale, far above nvidia-smi's 1 % reading resolution";
    /// Idle time share from which irregular idle gaps make the run `bursty`.
    BURSTY_IDLE_FRACTION = 0.05, "ratio",
        "idle share of time at or above this, in two or more gaps without a cycle, is `bursty`",
        "TF Profiler input-pipeline analyzer: waiting >= 5 % of step time is moderately input-bound (op_stats_to_input_pipeline_analysis.cc)";
    /// Idle gaps needed for `bursty`.
    BURSTY_MIN_GAPS = 2.0, "count",
        "number of idle gaps needed for `bursty` (one gap is a pause, not a pattern)",
        "gpufeed judgement";
    /// Idle gaps needed to tell irregular stalls (`bursty`) from a cycle.
    PERIOD_MIN_CYCLES = 5.0, "count",
        "a utilisation log with a large swing, idle gaps and no period is `bursty` only with at least this many idle gaps, or gaps unevenly spaced (CYCLE_SPACING_SPREAD); with fewer, evenly spaced, it is `too_short`: a cycle as long as their spacing would not have shown yet",
        "the period test (crate::periodicity) looks at lags up to half the series and needs its peak above bounds shrinking as 1/sqrt(n): gpufeed's synthetic 1.5 s cycle is found from 5.3 cycles (8 s at 100 ms) and missed at 3.3 (5 s), where the log was called bursty";
    /// Idle gaps whose start-to-start spacings are each within this share of their mean are evenly spaced.
    CYCLE_SPACING_SPREAD = 0.1, "ratio",
        "fewer than PERIOD_MIN_CYCLES idle gaps are `too_short` only when evenly spaced (each spacing within this share of their mean): they could be a cycle; unevenly spaced ones are `bursty` however few",
        "gpufeed judgement: a loader's cycle repeats at the batch period, steady to a few percent, and sampling moves a gap's start by one sample (7 % of a 1.5 s cycle sampled every 100 ms); stalls of storage or garbage collection land at spacings that differ by far more (9-51 s in the 15 s log of issue 26)";
    /// Minimum autocorrelation at the period lag.
    PERIOD_MIN_STRENGTH = 0.3, "r",
        "autocorrelation at the period lag must reach this for a period to be reported",
        "the seeds' cyclic-pattern threshold (MyXTTS enhanced_gpu_profiler, research/myxtts.md section 1.2); kept because weaker peaks of smooth, non-periodic signals (AR(1) with phi 0.99) otherwise pass the significance bounds";
    /// Family-wise false-alarm rate of the white-noise bound.
    PERIOD_ALPHA = 0.05, "probability",
        "family-wise false-alarm rate for white noise over all lags tested (Bonferroni)",
        "conventional 5 % level; the bound is z(1 - alpha / 2K) / sqrt(n) with K lags (Box, Jenkins & Reinsel, Time Series Analysis, ch. 2)";
    /// z for the per-lag Bartlett bound.
    PERIOD_BARTLETT_Z = 1.96, "z",
        "a period's autocorrelation must exceed this many Bartlett standard errors",
        "Bartlett's formula se(k) = sqrt((1 + 2 sum_{j<k} r_j^2) / n), 95 % two-sided, as statsmodels plot_acf draws it; it rejects slow trends and steps whose early lags are all large";
    /// A peak within this fraction of the best one is preferred if its lag is shorter.
    PERIOD_FUNDAMENTAL_RATIO = 0.9, "ratio",
        "the shortest lag whose peak reaches this fraction of the highest peak is the period (the others are its multiples)",
        "gpufeed judgement, as in autocorrelation pitch trackers that pick the first peak near the maximum rather than a multiple";
    /// Modified Z-score above which a value is an outlier.
    OUTLIER_MODIFIED_Z = 3.5, "z",
        "a value whose modified Z-score exceeds this is an outlier",
        "Iglewicz & Hoaglin (1993), How to Detect and Handle Outliers; hyperfine uses the same score";
    /// A GPU-track copy of ProfilerStep#N is the step's extent when it holds this share of the step's GPU work.
    GPU_STEP_COPY_HOLDS = 0.9, "ratio",
        "profiler traces: a step's `gpu_user_annotation` copy times the step on the GPU only when it holds at least this share of the GPU time of the work the step launched; otherwise the host's window is the step",
        "gpufeed judgement: PyTorch's copy spans the step's kernels, so a true copy holds all of them; ROCm 6.2's copy in HTA's mi250 test trace ends after 1.0 ms of a 9.3 ms step holding 62 % of its GPU time, and timing the step by it made a 1 ms step of a host-bound one (half, the rule before, took it)";
    /// An estimated speedup past this is given as a bound ("at least 20x").
    ESTIMATE_BOUND_SPEEDUP = 20.0, "ratio",
        "what fixing a cause is worth (`if_fixed`): past this speedup (a removed share above 95 % of the step) the text says \"at least 20x\" and why, not a figure",
        "gpufeed judgement: removing a share s of the step gives 1 / (1 - s), which runs away as s nears 1: at 95 % what is left of the step is a twentieth of it, under the step-to-step spread of the steps measured, so the figure past 20x carries no information (an estimate of 155.2x read as exact)";
    /// A lone step covering less than this share of the GPU's profiled span gets no verdict.
    ONE_STEP_SPAN_MIN = 0.5, "ratio",
        "profiler traces: a rank (or GPU) with one step (after warm-up) that lasts less than this share of its GPU's profiled span (first GPU op to last) gets no verdict: the step is not what was profiled",
        "gpufeed judgement: most of the profile then lies outside any step (start-up, evaluation, waiting for other workers), and one step cannot show a cause that recurs; a lone step that is the profile (a one-iteration trace) is still judged";
    /// A leading step slower than this many times every later step is warm-up.
    WARMUP_STEP_RATIO = 2.0, "ratio",
        "profiler traces: the first steps, each an outlier (OUTLIER_MODIFIED_Z) and slower than this many times every step after them, are warm-up (cuDNN autotuning, lazy CUDA initialisation, compilation) and left out of the shares and the verdict",
        "gpufeed judgement: a warm-up step is many times a step (28x in the kineto tb_plugin `resnet50_autograd_api_num_workers_0` sample), while the slow step of a cycle recurs later at its own length, so twice the slowest later step tells the two apart";
    /// Coefficient of variation of step times from which a run is `unstable`.
    STEP_CV_UNSTABLE = 0.2, "ratio",
        "step-time cv at or above this, without a cycle, is `unstable`",
        "MyXTTS docs targets: batch-time variation < 20 % is good, 20-50 % acceptable, > 50 % bad (research/myxtts.md section 1.15)";
    /// Coefficient of variation of step times from which a cycle matters.
    STEP_CV_OSCILLATING = 0.05, "ratio",
        "step-time cv at or above this, with a period, is `oscillating`; below it the cycle is reported but harmless",
        "gpufeed judgement, on the scale of TF Profiler's 5 % moderately-input-bound floor";
    /// Steps a recording needs, after its warm-up, for a verdict.
    STEPS_MIN_JUDGED = 13.0, "steps",
        "a step recording (`gpufeed trace` on a StepTimer recording) with fewer steps after warm-up than this gets no verdict, but an error saying to record more",
        "gpufeed judgement from gpufeed_stats::periodicity: 13 is the fewest steps in which any cycle can be found (a stall every 3rd step; a strict alternation needs 15); with fewer, `oscillating` could never be said, so a verdict would rest on means alone";
    /// Fewer loader workers than this (and than the cores) is reported.
    NUM_WORKERS_LOW = 8.0, "workers",
        "`num-workers-low`: fewer loader workers than this, on a machine with more cores, is reported (info)",
        "the minimum of MyXTTS' comprehensive_gpu_diagnostic, validate_gpu_pipeline and validate_gpu_optimization (research/myxtts.md section 1.15); info only, because whether 8 workers keep up depends on the per-item cost, which `gpufeed profile data --benchmark` measures";
    /// Fewer loader workers than this over a dataset that decodes an image per item is
    /// reported by lint.
    IMAGE_DECODE_WORKERS_LOW = 4.0, "workers",
        "`decode-per-item-few-workers`: a `DataLoader` with fewer workers than this over a dataset that decodes an image (JPEG, PNG) per item is reported",
        "the fewest that the reference ImageNet trainers ship with: pytorch/examples imagenet/main.py defaults to 4 (`-j 4`), torchvision's classification reference to 16 (`-j 16`); decoding and augmenting one image takes milliseconds of CPU, so a GPU that trains on thousands of images a second needs many more, up to the cores";
    /// A batch smaller than this is reported.
    BATCH_SIZE_SMALL = 16.0, "items",
        "`batch-size-small`: a batch below this is reported (info)",
        "MyXTTS validate_gpu_optimization warns below 16 (research/myxtts.md section 1.15); info only, because a larger batch helps only when the step is launch-bound, which `gpufeed profile step` measures in samples/s";
    /// TF Profiler: input time share that is moderately input-bound.
    INPUT_BOUND_MODERATE = 0.05, "ratio",
        "data wait + host-to-device copy at or above this share of the step is moderately input-bound",
        "TF Profiler input-pipeline analyzer (op_stats_to_input_pipeline_analysis.cc)";
    /// TF Profiler: input time share that is highly input-bound.
    INPUT_BOUND_HIGH = 0.20, "ratio",
        "data wait + host-to-device copy at or above this share of the step is highly input-bound",
        "TF Profiler input-pipeline analyzer (op_stats_to_input_pipeline_analysis.cc)";
    /// DCGM: SM activity below this is likely ineffective.
    SM_ACTIVE_INEFFECTIVE = 0.5, "ratio",
        "SM activity below this likely means ineffective GPU use",
        "DCGM feature overview, DCGM_FI_PROF_SM_ACTIVE";
    /// DCGM: SM activity needed for effective use.
    SM_ACTIVE_EFFECTIVE = 0.8, "ratio",
        "SM activity of at least this is necessary, not sufficient, for effective GPU use",
        "DCGM feature overview, DCGM_FI_PROF_SM_ACTIVE";
    /// A power limit below this share of the board's default is reported.
    POWER_LIMIT_LOW_RATIO = 0.95, "ratio",
        "`gpu-power-limit-low`: a power limit below this share of the default limit is reported (the GPU reaches its power cap, and lowers its clocks, earlier)",
        "gpufeed judgement: `nvidia-smi -pl` sets whole watts and some boards ship a limit a few watts off the nominal default, so 5 % below separates a deliberate cap from rounding";
    /// Other processes' share of the host's CPU time, over gpufeed's own run, from which
    /// the host is busy.
    OTHERS_CPU_SHARE_HIGH = 0.5, "ratio",
        "`host-load-high`: other processes (and the hypervisor's steal) taking at least this share of the host's CPU time while gpufeed ran compete with the loader for the cores",
        "measured over gpufeed's own run, as the busy and stolen jiffies of /proc/stat less this process's and its reaped children's (/proc/self/stat; proc(5)), so that a build or job that ended before gpufeed started is not counted, as the 1-minute load average would (it decays over minutes); gpufeed judgement: with half the CPU time taken, a loader sized to the cores runs at about half its speed";
    /// Swap in use from which it is reported.
    SWAP_IN_USE_MIB = 256.0, "MiB",
        "`host-swap-in-use`: swap in use above this is reported (pages of the loader or the trainer may be on disk)",
        "gpufeed judgement: a long-running host often keeps a few MiB of idle pages in swap, harmlessly; hundreds of MiB mean memory ran short";
    /// Sequential read throughput below this is slow.
    SEQ_READ_SLOW_MB_S = 200.0, "MB/s",
        "`storage-slow-sequential`: cold sequential reads slower than this cannot feed a GPU from raw files",
        "gpufeed judgement: a SATA SSD reads about 500 MB/s and an NVMe SSD several GB/s; 200 MB/s is the speed of a hard disk's outer tracks or a network file system, at which a 100 GB dataset takes over 8 minutes per epoch";
    /// Random 4 KiB reads per second below this are a seeking disk.
    RANDOM_READ_IOPS_LOW = 1000.0, "reads/s",
        "`storage-slow-random`: fewer cold random 4 KiB reads per second than this (one at a time) is a seeking disk or a network round trip per read",
        "hard disks do 75-200 random reads per second (seek plus half a rotation, 5-13 ms); SSDs do thousands at queue depth 1 (CrystalDiskMark RND4K Q1T1: 30-80 MB/s); 1000 separates the two with margin (gpufeed judgement)";
    /// Files from which a dataset is "many files".
    MANY_FILES = 10000.0, "files",
        "`storage-many-small-files`: at least this many files, with a mean size below SMALL_FILE_MEAN_KIB, is reported",
        "gpufeed judgement: an open, a stat and a read per item cost a round trip each on network storage, and per-file overhead dominates below about 1 MiB per read (the TensorFlow data guide and WebDataset shard small files into 100 MB+ files for this reason); LJSpeech has 13100 WAV files of about 200 KiB";
    /// Mean file size below which files are small.
    SMALL_FILE_MEAN_KIB = 1024.0, "KiB",
        "`storage-many-small-files`: a mean file size below this, over at least MANY_FILES files, is reported",
        "see MANY_FILES";
    /// Lowest CUDA compute capability with Tensor Cores.
    TENSOR_CORE_MIN_CC = 7.0, "compute capability",
        "`framework-no-tensor-cores`: a GPU below this compute capability has no Tensor Cores, so mixed precision saves memory but does not speed up matrix math",
        "NVIDIA: Tensor Cores arrived with Volta (compute capability 7.0); TensorFlow's mixed precision guide: mixed precision runs fastest on compute capability 7.0 and above";
    /// HTA: a gap below this between queued kernels is kernel wait (launch overhead).
    KERNEL_WAIT_US = 30.0, "us",
        "profiler traces: a gap on a GPU stream shorter than this, with the next kernel already launched, is kernel wait (launch overhead); longer ones are `other`",
        "Holistic Trace Analysis 0.5.0, `_analyze_idle_time_for_stream`, consecutive_kernel_delay = 30 (trace microseconds; the docstring says ns); kept equal so gpufeed's idle breakdown matches HTA's";
    /// A host stall (sync, launch gaps) costing this share of the step is moderate.
    HOST_STALL_MODERATE = 0.05, "ratio",
        "profiler traces: GPU idle after host synchronisations, or in launch gaps, or exposed communication (collectives with no compute beside them), at or above this share of the step is moderately sync-, launch- or communication-bound",
        "TF Profiler's moderately-input-bound level (op_stats_to_input_pipeline_analysis.cc), applied to the other host stalls so that every cause of GPU idle is judged on one scale (gpufeed judgement)";
    /// A host stall costing this share of the step is high.
    HOST_STALL_HIGH = 0.20, "ratio",
        "profiler traces: GPU idle after host synchronisations, or in launch gaps, or exposed communication, at or above this share of the step is highly sync-, launch- or communication-bound",
        "TF Profiler's highly-input-bound level, applied to the other host stalls (gpufeed judgement, see HOST_STALL_MODERATE)";
    /// A GPU busy this share of the step (by time) is GPU-bound.
    GPU_BUSY_BOUND = 0.90, "ratio",
        "profiler traces: a GPU busy (by time, whoever launched the work) at least this share of the analysed steps is GPU-bound: `compute-bound`, or `communication-bound` when collectives take most of its busy time; never host-, input- or transfer-bound",
        "gpufeed judgement: removing every stall from a step 90 % busy makes it at most 1/0.9 = 11 % faster, less than a mixed-precision or fused-kernel change on the GPU's own work, so the GPU's work is the lever; below it, the 10 % idle can already hold a moderate stall (HOST_STALL_MODERATE 5 %, TF Profiler's moderately input-bound level), which is judged as such";
    /// Collectives' share of the GPU's busy time from which a GPU-bound step is communication-bound.
    COMMUNICATION_BOUND_SHARE = 0.5, "ratio",
        "profiler traces: a GPU-bound step (GPU_BUSY_BOUND) whose collectives (NCCL/RCCL all-reduce, all-gather, ...) run at least this share of its busy time is `communication-bound`",
        "the issue's definition: collectives take most of the GPU's time (more than half); HTA's kernel-type breakdown reports the same COMMUNICATION time";
    /// A stream whose known communication rows take this share of its work time is a communication stream.
    COMM_STREAM_SHARE = 0.9, "ratio",
        "profiler traces: on a stream where the rows known as communication (by kernel name, or launched inside `record_param_comms` / `c10d::*` / `nccl:*`) take at least this share of the work time, the rest of its rows (the packing and copy kernels around the collectives) is communication too",
        "gpufeed judgement: ProcessGroupNCCL and DeepEP run their collectives on streams of their own, where little else runs; a compute stream that also carries collectives spends most of its time computing, so 90 % keeps a default stream shared by compute and collectives from having its compute taken for communication";
    /// Idle gaps shorter than this between GPU ops are per-op overhead.
    PER_OP_GAP_US = 1000.0, "us",
        "profiler traces: when most of a host-bound step's idle lies in gaps shorter than this between GPU ops, the host's per-op dispatch (Python, the framework's op overhead, launches) sets the pace, and the fix is fewer, larger ops (CUDA graphs, torch.compile, a larger batch), not moving work off the step",
        "gpufeed judgement: one eager PyTorch op costs the host 10-100 µs of dispatch (PyTorch's performance tuning guide and CUDA graphs post); a gap under 1 ms is a handful of ops, while metrics, logging or a CPU-side loss leave gaps of milliseconds";
    /// `gpufeed attach` without GPU readings: a sync wait shorter than this is short.
    ATTACH_SYNC_SHORT_MS = 10.0, "ms",
        "`gpufeed attach` without NVML: host-device syncs whose waits average below this (and come at least ATTACH_SYNC_FREQUENT_PER_S times a second) are `sync-bound`; longer waits mean the GPU had work queued, so the host waited for a busy GPU (`compute-bound`)",
        "gpufeed judgement: a sync that returns within 10 ms found at most one short step's kernels queued, so the GPU runs dry while the host prepares the next step (PyTorch CUDA semantics, 'Asynchronous execution'); 10 ms is one sample period at the default 100 Hz, the shortest wait a sample can resolve";
    /// `gpufeed attach` without GPU readings: syncs at least this often are frequent.
    ATTACH_SYNC_FREQUENT_PER_S = 5.0, "per s",
        "`gpufeed attach` without NVML: separate sync waits seen at least this many times a second are frequent",
        "gpufeed judgement: a sync every step of a loop of 5 steps/s or more (one `.item()` per step, the common case); rarer syncs (logging every N steps) cannot starve the GPU for long";
    /// `gpufeed attach` on a compiled step that pulls its own input: the share of the
    /// window in which the Python producer made batches, from which the step may wait.
    ATTACH_PRODUCER_BUSY = 0.9, "ratio",
        "`gpufeed attach` on Keras `fit` (the input's GetNext runs inside the compiled step): a Python producer making batches in less than this share of the window idled with its prefetch buffer full, so the step did not wait for input and its idle moments are its own ops; at or above it, a moment with no TF kernel busy while the producer works is a wait",
        "queueing: a consumer behind a buffer waits only when the buffer is empty, and the buffer fills only when the producer is faster, which leaves the producer idle part of the time; gpufeed judgement for the margin: a producer busy all the time, one thread at 200 Hz, is seen in its frames at 86-94 % of the ticks (between two batches tf.data hands the batch over in native code), and at 99-100 % once a single tick out of them between two batches counts as that hand-over; one idling with its buffer full, at 10-15 % (the truth loops of python/tests/test_attach.py); 400 ticks put the share within ±3 points";
    /// `gpufeed attach`: the share of the window in which threads beside the training
    /// thread held the GIL, from which the training thread's own waits for it matter.
    ATTACH_GIL_CONTENDED = 0.25, "ratio",
        "`gpufeed attach` on a compiled step that pulls its own input: where other threads (the input's Python producer) held the GIL at this share of the ticks or more, an idle moment of the step beside them may be the training thread waiting for the GIL on its way back from the step, not for its input, and is left undetermined; below it, such moments are taken as the waits for input they nearly all are",
        "CPython ceval_gil.c: a thread that wants the GIL waits up to the switch interval (5 ms) before asking its holder to drop it, so a producer that holds the GIL most of the time costs the training thread up to 5 ms at each of its few returns from the step per step; gpufeed judgement for the level: a producer that sleeps or runs native code (I/O, NumPy) between batches held it at under 10 % of the ticks in the truth loops, one in pure Python at over 90 %";
}

/// How far past a pair of thresholds (moderate, high) a share is: TF Profiler's two levels
/// of input-bound, and the levels gpufeed reads other stalls by.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, Serialize, serde::Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// At or above the moderate threshold.
    Moderate,
    /// At or above the high threshold.
    High,
}

impl Level {
    /// `moderate` or `high`, as in JSON.
    #[must_use]
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Moderate => "moderate",
            Self::High => "high",
        }
    }

    /// `High` at or above `high`, `Moderate` at or above `moderate`, else `None`.
    #[must_use]
    pub fn of(x: f64, moderate: f64, high: f64) -> Option<Self> {
        if x >= high {
            Some(Self::High)
        } else if x >= moderate {
            Some(Self::Moderate)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_are_unique_and_sourced() {
        let mut names: Vec<_> = TABLE.iter().map(|t| t.name).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), TABLE.len());
        for t in TABLE {
            assert!(!t.source.is_empty() && !t.meaning.is_empty(), "{}", t.name);
            assert!(t.value.is_finite(), "{}", t.name);
        }
    }

    /// No perfect cycle of any period, spike or square, is found in fewer steps than
    /// `STEPS_MIN_JUDGED`; a stall every 3rd step is found in exactly that many.
    #[test]
    fn steps_min_judged_is_the_shortest_series_with_a_findable_cycle() {
        use crate::periodicity::detect_period;
        let spike = |n: usize, p: usize| -> Vec<f64> {
            (0..n)
                .map(|i| if i % p == 0 { 300.0 } else { 100.0 })
                .collect()
        };
        let square = |n: usize, p: usize| -> Vec<f64> {
            (0..n)
                .map(|i| if i % p < p.div_ceil(2) { 300.0 } else { 100.0 })
                .collect()
        };
        let min = STEPS_MIN_JUDGED as usize;
        assert_eq!(min as f64, STEPS_MIN_JUDGED);
        assert_eq!(detect_period(&spike(min, 3)).map(|p| p.lag), Some(3));
        for n in 4..min {
            for p in 2..=n / 2 {
                assert!(detect_period(&spike(n, p)).is_none(), "spike n {n} p {p}");
                assert!(detect_period(&square(n, p)).is_none(), "square n {n} p {p}");
            }
        }
    }

    #[test]
    fn table_carries_the_constants() {
        let find = |n: &str| TABLE.iter().find(|t| t.name == n).map(|t| t.value);
        assert_eq!(find("IDLE_UTIL_PCT"), Some(IDLE_UTIL_PCT));
        assert_eq!(find("INPUT_BOUND_HIGH"), Some(INPUT_BOUND_HIGH));
    }
}
