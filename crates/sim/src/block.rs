//! Block devices: how long a filesystem or swap IO takes, and what it costs the submitter.
//!
//! # The problem
//! Reclaim decisions turn into IO: a file refault is a read from the filesystem device, a
//! swap-in a read from the swap device, swap-out and dirty-page writeback are writes. Whether
//! a policy wins or loses depends on what that IO costs the workload, and the cost is not a
//! constant: a disk that is already busy makes the next fault wait, a rotating disk pays a
//! seek for every jump, and zram costs no device time worth speaking of but burns the
//! faulting task's CPU on (de)compression. The model has to give each request a completion
//! time that captures these effects and nothing that would make runs differ.
//!
//! # The idea
//! A device is `queue_depth` identical service channels (NVMe queues, SSD flash channels; a
//! single one for an HDD). Each channel remembers when it becomes free:
//!
//! ```text
//!   submit(now, rq)          channel 0  [====busy====)            free at t0
//!        │                   channel 1  [==busy==)                free at t1   <- earliest
//!        └──> earliest free  channel 2  [======busy======)        free at t2
//! ```
//!
//! A request goes to the channel that frees first (ties: the lowest index), starts when
//! both it has been submitted and the channel is free, and holds the channel for its
//! service time:
//!
//! ```text
//!   start      = max(now, free_at[c])
//!   positioned = start + latency_ns
//!              + seek_ns                       if rotational and rq.sector != head
//!   xfer_start = max(positioned, xfer_free_at)           the bandwidth is shared
//!   completion = xfer_start + ceil(nr_pages * 4096 * 1e9 / bytes_per_sec(op))
//!   free_at[c] = xfer_free_at = completion;  head = rq.sector + nr_pages
//! ```
//!
//! `head` is the page just past the previous request *submitted* to the device; it starts
//! unknown, so the first request on a rotational device always seeks. Sequential streams
//! (readahead windows, clustered swap-out) therefore pay one seek, random ones pay one each.
//!
//! What this captures: queueing (requests behind a busy device wait, and the wait is what a
//! fault's latency grows by under IO pressure), bandwidth (large requests take longer than
//! small ones, reads and writes at their own rates, and the device never moves more bytes
//! per second than its rate however deep its queue), parallelism (a deep queue overlaps the
//! latencies of concurrent faults) and seeks (random IO on a disk is expensive, sequential IO
//! is not).
//!
//! What it ignores: IO schedulers and their reordering (requests are served in submission
//! order per channel), request merging (two adjacent 1-page requests stay two requests; the
//! callers build large requests where the kernel would), the device's write cache
//! (writes are as slow as their bandwidth says), rotational latency beyond the fixed seek
//! cost, head position while a request is still queued (`head` moves at submission), and the
//! difference between sync and async requests (`Request::sync` and `Request::origin` are
//! carried for the callers' accounting, not used for timing). Each would change completion
//! times, never the order of events for a given submission sequence.
//!
//! # Writeback throttling
//! A request-based device (every non-synchronous one) carries the kernel's writeback
//! throttling ([`crate::wbt`], block/blk-wbt.c): [`BlockDevice::submit_bio`] first asks it
//! when a write may be issued, and the submitter sleeps until then. That bounds the writes
//! in flight (a reclaimer can no longer hand the device a second of swap-out); the channel
//! queueing above still orders what was issued. `DeviceSpec::wbt_lat_usec = 0` turns it off
//! (as BFQ or the sysfs knob do); synchronous devices never have it.
//!
//! # Synchronous devices
//! zram and the ram disk (brd) complete IO in the submitting task's context
//! (`SWP_SYNCHRONOUS_IO`). Both are bio-based drivers without a request queue:
//! `brd_submit_bio()` copies each segment to or from its pages with `memcpy()` and calls
//! `bio_endio()` before returning, and `zram_submit_bio()` (de)compresses the same way, so
//! every CPU that submits copies in parallel with the others and nobody waits behind
//! anybody. Such a device has no channels and no shared data path here: a request completes
//! at
//!
//! ```text
//!   completion = now + latency_ns + ceil(nr_pages * 4096 * 1e9 / bytes_per_sec(op))
//! ```
//!
//! where `bytes_per_sec` is one CPU's copy rate, whatever else is in flight (`queue_depth`
//! is not used). The model's steps do not submit in time order (a reclaimer's step writes a
//! batch at its own advancing clock while another thread's step starts earlier): a shared
//! channel timeline would make a swap-in wait for writes booked later in simulated time
//! than the swap-in itself, a queue brd and zram do not have. [`BlockDevice::submit_cpu_ns`]
//! additionally reports `nr_pages * cpu_ns_per_page` of CPU time for the scheduler to charge
//! to the submitter (compression on write, decompression on read). Presets of ordinary
//! devices carry `cpu_ns_per_page = 0`, so they charge nothing; a custom device that sets it
//! is charged the same way.
//!
//! # Worked example
//! An SSD with `latency_ns = 100_000`, `read_bytes_per_sec = 100_000_000`, depth 1. One page
//! transfers in 4096 * 1e9 / 1e8 = 40_960 ns, so a read submitted at 0 completes at 140_960.
//! A second read submitted at 0 waits 140_960 ns for the channel and completes at 281_920.
//! With depth 2 both complete at 140_960 and a third completes at 281_920 (tests below).
//!
//! # Determinism
//! Completion depends only on the device state, `now` and the request: integer arithmetic
//! (u128 for the transfer product), no clock, no randomness, a fixed channel order.
//!
//! # Tests
//! `block::tests::*`: hand-computed completion times for one request, queueing at depth 1,
//! parallel service at depth 2, HDD seek against sequential access, and zram CPU cost.

use crate::wbt::{Wbt, WbtStats};
use refault_mm::BioOp;
use refault_scenario::{DeviceSpec, PAGE_SIZE};
use serde::Serialize;

const NS_PER_SEC: u128 = 1_000_000_000;

/// Direction of a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReqOp {
    Read,
    Write,
}

/// Who submitted a request; carried for accounting, not used for timing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum IoOrigin {
    /// Swap-in or swap-out.
    Swap,
    /// A file read (fault, readahead, read()) or a write through the page cache.
    File,
    /// Writeback of dirty file pages (flusher or reclaim).
    Writeback,
}

/// One IO request to a [`BlockDevice`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Request {
    pub op: ReqOp,
    /// Device offset of the first page, in 4 KiB pages.
    pub sector: u64,
    /// Length in 4 KiB pages.
    pub nr_pages: u32,
    /// The submitter waits for the completion (a fault), as opposed to fire-and-forget
    /// (async readahead, writeback).
    pub sync: bool,
    pub origin: IoOrigin,
}

/// What a device did during the run.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize)]
pub struct DeviceStats {
    /// Read requests.
    pub reads: u64,
    /// Write requests.
    pub writes: u64,
    pub pages_read: u64,
    pub pages_written: u64,
    /// Requests that paid `seek_ns`.
    pub seeks: u64,
    /// Sum of the service times over all channels; utilisation is
    /// `busy_ns / (elapsed_ns * queue_depth)`.
    pub busy_ns: u64,
    /// Sum over requests of the time between submission and the start of service.
    pub queue_wait_ns: u64,
    /// Latest completion time handed out.
    pub max_completion_ns: u64,
    /// Writeback throttling on a request-based device with `wbt_lat_usec` non-zero
    /// ([`crate::wbt`]); absent on bio-based devices (zram, brd) and with throttling off.
    /// Filled in by [`BlockDevice::stats`] from the throttle's own counters.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wbt: Option<WbtStats>,
}

/// A block device with a queueing, bandwidth and seek cost model (see the module comment).
#[derive(Clone, Debug)]
pub struct BlockDevice {
    latency_ns: u64,
    seek_ns: u64,
    read_bytes_per_sec: u64,
    write_bytes_per_sec: u64,
    rotational: bool,
    synchronous: bool,
    cpu_ns_per_page: u64,
    /// `cpu_ns_per_page` of reads (`DeviceSpec::read_cpu_ns_per_page`, or the same).
    read_cpu_ns_per_page: u64,
    /// When each service channel becomes free; `queue_depth` entries (at least one).
    free_at_ns: Vec<u64>,
    /// The channel assigned longest ago. Completions are non-decreasing in submission order
    /// (every transfer starts after the previous one), so that channel is the one that frees
    /// first: round-robin finds the earliest channel in O(1) (NVMe presets have 128).
    next_channel: usize,
    /// When the device's data path (its bandwidth, shared by every channel) is free.
    xfer_free_at_ns: u64,
    /// The page just past the previous submitted request; None before the first.
    head: Option<u64>,
    /// Writeback throttling (`rq_qos` of a blk-mq queue); None for synchronous (bio-based)
    /// devices and `wbt_lat_usec = 0`.
    wbt: Option<Wbt>,
    stats: DeviceStats,
}

impl BlockDevice {
    /// A device with every channel free at time 0 and an unknown head position.
    /// `queue_depth = 0` is treated as 1; a transfer rate of 0 means no transfer cost.
    pub fn new(spec: &DeviceSpec) -> Self {
        let depth = spec.queue_depth.max(1) as usize;
        // wbt_enable_default() → wbt_init(): every blk-mq queue; zram and brd are bio-based
        // (no request queue, no rq_qos).
        let lat_usec = spec
            .wbt_lat_usec
            .unwrap_or(crate::wbt::default_lat_usec(spec.rotational));
        let wbt = (!spec.synchronous && lat_usec > 0).then(|| Wbt::new(spec.queue_depth, lat_usec));
        Self {
            latency_ns: spec.latency_ns,
            seek_ns: spec.seek_ns,
            read_bytes_per_sec: spec.read_bytes_per_sec,
            write_bytes_per_sec: spec.write_bytes_per_sec,
            rotational: spec.rotational,
            synchronous: spec.synchronous,
            cpu_ns_per_page: spec.cpu_ns_per_page,
            read_cpu_ns_per_page: spec.read_cpu_ns_per_page.unwrap_or(spec.cpu_ns_per_page),
            free_at_ns: vec![0; depth],
            next_channel: 0,
            xfer_free_at_ns: 0,
            head: None,
            stats: DeviceStats::default(),
            wbt,
        }
    }

    /// Submits a bio of kind `op` (from kswapd if `kswapd`) at `now` through the queue's
    /// rq_qos: a write on a device with writeback throttling may have to wait
    /// ([`Wbt::wait`]). Returns (issue time, completion time); the submitter sleeps until
    /// the issue time.
    pub fn submit_bio(&mut self, now: u64, rq: &Request, op: BioOp, kswapd: bool) -> (u64, u64) {
        let Some(w) = self.wbt.as_mut() else {
            return (now, self.submit(now, rq));
        };
        if !op.is_write() {
            let done = self.submit(now, rq);
            let w = self.wbt.as_mut().expect("checked");
            w.read(now, done);
            return (now, done);
        }
        let tok = w.wait(now, op, kswapd, rq.sector, rq.nr_pages);
        let done = self.submit(tok.issued, rq);
        let w = self.wbt.as_mut().expect("checked");
        w.issued(tok, done);
        (tok.issued, done)
    }

    /// The device without writeback throttling (a kernel that does not have it for this
    /// device: [`crate::wbt::in_kernel`]).
    pub fn without_wbt(mut self) -> Self {
        self.wbt = None;
        self
    }

    /// The writeback-throttling state, if the device has it.
    pub fn wbt(&self) -> Option<&Wbt> {
        self.wbt.as_ref()
    }

    /// Submits `rq` at `now` and returns its completion time. Deterministic: the result
    /// depends only on the device state, `now` and `rq`.
    pub fn submit(&mut self, now: u64, rq: &Request) -> u64 {
        if self.synchronous {
            // brd_submit_bio() / zram_submit_bio(): the copy runs on the submitting CPU, no
            // queue (module comment, "Synchronous devices").
            let completion = now + self.latency_ns + self.transfer_ns(rq.op, rq.nr_pages);
            self.account(rq, completion - now, 0, completion, false);
            return completion;
        }
        let channel = self.earliest_free_channel();
        let start = now.max(self.free_at_ns[channel]);

        let seek = self.rotational && self.head != Some(rq.sector);
        // Positioning (latency, seek) overlaps across channels; the transfer uses the
        // device's bandwidth, which all channels share.
        let positioned = start + self.latency_ns + if seek { self.seek_ns } else { 0 };
        let xfer_start = positioned.max(self.xfer_free_at_ns);
        let completion = xfer_start + self.transfer_ns(rq.op, rq.nr_pages);
        let service = completion - start;
        self.xfer_free_at_ns = completion;

        self.free_at_ns[channel] = completion;
        self.next_channel = (channel + 1) % self.free_at_ns.len();
        self.head = Some(rq.sector + u64::from(rq.nr_pages));
        self.account(rq, service, start - now, completion, seek);
        completion
    }

    /// Adds one request to the device statistics.
    fn account(
        &mut self,
        rq: &Request,
        service: u64,
        queue_wait: u64,
        completion: u64,
        seek: bool,
    ) {
        let st = &mut self.stats;
        match rq.op {
            ReqOp::Read => {
                st.reads += 1;
                st.pages_read += u64::from(rq.nr_pages);
            }
            ReqOp::Write => {
                st.writes += 1;
                st.pages_written += u64::from(rq.nr_pages);
            }
        }
        st.seeks += u64::from(seek);
        st.busy_ns += service;
        st.queue_wait_ns += queue_wait;
        st.max_completion_ns = st.max_completion_ns.max(completion);
    }

    /// CPU time the submitting task spends on `rq`: `nr_pages * cpu_ns_per_page` (reads:
    /// `read_cpu_ns_per_page`), the (de)compression of zram or the copy of a ram disk. Zero
    /// for devices without a CPU cost.
    pub fn submit_cpu_ns(&self, rq: &Request) -> u64 {
        let per_page = match rq.op {
            ReqOp::Read => self.read_cpu_ns_per_page,
            ReqOp::Write => self.cpu_ns_per_page,
        };
        u64::from(rq.nr_pages) * per_page
    }

    /// What the device did so far, with its writeback throttling's statistics.
    pub fn stats(&self) -> DeviceStats {
        DeviceStats {
            wbt: self.wbt.as_ref().map(|w| w.stats.clone()),
            ..self.stats.clone()
        }
    }

    /// Rotational device (swap readahead picks the cluster window on these).
    pub fn rotational(&self) -> bool {
        self.rotational
    }

    /// Synchronous device (`SWP_SYNCHRONOUS_IO`: swap-in may bypass the swap cache).
    pub fn synchronous(&self) -> bool {
        self.synchronous
    }

    /// Number of service channels.
    pub fn queue_depth(&self) -> usize {
        self.free_at_ns.len()
    }

    /// The channel that frees first (ties: the one assigned longest ago, channel 0 first).
    fn earliest_free_channel(&self) -> usize {
        let c = self.next_channel;
        debug_assert_eq!(
            self.free_at_ns[c],
            *self.free_at_ns.iter().min().expect("at least one channel")
        );
        c
    }

    /// `ceil(bytes * 1e9 / rate)`: time on the wire, never zero for a non-empty transfer.
    fn transfer_ns(&self, op: ReqOp, nr_pages: u32) -> u64 {
        let rate = match op {
            ReqOp::Read => self.read_bytes_per_sec,
            ReqOp::Write => self.write_bytes_per_sec,
        };
        if rate == 0 {
            return 0;
        }
        let bytes = u128::from(nr_pages) * u128::from(PAGE_SIZE);
        let ns = (bytes * NS_PER_SEC).div_ceil(u128::from(rate));
        u64::try_from(ns).unwrap_or(u64::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 100 us latency, 100 MB/s read (40_960 ns per page), 50 MB/s write (81_920 ns per page).
    fn ssd(queue_depth: u32) -> DeviceSpec {
        DeviceSpec {
            name: "ssd".into(),
            preset: "custom".into(),
            latency_ns: 100_000,
            seek_ns: 8_000_000,
            read_bytes_per_sec: 100_000_000,
            write_bytes_per_sec: 50_000_000,
            queue_depth,
            rotational: false,
            synchronous: false,
            cpu_ns_per_page: 0,
            read_cpu_ns_per_page: None,
            wbt_lat_usec: None,
        }
    }

    fn hdd() -> DeviceSpec {
        DeviceSpec {
            name: "hdd".into(),
            rotational: true,
            ..ssd(1)
        }
    }

    fn zram() -> DeviceSpec {
        DeviceSpec {
            name: "zram".into(),
            preset: "zram".into(),
            latency_ns: 1_000,
            seek_ns: 0,
            read_bytes_per_sec: 4_096_000_000,  // 1_000 ns per page
            write_bytes_per_sec: 2_048_000_000, // 2_000 ns per page
            queue_depth: 1,
            rotational: false,
            synchronous: true,
            cpu_ns_per_page: 3_000,
            read_cpu_ns_per_page: None,
            wbt_lat_usec: None,
        }
    }

    fn read(sector: u64, nr_pages: u32) -> Request {
        Request {
            op: ReqOp::Read,
            sector,
            nr_pages,
            sync: true,
            origin: IoOrigin::File,
        }
    }

    fn write(sector: u64, nr_pages: u32) -> Request {
        Request {
            op: ReqOp::Write,
            sector,
            nr_pages,
            sync: false,
            origin: IoOrigin::Swap,
        }
    }

    #[test]
    fn single_request_is_latency_plus_transfer() {
        let mut dev = BlockDevice::new(&ssd(1));
        // 1_000 + 100_000 + 40_960
        assert_eq!(dev.submit(1_000, &read(7, 1)), 141_960);
        // A write submitted after the device went idle: 200_000 + 100_000 + 4 * 81_920.
        assert_eq!(dev.submit(200_000, &write(0, 4)), 627_680);
        let st = dev.stats();
        assert_eq!((st.reads, st.writes), (1, 1));
        assert_eq!((st.pages_read, st.pages_written), (1, 4));
        assert_eq!(st.busy_ns, 140_960 + 427_680);
        assert_eq!(st.queue_wait_ns, 0);
        assert_eq!(st.max_completion_ns, 627_680);
        assert_eq!(st.seeks, 0, "an SSD never seeks");
    }

    #[test]
    fn back_to_back_requests_queue_on_depth_1() {
        let mut dev = BlockDevice::new(&ssd(1));
        assert_eq!(dev.submit(0, &read(0, 1)), 140_960);
        // Waits for the only channel: 140_960 + 140_960.
        assert_eq!(dev.submit(0, &read(100, 1)), 281_920);
        // Submitted at 100_000 while the channel is busy until 281_920.
        assert_eq!(dev.submit(100_000, &read(200, 1)), 422_880);
        let st = dev.stats();
        assert_eq!(st.queue_wait_ns, 140_960 + 181_920);
        assert_eq!(st.busy_ns, 3 * 140_960);
        assert_eq!(st.max_completion_ns, 422_880);
    }

    #[test]
    fn depth_2_serves_two_requests_in_parallel() {
        let mut dev = BlockDevice::new(&ssd(2));
        assert_eq!(dev.queue_depth(), 2);
        // Channels 0 and 1 start at once; their latencies overlap but the transfers share
        // the bandwidth: the second transfer waits for the first (140_960 → 181_920).
        assert_eq!(dev.submit(0, &read(0, 1)), 140_960);
        assert_eq!(dev.submit(0, &read(50, 1)), 181_920);
        // Channel 0 frees first (140_960): positioned at 240_960, transfer to 281_920.
        assert_eq!(dev.submit(0, &read(90, 1)), 281_920);
        // Channel 1 frees at 181_920: positioned at 281_920, a 2-page transfer.
        assert_eq!(dev.submit(10_000, &read(300, 2)), 281_920 + 81_920);
        assert_eq!(dev.stats().queue_wait_ns, 140_960 + 171_920);
    }

    #[test]
    fn hdd_seeks_unless_sequential() {
        let mut dev = BlockDevice::new(&hdd());
        // First request: head unknown, so it seeks. 100_000 + 8_000_000 + 8 * 40_960.
        assert_eq!(dev.submit(0, &read(100, 8)), 8_427_680);
        // Continues at 108: no seek. 8_427_680 + 100_000 + 327_680.
        assert_eq!(dev.submit(8_427_680, &read(108, 8)), 8_855_360);
        // Jumps back to 0: seeks again. 8_855_360 + 100_000 + 8_000_000 + 40_960.
        assert_eq!(dev.submit(8_855_360, &read(0, 1)), 16_996_320);
        // A write continuing the read stream is sequential too.
        assert_eq!(dev.submit(16_996_320, &write(1, 1)), 17_178_240);
        assert_eq!(dev.stats().seeks, 2);

        // The same pattern on a non-rotational device never pays seek_ns.
        let mut ssd = BlockDevice::new(&ssd(1));
        assert_eq!(ssd.submit(0, &read(100, 8)), 427_680);
        assert_eq!(ssd.submit(427_680, &read(0, 1)), 568_640);
    }

    #[test]
    fn zram_charges_cpu_per_page_and_still_takes_service_time() {
        let mut dev = BlockDevice::new(&zram());
        assert!(dev.synchronous());
        let rq = write(0, 4);
        assert_eq!(dev.submit_cpu_ns(&rq), 12_000);
        assert_eq!(dev.submit_cpu_ns(&read(0, 1)), 3_000);
        // 1_000 + 4 * 2_000
        assert_eq!(dev.submit(5_000, &rq), 14_000);

        let nvme = BlockDevice::new(&ssd(4));
        assert_eq!(nvme.submit_cpu_ns(&rq), 0);
    }

    /// A read's own CPU cost (the VM twin's measured zram decompression) applies to reads
    /// only; writes keep `cpu_ns_per_page`.
    #[test]
    fn zram_read_cpu_per_page_applies_to_reads_only() {
        let dev = BlockDevice::new(&DeviceSpec {
            read_cpu_ns_per_page: Some(400),
            ..zram()
        });
        assert_eq!(dev.submit_cpu_ns(&read(0, 2)), 800);
        assert_eq!(dev.submit_cpu_ns(&write(0, 2)), 6_000);
    }

    /// brd and zram copy in the submitter's context: requests from many CPUs do not queue
    /// behind each other (one channel here would serialise them), and a request submitted
    /// at an earlier simulated time than one already booked is not delayed by it.
    #[test]
    fn synchronous_device_never_queues() {
        let spec = DeviceSpec {
            queue_depth: 1,
            ..zram()
        };
        let mut dev = BlockDevice::new(&spec);
        // Read: 1_000 latency + 1_000 copy; write: 1_000 + 2_000.
        assert_eq!(dev.submit(0, &read(0, 1)), 2_000);
        assert_eq!(dev.submit(0, &read(1, 1)), 2_000);
        // A write booked at 100 us, then a read submitted at 10 us.
        assert_eq!(dev.submit(100_000, &write(2, 1)), 103_000);
        assert_eq!(dev.submit(10_000, &read(3, 1)), 12_000);
        assert_eq!(dev.stats().queue_wait_ns, 0);
        assert_eq!(dev.stats().busy_ns, 2_000 + 2_000 + 3_000 + 2_000);
    }

    #[test]
    fn transfer_rounds_up_and_zero_depth_means_one_channel() {
        let spec = DeviceSpec {
            latency_ns: 0,
            read_bytes_per_sec: 3_000_000_000, // 4096 / 3 ns = 1365.33.. -> 1366
            ..ssd(0)
        };
        let mut dev = BlockDevice::new(&spec);
        assert_eq!(dev.queue_depth(), 1);
        assert_eq!(dev.submit(0, &read(0, 1)), 1_366);
        assert_eq!(dev.submit(0, &read(1, 1)), 2_732);
    }

    #[test]
    fn same_submissions_give_same_completions() {
        let run = || {
            let mut dev = BlockDevice::new(&hdd());
            (0..50u64)
                .map(|i| dev.submit(i * 1_000, &read((i * 7919) % 64, 1 + (i % 3) as u32)))
                .collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }
}
