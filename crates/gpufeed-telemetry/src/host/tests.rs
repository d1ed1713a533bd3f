use proptest::prelude::*;

use super::*;

const STAT_A: &str = "cpu  1000 10 500 8000 100 5 5 0 0 0
cpu0 500 5 250 4000 50 3 2 0 0 0
cpu1 500 5 250 4000 50 2 3 0 0 0
intr 12345 0 0
ctxt 999
btime 1700000000
";

// +200 busy jiffies on cpu0 (100 % of its 200), cpu1 idle; +50 iowait on cpu1.
const STAT_B: &str = "cpu  1100 10 600 8150 150 5 5 0 0 0
cpu0 600 5 350 4000 50 3 2 0 0 0
cpu1 500 5 250 4150 100 2 3 0 0 0
intr 12400 0 0
";

const PSI_CPU: &str = "some avg10=1.50 avg60=0.80 avg300=0.20 total=1000000\n\
                       full avg10=0.00 avg60=0.00 avg300=0.00 total=0\n";
const PSI_IO_OLD: &str = "some avg10=0.00 avg60=0.00 avg300=0.00 total=5000000\n\
                          full avg10=0.00 avg60=0.00 avg300=0.00 total=2000000\n";
const PSI_IO_NEW: &str = "some avg10=0.00 avg60=0.00 avg300=0.00 total=5250000\n\
                          full avg10=0.00 avg60=0.00 avg300=0.00 total=2100000\n";

const DISKSTATS: &str = "   7       0 loop0 100 0 99999 10 0 0 0 0 0 10 10 0 0 0 0
 259       0 nvme0n1 1000 0 204800 100 500 0 8192 50 0 100 150 0 0 0 0
 259       1 nvme0n1p1 900 0 204000 90 400 0 8000 40 0 90 130 0 0 0 0
 253       0 dm-0 900 0 204000 90 400 0 8000 40 0 90 130 0 0 0 0
   8       0 sda 10 0 2048 5 0 0 0 0 0 5 5
";

#[test]
fn stat_total_and_cores() {
    let a = parse_stat(STAT_A).unwrap();
    assert_eq!(a.cores.len(), 2);
    assert_eq!(a.total.user, 1000);
    assert_eq!(a.total.total(), 1000 + 10 + 500 + 8000 + 100 + 5 + 5);
    let b = parse_stat(STAT_B).unwrap();
    let (busy, iowait) = cpu_usage(&a.total, &b.total).unwrap();
    // Δtotal = 100 + 100 + 150 + 50 = 400; busy 200, iowait 50.
    assert_eq!((busy, iowait), (50.0, 12.5));
    assert_eq!(cpu_usage(&a.cores[0], &b.cores[0]).unwrap().0, 100.0);
    assert_eq!(cpu_usage(&a.cores[1], &b.cores[1]).unwrap(), (0.0, 25.0));
    assert_eq!(cpu_usage(&a.total, &a.total), None);
}

#[test]
fn stat_old_kernel_and_garbage() {
    // Linux 2.4: four counters only.
    let s = parse_stat("cpu 1 2 3 4\n").unwrap();
    assert_eq!(s.total.idle, 4);
    assert_eq!(s.total.iowait, 0);
    assert_eq!(parse_stat(""), None);
    assert_eq!(parse_stat("cpu x y z\n"), None);
    assert_eq!(parse_stat("intr 1 2 3 4 5\n"), None);
}

#[test]
fn iowait_going_backwards_is_zero() {
    let a = CpuTime {
        user: 10,
        idle: 10,
        iowait: 50,
        ..CpuTime::default()
    };
    let b = CpuTime {
        user: 20,
        idle: 20,
        iowait: 40,
        ..CpuTime::default()
    };
    let (busy, iowait) = cpu_usage(&a, &b).unwrap();
    assert_eq!(iowait, 0.0);
    assert!(busy >= 0.0);
}

#[test]
fn pressure_files() {
    let p = parse_pressure(PSI_CPU).unwrap();
    assert_eq!(p.some_us, 1_000_000);
    assert_eq!(p.full_us, Some(0));
    // Before Linux 5.13 the cpu file has no `full` line.
    let p = parse_pressure("some avg10=0.00 avg60=0.00 avg300=0.00 total=42\n").unwrap();
    assert_eq!(p.full_us, None);
    assert_eq!(parse_pressure(""), None);
    assert_eq!(parse_pressure("some avg10=0.00\n"), None);
}

#[test]
fn diskstats_counts_whole_disks_once() {
    let disks: HashSet<&str> = ["nvme0n1", "sda", "loop0", "dm-0"]
        .into_iter()
        .filter(|n| is_counted_disk(n))
        .collect();
    assert_eq!(disks.len(), 2);
    let t = parse_diskstats(DISKSTATS, |n| disks.contains(n)).unwrap();
    assert_eq!(t.read_sectors, 204_800 + 2048);
    assert_eq!(t.write_sectors, 8192);
    assert_eq!(parse_diskstats("", |_| true), None);
}

#[test]
fn meminfo_and_loadavg() {
    let m = "MemTotal:       16384000 kB\nMemFree:  1000 kB\nMemAvailable:    8192000 kB\n";
    assert_eq!(parse_meminfo(m), Some(8000.0));
    assert_eq!(parse_meminfo("MemTotal: 1 kB\n"), None);
    assert_eq!(parse_loadavg("0.52 0.40 0.30 2/1234 5678\n"), Some(0.52));
    assert_eq!(parse_loadavg(""), None);
}

#[test]
fn pid_stat_with_a_hostile_name() {
    let s = "4242 (python) 3) S 4000 4242 4000 0 -1 4194560 100 0 0 0 150 50 7 3 20 0 8 0 \
             1234 0 0";
    let p = parse_pid_stat(s).unwrap();
    assert_eq!(p.pid, 4242);
    assert_eq!(p.ppid, 4000);
    assert_eq!(p.cpu_ticks, 150 + 50 + 7 + 3);
    assert_eq!(parse_pid_stat("1 (init S 0"), None);
    assert_eq!(parse_pid_stat(""), None);
}

#[test]
fn tree_of_processes() {
    let procs = [
        (1, 0),
        (10, 1),
        (11, 10),
        (12, 11),
        (13, 10),
        (20, 1),
        (12, 11),
    ];
    assert_eq!(descendants(&procs, 10), vec![10, 11, 13, 12]);
    assert_eq!(descendants(&procs, 99), vec![99]);
    // A (corrupt) cycle does not loop forever.
    assert_eq!(descendants(&[(2, 3), (3, 2)], 2), vec![2, 3]);
}

fn pid_stat(pid: u32, ppid: u32, utime: u64) -> String {
    format!("{pid} (worker {pid}) S {ppid} 1 1 0 -1 0 0 0 0 0 {utime} 0 0 0 20 0 1 0 1 0 0\n")
}

/// A fake `/proc` and `/sys/block`.
fn fake_proc(dir: &Path, stat: &str, io: &str, root_ticks: u64, child_ticks: u64) {
    let w = |rel: &str, text: &str| {
        let path = dir.join("proc").join(rel);
        fs_err::create_dir_all(path.parent().unwrap()).unwrap();
        fs_err::write(path, text).unwrap();
    };
    w("stat", stat);
    w("pressure/cpu", PSI_CPU);
    w("pressure/io", io);
    w("diskstats", DISKSTATS);
    w("loadavg", "1.25 1.00 0.50 3/300 999\n");
    w(
        "meminfo",
        "MemTotal: 2048000 kB\nMemAvailable: 1024000 kB\n",
    );
    w("100/stat", &pid_stat(100, 1, root_ticks));
    w("101/stat", &pid_stat(101, 100, child_ticks));
    w("200/stat", &pid_stat(200, 1, 5000));
    for d in ["nvme0n1", "loop0", "dm-0"] {
        fs_err::create_dir_all(dir.join("sys/block").join(d)).unwrap();
    }
}

#[test]
fn proc_host_reads_deltas_from_a_fake_proc() {
    let dir = tempfile::tempdir().unwrap();
    fake_proc(dir.path(), STAT_A, PSI_IO_OLD, 100, 50);
    let mut host =
        ProcHost::with_roots(&dir.path().join("proc"), &dir.path().join("sys/block")).watch(100);
    let mut out = Vec::new();
    host.poll(0.0, &mut out).unwrap();
    assert!(out.is_empty(), "the first poll is the baseline");
    assert_eq!(host.tree(), &[100, 101]);
    // Half a second later: the tree used 25 ticks, the io file moved.
    let hz = rustix::param::clock_ticks_per_second() as f64;
    fake_proc(dir.path(), STAT_B, PSI_IO_NEW, 110, 65);
    host.poll(0.5, &mut out).unwrap();
    let [Record::Host(h)] = out.as_slice() else {
        panic!("{out:?}")
    };
    let m = &h.host;
    assert_eq!(h.t, 0.5);
    assert_eq!(m.cpu_pct, Some(50.0));
    assert_eq!(m.iowait_pct, Some(12.5));
    assert_eq!(m.cpu_cores_pct, Some(vec![100.0, 0.0]));
    assert_eq!(m.psi_cpu_some_pct, Some(0.0));
    // 250 ms of `some` io stall in 500 ms; 100 ms `full`.
    assert_eq!(m.psi_io_some_pct, Some(50.0));
    assert_eq!(m.psi_io_full_pct, Some(20.0));
    assert_eq!(m.disk_read_mib_s, Some(0.0));
    assert_eq!(m.load_1m, Some(1.25));
    assert_eq!(m.mem_used_mib, Some(1000.0));
    let want = ((25.0 / hz / 0.5 * 100.0) * 100.0_f64).round() / 100.0;
    assert_eq!(m.proc_cpu_pct, Some(want));
    assert_eq!(m.proc_count, Some(2));
    // A repeated time gives nothing.
    host.poll(0.5, &mut out).unwrap();
    assert_eq!(out.len(), 1);
}

#[test]
fn missing_files_are_none_not_errors() {
    let dir = tempfile::tempdir().unwrap();
    let mut host =
        ProcHost::with_roots(&dir.path().join("nope"), &dir.path().join("nope2")).watch(4_000_000);
    let mut out = Vec::new();
    host.poll(0.0, &mut out).unwrap();
    host.poll(1.0, &mut out).unwrap();
    let [Record::Host(h)] = out.as_slice() else {
        panic!("{out:?}")
    };
    assert_eq!(h.host, HostMetrics::default());
}

#[test]
fn the_real_proc_of_this_machine() {
    if !Path::new("/proc/stat").exists() {
        return;
    }
    let mut host = ProcHost::new().watch(std::process::id());
    let mut out = Vec::new();
    host.poll(0.0, &mut out).unwrap();
    // Burn a little CPU so the counters move.
    let mut x = 0u64;
    let start = std::time::Instant::now();
    while start.elapsed().as_millis() < 60 {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1);
    }
    assert_ne!(x, 1);
    host.poll(start.elapsed().as_secs_f64() + 0.001, &mut out)
        .unwrap();
    let [Record::Host(h)] = out.as_slice() else {
        panic!("{out:?}")
    };
    let cpu = h.host.cpu_pct.unwrap();
    assert!((0.0..=100.0).contains(&cpu), "{cpu}");
    assert!(h.host.proc_cpu_pct.is_some());
    assert!(h.host.proc_count.unwrap() >= 1);
    assert!(hostname().is_some());
}

proptest! {
    #[test]
    fn parsers_never_panic(text in "\\PC{0,300}") {
        let _ = parse_stat(&text);
        let _ = parse_pressure(&text);
        let _ = parse_diskstats(&text, |_| true);
        let _ = parse_meminfo(&text);
        let _ = parse_loadavg(&text);
        let _ = parse_pid_stat(&text);
    }

    #[test]
    fn cpu_shares_stay_in_range(
        a in proptest::array::uniform8(0u64..1_000_000),
        d in proptest::array::uniform8(0u64..1_000_000),
    ) {
        let t = |v: [u64; 8]| CpuTime {
            user: v[0], nice: v[1], system: v[2], idle: v[3],
            iowait: v[4], irq: v[5], softirq: v[6], steal: v[7],
        };
        let b: Vec<u64> = a.iter().zip(d).map(|(a, d)| a + d).collect();
        let b: [u64; 8] = b.try_into().unwrap();
        if let Some((busy, iowait)) = cpu_usage(&t(a), &t(b)) {
            prop_assert!((0.0..=100.0).contains(&busy));
            prop_assert!((0.0..=100.0).contains(&iowait));
            prop_assert!(busy + iowait <= 100.0 + 1e-9);
        }
    }
}
