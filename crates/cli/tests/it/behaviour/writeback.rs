//! Dirty throttling (`balance_dirty_pages()`): a writer above the dirty limits runs at the
//! device's write bandwidth.

use crate::util::sim;

/// One task writes a file much larger than the dirty limit, through the page cache, to a
/// device that writes 40 MiB/s (10240 pages/s). After the first seconds (the dirty pool fills
/// in well under one; the rate limit then settles from its 100 MB/s start), the writer's
/// measured rate must be the device's within 10 %, it must have spent most of its time
/// paused by the throttling, and the dirty + writeback pages must sit between the freerun
/// ceiling and the hard limit (the position control keeps them around the set point).
#[test]
fn writer_above_dirty_ratio_is_throttled_to_device_bandwidth() {
    let toml = r#"
[run]
duration = "10s"
warmup = "4s"
sample_interval = "500ms"
[machine]
memory = "256M"
[[device]]
name = "disk"
preset = "custom"
latency = "100us"
read_bw = "400M"
write_bw = "40M"
queue_depth = 32
[fs]
device = "disk"
[[object]]
name = "data"
kind = "file"
size = "2G"
exists = false
[[task]]
name = "writer"
[[task.phase]]
access = "write"
object = "data"
pattern = "sequential"
pages_per_op = 32
"#;
    let r = sim(toml, &[]);
    let device_pages_per_sec = 40.0 * 1024.0 * 1024.0 / 4096.0;
    let t = &r.tasks[0];
    let rate = t.ops_per_sec * 32.0;
    assert!(
        (rate / device_pages_per_sec - 1.0).abs() < 0.10,
        "writer dirtied {rate:.0} pages/s, device writes {device_pages_per_sec:.0}"
    );
    assert!(
        t.dirty_throttle_seconds > 0.5 * r.sim_seconds,
        "paused only {:.2} s of {:.2} s",
        t.dirty_throttle_seconds,
        r.sim_seconds
    );
    let ts = &r.timeseries;
    let thresh = r.vmstat["nr_dirty_threshold"] as f64;
    let bg = r.vmstat["nr_dirty_background_threshold"] as f64;
    let freerun = ((thresh + bg) / 2.0).floor();
    for (i, &t_s) in ts["t_s"].iter().enumerate() {
        if t_s < 4.0 {
            continue;
        }
        let dirty = ts["nr_dirty"][i] + ts["nr_writeback"][i];
        assert!(
            dirty > freerun && dirty <= thresh * 1.02,
            "at {t_s} s: {dirty} dirty + writeback pages, freerun {freerun}, limit {thresh}"
        );
    }
    // The throttle time series is cumulative and ends at the task's total.
    let series = &ts["task.writer.dirty_throttle_s"];
    assert!(series.windows(2).all(|w| w[0] <= w[1]));
    assert!((series.last().unwrap() - t.dirty_throttle_seconds).abs() < 1e-9);
}
