//! Block-device presets: typical figures a `[[device]]` starts from.
//!
//! These are order-of-magnitude values for current hardware, not measurements of one
//! product. Every field can be overridden per device in the scenario, so a user with a
//! measured device writes its figures next to the preset name.
//!
//! | preset | latency | seek | read | write | queue | rotational | synchronous | CPU/page |
//! |---|---|---|---|---|---|---|---|---|
//! | hdd | 0.5 ms | 8 ms | 150 MB/s | 150 MB/s | 1 | yes | no | 0 |
//! | sata-ssd | 80 us | 0 | 500 MB/s | 450 MB/s | 32 | no | no | 0 |
//! | nvme | 20 us | 0 | 3 GB/s | 2 GB/s | 128 | no | no | 0 |
//! | zram | 0 | 0 | 8 GB/s | 8 GB/s | 1024 | no | yes | 3 us |
//! | ramdisk | 1 us | 0 | 10 GB/s | 10 GB/s | 64 | no | yes | 0.5 us |
//!
//! (MB/GB here are decimal, as vendors quote them.)

/// The figures of one preset. Field meanings are those of [`crate::model::DeviceSpec`].
#[derive(Clone, Copy, Debug)]
pub struct Preset {
    pub name: &'static str,
    /// What the preset stands for and where the figures come from.
    pub doc: &'static str,
    pub latency_ns: u64,
    pub seek_ns: u64,
    pub read_bytes_per_sec: u64,
    pub write_bytes_per_sec: u64,
    pub queue_depth: u32,
    pub rotational: bool,
    pub synchronous: bool,
    pub cpu_ns_per_page: u64,
}

/// The starting point of a `[[device]]` without a preset: everything must be given
/// (`read_bw`, `write_bw` at least; the rest defaults to these values).
pub const CUSTOM: Preset = Preset {
    name: "custom",
    doc: "no preset: read_bw and write_bw are required, the rest is 0/false, queue depth 1",
    latency_ns: 0,
    seek_ns: 0,
    read_bytes_per_sec: 0,
    write_bytes_per_sec: 0,
    queue_depth: 1,
    rotational: false,
    synchronous: false,
    cpu_ns_per_page: 0,
};

pub static PRESETS: &[Preset] = &[
    Preset {
        name: "hdd",
        doc: "7200 rpm SATA disk: ~0.5 ms command overhead, ~8 ms average seek plus \
              rotational delay for a request that does not continue the previous one, \
              ~150 MB/s sequential, one request at a time; rotational (so swap readahead \
              defaults to cluster)",
        latency_ns: 500_000,
        seek_ns: 8_000_000,
        read_bytes_per_sec: 150_000_000,
        write_bytes_per_sec: 150_000_000,
        queue_depth: 1,
        rotational: true,
        synchronous: false,
        cpu_ns_per_page: 0,
    },
    Preset {
        name: "sata-ssd",
        doc: "SATA flash SSD: ~80 us 4 KiB read latency, 500 MB/s read and 450 MB/s write \
              (the SATA-3 ceiling), NCQ depth 32",
        latency_ns: 80_000,
        seek_ns: 0,
        read_bytes_per_sec: 500_000_000,
        write_bytes_per_sec: 450_000_000,
        queue_depth: 32,
        rotational: false,
        synchronous: false,
        cpu_ns_per_page: 0,
    },
    Preset {
        name: "nvme",
        doc: "PCIe 3/4 NVMe SSD: ~20 us read latency, 3 GB/s read, 2 GB/s write, 128 \
              requests in flight",
        latency_ns: 20_000,
        seek_ns: 0,
        read_bytes_per_sec: 3_000_000_000,
        write_bytes_per_sec: 2_000_000_000,
        queue_depth: 128,
        rotational: false,
        synchronous: false,
        cpu_ns_per_page: 0,
    },
    Preset {
        name: "zram",
        doc: "compressed RAM swap (zram with lzo-rle/lz4): no device latency; the cost is \
              ~3 us of CPU per 4 KiB page for compression or decompression, charged to the \
              task that swaps. Synchronous (SWP_SYNCHRONOUS_IO: swap-in skips the swap cache \
              and readahead); every CPU compresses in parallel, hence the large queue depth",
        latency_ns: 0,
        seek_ns: 0,
        read_bytes_per_sec: 8_000_000_000,
        write_bytes_per_sec: 8_000_000_000,
        queue_depth: 1024,
        rotational: false,
        synchronous: true,
        cpu_ns_per_page: 3_000,
    },
    Preset {
        name: "ramdisk",
        doc: "brd RAM disk: ~1 us per request, 10 GB/s memcpy bandwidth, ~0.5 us of CPU per \
              page for the copy; synchronous like zram (brd is a synchronous block device)",
        latency_ns: 1_000,
        seek_ns: 0,
        read_bytes_per_sec: 10_000_000_000,
        write_bytes_per_sec: 10_000_000_000,
        queue_depth: 64,
        rotational: false,
        synchronous: true,
        cpu_ns_per_page: 500,
    },
];

/// A preset by name.
pub fn lookup(name: &str) -> Option<&'static Preset> {
    PRESETS.iter().find(|p| p.name == name)
}

/// Preset names, comma-separated, for messages and docs.
pub fn names() -> String {
    PRESETS
        .iter()
        .map(|p| p.name)
        .collect::<Vec<_>>()
        .join(", ")
}
