//! Raw scenario → resolved [`Scenario`]: defaults filled in, names turned into indices, sizes
//! into pages and times into nanoseconds, and everything checked.
//!
//! Each check reports the path it is about; [`Ctx::err`] turns the path into a file position
//! (or into "--set KEY=VALUE" when an override set it).

use crate::defs;
use crate::error::{ErrorKind, ScenarioError};
use crate::model::*;
use crate::presets::{self, Preset};
use crate::raw::*;
use crate::size::{format_bytes, format_duration};
use crate::spans::{path, Located, Seg};
use crate::sysctl;
use crate::{layout, zoneinfo};
use std::collections::BTreeMap;

/// Page indices and pfns are u32 in the model: at most 2^32 pages (16 TiB) per object, per
/// swap area and per machine.
pub(crate) const MAX_PAGES: u64 = 1 << 32;

/// MAX_PAGE_ORDER of the buddy allocator (include/linux/mmzone.h, default config).
const MAX_PAGE_ORDER: u32 = 10;

/// Highest priority `swapon -p` accepts (SWAP_FLAG_PRIO_MASK).
const MAX_SWAP_PRIO: i32 = 0x7fff;

/// Where errors are reported: the file, its positions, and the paths set by overrides.
pub(crate) struct Ctx<'a> {
    pub origin: &'a str,
    pub text: &'a str,
    pub doc: &'a Located,
    /// Paths set by `--set`, with the `KEY=VALUE` text.
    pub overrides: &'a [(Vec<Seg>, String)],
}

type Result<T> = std::result::Result<T, ScenarioError>;

impl Ctx<'_> {
    pub fn err(&self, kind: ErrorKind, path: &[Seg], msg: impl Into<String>) -> ScenarioError {
        let msg = msg.into();
        if let Some((_, set)) = self
            .overrides
            .iter()
            .rev()
            .find(|(p, _)| path.starts_with(p))
        {
            return ScenarioError::new(kind, self.origin, format!("--set {set}: {msg}"));
        }
        match self.doc.locate(path) {
            Some(span) => ScenarioError::at(kind, self.origin, self.text, span.start, msg),
            None => ScenarioError::new(kind, self.origin, msg),
        }
    }

    fn required<T>(&self, v: Option<T>, path: &[Seg], what: &str) -> Result<T> {
        v.ok_or_else(|| self.err(ErrorKind::InvalidValue, path, format!("{what} is required")))
    }

    fn fraction(&self, v: f64, path: &[Seg], what: &str) -> Result<f64> {
        if (0.0..=1.0).contains(&v) {
            Ok(v)
        } else {
            Err(self.err(
                ErrorKind::InvalidValue,
                path,
                format!("{what} = {v} is not in [0, 1]"),
            ))
        }
    }

    fn exponent(&self, v: f64, path: &[Seg], what: &str) -> Result<f64> {
        if v.is_finite() && v >= 0.0 {
            Ok(v)
        } else {
            Err(self.err(
                ErrorKind::InvalidValue,
                path,
                format!("{what} = {v} must be 0 or more"),
            ))
        }
    }
}

fn list(names: impl IntoIterator<Item = impl AsRef<str>>) -> String {
    let v: Vec<String> = names.into_iter().map(|n| n.as_ref().to_string()).collect();
    if v.is_empty() {
        "none defined".to_string()
    } else {
        v.join(", ")
    }
}

/// Checks a name: non-empty, unique among `seen`.
fn check_name(
    cx: &Ctx,
    name: Option<String>,
    at: &[Seg],
    what: &str,
    seen: &mut BTreeMap<String, ()>,
) -> Result<String> {
    let name_path = [at, &path!["name"]].concat();
    let name = cx.required(name, &name_path, &format!("the name of a {what}"))?;
    if name.trim().is_empty() {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &name_path,
            format!("{what} name is empty"),
        ));
    }
    if seen.insert(name.clone(), ()).is_some() {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &name_path,
            format!("{what} `{name}` is defined twice"),
        ));
    }
    Ok(name)
}

pub(crate) fn resolve(raw: RawScenario, cx: &Ctx, seed: Option<u64>) -> Result<Scenario> {
    let name = match raw.name {
        Some(n) if n.trim().is_empty() => {
            return Err(cx.err(ErrorKind::InvalidValue, &path!["name"], "name is empty"))
        }
        Some(n) => n,
        None => std::path::Path::new(cx.origin)
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| "scenario".to_string()),
    };
    let description = raw
        .description
        .unwrap_or_else(|| defs::default("", "description"));
    let seed = seed
        .or(raw.seed)
        .unwrap_or_else(|| defs::default("", "seed"));

    let machine = resolve_machine(&raw.machine, cx)?;
    let run = resolve_run(&raw.run, machine.memory_pages, cx)?;
    let sysctl = resolve_sysctl(&raw.sysctl, machine.memory_pages, cx)?;
    let mut devices = resolve_devices(raw.device, cx)?;
    let fs_device = resolve_fs(&raw.fs, &mut devices, cx)?;
    let swap = resolve_swap(&raw.swap, &devices, cx)?;
    let policy = resolve_policy(
        &raw.policy,
        &raw.lru_gen,
        &raw.transparent_hugepage,
        &raw.swap,
        &devices,
        &swap,
        cx,
    )?;
    let cgroups = resolve_cgroups(raw.cgroup, machine.memory_pages, cx)?;
    let mut objects = resolve_objects(raw.object, cx)?;
    let mut traces = resolve_trace_sources(&raw.task, &mut objects, cx)?;
    let tasks = resolve_tasks(raw.task, &cgroups, &objects, &run, &mut traces, cx)?;
    check_zero_cost_loops(&tasks, &objects, cx)?;
    check_create_dirs(&tasks, &objects, cx)?;
    check_process_objects(&tasks, &objects, cx)?;
    let (costs, model) = resolve_model(&raw.model, policy.lru, policy.kswapd_compaction, cx)?;

    Ok(Scenario {
        name,
        description,
        seed,
        run,
        machine,
        sysctl,
        policy,
        devices,
        fs_device,
        swap,
        cgroups,
        objects,
        tasks,
        costs,
        model,
    })
}

/// Samples of a run with `run.sample_interval = "auto"` and a known duration: the interval
/// is the duration divided by this (whole nanoseconds), so the time series has this many
/// intervals whatever the run's length.
pub const AUTO_SAMPLES: u64 = 200;

/// `run.sample_interval`: a given interval as is; `"auto"` (0) is the duration divided by
/// [`AUTO_SAMPLES`] when the run has a duration, and stays 0 (adaptive: the sampler starts
/// fine and halves its resolution as the run goes on, see refault-sim's `Sampler`) when the
/// run lasts until its tasks end.
pub fn auto_sample_interval(sample_ns: u64, duration_ns: u64) -> u64 {
    if sample_ns > 0 {
        sample_ns
    } else {
        duration_ns / AUTO_SAMPLES
    }
}

fn resolve_run(raw: &RawRun, memory_pages: u64, cx: &Ctx) -> Result<RunSpec> {
    let d = |v: Option<crate::size::Duration>, key: &str| -> u64 {
        v.map_or_else(
            || defs::default::<crate::size::Duration>("run", key).0,
            |d| d.0,
        )
    };
    let duration_ns = d(raw.duration, "duration");
    let sample = raw.sample_interval.map_or_else(
        || defs::default::<crate::size::SampleInterval>("run", "sample_interval").0,
        |s| s.0,
    );
    let run = RunSpec {
        duration_ns,
        warmup_ns: d(raw.warmup, "warmup"),
        sample_interval_ns: auto_sample_interval(sample, duration_ns),
        drop_caches: Vec::new(),
        sysctl_writes: Vec::new(),
    };
    let mut run = run;
    for (i, dc) in raw.drop_caches.iter().enumerate() {
        let at_path = path!["run", "drop_caches", i, "at"];
        let at_ns = cx.required(dc.at, &at_path, "run.drop_caches at")?.0;
        let value_path = path!["run", "drop_caches", i, "value"];
        let value = cx.required(dc.value, &value_path, "run.drop_caches value")?;
        if !(1..=4).contains(&value) {
            return Err(cx.err(
                ErrorKind::Impossible,
                &value_path,
                format!(
                    "run.drop_caches value {value}: vm.drop_caches takes 1 (page cache), 2 \
                     (reclaimable slab), 3 (both) or 4 (nothing dropped: silences the kernel's message)"
                ),
            ));
        }
        if run.duration_ns > 0 && at_ns >= run.duration_ns {
            return Err(cx.err(
                ErrorKind::Impossible,
                &at_path,
                format!(
                    "run.drop_caches at {} is not before run.duration ({}): it would never happen",
                    format_duration(at_ns),
                    format_duration(run.duration_ns)
                ),
            ));
        }
        run.drop_caches.push(DropCachesSpec { at_ns, value });
    }
    // Writes at the same time happen in file order.
    run.drop_caches.sort_by_key(|d| d.at_ns);
    for (i, w) in raw.sysctl.iter().enumerate() {
        let at_path = path!["run", "sysctl", i, "at"];
        let at_ns = cx.required(w.at, &at_path, "run.sysctl at")?.0;
        let name_path = path!["run", "sysctl", i, "name"];
        let name = cx.required(w.name.clone(), &name_path, "run.sysctl name")?;
        let Some(&(which, _)) = RuntimeSysctl::ALL.iter().find(|(_, n)| *n == name) else {
            let known: Vec<&str> = RuntimeSysctl::ALL.iter().map(|(_, n)| *n).collect();
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &name_path,
                format!(
                    "run.sysctl name {name:?}: the sysctls a run can change are {}",
                    known.join(", ")
                ),
            ));
        };
        let value_path = path!["run", "sysctl", i, "value"];
        let value = cx.required(w.value.clone(), &value_path, "run.sysctl value")?;
        let Some(v) = value.as_integer() else {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &value_path,
                format!(
                    "run.sysctl value for {name} must be an integer, not a {}",
                    value.type_str()
                ),
            ));
        };
        let def = sysctl::lookup(&name).expect("every runtime sysctl is a modelled sysctl");
        def.check(v).map_err(|msg| {
            cx.err(
                ErrorKind::InvalidValue,
                &value_path,
                format!("run.sysctl: {msg}"),
            )
        })?;
        if which == RuntimeSysctl::MinFreeKbytes && v as u64 * 1024 >= memory_pages * PAGE_SIZE {
            return Err(cx.err(
                ErrorKind::Impossible,
                &value_path,
                format!(
                    "run.sysctl vm.min_free_kbytes = {v} reserves all of machine.memory ({})",
                    format_bytes(memory_pages * PAGE_SIZE)
                ),
            ));
        }
        if run.duration_ns > 0 && at_ns >= run.duration_ns {
            return Err(cx.err(
                ErrorKind::Impossible,
                &at_path,
                format!(
                    "run.sysctl at {} is not before run.duration ({}): it would never happen",
                    format_duration(at_ns),
                    format_duration(run.duration_ns)
                ),
            ));
        }
        run.sysctl_writes.push(SysctlWriteSpec {
            at_ns,
            name: which,
            value: v as u64,
        });
    }
    run.sysctl_writes.sort_by_key(|w| w.at_ns);
    if run.duration_ns > 0 && run.warmup_ns >= run.duration_ns {
        return Err(cx.err(
            ErrorKind::Impossible,
            &path!["run", "warmup"],
            format!(
                "run.warmup ({}) is not shorter than run.duration ({}): nothing would be measured",
                format_duration(run.warmup_ns),
                format_duration(run.duration_ns)
            ),
        ));
    }
    Ok(run)
}

fn resolve_machine(raw: &RawMachine, cx: &Ctx) -> Result<MachineSpec> {
    let cpus = raw.cpus.unwrap_or_else(|| defs::default("machine", "cpus"));
    if cpus == 0 {
        return Err(cx.err(
            ErrorKind::Impossible,
            &path!["machine", "cpus"],
            "machine.cpus is 0: a machine needs at least one CPU",
        ));
    }
    if let Some(file) = &raw.from_zoneinfo {
        return machine_from_zoneinfo(raw, file, cpus, cx);
    }
    let at = path!["machine", "memory"];
    let bytes = cx.required(raw.memory, &at, "machine.memory")?.0;
    let memory_pages = bytes / PAGE_SIZE;
    if memory_pages == 0 {
        let msg = if bytes == 0 {
            "machine.memory is 0: a machine needs memory".to_string()
        } else {
            format!("machine.memory ({bytes} bytes) is less than one page (4 KiB)")
        };
        return Err(cx.err(ErrorKind::Impossible, &at, msg));
    }
    // Pfns are 32-bit and u32::MAX marks "no page": at most 2^32 - 2 frames.
    if memory_pages > MAX_PAGES - 2 {
        return Err(cx.err(
            ErrorKind::Impossible,
            &at,
            format!(
                "machine.memory ({}) is too large: pfns are 32-bit, so at most 2^32 - 2 pages \
                 (16 TiB - 8 KiB)",
                format_bytes(bytes)
            ),
        ));
    }
    let mut zones: Vec<ZoneSpec> = match raw.dma32 {
        Some(size) => {
            // An explicit DMA32 size: the flat layout (no DMA zone, no holes).
            let pages = size.0 / PAGE_SIZE;
            if pages >= memory_pages {
                return Err(cx.err(
                    ErrorKind::Impossible,
                    &path!["machine", "dma32"],
                    format!(
                        "machine.dma32 ({}) must be smaller than machine.memory ({}): the \
                         Normal zone would be empty",
                        format_bytes(pages * PAGE_SIZE),
                        format_bytes(memory_pages * PAGE_SIZE)
                    ),
                ));
            }
            let mut z = Vec::new();
            if pages > 0 {
                z.push(ZoneSpec::new(ZoneKind::Dma32, pages));
            }
            z.push(ZoneSpec::new(ZoneKind::Normal, memory_pages - pages));
            z
        }
        None => layout::x86_64_zones(memory_pages)
            .into_iter()
            .map(|(k, p)| ZoneSpec::new(k, p))
            .collect(),
    };
    let present: u64 = zones.iter().map(|z| z.pages).sum();
    if present == 0 {
        return Err(cx.err(
            ErrorKind::Impossible,
            &at,
            format!(
                "machine.memory ({}) leaves {present} usable pages after the x86-64 holes \
                 (pfn 0 and 640 KiB..1 MiB)",
                format_bytes(memory_pages * PAGE_SIZE)
            ),
        ));
    }
    match raw.kernel_reserved {
        None => {
            for z in &mut zones {
                z.reserved = layout::default_reserved(z.kind, z.pages);
            }
        }
        Some(size) => {
            if !layout::spread_reserved(&mut zones, size.0 / PAGE_SIZE) {
                return Err(cx.err(
                    ErrorKind::Impossible,
                    &path!["machine", "kernel_reserved"],
                    format!(
                        "machine.kernel_reserved ({}) leaves no zone a managed page ({} \
                         present)",
                        format_bytes(size.0),
                        format_bytes(present * PAGE_SIZE)
                    ),
                ));
            }
        }
    }
    if let Some(size) = raw.kernel_memory {
        if !layout::place_kernel_memory(&mut zones, size.0 / PAGE_SIZE) {
            let managed: u64 = zones.iter().map(|z| z.managed()).sum();
            return Err(cx.err(
                ErrorKind::Impossible,
                &path!["machine", "kernel_memory"],
                format!(
                    "machine.kernel_memory ({}) does not fit in the {} managed pages \
                     (every zone keeps a free page)",
                    format_bytes(size.0),
                    managed
                ),
            ));
        }
    }
    Ok(MachineSpec {
        memory_pages,
        cpus,
        zones,
        from_zoneinfo: None,
    })
}

/// `machine.from_zoneinfo`: zones, watermarks and protection of a real /proc/zoneinfo (see
/// [`crate::zoneinfo`]); the sizing keys do not combine with it.
fn machine_from_zoneinfo(raw: &RawMachine, file: &str, cpus: u32, cx: &Ctx) -> Result<MachineSpec> {
    let at = path!["machine", "from_zoneinfo"];
    for (given, key) in [
        (raw.memory.is_some(), "memory"),
        (raw.dma32.is_some(), "dma32"),
        (raw.kernel_reserved.is_some(), "kernel_reserved"),
        (raw.kernel_memory.is_some(), "kernel_memory"),
    ] {
        if given {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &path!["machine", key],
                format!(
                    "machine.{key} does not combine with machine.from_zoneinfo (the zoneinfo \
                     gives the zones)"
                ),
            ));
        }
    }
    let path = match std::path::Path::new(cx.origin).parent() {
        Some(dir) if std::path::Path::new(file).is_relative() => dir.join(file),
        _ => std::path::PathBuf::from(file),
    };
    let shown = path.display().to_string();
    let text = std::fs::read_to_string(&path).map_err(|e| {
        cx.err(
            ErrorKind::Io,
            &at,
            format!("machine.from_zoneinfo: cannot read {shown}: {e}"),
        )
    })?;
    let parsed = zoneinfo::parse(&text, &shown)?;
    let zones = zoneinfo::machine_zones(&parsed, &text, &shown)?;
    let memory_pages: u64 = zones.iter().map(|z| z.pages).sum();
    if memory_pages > MAX_PAGES - 2 {
        return Err(cx.err(
            ErrorKind::Impossible,
            &at,
            format!("{shown}: {memory_pages} present pages: pfns are 32-bit"),
        ));
    }
    Ok(MachineSpec {
        memory_pages,
        cpus,
        zones,
        from_zoneinfo: Some(file.to_string()),
    })
}

fn resolve_sysctl(
    raw: &BTreeMap<String, toml::Value>,
    memory_pages: u64,
    cx: &Ctx,
) -> Result<Sysctl> {
    let mut out = sysctl::defaults(memory_pages);
    for (name, value) in raw {
        let at = path!["sysctl", name.as_str()];
        let Some(def) = sysctl::lookup(name) else {
            let mut e = cx.err(
                ErrorKind::UnknownKey,
                &at,
                defs::unknown_sysctl_message(name),
            );
            if let Some(span) = cx.doc.locate_key(&at) {
                if !cx.overrides.iter().any(|(p, _)| at.starts_with(p)) {
                    e = ScenarioError::at(e.kind(), cx.origin, cx.text, span.start, e.message());
                }
            }
            return Err(e);
        };
        let Some(v) = value.as_integer() else {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &at,
                format!("{name} must be an integer, not a {}", value.type_str()),
            ));
        };
        def.check(v)
            .map_err(|msg| cx.err(ErrorKind::InvalidValue, &at, msg))?;
        def.apply(&mut out, v);
    }
    if let Some(kb) = out.min_free_kbytes {
        if kb * 1024 >= memory_pages * PAGE_SIZE {
            return Err(cx.err(
                ErrorKind::Impossible,
                &path!["sysctl", "vm.min_free_kbytes"],
                format!(
                    "vm.min_free_kbytes = {kb} reserves all of machine.memory ({})",
                    format_bytes(memory_pages * PAGE_SIZE)
                ),
            ));
        }
    }
    Ok(out)
}

fn resolve_devices(raw: Vec<RawDevice>, cx: &Ctx) -> Result<Vec<DeviceSpec>> {
    let mut seen = BTreeMap::new();
    let mut out = Vec::new();
    for (i, d) in raw.into_iter().enumerate() {
        let at = path!["device", i];
        let name = check_name(cx, d.name, &at, "device", &mut seen)?;
        let preset_name = d
            .preset
            .unwrap_or_else(|| defs::default("device", "preset"));
        let preset: &Preset = if preset_name == presets::CUSTOM.name {
            &presets::CUSTOM
        } else {
            presets::lookup(&preset_name).ok_or_else(|| {
                cx.err(
                    ErrorKind::InvalidValue,
                    &path!["device", i, "preset"],
                    format!(
                        "device `{name}`: unknown preset `{preset_name}` (known: {}, custom)",
                        presets::names()
                    ),
                )
            })?
        };
        let custom = preset.name == presets::CUSTOM.name;
        let bw = |v: Option<crate::size::Bandwidth>, key: &str, dflt: u64| -> Result<u64> {
            let at = path!["device", i, key];
            let bytes = match v {
                Some(b) => b.0,
                None if custom => {
                    return Err(cx.err(
                        ErrorKind::InvalidValue,
                        &at,
                        format!("device `{name}` has preset = \"custom\": {key} is required"),
                    ))
                }
                None => dflt,
            };
            if bytes == 0 {
                return Err(cx.err(
                    ErrorKind::Impossible,
                    &at,
                    format!("device `{name}`: {key} is 0, no IO could complete"),
                ));
            }
            Ok(bytes)
        };
        let read_bytes_per_sec = bw(d.read_bw, "read_bw", preset.read_bytes_per_sec)?;
        let write_bytes_per_sec = bw(d.write_bw, "write_bw", preset.write_bytes_per_sec)?;
        let queue_depth = d.queue_depth.unwrap_or(preset.queue_depth);
        if queue_depth == 0 {
            return Err(cx.err(
                ErrorKind::Impossible,
                &path!["device", i, "queue_depth"],
                format!("device `{name}`: queue_depth is 0, no IO could be issued"),
            ));
        }
        out.push(DeviceSpec {
            name,
            preset: preset.name.to_string(),
            latency_ns: d.latency.map_or(preset.latency_ns, |v| v.0),
            seek_ns: d.seek.map_or(preset.seek_ns, |v| v.0),
            read_bytes_per_sec,
            write_bytes_per_sec,
            queue_depth,
            rotational: d.rotational.unwrap_or(preset.rotational),
            synchronous: d.synchronous.unwrap_or(preset.synchronous),
            cpu_ns_per_page: d.cpu_per_page.map_or(preset.cpu_ns_per_page, |v| v.0),
            read_cpu_ns_per_page: None,
            wbt_lat_usec: d.wbt_lat_usec,
        });
    }
    Ok(out)
}

fn device_from_preset(name: &str, preset: &Preset) -> DeviceSpec {
    DeviceSpec {
        name: name.to_string(),
        preset: preset.name.to_string(),
        latency_ns: preset.latency_ns,
        seek_ns: preset.seek_ns,
        read_bytes_per_sec: preset.read_bytes_per_sec,
        write_bytes_per_sec: preset.write_bytes_per_sec,
        queue_depth: preset.queue_depth,
        rotational: preset.rotational,
        synchronous: preset.synchronous,
        cpu_ns_per_page: preset.cpu_ns_per_page,
        read_cpu_ns_per_page: None,
        wbt_lat_usec: None,
    }
}

fn find_device(devices: &[DeviceSpec], name: &str) -> Option<usize> {
    devices.iter().position(|d| d.name == name)
}

fn resolve_fs(raw: &RawFs, devices: &mut Vec<DeviceSpec>, cx: &Ctx) -> Result<usize> {
    if let Some(name) = &raw.device {
        return find_device(devices, name).ok_or_else(|| {
            cx.err(
                ErrorKind::UnknownReference,
                &path!["fs", "device"],
                format!(
                    "fs.device `{name}` is not a [[device]] (devices: {})",
                    list(devices.iter().map(|d| &d.name))
                ),
            )
        });
    }
    if let Some(i) = devices.iter().position(|d| d.preset != "zram") {
        return Ok(i);
    }
    const DEFAULT_DISK: &str = "disk";
    if find_device(devices, DEFAULT_DISK).is_some() {
        return Err(cx.err(
            ErrorKind::Impossible,
            &path!["fs"],
            "no device for the file system: every [[device]] is zram and the name `disk` is \
             taken; add a device for the files and name it in [fs] device",
        ));
    }
    let preset = presets::lookup("sata-ssd").expect("the sata-ssd preset exists");
    devices.push(device_from_preset(DEFAULT_DISK, preset));
    Ok(devices.len() - 1)
}

fn resolve_swap(raw: &RawSwap, devices: &[DeviceSpec], cx: &Ctx) -> Result<Vec<SwapSpec>> {
    let mut out: Vec<SwapSpec> = Vec::new();
    let mut next_default_prio = -2;
    for (i, a) in raw.area.iter().enumerate() {
        let at = path!["swap", "area", i];
        let dev_at = [at.as_slice(), &path!["device"]].concat();
        let name = cx.required(a.device.clone(), &dev_at, "swap.area device")?;
        let device = find_device(devices, &name).ok_or_else(|| {
            cx.err(
                ErrorKind::UnknownReference,
                &dev_at,
                format!(
                    "swap area on device `{name}`, which is not a [[device]] (devices: {})",
                    list(devices.iter().map(|d| &d.name))
                ),
            )
        })?;
        if out.iter().any(|s| s.device == device) {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &dev_at,
                format!("device `{name}` holds two swap areas; use one per device"),
            ));
        }
        let size_at = [at.as_slice(), &path!["size"]].concat();
        let bytes = cx.required(a.size, &size_at, "swap.area size")?.0;
        let size_pages = bytes / PAGE_SIZE;
        if size_pages == 0 {
            return Err(cx.err(
                ErrorKind::Impossible,
                &size_at,
                format!("swap area on `{name}` is smaller than one page"),
            ));
        }
        if size_pages > MAX_PAGES {
            return Err(cx.err(
                ErrorKind::Impossible,
                &size_at,
                format!("swap area on `{name}` is larger than 2^32 pages: swap offsets are 32-bit"),
            ));
        }
        let priority = match a.priority {
            Some(p) if !(0..=MAX_SWAP_PRIO).contains(&p) => {
                return Err(cx.err(
                    ErrorKind::InvalidValue,
                    &[at.as_slice(), &path!["priority"]].concat(),
                    format!("swap priority {p} is not in 0..={MAX_SWAP_PRIO}"),
                ))
            }
            Some(p) => p,
            None => {
                next_default_prio -= 1;
                next_default_prio + 1
            }
        };
        out.push(SwapSpec {
            device,
            size_pages,
            priority,
        });
    }
    // Highest priority first; equal priorities keep file order (stable sort).
    out.sort_by_key(|s| std::cmp::Reverse(s.priority));
    Ok(out)
}

fn resolve_policy(
    policy: &RawPolicy,
    lru_gen: &RawLruGen,
    thp: &RawThp,
    raw_swap: &RawSwap,
    devices: &[DeviceSpec],
    swap: &[SwapSpec],
    cx: &Ctx,
) -> Result<PolicySpec> {
    let lru = match (policy.lru, lru_gen.enabled) {
        (Some(LruKind::Classic), Some(true)) | (Some(LruKind::Mglru), Some(false)) => {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &path!["lru_gen", "enabled"],
                format!(
                    "lru_gen.enabled = {} contradicts policy.lru = \"{}\"",
                    lru_gen.enabled.unwrap_or_default(),
                    if policy.lru == Some(LruKind::Mglru) {
                        "mglru"
                    } else {
                        "classic"
                    }
                ),
            ))
        }
        (Some(lru), _) => lru,
        (None, Some(true)) => LruKind::Mglru,
        (None, _) => LruKind::Classic,
    };
    let balance = policy
        .balance
        .unwrap_or_else(|| defs::default("policy", "balance"));
    if lru == LruKind::Mglru && balance == BalanceKind::Legacy {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &path!["policy", "balance"],
            "policy.balance = \"legacy\" is the active/inactive LRU's anon/file balance; the \
             multi-gen LRU (policy.lru = \"mglru\") balances with its own refault controller",
        ));
    }
    let vma_ra_enabled: bool = raw_swap
        .vma_ra_enabled
        .unwrap_or_else(|| defs::default("swap", "vma_ra_enabled"));
    let rotational_swap = swap.iter().any(|s| devices[s.device].rotational);
    let swap_readahead = match raw_swap.readahead {
        Some(SwapReadaheadKind::Vma) if !vma_ra_enabled => {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &path!["swap", "readahead"],
                "swap.readahead = \"vma\" contradicts swap.vma_ra_enabled = false",
            ))
        }
        Some(kind) => kind,
        // swap_use_vma_readahead(): vma_ra_enabled && no rotational swap device.
        None if vma_ra_enabled && !rotational_swap => SwapReadaheadKind::Vma,
        None => SwapReadaheadKind::Cluster,
    };
    Ok(PolicySpec {
        lru,
        balance,
        swap_readahead,
        lru_gen_min_ttl_ms: lru_gen
            .min_ttl_ms
            .unwrap_or_else(|| defs::default("lru_gen", "min_ttl_ms")),
        kswapd_compaction: policy
            .kswapd_compaction
            .unwrap_or_else(|| defs::default("policy", "kswapd_compaction")),
        boosted_reclaim_skips_slab: policy
            .boosted_reclaim_skips_slab
            .unwrap_or_else(|| defs::default("policy", "boosted_reclaim_skips_slab")),
        thp_enabled: thp
            .enabled
            .unwrap_or_else(|| defs::default("transparent_hugepage", "enabled")),
        thp_defrag: thp
            .defrag
            .unwrap_or_else(|| defs::default("transparent_hugepage", "defrag")),
    })
}

fn resolve_cgroups(raw: Vec<RawCgroup>, memory_pages: u64, cx: &Ctx) -> Result<Vec<CgroupSpec>> {
    let mut seen = BTreeMap::new();
    let mut out = Vec::new();
    for (i, c) in raw.into_iter().enumerate() {
        let at = path!["cgroup", i];
        let name = check_name(cx, c.name, &at, "cgroup", &mut seen)?;
        let max_at = path!["cgroup", i, "memory.max"];
        let limit = c
            .memory_max
            .unwrap_or_else(|| defs::default("cgroup", "memory.max"));
        let memory_max_pages = match limit {
            Limit::Max => None,
            Limit::Bytes(b) => {
                let pages = b / PAGE_SIZE;
                if pages == 0 {
                    return Err(cx.err(
                        ErrorKind::Impossible,
                        &max_at,
                        format!("cgroup `{name}`: memory.max is less than one page"),
                    ));
                }
                if pages > memory_pages {
                    return Err(cx.err(
                        ErrorKind::Impossible,
                        &max_at,
                        format!(
                            "cgroup `{name}`: memory.max ({}) is larger than machine.memory ({})",
                            format_bytes(pages * PAGE_SIZE),
                            format_bytes(memory_pages * PAGE_SIZE)
                        ),
                    ));
                }
                Some(pages)
            }
        };
        if let Some(s) = c.memory_swappiness {
            if s > 200 {
                return Err(cx.err(
                    ErrorKind::InvalidValue,
                    &path!["cgroup", i, "memory.swappiness"],
                    format!("cgroup `{name}`: memory.swappiness = {s} is out of range (0..=200)"),
                ));
            }
        }
        let swap_max_pages = match c
            .memory_swap_max
            .unwrap_or_else(|| defs::default("cgroup", "memory.swap.max"))
        {
            Limit::Max => None,
            Limit::Bytes(b) => Some(b / PAGE_SIZE),
        };
        out.push(CgroupSpec {
            name,
            memory_max_pages,
            swappiness: c.memory_swappiness,
            swap_max_pages,
        });
    }
    Ok(out)
}

fn resolve_objects(raw: Vec<RawObject>, cx: &Ctx) -> Result<Vec<ObjectSpec>> {
    let mut seen = BTreeMap::new();
    let mut out = Vec::new();
    for (i, o) in raw.into_iter().enumerate() {
        let at = path!["object", i];
        let name = check_name(cx, o.name, &at, "object", &mut seen)?;
        let kind = cx.required(
            o.kind,
            &path!["object", i, "kind"],
            &format!("object `{name}`: kind"),
        )?;
        let size_at = path!["object", i, "size"];
        let bytes = cx
            .required(o.size, &size_at, &format!("object `{name}`: size"))?
            .0;
        let size_pages = bytes.div_ceil(PAGE_SIZE);
        if size_pages == 0 {
            return Err(cx.err(
                ErrorKind::Impossible,
                &size_at,
                format!("object `{name}` has size 0"),
            ));
        }
        // Page indices are 32-bit and the workload counts pages in a u32.
        if size_pages > MAX_PAGES - 1 {
            return Err(cx.err(
                ErrorKind::Impossible,
                &size_at,
                format!(
                    "object `{name}` ({}) is larger than 2^32 - 1 pages (16 TiB - 4 KiB): page \
                     indices are 32-bit",
                    format_bytes(bytes)
                ),
            ));
        }
        let exists = match (kind, o.exists) {
            (ObjectKind::File, e) => e.unwrap_or(true),
            (_, Some(_)) => {
                return Err(cx.err(
                    ErrorKind::InvalidValue,
                    &path!["object", i, "exists"],
                    format!("object `{name}`: exists applies to files only"),
                ))
            }
            (_, None) => false,
        };
        let madvise = match (kind, o.madvise) {
            (ObjectKind::Anon, m) => m.unwrap_or_default(),
            (_, None | Some(HugepageAdviceKind::None)) => HugepageAdviceKind::None,
            (_, Some(_)) => {
                return Err(cx.err(
                    ErrorKind::InvalidValue,
                    &path!["object", i, "madvise"],
                    format!(
                        "object `{name}`: madvise applies to anon objects only (THP for {} \
                         is not modelled)",
                        kind_name(kind)
                    ),
                ))
            }
        };
        let file_pages = match (kind, o.file_size) {
            (_, None) => 0,
            (ObjectKind::File, Some(s)) if s.0 > 0 => s.0.div_ceil(PAGE_SIZE).min(size_pages),
            (ObjectKind::File, Some(_)) => {
                return Err(cx.err(
                    ErrorKind::InvalidValue,
                    &path!["object", i, "file_size"],
                    format!("object `{name}`: file_size must be at least one byte"),
                ))
            }
            (_, Some(_)) => {
                return Err(cx.err(
                    ErrorKind::InvalidValue,
                    &path!["object", i, "file_size"],
                    format!("object `{name}`: file_size applies to files only"),
                ))
            }
        };
        let mlock = o.mlock.unwrap_or(false);
        if mlock && kind == ObjectKind::File {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &path!["object", i, "mlock"],
                format!("object `{name}`: mlock applies to anon and shmem objects"),
            ));
        }
        out.push(ObjectSpec {
            name,
            kind,
            size_pages,
            exists,
            file_pages,
            madvise,
            mlock,
        });
    }
    Ok(out)
}

fn kind_name(kind: ObjectKind) -> &'static str {
    match kind {
        ObjectKind::Anon => "anon",
        ObjectKind::Shmem => "shmem",
        ObjectKind::File => "file",
    }
}

fn access_name(access: Access) -> &'static str {
    match access {
        Access::Touch => "touch",
        Access::TouchWrite => "touch-write",
        Access::Read => "read",
        Access::Write => "write",
        Access::Create => "create",
    }
}

/// Looks up an object by name for `who`, checking its kind is one of `kinds`.
fn object_ref(
    objects: &[ObjectSpec],
    name: Option<String>,
    at: &[Seg],
    who: &str,
    key: &str,
    kinds: &[ObjectKind],
    cx: &Ctx,
) -> Result<usize> {
    let name = cx.required(name, at, &format!("{who}: {key}"))?;
    let index = objects.iter().position(|o| o.name == name).ok_or_else(|| {
        cx.err(
            ErrorKind::UnknownReference,
            at,
            format!(
                "{who}: unknown object `{name}` (objects: {})",
                list(objects.iter().map(|o| &o.name))
            ),
        )
    })?;
    let kind = objects[index].kind;
    if !kinds.contains(&kind) {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            at,
            format!(
                "{who}: {key} must be a {} object, but `{name}` is {}",
                kinds
                    .iter()
                    .map(|&k| kind_name(k))
                    .collect::<Vec<_>>()
                    .join(" or "),
                kind_name(kind)
            ),
        ));
    }
    Ok(index)
}

fn resolve_tasks(
    raw: Vec<RawTask>,
    cgroups: &[CgroupSpec],
    objects: &[ObjectSpec],
    run: &RunSpec,
    traces: &mut BTreeMap<usize, TraceSpec>,
    cx: &Ctx,
) -> Result<Vec<TaskSpec>> {
    let mut seen = BTreeMap::new();
    let mut out = Vec::new();
    for (i, t) in raw.into_iter().enumerate() {
        let at = path!["task", i];
        let name = check_name(cx, t.name, &at, "task", &mut seen)?;
        let who = format!("task `{name}`");
        let cgroup = match &t.cgroup {
            None => None,
            Some(c) => Some(cgroups.iter().position(|g| &g.name == c).ok_or_else(|| {
                cx.err(
                    ErrorKind::UnknownReference,
                    &path!["task", i, "cgroup"],
                    format!(
                        "{who}: unknown cgroup `{c}` (cgroups: {})",
                        list(cgroups.iter().map(|g| &g.name))
                    ),
                )
            })?),
        };
        let instances = t
            .instances
            .unwrap_or_else(|| defs::default("task", "instances"));
        if instances == 0 {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &path!["task", i, "instances"],
                format!("{who}: instances = 0; remove the task instead"),
            ));
        }
        let start_ns = t.start.unwrap_or_else(|| defs::default("task", "start")).0;

        let tables: Vec<WorkloadName> = [
            (t.pgbench.is_some(), WorkloadName::Pgbench),
            (t.memcached.is_some(), WorkloadName::Memcached),
            (t.copy.is_some(), WorkloadName::Copy),
            (t.kalloc.is_some(), WorkloadName::Kalloc),
            (t.process.is_some(), WorkloadName::Process),
        ]
        .into_iter()
        .filter_map(|(present, w)| present.then_some(w))
        .collect();
        let kind = match (t.workload, tables.as_slice()) {
            (Some(w), _) => w,
            (None, []) => WorkloadName::Phases,
            (None, [w]) => *w,
            (None, _) => {
                return Err(cx.err(
                    ErrorKind::InvalidValue,
                    &at,
                    format!(
                        "{who} has tables for several workloads ({}); keep one",
                        tables
                            .iter()
                            .map(|w| w.as_str())
                            .collect::<Vec<_>>()
                            .join(", ")
                    ),
                ))
            }
        };
        let workload_at = path!["task", i, "workload"];
        if let Some(other) = tables.iter().find(|&&w| w != kind) {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &path!["task", i, other.as_str()],
                format!(
                    "{who}: [task.{}] does not apply to workload = \"{}\"",
                    other.as_str(),
                    kind.as_str()
                ),
            ));
        }
        if kind != WorkloadName::Phases {
            if !t.phase.is_empty() {
                return Err(cx.err(
                    ErrorKind::InvalidValue,
                    &path!["task", i, "phase"],
                    format!(
                        "{who}: [[task.phase]] does not apply to workload = \"{}\"",
                        kind.as_str()
                    ),
                ));
            }
            if t.repeat.is_some() {
                return Err(cx.err(
                    ErrorKind::InvalidValue,
                    &path!["task", i, "repeat"],
                    format!("{who}: repeat applies to workload = \"phases\" only"),
                ));
            }
        }
        let forever = |what: &str| -> Result<()> {
            if run.duration_ns == 0 {
                return Err(cx.err(
                    ErrorKind::Impossible,
                    &at,
                    format!(
                        "{who} runs until the run's duration ({what} = 0) but run.duration is \
                         0 (until every task has finished): the run would never end"
                    ),
                ));
            }
            Ok(())
        };
        let workload = match kind {
            WorkloadName::Phases => {
                if t.phase.is_empty() {
                    return Err(cx.err(
                        ErrorKind::InvalidValue,
                        &workload_at,
                        format!("{who} has no [[task.phase]] and no emulation table"),
                    ));
                }
                let repeat = t.repeat.unwrap_or_else(|| defs::default("task", "repeat"));
                if repeat == 0 {
                    forever("repeat")?;
                }
                if let Some(mut spec) = traces.remove(&i) {
                    spec.repeat = repeat;
                    out.push(TaskSpec {
                        name,
                        cgroup,
                        instances,
                        start_ns,
                        workload: Workload::Trace(spec),
                    });
                    continue;
                }
                let mut phases = Vec::new();
                let mut seen_phases = BTreeMap::new();
                for (j, p) in t.phase.into_iter().enumerate() {
                    let phase = resolve_phase(p, i, j, &who, objects, cx)?;
                    if seen_phases.insert(phase.name.clone(), ()).is_some() {
                        return Err(cx.err(
                            ErrorKind::InvalidValue,
                            &path!["task", i, "phase", j, "name"],
                            format!("{who}: phase `{}` is defined twice", phase.name),
                        ));
                    }
                    phases.push(phase);
                }
                Workload::Phases { phases, repeat }
            }
            WorkloadName::Pgbench => {
                let p = t
                    .pgbench
                    .ok_or_else(|| missing_table(cx, &workload_at, &who, kind))?;
                let sec = "task.pgbench";
                let at = |k: &str| path!["task", i, "pgbench", k];
                let spec = PgbenchSpec {
                    shared_buffers: object_ref(
                        objects,
                        p.shared_buffers,
                        &at("shared_buffers"),
                        &who,
                        "shared_buffers",
                        &[ObjectKind::Shmem],
                        cx,
                    )?,
                    database: object_ref(
                        objects,
                        p.database,
                        &at("database"),
                        &who,
                        "database",
                        &[ObjectKind::File],
                        cx,
                    )?,
                    wal: object_ref(
                        objects,
                        p.wal,
                        &at("wal"),
                        &who,
                        "wal",
                        &[ObjectKind::File],
                        cx,
                    )?,
                    transactions: p
                        .transactions
                        .unwrap_or_else(|| defs::default(sec, "transactions")),
                    zipf_s: cx.exponent(
                        p.zipf_s.unwrap_or_else(|| defs::default(sec, "zipf_s")),
                        &at("zipf_s"),
                        "zipf_s",
                    )?,
                    think_ns: p.think.unwrap_or_else(|| defs::default(sec, "think")).0,
                };
                if spec.database == spec.wal {
                    return Err(cx.err(
                        ErrorKind::InvalidValue,
                        &at("wal"),
                        format!("{who}: wal and database are the same file"),
                    ));
                }
                if spec.transactions == 0 {
                    forever("transactions")?;
                }
                Workload::Pgbench(spec)
            }
            WorkloadName::Memcached => {
                let m = t
                    .memcached
                    .ok_or_else(|| missing_table(cx, &workload_at, &who, kind))?;
                let sec = "task.memcached";
                let at = |k: &str| path!["task", i, "memcached", k];
                let spec = MemcachedSpec {
                    items: object_ref(
                        objects,
                        m.items,
                        &at("items"),
                        &who,
                        "items",
                        &[ObjectKind::Anon],
                        cx,
                    )?,
                    fill: m.fill.unwrap_or_else(|| defs::default(sec, "fill")),
                    requests: m.requests.unwrap_or_else(|| defs::default(sec, "requests")),
                    set_fraction: cx.fraction(
                        m.set_fraction
                            .unwrap_or_else(|| defs::default(sec, "set_fraction")),
                        &at("set_fraction"),
                        "set_fraction",
                    )?,
                    zipf_s: cx.exponent(
                        m.zipf_s.unwrap_or_else(|| defs::default(sec, "zipf_s")),
                        &at("zipf_s"),
                        "zipf_s",
                    )?,
                    pages_per_request: m
                        .pages_per_request
                        .unwrap_or_else(|| defs::default(sec, "pages_per_request")),
                    think_ns: m.think.unwrap_or_else(|| defs::default(sec, "think")).0,
                    item_size: m
                        .item_size
                        .unwrap_or_else(|| defs::default(sec, "item_size")),
                    hashtable: match m.hashtable {
                        None => None,
                        Some(name) => Some(object_ref(
                            objects,
                            Some(name),
                            &at("hashtable"),
                            &who,
                            "hashtable",
                            &[ObjectKind::Anon],
                            cx,
                        )?),
                    },
                };
                if spec.item_size != 0 {
                    if m.pages_per_request.is_some() {
                        return Err(cx.err(
                            ErrorKind::InvalidValue,
                            &at("item_size"),
                            format!(
                                "{who}: item_size and pages_per_request both given; set one (item_size decides the pages a request touches)"
                            ),
                        ));
                    }
                    if u64::from(spec.item_size) > MEMCACHED_SLAB_PAGE
                        || objects[spec.items].size_pages * PAGE_SIZE < MEMCACHED_SLAB_PAGE
                    {
                        return Err(cx.err(
                            ErrorKind::Impossible,
                            &at("item_size"),
                            format!(
                                "{who}: item_size needs an item memory of at least one 1 MiB slab page and chunks of at most 1 MiB"
                            ),
                        ));
                    }
                }
                if spec.pages_per_request == 0 {
                    return Err(cx.err(
                        ErrorKind::InvalidValue,
                        &at("pages_per_request"),
                        format!("{who}: pages_per_request must be at least 1"),
                    ));
                }
                if u64::from(spec.pages_per_request) > objects[spec.items].size_pages {
                    return Err(cx.err(
                        ErrorKind::Impossible,
                        &at("pages_per_request"),
                        format!("{who}: pages_per_request is larger than the item memory"),
                    ));
                }
                if let Some(table) = spec.hashtable {
                    let slots = memcached_slots(
                        objects[spec.items].size_pages,
                        spec.pages_per_request,
                        spec.item_size,
                    );
                    let need = (8u64 << memcached_hashpower(slots)).div_ceil(PAGE_SIZE);
                    if objects[table].size_pages < need || table == spec.items {
                        return Err(cx.err(
                            ErrorKind::Impossible,
                            &at("hashtable"),
                            format!(
                                "{who}: hashtable must be an object apart from the items of at least {} KiB (8 bytes per bucket, 2^{} buckets for {slots} items)",
                                need * PAGE_SIZE / 1024,
                                memcached_hashpower(slots)
                            ),
                        ));
                    }
                }
                if spec.requests == 0 {
                    forever("requests")?;
                }
                Workload::Memcached(spec)
            }
            WorkloadName::Copy => {
                let c = t
                    .copy
                    .ok_or_else(|| missing_table(cx, &workload_at, &who, kind))?;
                let sec = "task.copy";
                let at = |k: &str| path!["task", i, "copy", k];
                let spec = CopySpec {
                    src: object_ref(
                        objects,
                        c.src,
                        &at("src"),
                        &who,
                        "src",
                        &[ObjectKind::File],
                        cx,
                    )?,
                    dst: object_ref(
                        objects,
                        c.dst,
                        &at("dst"),
                        &who,
                        "dst",
                        &[ObjectKind::File],
                        cx,
                    )?,
                    chunk_pages: c
                        .chunk_pages
                        .unwrap_or_else(|| defs::default(sec, "chunk_pages")),
                    passes: c.passes.unwrap_or_else(|| defs::default(sec, "passes")),
                    fsync: c.fsync.unwrap_or_else(|| defs::default(sec, "fsync")),
                    think_ns: c.think.unwrap_or_else(|| defs::default(sec, "think")).0,
                };
                if spec.src == spec.dst {
                    return Err(cx.err(
                        ErrorKind::InvalidValue,
                        &at("dst"),
                        format!("{who}: src and dst are the same file"),
                    ));
                }
                if objects[spec.dst].size_pages < objects[spec.src].size_pages {
                    return Err(cx.err(
                        ErrorKind::Impossible,
                        &at("dst"),
                        format!(
                            "{who}: dst `{}` is smaller than src `{}`",
                            objects[spec.dst].name, objects[spec.src].name
                        ),
                    ));
                }
                if spec.chunk_pages == 0 {
                    return Err(cx.err(
                        ErrorKind::InvalidValue,
                        &at("chunk_pages"),
                        format!("{who}: chunk_pages must be at least 1"),
                    ));
                }
                if spec.passes == 0 {
                    forever("passes")?;
                }
                Workload::Copy(spec)
            }
            WorkloadName::Kalloc => {
                let c = t
                    .kalloc
                    .ok_or_else(|| missing_table(cx, &workload_at, &who, kind))?;
                let sec = "task.kalloc";
                let at = |k: &str| path!["task", i, "kalloc", k];
                let spec = KallocSpec {
                    order: c.order.unwrap_or_else(|| defs::default(sec, "order")),
                    count: c.count.unwrap_or_else(|| defs::default(sec, "count")),
                    gfp: c.gfp.unwrap_or_else(|| defs::default(sec, "gfp")),
                    migratetype: c
                        .migratetype
                        .unwrap_or_else(|| defs::default(sec, "migratetype")),
                    live: c.live.unwrap_or_else(|| defs::default(sec, "live")),
                    think_ns: c.think.unwrap_or_else(|| defs::default(sec, "think")).0,
                };
                if spec.order > 10 {
                    return Err(cx.err(
                        ErrorKind::InvalidValue,
                        &at("order"),
                        format!("{who}: order = {} is above MAX_PAGE_ORDER (10)", spec.order),
                    ));
                }
                if spec.count == 0 {
                    forever("count")?;
                }
                Workload::Kalloc(spec)
            }
            WorkloadName::Process => {
                let c = t
                    .process
                    .ok_or_else(|| missing_table(cx, &workload_at, &who, kind))?;
                let sec = "task.process";
                let at = |k: &str| path!["task", i, "process", k];
                let spec = ProcessSpec {
                    object: object_ref(
                        objects,
                        c.object,
                        &at("object"),
                        &who,
                        "object",
                        &[ObjectKind::Anon],
                        cx,
                    )?,
                    count: c.count.unwrap_or_else(|| defs::default(sec, "count")),
                    ops: c.ops.unwrap_or_else(|| defs::default(sec, "ops")),
                    think_ns: c.think.unwrap_or_else(|| defs::default(sec, "think")).0,
                };
                if instances > 1 {
                    return Err(cx.err(
                        ErrorKind::InvalidValue,
                        &path!["task", i, "instances"],
                        format!(
                            "{who}: instances = {instances}, but each process needs its own \
                             address space: declare one object and one task per concurrent \
                             process"
                        ),
                    ));
                }
                if spec.ops == 0 {
                    return Err(cx.err(
                        ErrorKind::InvalidValue,
                        &at("ops"),
                        format!("{who}: ops must be at least 1"),
                    ));
                }
                if objects[spec.object].size_pages > u32::MAX as u64 {
                    return Err(cx.err(
                        ErrorKind::Impossible,
                        &at("object"),
                        format!("{who}: object `{}` is too large", objects[spec.object].name),
                    ));
                }
                if spec.count == 0 {
                    forever("count")?;
                }
                Workload::Process(spec)
            }
        };
        out.push(TaskSpec {
            name,
            cgroup,
            instances,
            start_ns,
            workload,
        });
    }
    Ok(out)
}

fn missing_table(cx: &Ctx, at: &[Seg], who: &str, kind: WorkloadName) -> ScenarioError {
    cx.err(
        ErrorKind::InvalidValue,
        at,
        format!(
            "{who} has workload = \"{0}\" but no [task.{0}] table",
            kind.as_str()
        ),
    )
}

fn resolve_phase(
    p: RawPhase,
    i: usize,
    j: usize,
    task: &str,
    objects: &[ObjectSpec],
    cx: &Ctx,
) -> Result<PhaseSpec> {
    if p.mix.is_some() {
        return resolve_mix_phase(p, i, j, task, objects, cx);
    }
    resolve_phase_at(p, &path!["task", i, "phase", j], j, task, objects, cx)
}

/// A phase with `mix = [...]`: each entry is resolved as a one-object phase would be (its
/// keys, defaults and errors, positioned at `mix[m]`), the phase keeps `ops`, `think`,
/// `advice` and `name`.
fn resolve_mix_phase(
    mut p: RawPhase,
    i: usize,
    j: usize,
    task: &str,
    objects: &[ObjectSpec],
    cx: &Ctx,
) -> Result<PhaseSpec> {
    let at = |k: &str| path!["task", i, "phase", j, k];
    let name = p.name.clone().unwrap_or_else(|| format!("phase{j}"));
    let who = format!("{task} phase `{name}`");
    let per_entry = [
        (p.access.is_some(), "access"),
        (p.object.is_some(), "object"),
        (p.pattern.is_some(), "pattern"),
        (p.zipf_s.is_some(), "zipf_s"),
        (p.scatter.is_some(), "scatter"),
        (p.hot_fraction.is_some(), "hot_fraction"),
        (p.hot_probability.is_some(), "hot_probability"),
        (p.range.is_some(), "range"),
        (p.pages_per_op.is_some(), "pages_per_op"),
        (p.write_fraction.is_some(), "write_fraction"),
        (p.fsync.is_some(), "fsync"),
    ];
    if let Some((_, k)) = per_entry.iter().find(|(given, _)| *given) {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &at(k),
            format!(
                "{who}: {k} goes in each entry of the phase's mix (fsync is not supported in a mix)"
            ),
        ));
    }
    let entries = p.mix.take().unwrap_or_default();
    if entries.is_empty() {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &at("mix"),
            format!("{who}: mix is empty"),
        ));
    }
    let mut mix = Vec::with_capacity(entries.len());
    let mut first: Option<PhaseSpec> = None;
    let mut default_ops = 0u64;
    for (m, e) in entries.into_iter().enumerate() {
        let prefix = path!["task", i, "phase", j, "mix", m];
        let mat = |k: &str| path!["task", i, "phase", j, "mix", m, k];
        if e.zipf_s.is_some() && e.skew.is_some() {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &mat("skew"),
                format!("{who}: mix[{m}] gives both zipf_s and skew (the same key)"),
            ));
        }
        let weight = e.weight.unwrap_or(1.0);
        if !(weight.is_finite() && weight > 0.0) {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &mat("weight"),
                format!("{who}: mix[{m}].weight = {weight} must be positive"),
            ));
        }
        let raw = RawPhase {
            name: Some(name.clone()),
            access: e.access,
            object: e.object,
            pattern: e.pattern,
            zipf_s: e.zipf_s.or(e.skew),
            scatter: e.scatter,
            hot_fraction: e.hot_fraction,
            hot_probability: e.hot_probability,
            range: e.range,
            ops: Some(1),
            pages_per_op: e.pages_per_op,
            write_fraction: e.write_fraction,
            advice: Some(Advice::Normal),
            ..RawPhase::default()
        };
        let ps = resolve_phase_at(raw, &prefix, j, task, objects, cx)?;
        if ps.access == Access::Create {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &mat("access"),
                format!(
                    "{who}: mix[{m}].access = \"create\": file creation is a phase of its own \
                     (sequential, one file size per directory), not a mix entry"
                ),
            ));
        }
        default_ops = default_ops
            .saturating_add((ps.end_page - ps.start_page).div_ceil(u64::from(ps.pages_per_op)));
        mix.push(MixSpec {
            object: ps.object,
            access: ps.access,
            pattern: ps.pattern.clone(),
            start_page: ps.start_page,
            end_page: ps.end_page,
            pages_per_op: ps.pages_per_op,
            write_fraction: ps.write_fraction,
            weight,
        });
        first.get_or_insert(ps);
    }
    let ops = match p.ops {
        Some(0) => {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &at("ops"),
                format!("{who}: ops = 0; remove the phase instead"),
            ))
        }
        Some(n) => n,
        None => default_ops,
    };
    let first = first.expect("mix is not empty");
    Ok(PhaseSpec {
        name,
        ops,
        think_ns: p
            .think
            .unwrap_or_else(|| defs::default("task.phase", "think"))
            .0,
        advice: p.advice.unwrap_or(Advice::Normal),
        fsync: false,
        mix,
        ..first
    })
}

fn resolve_phase_at(
    p: RawPhase,
    prefix: &[Seg],
    j: usize,
    task: &str,
    objects: &[ObjectSpec],
    cx: &Ctx,
) -> Result<PhaseSpec> {
    const SEC: &str = "task.phase";
    let at = |k: &str| -> Vec<Seg> {
        let mut v = prefix.to_vec();
        v.push(Seg::from(k));
        v
    };
    let name = p.name.unwrap_or_else(|| format!("phase{j}"));
    let who = format!("{task} phase `{name}`");
    let access = cx.required(p.access, &at("access"), &format!("{who}: access"))?;
    let allowed: &[ObjectKind] = match access {
        Access::Read | Access::Write | Access::Create => &[ObjectKind::File],
        Access::Touch | Access::TouchWrite => {
            &[ObjectKind::Anon, ObjectKind::Shmem, ObjectKind::File]
        }
    };
    let object_name = p.object.clone();
    let object = object_ref(
        objects,
        p.object,
        &at("object"),
        &who,
        "object",
        &[ObjectKind::Anon, ObjectKind::Shmem, ObjectKind::File],
        cx,
    )?;
    let obj = &objects[object];
    if !allowed.contains(&obj.kind) {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &at("access"),
            format!(
                "{who}: access = \"{}\" is read()/write() on a file, but object `{}` is {}; use \
                 \"touch\" or \"touch-write\"",
                access_name(access),
                object_name.unwrap_or_default(),
                kind_name(obj.kind)
            ),
        ));
    }

    let pattern_name = p.pattern.unwrap_or_else(|| defs::default(SEC, "pattern"));
    let only = |given: bool, key: &str, wanted: PatternName| -> Result<()> {
        if given && pattern_name != wanted {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &at(key),
                format!(
                    "{who}: {key} applies to pattern = \"{}\" only, not \"{}\"",
                    wanted.as_str(),
                    pattern_name.as_str()
                ),
            ));
        }
        Ok(())
    };
    only(p.zipf_s.is_some(), "zipf_s", PatternName::Zipf)?;
    only(p.scatter.is_some(), "scatter", PatternName::Zipf)?;
    only(
        p.hot_fraction.is_some(),
        "hot_fraction",
        PatternName::HotCold,
    )?;
    only(
        p.hot_probability.is_some(),
        "hot_probability",
        PatternName::HotCold,
    )?;
    let pattern = match pattern_name {
        PatternName::Sequential => Pattern::Sequential,
        PatternName::Random => Pattern::Random,
        PatternName::Zipf => Pattern::Zipf {
            s: cx.exponent(
                p.zipf_s.unwrap_or_else(|| defs::default(SEC, "zipf_s")),
                &at("zipf_s"),
                "zipf_s",
            )?,
            scatter: p.scatter.unwrap_or_else(|| defs::default(SEC, "scatter")),
        },
        PatternName::HotCold => {
            let hot_fraction: f64 = p
                .hot_fraction
                .unwrap_or_else(|| defs::default(SEC, "hot_fraction"));
            if !(hot_fraction > 0.0 && hot_fraction < 1.0) {
                return Err(cx.err(
                    ErrorKind::InvalidValue,
                    &at("hot_fraction"),
                    format!("{who}: hot_fraction = {hot_fraction} is not in (0, 1)"),
                ));
            }
            Pattern::HotCold {
                hot_fraction,
                hot_probability: cx.fraction(
                    p.hot_probability
                        .unwrap_or_else(|| defs::default(SEC, "hot_probability")),
                    &at("hot_probability"),
                    "hot_probability",
                )?,
            }
        }
    };

    let (start_page, end_page) = match p.range {
        None => (0, obj.size_pages),
        Some((start, end)) => {
            let (s, e) = (start.0 / PAGE_SIZE, end.0.div_ceil(PAGE_SIZE));
            if e <= s {
                return Err(cx.err(
                    ErrorKind::InvalidValue,
                    &at("range"),
                    format!(
                        "{who}: range [{}, {}) is empty",
                        format_bytes(start.0),
                        format_bytes(end.0)
                    ),
                ));
            }
            if e > obj.size_pages {
                return Err(cx.err(
                    ErrorKind::Impossible,
                    &at("range"),
                    format!(
                        "{who}: range [{}, {}) is outside object `{}` ({})",
                        format_bytes(start.0),
                        format_bytes(end.0),
                        obj.name,
                        format_bytes(obj.size_pages * PAGE_SIZE)
                    ),
                ));
            }
            (s, e)
        }
    };
    let len = end_page - start_page;
    let pages_per_op: u32 = p
        .pages_per_op
        .unwrap_or_else(|| defs::default(SEC, "pages_per_op"));
    if pages_per_op == 0 {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &at("pages_per_op"),
            format!("{who}: pages_per_op must be at least 1"),
        ));
    }
    if u64::from(pages_per_op) > len {
        return Err(cx.err(
            ErrorKind::Impossible,
            &at("pages_per_op"),
            format!(
                "{who}: pages_per_op = {pages_per_op} is more than the {len} pages of the range"
            ),
        ));
    }
    let ops = match p.ops {
        Some(0) => {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &at("ops"),
                format!("{who}: ops = 0; remove the phase instead"),
            ))
        }
        Some(n) => n,
        None => len.div_ceil(u64::from(pages_per_op)),
    };
    if p.write_fraction.is_some() && access != Access::Touch {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &at("write_fraction"),
            format!("{who}: write_fraction applies to access = \"touch\" only"),
        ));
    }
    let write_fraction = cx.fraction(
        p.write_fraction
            .unwrap_or_else(|| defs::default(SEC, "write_fraction")),
        &at("write_fraction"),
        "write_fraction",
    )?;
    let fsync = p.fsync.unwrap_or_else(|| defs::default(SEC, "fsync"));
    if fsync && obj.kind != ObjectKind::File {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &at("fsync"),
            format!(
                "{who}: fsync needs a file, but `{}` is {}",
                obj.name,
                kind_name(obj.kind)
            ),
        ));
    }
    if access == Access::Create {
        if pattern_name != PatternName::Sequential {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &at("pattern"),
                format!(
                    "{who}: access = \"create\" creates the files in order; pattern must be \
                     \"sequential\""
                ),
            ));
        }
        if start_page % u64::from(pages_per_op) != 0 {
            return Err(cx.err(
                ErrorKind::Impossible,
                &at("range"),
                format!(
                    "{who}: access = \"create\" cuts the object into files of pages_per_op = \
                     {pages_per_op} pages; the range must start at a file boundary"
                ),
            ));
        }
    }
    let advice = p
        .advice
        .unwrap_or_else(|| default_advice(pattern_name, obj.kind));
    Ok(PhaseSpec {
        name,
        access,
        object,
        pattern,
        start_page,
        end_page,
        ops,
        pages_per_op,
        write_fraction,
        think_ns: p.think.unwrap_or_else(|| defs::default(SEC, "think")).0,
        advice,
        fsync,
        mix: Vec::new(),
    })
}

/// A generated phase's `advice` when the scenario gives none. Memory (anon and shmem objects)
/// gets the kernel's default, MADV_NORMAL, whatever the pattern: a program does not madvise()
/// its heap, so its page-table references count in reclaim (`folio_referenced()`,
/// `vma_has_recency()`) and swap-in and fault-around read ahead as normal. A file phase with a
/// random, zipf or hot-cold pattern gets random (POSIX_FADV_RANDOM / MADV_RANDOM), what fio
/// does for random I/O (`fadvise_hint`, on by default); a sequential one gets normal.
fn default_advice(pattern: PatternName, kind: ObjectKind) -> Advice {
    match (pattern, kind) {
        (_, ObjectKind::Anon | ObjectKind::Shmem) | (PatternName::Sequential, _) => Advice::Normal,
        _ => Advice::Random,
    }
}

/// The first kernel whose ext4 builds large page-cache folios (v6.16): the default of
/// `model.max_file_folio_order` is 9 from it on and 0 before.
pub const EXT4_LARGE_FOLIOS: (u16, u16) = (6, 16);

/// ext4's largest page-cache folio order from v6.16 on: `ext4_set_inode_mapping_order()`
/// allows up to the PMD order, 9 on x86-64 (2 MiB).
pub const EXT4_MAX_FOLIO_ORDER: u32 = 9;

/// The default of `model.max_file_folio_order` for kernel `version` (MAJOR, MINOR): ext4's
/// largest page-cache folio order, [`EXT4_MAX_FOLIO_ORDER`] from [`EXT4_LARGE_FOLIOS`] on
/// and 0 before.
pub fn default_file_folio_order(version: (u16, u16)) -> u32 {
    if version >= EXT4_LARGE_FOLIOS {
        EXT4_MAX_FOLIO_ORDER
    } else {
        0
    }
}

/// [`default_file_folio_order`] of a normalised "MAJOR.MINOR" `model.kernel`.
pub fn default_file_folio_order_of(kernel: &str) -> Option<u32> {
    kernel_version_numbers(kernel).map(default_file_folio_order)
}

/// (MAJOR, MINOR) of a normalised "MAJOR.MINOR" `model.kernel` ([`parse_kernel_version`]'s
/// output).
fn kernel_version_numbers(kernel: &str) -> Option<(u16, u16)> {
    let (major, minor) = kernel.split_once('.')?;
    Some((major.parse().ok()?, minor.parse().ok()?))
}

/// `model.kernel`: "MAJOR.MINOR" (a release string such as "6.1.0-50-cloud-amd64" is cut to
/// its version), 4.4 or later (the oldest kernel a rule describes: v4.4's kswapd compaction;
/// kcompactd needs 4.6 and the multi-gen LRU 6.1, checked with the policy); returns it
/// normalised ("6.1"), or None.
pub fn parse_kernel_version(s: &str) -> Option<String> {
    let mut it = s.trim().splitn(3, '.');
    let major: u16 = it.next()?.parse().ok()?;
    let rest = it.next()?;
    let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
    if digits.is_empty() || (digits.len() < rest.len() && !rest[digits.len()..].starts_with('-')) {
        return None;
    }
    let minor: u16 = digits.parse().ok()?;
    ((major, minor) >= (4, 4)).then(|| format!("{major}.{minor}"))
}

fn resolve_model(
    raw: &RawModel,
    lru: LruKind,
    kswapd_compaction: KswapdCompactionKind,
    cx: &Ctx,
) -> Result<(CostTable, ModelKnobs)> {
    let readahead_kb: u64 = raw
        .readahead_kb
        .unwrap_or_else(|| defs::default("model", "readahead_kb"));
    let readahead_max_pages = u32::try_from(readahead_kb / (PAGE_SIZE / 1024)).map_err(|_| {
        cx.err(
            ErrorKind::InvalidValue,
            &path!["model", "readahead_kb"],
            format!("model.readahead_kb = {readahead_kb} is too large"),
        )
    })?;
    let cgroup_version: u32 = raw
        .cgroup_version
        .unwrap_or_else(|| defs::default("model", "cgroup_version"));
    if !(1..=2).contains(&cgroup_version) {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &path!["model", "cgroup_version"],
            format!("model.cgroup_version = {cgroup_version}: must be 1 or 2"),
        ));
    }
    let memcg_stats_flush_ns = raw
        .memcg_stats_flush_ms
        .unwrap_or_else(|| defs::default("model", "memcg_stats_flush_ms"))
        .saturating_mul(1_000_000);
    let memcg_stats_first_flush_ns = raw
        .memcg_stats_first_flush_ms
        .map_or(memcg_stats_flush_ns / 2, |ms| ms.saturating_mul(1_000_000));
    let kernel: String = raw
        .kernel
        .clone()
        .unwrap_or_else(|| defs::default("model", "kernel"));
    let kernel = parse_kernel_version(&kernel).ok_or_else(|| {
        cx.err(
            ErrorKind::InvalidValue,
            &path!["model", "kernel"],
            format!(
                "model.kernel = {kernel:?}: must be a kernel version \"MAJOR.MINOR\" of 4.4 or \
                 later (the oldest kernel the model's rules describe), such as \"4.6\", \"5.3\", \
                 \"6.1\" or \"6.18\""
            ),
        )
    })?;
    // `kernel` is normalised "MAJOR.MINOR" here.
    let version = kernel_version_numbers(&kernel).expect("normalised MAJOR.MINOR");
    // ext4 builds large page-cache folios since v6.16 ("ext4: enable large folio for
    // regular file": `ext4_set_inode_mapping_order()`); before, every folio of a regular
    // file is order 0 whatever readahead asks (`mapping_large_folio_support()` is false, so
    // `page_cache_ra_order()` falls back to `do_page_cache_ra()`). The VM twin's 6.1 guest
    // confirms it: every folio of its file streams was order 0.
    let max_file_folio_order: u32 = raw
        .max_file_folio_order
        .unwrap_or_else(|| default_file_folio_order(version));
    if max_file_folio_order > MAX_PAGE_ORDER {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &path!["model", "max_file_folio_order"],
            format!("model.max_file_folio_order = {max_file_folio_order} is above MAX_PAGE_ORDER ({MAX_PAGE_ORDER})"),
        ));
    }
    if lru == LruKind::Mglru && version < (6, 1) {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &path!["model", "kernel"],
            format!(
                "model.kernel = {kernel:?} with policy.lru = \"mglru\": the multi-gen LRU's first \
                 release is 6.1"
            ),
        ));
    }
    if kswapd_compaction == KswapdCompactionKind::Kcompactd && version < (4, 6) {
        return Err(cx.err(
            ErrorKind::InvalidValue,
            &path!["model", "kernel"],
            format!(
                "model.kernel = {kernel:?} with policy.kswapd_compaction = \"kcompactd\": \
                 kcompactd's first release is 4.6 (set policy.kswapd_compaction = \"kswapd\")"
            ),
        ));
    }
    let knobs = ModelKnobs {
        readahead_max_pages,
        max_file_folio_order,
        check_interval: raw
            .check_interval
            .unwrap_or_else(|| defs::default("model", "check_interval")),
        cgroup_version,
        memcg_stats_flush_ns,
        memcg_stats_first_flush_ns,
        kernel,
    };
    let c = &raw.cost;
    let d = |v: Option<crate::size::Duration>, key: &str| -> u64 {
        v.unwrap_or_else(|| defs::default("model.cost", key)).0
    };
    let costs = CostTable {
        touch_ns: d(c.touch, "touch"),
        minor_fault_ns: d(c.minor_fault, "minor_fault"),
        major_fault_ns: d(c.major_fault, "major_fault"),
        pagecache_hit_ns: d(c.pagecache_hit, "pagecache_hit"),
        page_alloc_ns: d(c.page_alloc, "page_alloc"),
        scan_per_page_ns: d(c.scan_per_page, "scan_per_page"),
        rmap_per_call_ns: d(c.rmap_per_call, "rmap_per_call"),
        rmap_per_mapping_ns: d(c.rmap_per_mapping, "rmap_per_mapping"),
        unmap_per_mapping_ns: d(c.unmap_per_mapping, "unmap_per_mapping"),
        tlb_flush_local_ns: d(c.tlb_flush_local, "tlb_flush_local"),
        tlb_shootdown_ns: d(c.tlb_shootdown, "tlb_shootdown"),
        tlb_shootdown_per_cpu_ns: d(c.tlb_shootdown_per_cpu, "tlb_shootdown_per_cpu"),
        pt_walk_per_pte_ns: d(c.pt_walk_per_pte, "pt_walk_per_pte"),
        reclaim_per_page_ns: d(c.reclaim_per_page, "reclaim_per_page"),
        io_submit_ns: d(c.io_submit, "io_submit"),
        compact_scan_per_page_ns: d(c.compact_scan_per_page, "compact_scan_per_page"),
        migrate_per_page_ns: d(c.migrate_per_page, "migrate_per_page"),
        lru_lock_ns: d(c.lru_lock, "lru_lock"),
        lru_move_ns: d(c.lru_move, "lru_move"),
    };
    Ok((costs, knobs))
}

/// Trace phases (`[[task.phase]] source = { trace = ... }`), by task index. Reads each
/// trace's declarations and adds the objects it declares to `objects`, unless an object of
/// the same name exists: a scenario's object must then have the trace's kind and be at least
/// as large; an object an earlier trace created grows to the larger of the two sizes.
fn resolve_trace_sources(
    raw: &[RawTask],
    objects: &mut Vec<ObjectSpec>,
    cx: &Ctx,
) -> Result<BTreeMap<usize, TraceSpec>> {
    let declared = objects.len();
    let mut out = BTreeMap::new();
    for (i, t) in raw.iter().enumerate() {
        let Some(j) = t.phase.iter().position(|p| p.source.is_some()) else {
            continue;
        };
        let who = format!("task `{}`", t.name.as_deref().unwrap_or("?"));
        let at = |k: &str| path!["task", i, "phase", j, "source", k];
        if t.phase.len() > 1 {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &path!["task", i, "phase", j, "source"],
                format!(
                    "{who}: a trace phase must be the task's only phase (mixing traced and \
                     generated phases in one task is not supported)"
                ),
            ));
        }
        let p = &t.phase[0];
        let extra = [
            (p.access.is_some(), "access"),
            (p.object.is_some(), "object"),
            (p.pattern.is_some(), "pattern"),
            (p.zipf_s.is_some(), "zipf_s"),
            (p.scatter.is_some(), "scatter"),
            (p.hot_fraction.is_some(), "hot_fraction"),
            (p.hot_probability.is_some(), "hot_probability"),
            (p.range.is_some(), "range"),
            (p.ops.is_some(), "ops"),
            (p.pages_per_op.is_some(), "pages_per_op"),
            (p.write_fraction.is_some(), "write_fraction"),
            (p.think.is_some(), "think"),
            (p.advice.is_some(), "advice"),
            (p.fsync.is_some(), "fsync"),
            (p.mix.is_some(), "mix"),
        ];
        if let Some((_, k)) = extra.iter().find(|(given, _)| *given) {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &path!["task", i, "phase", j, *k],
                format!("{who}: {k} does not apply to a trace phase (the trace says what it does)"),
            ));
        }
        let src = p.source.as_ref().expect("found above");
        let file = cx.required(
            src.trace.clone(),
            &at("trace"),
            &format!("{who}: source.trace"),
        )?;
        let path = match std::path::Path::new(cx.origin).parent() {
            Some(dir) if std::path::Path::new(&file).is_relative() => dir.join(&file),
            _ => std::path::PathBuf::from(&file),
        };
        let format_name = src.format.clone().unwrap_or_else(|| "auto".into());
        if src.columns.is_some() && format_name != "csv" {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &at("columns"),
                format!("{who}: source.columns applies to format = \"csv\" only"),
            ));
        }
        let format =
            refault_trace::Format::parse(&format_name, src.columns.as_deref()).map_err(|m| {
                cx.err(
                    ErrorKind::InvalidValue,
                    &at("format"),
                    format!("{who}: {m}"),
                )
            })?;
        let reader = refault_trace::open(&path, &format)
            .map_err(|e| cx.err(ErrorKind::InvalidValue, &at("trace"), format!("{who}: {e}")))?;
        let header = refault_trace::RecordRead::header(&reader).clone();
        let (trace_task, trace_task_name) = match &src.task {
            Some(name) => match header.tasks.iter().position(|x| x == name) {
                Some(k) => (k as u32, name.clone()),
                None => {
                    return Err(cx.err(
                        ErrorKind::UnknownReference,
                        &at("task"),
                        format!(
                            "{who}: the trace has no task `{name}` (tasks: {})",
                            header.tasks.join(", ")
                        ),
                    ))
                }
            },
            None if header.tasks.len() == 1 => (0, header.tasks[0].clone()),
            None => {
                return Err(cx.err(
                    ErrorKind::InvalidValue,
                    &path!["task", i, "phase", j, "source"],
                    format!(
                        "{who}: the trace carries several tasks ({}); name one with source.task",
                        header.tasks.join(", ")
                    ),
                ))
            }
        };
        let mut map = Vec::with_capacity(header.objects.len());
        for o in &header.objects {
            let kind = match o.kind {
                refault_trace::Kind::Anon => ObjectKind::Anon,
                refault_trace::Kind::Shmem => ObjectKind::Shmem,
                refault_trace::Kind::File => ObjectKind::File,
            };
            match objects.iter().position(|x| x.name == o.name) {
                Some(k) => {
                    let x = &mut objects[k];
                    if x.kind != kind {
                        return Err(cx.err(
                            ErrorKind::Impossible,
                            &at("trace"),
                            format!(
                                "{who}: the trace's object `{}` is {}, but the scenario's is {}",
                                o.name,
                                kind_name(kind),
                                kind_name(x.kind)
                            ),
                        ));
                    }
                    if x.size_pages < o.pages {
                        if k < declared {
                            return Err(cx.err(
                                ErrorKind::Impossible,
                                &at("trace"),
                                format!(
                                    "{who}: the trace's object `{}` has {} pages, more than the \
                                     scenario's ({} pages)",
                                    o.name, o.pages, x.size_pages
                                ),
                            ));
                        }
                        x.size_pages = o.pages;
                    }
                    map.push(k);
                }
                None => {
                    objects.push(ObjectSpec {
                        name: o.name.clone(),
                        kind,
                        size_pages: o.pages,
                        exists: o.exists,
                        file_pages: 0,
                        madvise: HugepageAdviceKind::None,
                        mlock: false,
                    });
                    map.push(objects.len() - 1);
                }
            }
        }
        out.insert(
            i,
            TraceSpec {
                path,
                format: format_name,
                columns: src.columns.clone(),
                trace_task,
                trace_task_name,
                objects: map,
                repeat: 1,
            },
        );
    }
    Ok(out)
}

/// Every `create` phase on one object must cut it into files of the same size.
fn check_create_dirs(tasks: &[TaskSpec], objects: &[ObjectSpec], cx: &Ctx) -> Result<()> {
    let mut size: Vec<Option<u32>> = vec![None; objects.len()];
    for (i, t) in tasks.iter().enumerate() {
        let Workload::Phases { phases, .. } = &t.workload else {
            continue;
        };
        for (j, p) in phases.iter().enumerate() {
            if p.access != Access::Create {
                continue;
            }
            match size[p.object] {
                None => size[p.object] = Some(p.pages_per_op),
                Some(s) if s != p.pages_per_op => {
                    return Err(cx.err(
                        ErrorKind::Impossible,
                        &path!["task", i, "phase", j, "pages_per_op"],
                        format!(
                            "task `{}` phase `{}`: object `{}` is a directory of {s}-page files \
                             (another create phase), not {}-page files",
                            t.name, p.name, objects[p.object].name, p.pages_per_op
                        ),
                    ))
                }
                Some(_) => {}
            }
        }
    }
    Ok(())
}

/// The objects a task's workload names.
fn objects_of(w: &Workload) -> Vec<usize> {
    match w {
        Workload::Phases { phases, .. } => phases.iter().map(|p| p.object).collect(),
        Workload::Pgbench(p) => vec![p.shared_buffers, p.database, p.wal],
        Workload::Memcached(m) => vec![m.items],
        Workload::Copy(c) => vec![c.src, c.dst],
        Workload::Trace(t) => t.objects.clone(),
        Workload::Process(p) => vec![p.object],
        Workload::Kalloc(_) => vec![],
    }
}

/// A process workload's object is its address space, emptied at every exit: no other task
/// may use it.
fn check_process_objects(tasks: &[TaskSpec], objects: &[ObjectSpec], cx: &Ctx) -> Result<()> {
    for (i, t) in tasks.iter().enumerate() {
        let Workload::Process(p) = &t.workload else {
            continue;
        };
        if let Some(other) = tasks
            .iter()
            .enumerate()
            .find(|&(j, u)| j != i && objects_of(&u.workload).contains(&p.object))
        {
            return Err(cx.err(
                ErrorKind::InvalidValue,
                &path!["task", i, "process", "object"],
                format!(
                    "task `{}`: object `{}` is its processes' address space, but task `{}` \
                     uses it too: give each process task an object of its own",
                    t.name, objects[p.object].name, other.1.name
                ),
            ));
        }
    }
    Ok(())
}

/// A task that loops forever (`repeat = 0`) over phases that only read() files which never
/// hold data (`exists = false` and no task writes them), with no think time, would consume
/// events at one simulated instant for ever: every read() ends at end of file at no cost.
/// Refused here; the simulator's no-progress guard catches the cases this misses.
fn check_zero_cost_loops(tasks: &[TaskSpec], objects: &[ObjectSpec], cx: &Ctx) -> Result<()> {
    let mut written = vec![false; objects.len()];
    for t in tasks {
        match &t.workload {
            Workload::Phases { phases, .. } => {
                for p in phases {
                    if matches!(
                        p.access,
                        Access::Write | Access::TouchWrite | Access::Create
                    ) {
                        written[p.object] = true;
                    }
                }
            }
            Workload::Pgbench(p) => {
                written[p.database] = true;
                written[p.wal] = true;
            }
            Workload::Copy(c) => written[c.dst] = true,
            // A trace may write any object it declares.
            Workload::Trace(t) => {
                for &o in &t.objects {
                    written[o] = true;
                }
            }
            Workload::Process(p) => written[p.object] = true,
            Workload::Memcached(_) | Workload::Kalloc(_) => {}
        }
    }
    for (i, t) in tasks.iter().enumerate() {
        let Workload::Phases { phases, repeat: 0 } = &t.workload else {
            continue;
        };
        let empty_read = |p: &PhaseSpec| {
            let o = &objects[p.object];
            p.access == Access::Read
                && p.think_ns == 0
                && o.kind == ObjectKind::File
                && !o.exists
                && !written[p.object]
        };
        if phases.iter().all(empty_read) {
            return Err(cx.err(
                ErrorKind::Impossible,
                &path!["task", i, "repeat"],
                format!(
                    "task `{}` repeats (repeat = 0) phases that only read files that never \
                     hold data (exists = false and no task writes them), with no think \
                     time: simulated time would never advance",
                    t.name
                ),
            ));
        }
    }
    Ok(())
}
