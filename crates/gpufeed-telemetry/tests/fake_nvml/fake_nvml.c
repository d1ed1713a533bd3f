/*
 * A fake libnvidia-ml.so.1 for tests on machines without a GPU: the entry points that
 * gpufeed's NVML source and `gpu_inventory` call (through nvml-wrapper 0.13), with the
 * real NVML ABI (types and layouts as in nvml-wrapper-sys 0.10's bindings of nvml.h),
 * returning fixed, distinctive values.
 *
 *   cc -shared -fPIC -O1 -o libnvidia-ml.so.1 fake_nvml.c
 *   GPUFEED_NVML_LIB=$PWD/libnvidia-ml.so.1 gpufeed monitor --duration 6
 *
 * Two GPUs by default:
 *
 * | reading | GPU 0 "Fake GPU 0" (a busy H100-like card) | GPU 1 "Fake GPU 1" (a consumer card) |
 * |---|---|---|
 * | utilisation | a 2 s square wave: 95 % in even wall-clock seconds, 5 % (idle) in odd ones | 42 % |
 * | utilisation sample buffer | a reading every 1/6 s while busy; runs dry while idle (NVML_ERROR_NOT_FOUND) | always empty |
 * | utilisation rates (gpu, memory) | the square wave now, 30 % | 42 %, 17 % |
 * | memory total / used | 81920 MiB / 12345 MiB | 24576 MiB / 1 MiB |
 * | power / limit / default limit | 287.5 W / 300 W / 350 W | 75 W / 450 W / 450 W |
 * | SM clock now / max, memory clock now / max (MHz) | 1410 / 1980, 1593 / 2619 | 2520 / 2520, 10501 / 10501 |
 * | temperature | 61 C | NVML_ERROR_UNKNOWN |
 * | throttle reasons | SW power cap + HW slowdown (0xC) | GPU idle (0x1) |
 * | PCIe rx / tx (KB/s), link gen / max, width / max | 123456 / 65432, 3 / 4, 8 / 16 | NVML_ERROR_NOT_SUPPORTED, 4 / 4, 16 / 16 |
 * | persistence, ECC (uncorrected, corrected), MIG | on, on (0, 3), off | off, not supported, not supported |
 * | GPM (Hopper) | supported: SM 37.5 %, occupancy 22.5 %, tensor 12.5 %, DRAM 55 % | NVML_ERROR_NOT_SUPPORTED |
 * | compute processes | 4242 `fake_trainer` 2048 MiB, 4243 (memory not available) | none |
 * | graphics processes | 4242 again, 777 `Xorg` 64 MiB | none |
 * | per-process utilisation | the calling process 40 %, 4242 90 % | none (NVML_ERROR_NOT_FOUND) |
 *
 * With FAKE_NVML_GPUS=N in the environment (1 to 64; read by nvmlInit), NVML lists N GPUs:
 * GPU 1 is the consumer card above, every other one a busy card like GPU 0, named
 * "Fake GPU k" with UUID GPU-fa4e0000-0000-4000-8000-00000000000k (k in hex, 12 digits),
 * so that many-GPU machines can be tested and benchmarked.
 *
 * With FAKE_NVML_PROCESS_PID=P in the environment, the per-process utilisation reports
 * process P where it reports 4242, at FAKE_NVML_PROCESS_SM percent (90 when unset): so a
 * test can give a real process (the target of `gpufeed attach`) a GPU that is busy or idle.
 *
 * With FAKE_NVML_LOST_GPU set in the environment, NVML lists one more GPU whose handle
 * fails with NVML_ERROR_GPU_IS_LOST (a card fallen off the bus).
 *
 * Driver 550.54.15, CUDA 12.4. Sample timestamps are CLOCK_REALTIME microseconds, as the
 * driver's. Reading k is at floor(k * 1e6 / 6) us, so each wall-clock second has exactly
 * six; the buffer spans the newest 120 but holds only those of busy seconds (it runs dry
 * while the GPU idles, as the real one does, polarsignals/gpu-metrics-agent#37), and a
 * call returns only those newer than lastSeenTimeStamp (none: NVML_ERROR_NOT_FOUND).
 *
 * Like the real library, NVML is reference-counted (every call but init fails with
 * NVML_ERROR_UNINITIALIZED once shutdown has matched every init), structs with a version
 * field are checked against the version nvml-wrapper sends, and GPM metrics need two
 * samples of one GPU, the older first.
 */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef unsigned int nvmlReturn_t;

#define NVML_SUCCESS 0u
#define NVML_ERROR_UNINITIALIZED 1u
#define NVML_ERROR_INVALID_ARGUMENT 2u
#define NVML_ERROR_NOT_SUPPORTED 3u
#define NVML_ERROR_NOT_FOUND 6u
#define NVML_ERROR_INSUFFICIENT_SIZE 7u
#define NVML_ERROR_GPU_IS_LOST 15u
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25u
#define NVML_ERROR_UNKNOWN 999u

#define NVML_GPU_UTILIZATION_SAMPLES 1u
#define NVML_VALUE_TYPE_UNSIGNED_INT 1u
#define NVML_VALUE_NOT_AVAILABLE 0xFFFFFFFFFFFFFFFFull
#define NVML_CLOCK_SM 1u
#define NVML_CLOCK_MEM 2u
#define NVML_TEMPERATURE_GPU 0u
#define NVML_PCIE_UTIL_TX_BYTES 0u
#define NVML_PCIE_UTIL_RX_BYTES 1u
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0u
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1u
#define NVML_VOLATILE_ECC 0u
#define NVML_GPM_SUPPORT_VERSION 1u
#define NVML_GPM_METRICS_GET_VERSION 1u
#define NVML_GPM_METRIC_MAX 210u
#define NVML_GPM_METRIC_SM_UTIL 2u
#define NVML_GPM_METRIC_SM_OCCUPANCY 3u
#define NVML_GPM_METRIC_ANY_TENSOR_UTIL 5u
#define NVML_GPM_METRIC_DRAM_BW_UTIL 10u

#define MIB 1048576ull
/* Readings per second of the utilisation buffer, and readings it holds. */
#define PER_S 6ull
#define CAPACITY 120ull

typedef struct {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

typedef struct {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_v2_t;

typedef union {
    double dVal;
    int siVal;
    unsigned int uiVal;
    unsigned long ulVal;
    unsigned long long ullVal;
    long long sllVal;
    unsigned short usVal;
} nvmlValue_t;

typedef struct {
    unsigned long long timeStamp;
    nvmlValue_t sampleValue;
} nvmlSample_t;

typedef struct {
    unsigned int pid;
    unsigned long long timeStamp;
    unsigned int smUtil;
    unsigned int memUtil;
    unsigned int encUtil;
    unsigned int decUtil;
} nvmlProcessUtilizationSample_t;

typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

struct fake_device;
typedef struct fake_device *nvmlDevice_t;

struct fake_gpm_sample {
    nvmlDevice_t device;
    unsigned long long time_us;
};
typedef struct fake_gpm_sample *nvmlGpmSample_t;

typedef struct {
    unsigned int version;
    unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

typedef struct {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    struct {
        char *shortName;
        char *longName;
        char *unit;
    } metricInfo;
} nvmlGpmMetric_t;

typedef struct {
    unsigned int version;
    unsigned int numMetrics;
    nvmlGpmSample_t sample1;
    nvmlGpmSample_t sample2;
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct {
    unsigned int pid;
    const char *name;
    unsigned long long used;
} fake_process;

struct fake_device {
    const char *name;
    const char *uuid;
    unsigned long long total_mib, used_mib;
    unsigned int power_mw, limit_mw, default_limit_mw;
    unsigned int sm_mhz, sm_max_mhz, mem_mhz, mem_max_mhz;
    unsigned long long throttle;
    unsigned int pcie_gen, pcie_gen_max, pcie_width, pcie_width_max;
    unsigned int persistence;
    int busy; /* has a utilisation buffer, PCIe counters, ECC, MIG, GPM, processes */
};

/* The two kinds of card: GPU 0 (busy) and GPU 1 (consumer). */
static const struct fake_device kinds[2] = {
    {"Fake GPU 0", "GPU-fa4e0000-0000-4000-8000-000000000000", 81920, 12345, 287500, 300000,
     350000, 1410, 1980, 1593, 2619, 0xC, 3, 4, 8, 16, 1, 1},
    {"Fake GPU 1", "GPU-fa4e0000-0000-4000-8000-000000000001", 24576, 1, 75000, 450000,
     450000, 2520, 2520, 10501, 10501, 0x1, 4, 4, 16, 16, 0, 0},
};

static const fake_process compute[] = {{4242, "fake_trainer", 2048 * MIB},
                                       {4243, NULL, NVML_VALUE_NOT_AVAILABLE}};
static const fake_process graphics[] = {{4242, "fake_trainer", 2048 * MIB},
                                        {777, "Xorg", 64 * MIB}};

#define MAX_GPUS 64u
/* The GPUs listed, from FAKE_NVML_GPUS at the first nvmlInit; their names and UUIDs. */
static struct fake_device devices[MAX_GPUS];
static char names[MAX_GPUS][32];
static char uuids[MAX_GPUS][48];
static unsigned int gpus;

static int inits;

/* ---- helpers ---- */

static unsigned long long now_us(void) {
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (unsigned long long)ts.tv_sec * 1000000ull + (unsigned long long)ts.tv_nsec / 1000ull;
}

/* Timestamp of buffer reading k. */
static unsigned long long reading_us(unsigned long long k) { return k * 1000000ull / PER_S; }

/* The 2 s square wave: 95 % in even seconds, 5 % in odd ones. */
static unsigned int square_wave(unsigned long long us) {
    return (us / 1000000ull) % 2 == 0 ? 95u : 5u;
}

static int initialized(void) { return __atomic_load_n(&inits, __ATOMIC_SEQ_CST) > 0; }

/* NVML_SUCCESS for one of our handles after init, else the error to return. */
static nvmlReturn_t check(nvmlDevice_t d) {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    for (unsigned int i = 0; i < gpus; i++) {
        if (d == &devices[i]) return NVML_SUCCESS;
    }
    return NVML_ERROR_INVALID_ARGUMENT;
}

/* Lists the GPUs FAKE_NVML_GPUS asks for (2 when unset or out of range). */
static void setup(void) {
    if (__atomic_load_n(&gpus, __ATOMIC_SEQ_CST) > 0) return;
    const char *env = getenv("FAKE_NVML_GPUS");
    unsigned long n = env ? strtoul(env, NULL, 10) : 2;
    if (n < 1 || n > MAX_GPUS) n = 2;
    for (unsigned int i = 0; i < n; i++) {
        devices[i] = kinds[i == 1 ? 1 : 0];
        if (i >= 2) {
            snprintf(names[i], sizeof names[i], "Fake GPU %u", i);
            snprintf(uuids[i], sizeof uuids[i], "GPU-fa4e0000-0000-4000-8000-%012x", i);
            devices[i].name = names[i];
            devices[i].uuid = uuids[i];
        }
    }
    __atomic_store_n(&gpus, (unsigned int)n, __ATOMIC_SEQ_CST);
}

/* Returns the error of `check` from the calling entry point. */
#define CHECK(d)                                                                               \
    do {                                                                                       \
        nvmlReturn_t r_ = check(d);                                                            \
        if (r_ != NVML_SUCCESS) return r_;                                                     \
    } while (0)

static nvmlReturn_t copy_string(const char *s, char *out, unsigned int length) {
    if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (strlen(s) + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
    strcpy(out, s);
    return NVML_SUCCESS;
}

/* The range [*first, *last] of the readings newer than `last_seen` of a GPU that is busy
 * all the time; 0 when none. */
static unsigned long long newer_readings(unsigned long long last_seen, unsigned long long *first,
                                         unsigned long long *last) {
    unsigned long long newest = now_us() * PER_S / 1000000ull;
    unsigned long long oldest = newest - CAPACITY + 1;
    unsigned long long k = last_seen * PER_S / 1000000ull;
    while (k > 0 && reading_us(k - 1) > last_seen) k--;
    while (reading_us(k) <= last_seen) k++;
    if (k < oldest) k = oldest;
    if (k > newest) return 0;
    *first = k;
    *last = newest;
    return newest - k + 1;
}

/* ---- init, system ---- */

nvmlReturn_t nvmlInit_v2(void) {
    setup();
    __atomic_add_fetch(&inits, 1, __ATOMIC_SEQ_CST);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlInitWithFlags(unsigned int flags) {
    (void)flags;
    return nvmlInit_v2();
}

nvmlReturn_t nvmlShutdown(void) {
    int n = __atomic_load_n(&inits, __ATOMIC_SEQ_CST);
    while (n > 0 &&
           !__atomic_compare_exchange_n(&inits, &n, n - 1, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST)) {
    }
    return n > 0 ? NVML_SUCCESS : NVML_ERROR_UNINITIALIZED;
}

const char *nvmlErrorString(nvmlReturn_t r) {
    switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED: return "Not Supported";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    default: return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    return copy_string("550.54.15", version, length);
}

nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int *version) {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    if (version == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *version = 12040;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlSystemGetProcessName(unsigned int pid, char *name, unsigned int length) {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    for (size_t i = 0; i < sizeof graphics / sizeof graphics[0]; i++) {
        if (graphics[i].pid == pid) return copy_string(graphics[i].name, name, length);
    }
    return NVML_ERROR_NOT_FOUND;
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count) {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    /* FAKE_NVML_LOST_GPU set: one more GPU that NVML lists but cannot open. */
    *count = getenv("FAKE_NVML_LOST_GPU") ? gpus + 1 : gpus;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    if (index == gpus && getenv("FAKE_NVML_LOST_GPU")) return NVML_ERROR_GPU_IS_LOST;
    if (index >= gpus || device == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *device = &devices[index];
    return NVML_SUCCESS;
}

/* ---- identity, memory ---- */

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t d, char *name, unsigned int length) {
    CHECK(d);
    return copy_string(d->name, name, length);
}

nvmlReturn_t nvmlDeviceGetUUID(nvmlDevice_t d, char *uuid, unsigned int length) {
    CHECK(d);
    return copy_string(d->uuid, uuid, length);
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t d, nvmlMemory_v2_t *m) {
    CHECK(d);
    if (m == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    /* NVML_STRUCT_VERSION(Memory, 2) */
    if (m->version != ((unsigned int)sizeof(nvmlMemory_v2_t) | (2u << 24)))
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    m->total = d->total_mib * MIB;
    m->used = d->used_mib * MIB;
    m->reserved = 512 * MIB;
    m->free = m->total - m->used - m->reserved;
    return NVML_SUCCESS;
}

/* ---- utilisation ---- */

nvmlReturn_t nvmlDeviceGetSamples(nvmlDevice_t d, unsigned int type, unsigned long long lastSeen,
                                  unsigned int *valType, unsigned int *count,
                                  nvmlSample_t *samples) {
    CHECK(d);
    if (type != NVML_GPU_UTILIZATION_SAMPLES) return NVML_ERROR_NOT_SUPPORTED;
    if (valType == NULL || count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (!d->busy) return NVML_ERROR_NOT_FOUND;
    unsigned long long first = 0, last = 0, n = 0;
    if (newer_readings(lastSeen, &first, &last) > 0) {
        /* Only the readings of busy (95 %) seconds are in the buffer. */
        for (unsigned long long k = first; k <= last; k++) {
            if (square_wave(reading_us(k)) != 95u) continue;
            /* A reading may have come since the size query: the oldest that fit, the
             * rest on the next call. */
            if (samples != NULL && n == *count) break;
            if (samples != NULL) {
                samples[n].timeStamp = reading_us(k);
                samples[n].sampleValue.uiVal = square_wave(reading_us(k));
            }
            n++;
        }
    }
    if (n == 0) return NVML_ERROR_NOT_FOUND;
    *valType = NVML_VALUE_TYPE_UNSIGNED_INT;
    *count = (unsigned int)n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t d, nvmlUtilization_t *u) {
    CHECK(d);
    if (u == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (d->busy) {
        u->gpu = square_wave(now_us());
        u->memory = 30;
    } else {
        u->gpu = 42;
        u->memory = 17;
    }
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetProcessUtilization(nvmlDevice_t d, nvmlProcessUtilizationSample_t *u,
                                             unsigned int *count, unsigned long long lastSeen) {
    CHECK(d);
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    unsigned long long first = 0, last = 0;
    if (!d->busy || newer_readings(lastSeen, &first, &last) == 0) return NVML_ERROR_NOT_FOUND;
    /* One entry per process that ran since lastSeen, stamped with the newest reading. */
    const char *pid = getenv("FAKE_NVML_PROCESS_PID");
    const char *sm = getenv("FAKE_NVML_PROCESS_SM");
    const nvmlProcessUtilizationSample_t entries[2] = {
        {(unsigned int)getpid(), reading_us(last), 40, 10, 0, 0},
        {pid ? (unsigned int)strtoul(pid, NULL, 10) : 4242, reading_us(last),
         sm ? (unsigned int)strtoul(sm, NULL, 10) : 90, 20, 0, 0},
    };
    if (u == NULL || *count < 2) {
        *count = 2;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    memcpy(u, entries, sizeof entries);
    *count = 2;
    return NVML_SUCCESS;
}

/* ---- power, clocks, temperature, throttling ---- */

static nvmlReturn_t put_uint(unsigned int *out, unsigned int v) {
    if (out == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *out = v;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t d, unsigned int *mw) {
    CHECK(d);
    return put_uint(mw, d->power_mw);
}

nvmlReturn_t nvmlDeviceGetPowerManagementLimit(nvmlDevice_t d, unsigned int *mw) {
    CHECK(d);
    return put_uint(mw, d->limit_mw);
}

nvmlReturn_t nvmlDeviceGetPowerManagementDefaultLimit(nvmlDevice_t d, unsigned int *mw) {
    CHECK(d);
    return put_uint(mw, d->default_limit_mw);
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t d, unsigned int type, unsigned int *mhz) {
    CHECK(d);
    if (type == NVML_CLOCK_SM) return put_uint(mhz, d->sm_mhz);
    if (type == NVML_CLOCK_MEM) return put_uint(mhz, d->mem_mhz);
    return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetMaxClockInfo(nvmlDevice_t d, unsigned int type, unsigned int *mhz) {
    CHECK(d);
    if (type == NVML_CLOCK_SM) return put_uint(mhz, d->sm_max_mhz);
    if (type == NVML_CLOCK_MEM) return put_uint(mhz, d->mem_max_mhz);
    return NVML_ERROR_NOT_SUPPORTED;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t d, unsigned int sensor, unsigned int *c) {
    CHECK(d);
    if (sensor != NVML_TEMPERATURE_GPU) return NVML_ERROR_INVALID_ARGUMENT;
    if (!d->busy) return NVML_ERROR_UNKNOWN;
    return put_uint(c, 61);
}

nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(nvmlDevice_t d, unsigned long long *r) {
    CHECK(d);
    if (r == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *r = d->throttle;
    return NVML_SUCCESS;
}

/* ---- PCIe ---- */

nvmlReturn_t nvmlDeviceGetPcieThroughput(nvmlDevice_t d, unsigned int counter, unsigned int *kbs) {
    CHECK(d);
    if (!d->busy) return NVML_ERROR_NOT_SUPPORTED;
    if (counter == NVML_PCIE_UTIL_RX_BYTES) return put_uint(kbs, 123456);
    if (counter == NVML_PCIE_UTIL_TX_BYTES) return put_uint(kbs, 65432);
    return NVML_ERROR_INVALID_ARGUMENT;
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) {
    CHECK(d);
    return put_uint(v, d->pcie_gen);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkGeneration(nvmlDevice_t d, unsigned int *v) {
    CHECK(d);
    return put_uint(v, d->pcie_gen_max);
}

nvmlReturn_t nvmlDeviceGetCurrPcieLinkWidth(nvmlDevice_t d, unsigned int *v) {
    CHECK(d);
    return put_uint(v, d->pcie_width);
}

nvmlReturn_t nvmlDeviceGetMaxPcieLinkWidth(nvmlDevice_t d, unsigned int *v) {
    CHECK(d);
    return put_uint(v, d->pcie_width_max);
}

/* ---- modes, ECC ---- */

nvmlReturn_t nvmlDeviceGetPersistenceMode(nvmlDevice_t d, unsigned int *mode) {
    CHECK(d);
    return put_uint(mode, d->persistence);
}

nvmlReturn_t nvmlDeviceGetEccMode(nvmlDevice_t d, unsigned int *current, unsigned int *pending) {
    CHECK(d);
    if (!d->busy) return NVML_ERROR_NOT_SUPPORTED;
    if (current == NULL || pending == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *current = 1;
    *pending = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t d, unsigned int type, unsigned int counter,
                                         unsigned long long *n) {
    CHECK(d);
    if (!d->busy) return NVML_ERROR_NOT_SUPPORTED;
    if (n == NULL || counter != NVML_VOLATILE_ECC) return NVML_ERROR_INVALID_ARGUMENT;
    if (type == NVML_MEMORY_ERROR_TYPE_CORRECTED) *n = 3;
    else if (type == NVML_MEMORY_ERROR_TYPE_UNCORRECTED) *n = 0;
    else return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t d, unsigned int *current, unsigned int *pending) {
    CHECK(d);
    if (!d->busy) return NVML_ERROR_NOT_SUPPORTED;
    if (current == NULL || pending == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *current = 0;
    *pending = 0;
    return NVML_SUCCESS;
}

/* ---- processes ---- */

static nvmlReturn_t list_processes(nvmlDevice_t d, const fake_process *list, unsigned int n,
                                   unsigned int *count, nvmlProcessInfo_t *infos) {
    CHECK(d);
    if (count == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (!d->busy) n = 0;
    if (n == 0) {
        *count = 0;
        return NVML_SUCCESS;
    }
    if (infos == NULL || *count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < n; i++) {
        infos[i].pid = list[i].pid;
        infos[i].usedGpuMemory = list[i].used;
        infos[i].gpuInstanceId = 0xFFFFFFFFu;
        infos[i].computeInstanceId = 0xFFFFFFFFu;
    }
    *count = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t d, unsigned int *count,
                                                     nvmlProcessInfo_t *infos) {
    return list_processes(d, compute, 2, count, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t d, unsigned int *count,
                                                      nvmlProcessInfo_t *infos) {
    return list_processes(d, graphics, 2, count, infos);
}

/* ---- GPM ---- */

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t d, nvmlGpmSupport_t *s) {
    CHECK(d);
    if (s == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (s->version != NVML_GPM_SUPPORT_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    if (!d->busy) return NVML_ERROR_NOT_SUPPORTED;
    s->isSupportedDevice = 1;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *sample) {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    if (sample == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    *sample = calloc(1, sizeof(struct fake_gpm_sample));
    return *sample ? NVML_SUCCESS : NVML_ERROR_UNKNOWN;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t sample) {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    if (sample == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    free(sample);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t d, nvmlGpmSample_t sample) {
    CHECK(d);
    if (sample == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (!d->busy) return NVML_ERROR_NOT_SUPPORTED;
    sample->device = d;
    sample->time_us = now_us();
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *m) {
    if (!initialized()) return NVML_ERROR_UNINITIALIZED;
    if (m == NULL) return NVML_ERROR_INVALID_ARGUMENT;
    if (m->version != NVML_GPM_METRICS_GET_VERSION) return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    /* Two samples of one GPU, the first taken before the second. */
    if (m->numMetrics > NVML_GPM_METRIC_MAX || m->sample1 == NULL || m->sample2 == NULL ||
        m->sample1->device == NULL || m->sample1->device != m->sample2->device ||
        m->sample1->time_us >= m->sample2->time_us)
        return NVML_ERROR_INVALID_ARGUMENT;
    for (unsigned int i = 0; i < m->numMetrics; i++) {
        nvmlGpmMetric_t *g = &m->metrics[i];
        g->nvmlReturn = NVML_SUCCESS;
        g->metricInfo.unit = "%";
        switch (g->metricId) {
        case NVML_GPM_METRIC_SM_UTIL:
            g->value = 37.5;
            g->metricInfo.shortName = "SM_UTIL";
            g->metricInfo.longName = "SM utilization";
            break;
        case NVML_GPM_METRIC_SM_OCCUPANCY:
            g->value = 22.5;
            g->metricInfo.shortName = "SM_OCCUPANCY";
            g->metricInfo.longName = "SM occupancy";
            break;
        case NVML_GPM_METRIC_ANY_TENSOR_UTIL:
            g->value = 12.5;
            g->metricInfo.shortName = "ANY_TENSOR_UTIL";
            g->metricInfo.longName = "Any tensor utilization";
            break;
        case NVML_GPM_METRIC_DRAM_BW_UTIL:
            g->value = 55.0;
            g->metricInfo.shortName = "DRAM_BW_UTIL";
            g->metricInfo.longName = "DRAM bandwidth utilization";
            break;
        default:
            g->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
            g->metricInfo.unit = NULL;
        }
    }
    return NVML_SUCCESS;
}
