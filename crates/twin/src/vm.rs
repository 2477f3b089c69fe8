//! The VM twin: the scenario run for real on a kernel booted in QEMU whose memory is the
//! scenario's machine, so that global reclaim (kswapd, direct reclaim, watermarks) and the
//! multi-gen LRU are compared, on any kernel version.
//!
//! The host side ([`twin_vm`]) builds an initramfs (busybox, the kernel's zram/virtio
//! modules, the C library the refault binary needs, an `/init` script) and an ext4 disk image
//! holding the refault binary and the resolved scenario (JSON), boots the kernel with
//! `-m machine.memory`, and reads the guest's result back from the disk image (`debugfs`),
//! once per real run (every run boots a fresh machine, as every simulation starts from one).
//! The guest side ([`guest_main`], `refault twin-guest`) is the host twin's executor with
//! the whole machine in place of a memory cgroup: tasks the scenario leaves in the root
//! cgroup run in the guest's root cgroup, the scenario's cgroups become cgroup v2 groups, the
//! sysctls and `read_ahead_kb` are set as the scenario says, swap is zram (hot-added) or a
//! swap file on the virtio disk, and `/proc/vmstat` deltas are global.
//!
//! Everything on the host lives in one work directory recorded in a [`crate::state`] file,
//! with the QEMU process (which dies with the twin: `PR_SET_PDEATHSIG`), so a killed VM twin
//! leaves nothing the next run does not remove.
//!
//! Timing: under emulation (TCG) the guest's clock runs at the emulator's pace, not a real
//! machine's; the per-task times are reported anyway and say so.

use crate::state::{self, Resource, StateFile};
use crate::{check_interrupted, Counters, SwapKind};
use refault_scenario::Scenario;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The vm-setup script, embedded so that an installed binary can fetch what it needs.
const VM_SETUP: &str = include_str!("../../../scripts/vm-setup.sh");

/// What the guest brings back from one run.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct GuestRun {
    pub kernel: String,
    /// /proc/vmstat deltas over the run (global: the guest runs nothing else).
    pub vmstat: Counters,
    pub zoneinfo_before: String,
    pub zoneinfo_after: String,
    pub buddyinfo_before: String,
    pub buddyinfo_after: String,
    /// `/sys/kernel/mm/lru_gen/enabled` during the run ("" without CONFIG_LRU_GEN).
    pub lru_gen: String,
    pub task_seconds: Vec<(String, f64)>,
    pub memcg_stat: Counters,
}

/// How QEMU runs the guest.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Accel {
    /// Plain emulation: works everywhere, slow (the guest's clock is not a real machine's).
    Tcg,
    /// Hardware virtualisation through /dev/kvm.
    Kvm,
}

impl std::str::FromStr for Accel {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "tcg" => Ok(Accel::Tcg),
            "kvm" => Ok(Accel::Kvm),
            _ => Err(format!("--accel must be tcg or kvm, not `{s}`")),
        }
    }
}

#[derive(Clone, Debug)]
pub struct VmOptions {
    /// debian-6.1, debian-6.12, debian-7.2, or the path of a bzImage (with its modules, if
    /// any, in a `modules/` directory beside it).
    pub kernel: String,
    pub cache: PathBuf,
    pub accel: Accel,
    /// Wall-clock limit of one boot, seconds.
    pub boot_timeout: f64,
}

/// The default cache directory: $REFAULT_VM_CACHE, else ~/.cache/refault-vm.
pub fn default_cache() -> PathBuf {
    if let Some(d) = std::env::var_os("REFAULT_VM_CACHE") {
        return d.into();
    }
    let home = std::env::var_os("HOME").unwrap_or_else(|| "/root".into());
    Path::new(&home).join(".cache/refault-vm")
}

/// Run the embedded vm-setup script with `args`.
fn vm_setup(cache: &Path, args: &[&str]) -> Result<String, String> {
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(VM_SETUP)
        .arg("vm-setup.sh")
        .arg("--cache")
        .arg(cache)
        .args(args)
        .stderr(std::process::Stdio::inherit())
        .output()
        .map_err(|e| format!("running vm-setup: {e}"))?;
    if !o.status.success() {
        return Err(format!("vm-setup {} failed ({})", args.join(" "), o.status));
    }
    Ok(String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// Whether QEMU can run here at all (the tools are installed or can be).
pub fn qemu_available() -> Result<(), String> {
    let ok = |c: &str| {
        std::process::Command::new(c)
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .is_ok_and(|s| s.success())
    };
    if !ok("qemu-system-x86_64") {
        return Err("qemu-system-x86_64 is not installed (scripts/vm-setup.sh installs it)".into());
    }
    if !Path::new("/bin/busybox").exists() {
        return Err("/bin/busybox is missing (busybox-static; scripts/vm-setup.sh)".into());
    }
    Ok(())
}

/// The kernel image and its module directory, fetched into the cache when named.
pub fn kernel_files(opts: &VmOptions) -> Result<(PathBuf, Option<PathBuf>), String> {
    let named = matches!(
        opts.kernel.as_str(),
        "debian-6.1" | "debian-6.12" | "debian-7.2"
    );
    if !named {
        let p = PathBuf::from(&opts.kernel);
        if !p.is_file() {
            return Err(format!(
                "--kernel {}: neither debian-6.1, debian-6.12, debian-7.2 nor a kernel image file",
                opts.kernel
            ));
        }
        let m = p.parent().map(|d| d.join("modules"));
        return Ok((p, m.filter(|m| m.join("order").is_file())));
    }
    let dir = opts.cache.join("kernels").join(&opts.kernel);
    if !dir.join("vmlinuz").is_file() {
        vm_setup(&opts.cache, &[&opts.kernel])?;
    }
    if qemu_available().is_err() {
        vm_setup(&opts.cache, &["--tools-only"])?;
    }
    Ok((dir.join("vmlinuz"), Some(dir.join("modules"))))
}

/// A cpio "newc" archive (the initramfs format), uncompressed.
#[derive(Default)]
pub struct Cpio {
    buf: Vec<u8>,
    ino: u32,
}

impl Cpio {
    fn entry(&mut self, name: &str, mode: u32, data: &[u8]) {
        self.ino += 1;
        let hdr = format!(
            "070701{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}{:08x}",
            self.ino,
            mode,
            0,
            0,
            1,
            0,
            data.len(),
            0,
            0,
            0,
            0,
            name.len() + 1,
            0
        );
        self.buf.extend_from_slice(hdr.as_bytes());
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.push(0);
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
        self.buf.extend_from_slice(data);
        while !self.buf.len().is_multiple_of(4) {
            self.buf.push(0);
        }
    }
    pub fn dir(&mut self, name: &str) {
        self.entry(name, 0o040755, &[]);
    }
    pub fn file(&mut self, name: &str, exec: bool, data: &[u8]) {
        self.entry(name, if exec { 0o100755 } else { 0o100644 }, data);
    }
    pub fn finish(mut self) -> Vec<u8> {
        self.entry("TRAILER!!!", 0, &[]);
        self.buf
    }
}

/// The shared libraries `exe` loads (absolute paths, the dynamic loader included), from
/// `ldd`. Empty for a static binary.
fn shared_libs(exe: &Path) -> Result<Vec<PathBuf>, String> {
    let o = std::process::Command::new("ldd")
        .arg(exe)
        .output()
        .map_err(|e| format!("ldd: {e}"))?;
    let text = String::from_utf8_lossy(&o.stdout);
    let mut libs = Vec::new();
    for l in text.lines() {
        let path = match l.split_once("=>") {
            Some((_, r)) => r.split_whitespace().next(),
            None => l.split_whitespace().next(),
        };
        if let Some(p) = path.filter(|p| p.starts_with('/')) {
            libs.push(PathBuf::from(p));
        }
    }
    Ok(libs)
}

/// The guest's /init: mount what the executor needs, load the modules, run
/// `refault twin-guest` from the disk, unmount, power off.
fn init_script(extra_args: &str) -> String {
    format!(
        r#"#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mkdir -p /run /mnt /tmp
if [ -f /modules/order ]; then
    for m in $(cat /modules/order); do insmod /modules/$m.ko 2>/dev/null; done
fi
mount -t cgroup2 none /sys/fs/cgroup && echo +memory > /sys/fs/cgroup/cgroup.subtree_control
i=0
while [ ! -b /dev/vda ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i+1)); done
mount -t ext4 /dev/vda /mnt || echo "REFAULT-GUEST: cannot mount /dev/vda"
echo REFAULT-GUEST-START
/mnt/refault twin-guest /mnt/scenario.json --workdir /mnt --out /mnt/result.json {extra_args} > /mnt/guest.log 2>&1
echo "REFAULT-GUEST-EXIT $?"
cat /mnt/guest.log
sync
umount /mnt
poweroff -f
"#
    )
}

fn run_tool(cmd: &str, args: &[&str]) -> Result<String, String> {
    let o = std::process::Command::new(cmd)
        .args(args)
        .output()
        .map_err(|e| format!("running {cmd}: {e}"))?;
    if !o.status.success() {
        return Err(format!(
            "{cmd} {}: {}",
            args.join(" "),
            String::from_utf8_lossy(&o.stderr).trim()
        ));
    }
    Ok(String::from_utf8_lossy(&o.stdout).into_owned())
}

/// One VM twin's host resources: its work directory (initramfs, disk image, console log)
/// and the QEMU process while it runs. Removed on drop; recorded in a state file.
pub struct VmSetup {
    pub workdir: PathBuf,
    created_base: Option<PathBuf>,
    state: Option<StateFile>,
    pub kernel: PathBuf,
    pub initrd: PathBuf,
    pub disk: PathBuf,
    qemu: Option<std::process::Child>,
}

impl Drop for VmSetup {
    fn drop(&mut self) {
        if let Some(mut q) = self.qemu.take() {
            let _ = q.kill();
            let _ = q.wait();
        }
        let _ = std::fs::remove_dir_all(&self.workdir);
        if let Some(b) = self.created_base.take() {
            let _ = std::fs::remove_dir(b);
        }
        if let Some(mut s) = self.state.take() {
            s.finish();
        }
        crate::restore_signal_handlers();
    }
}

/// Disk image size: the scenario's files and swap file, the binary, and room for ext4.
fn disk_bytes(scn: &Scenario, swap: SwapKind, exe_bytes: u64) -> u64 {
    let files: u64 = scn
        .objects
        .iter()
        .filter(|o| o.kind == refault_scenario::ObjectKind::File)
        .map(|o| o.size_pages * 4096)
        .sum();
    let swapb: u64 = if swap == SwapKind::File {
        scn.swap.iter().map(|a| a.size_pages * 4096).sum()
    } else {
        0
    };
    let raw = files + swapb + exe_bytes + (64 << 20);
    (raw + raw / 4).div_ceil(1 << 20) << 20
}

/// Prepare the work directory: initramfs and disk image.
pub fn setup_vm(
    scn: &Scenario,
    swap: SwapKind,
    opts: &VmOptions,
    base: &Path,
) -> Result<VmSetup, String> {
    qemu_available().or_else(|_| vm_setup(&opts.cache, &["--tools-only"]).map(|_| ()))?;
    qemu_available()?;
    let (kernel, modules) = kernel_files(opts)?;
    crate::remove_leftovers(Some(base));
    let created = crate::prepare_base(base)?;
    let workdir = base.join(format!("refault-twin-{}-vm", std::process::id()));
    std::fs::create_dir(&workdir).map_err(|e| format!("{}: {e}", workdir.display()))?;
    let mut first = vec![Resource::WorkDir(workdir.clone())];
    if created {
        first.push(Resource::BaseDir(base.to_path_buf()));
    }
    let state = StateFile::create(&workdir, &first)?;
    crate::install_signal_handlers();
    let s = VmSetup {
        initrd: workdir.join("initrd.cpio"),
        disk: workdir.join("disk.img"),
        workdir,
        created_base: created.then(|| base.to_path_buf()),
        state: Some(state),
        kernel,
        qemu: None,
    };
    // The initramfs: busybox, modules, the C library, /init.
    let mut c = Cpio::default();
    for d in [
        "bin", "dev", "proc", "sys", "mnt", "run", "tmp", "lib", "lib64", "modules",
    ] {
        c.dir(d);
    }
    let read = |p: &Path| std::fs::read(p).map_err(|e| format!("reading {}: {e}", p.display()));
    c.file("bin/busybox", true, &read(Path::new("/bin/busybox"))?);
    if let Some(m) = &modules {
        let order = std::fs::read_to_string(m.join("order")).unwrap_or_default();
        for name in order.split_whitespace() {
            c.file(
                &format!("modules/{name}.ko"),
                false,
                &read(&m.join(format!("{name}.ko")))?,
            );
        }
        c.file("modules/order", false, order.as_bytes());
    }
    let exe = std::env::current_exe().map_err(|e| format!("the refault binary: {e}"))?;
    let mut made: std::collections::BTreeSet<String> = Default::default();
    for lib in shared_libs(&exe)? {
        let rel = lib.strip_prefix("/").unwrap_or(&lib);
        let mut acc = PathBuf::new();
        for comp in rel.parent().into_iter().flat_map(|p| p.components()) {
            acc.push(comp);
            let a = acc.display().to_string();
            if made.insert(a.clone()) && !["lib", "lib64"].contains(&a.as_str()) {
                c.dir(&a);
            }
        }
        // Follow the symlink: the archive holds the library itself under the linked name.
        c.file(&rel.display().to_string(), true, &read(&lib)?);
    }
    let extra = format!("--swap {}", swap_name(swap));
    c.file("init", true, init_script(&extra).as_bytes());
    std::fs::write(&s.initrd, c.finish()).map_err(|e| format!("writing initramfs: {e}"))?;
    // The disk: the binary and the scenario; the guest creates the scenario's files.
    let staging = s.workdir.join("disk");
    std::fs::create_dir(&staging).map_err(|e| format!("{}: {e}", staging.display()))?;
    std::fs::copy(&exe, staging.join("refault")).map_err(|e| format!("copying refault: {e}"))?;
    let json = serde_json::to_string(scn).map_err(|e| e.to_string())?;
    std::fs::write(staging.join("scenario.json"), json).map_err(|e| e.to_string())?;
    let exe_bytes = std::fs::metadata(&exe).map(|m| m.len()).unwrap_or(0);
    let size = disk_bytes(scn, swap, exe_bytes);
    let f = std::fs::File::create(&s.disk).map_err(|e| format!("disk image: {e}"))?;
    f.set_len(size).map_err(|e| format!("disk image: {e}"))?;
    drop(f);
    run_tool(
        "mkfs.ext4",
        &[
            "-q",
            "-F",
            "-E",
            "root_owner=0:0",
            "-d",
            &staging.display().to_string(),
            &s.disk.display().to_string(),
        ],
    )?;
    let _ = std::fs::remove_dir_all(&staging);
    check_interrupted()?;
    Ok(s)
}

fn swap_name(s: SwapKind) -> &'static str {
    match s {
        SwapKind::Zram => "zram",
        SwapKind::File => "file",
        SwapKind::None => "none",
    }
}

/// Boot the guest once and return what it measured.
pub fn boot_once(
    scn: &Scenario,
    s: &mut VmSetup,
    opts: &VmOptions,
) -> Result<(GuestRun, f64), String> {
    check_interrupted()?;
    let console = s.workdir.join("console.log");
    let mem_mib = (scn.machine.memory_pages * 4096).div_ceil(1 << 20);
    let mut cmd = std::process::Command::new("qemu-system-x86_64");
    match opts.accel {
        Accel::Tcg => cmd.args(["-accel", "tcg", "-cpu", "max"]),
        Accel::Kvm => cmd.args(["-accel", "kvm", "-cpu", "host"]),
    };
    cmd.args(["-m", &format!("{mem_mib}M")])
        .args(["-smp", &scn.machine.cpus.max(1).to_string()])
        .args(["-display", "none", "-monitor", "none", "-no-reboot"])
        .arg("-serial")
        .arg(format!("file:{}", console.display()))
        .arg("-kernel")
        .arg(&s.kernel)
        .arg("-initrd")
        .arg(&s.initrd)
        .args([
            "-append",
            "console=ttyS0 quiet loglevel=1 panic=-1 no_timer_check transparent_hugepage=never",
        ])
        .arg("-drive")
        .arg(format!("file={},format=raw,if=virtio", s.disk.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped());
    unsafe {
        use std::os::unix::process::CommandExt;
        cmd.pre_exec(|| {
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
            Ok(())
        });
    }
    let t0 = std::time::Instant::now();
    let child = cmd.spawn().map_err(|e| format!("starting qemu: {e}"))?;
    let pid = child.id();
    if let Some(st) = &mut s.state {
        st.record(&Resource::Process(pid, state::start_time(pid).unwrap_or(0)))?;
    }
    s.qemu = Some(child);
    let status = loop {
        check_interrupted()?;
        let q = s.qemu.as_mut().expect("qemu");
        if let Some(st) = q.try_wait().map_err(|e| e.to_string())? {
            break st;
        }
        if t0.elapsed().as_secs_f64() > opts.boot_timeout {
            return Err(format!(
                "the guest did not power off within {:.0} s; console:\n{}",
                opts.boot_timeout,
                tail(&console, 30)
            ));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    };
    let mut q = s.qemu.take().expect("qemu");
    let _ = q.wait();
    let secs = t0.elapsed().as_secs_f64();
    if !status.success() {
        let mut err = String::new();
        if let Some(mut e) = q.stderr.take() {
            use std::io::Read;
            let _ = e.read_to_string(&mut err);
        }
        return Err(format!(
            "qemu failed ({status}): {}\nconsole:\n{}",
            err.trim(),
            tail(&console, 30)
        ));
    }
    let log = std::fs::read_to_string(&console).unwrap_or_default();
    if !log.contains("REFAULT-GUEST-EXIT 0") {
        return Err(format!(
            "the guest's executor failed; console:\n{}",
            tail(&console, 40)
        ));
    }
    let out = s.workdir.join("result.json");
    let _ = std::fs::remove_file(&out);
    run_tool(
        "debugfs",
        &[
            "-R",
            &format!("dump /result.json {}", out.display()),
            &s.disk.display().to_string(),
        ],
    )?;
    let text = std::fs::read_to_string(&out).map_err(|e| format!("the guest's result: {e}"))?;
    let r: GuestRun =
        serde_json::from_str(&text).map_err(|e| format!("the guest's result: {e}"))?;
    Ok((r, secs))
}

fn tail(p: &Path, n: usize) -> String {
    let t = std::fs::read_to_string(p).unwrap_or_default();
    let lines: Vec<&str> = t.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// Guest side: set the sysctls and the disk's queue as the scenario says.
fn apply_machine_settings(scn: &Scenario) -> Result<(), String> {
    let w = |k: &str, v: String| {
        let p = format!("/proc/sys/vm/{k}");
        std::fs::write(&p, &v).map_err(|e| format!("writing {v} to {p}: {e}"))
    };
    let sc = &scn.sysctl;
    w("swappiness", sc.swappiness.to_string())?;
    w(
        "watermark_scale_factor",
        sc.watermark_scale_factor.to_string(),
    )?;
    w(
        "watermark_boost_factor",
        sc.watermark_boost_factor.to_string(),
    )?;
    w("page-cluster", sc.page_cluster.to_string())?;
    w("dirty_ratio", sc.dirty_ratio.to_string())?;
    w(
        "dirty_background_ratio",
        sc.dirty_background_ratio.to_string(),
    )?;
    w(
        "dirty_expire_centisecs",
        sc.dirty_expire_centisecs.to_string(),
    )?;
    w(
        "dirty_writeback_centisecs",
        sc.dirty_writeback_centisecs.to_string(),
    )?;
    w("vfs_cache_pressure", sc.vfs_cache_pressure.to_string())?;
    w("laptop_mode", (sc.laptop_mode as u32).to_string())?;
    if let Some(k) = sc.min_free_kbytes {
        w("min_free_kbytes", k.to_string())?;
    }
    let q = Path::new("/sys/block/vda/queue");
    if q.exists() {
        let dev = &scn.devices[scn.fs_device];
        let _ = std::fs::write(
            q.join("read_ahead_kb"),
            (scn.model.readahead_max_pages * 4).to_string(),
        );
        let _ = std::fs::write(q.join("rotational"), (dev.rotational as u32).to_string());
    }
    Ok(())
}

/// `refault twin-guest`: inside the VM, run the scenario once on the whole machine and
/// write a [`GuestRun`] to `out`.
pub fn guest_main(
    scn: &Scenario,
    swap: SwapKind,
    workdir: &Path,
    out: &Path,
) -> Result<(), String> {
    apply_machine_settings(scn)?;
    let read = |p: &str| std::fs::read_to_string(p).unwrap_or_default();
    // After the setup (the scenario's files written and dropped from the cache, swap on):
    // the machine as the run starts on it.
    let mut s = crate::setup_whole_machine(scn, swap, workdir)?;
    let zoneinfo_before = read("/proc/zoneinfo");
    let buddyinfo_before = read("/proc/buddyinfo");
    let r = crate::run_once(scn, &mut s)?;
    let lru_gen = read(crate::LRU_GEN_ENABLED).trim().to_string();
    drop(s);
    let g = GuestRun {
        kernel: read("/proc/sys/kernel/osrelease").trim().to_string(),
        vmstat: r.vmstat,
        zoneinfo_before,
        zoneinfo_after: read("/proc/zoneinfo"),
        buddyinfo_before,
        buddyinfo_after: read("/proc/buddyinfo"),
        lru_gen,
        task_seconds: r.task_seconds,
        memcg_stat: r.memcg_stat,
    };
    let text = serde_json::to_string(&g).map_err(|e| e.to_string())?;
    std::fs::write(out, text).map_err(|e| format!("{}: {e}", out.display()))?;
    Ok(())
}

/// Run `scn` on the VM as `plan` says (one boot per run) and compare with the simulation.
pub fn twin_vm(
    scn: &Scenario,
    plan: crate::RunPlan,
    swap: SwapKind,
    opts: &VmOptions,
    base: &Path,
) -> Result<crate::TwinReport, String> {
    let mut s = setup_vm(scn, swap, opts, base)?;
    let mut runs: Vec<GuestRun> = Vec::new();
    let mut real: Vec<Counters> = Vec::new();
    let started = std::time::Instant::now();
    loop {
        let (r, secs) = boot_once(scn, &mut s, opts)?;
        eprintln!(
            "twin --vm: {} run {} on Linux {} done in {secs:.1} s (boot included, {:?})",
            scn.name,
            runs.len() + 1,
            r.kernel,
            opts.accel
        );
        real.push(r.vmstat.clone());
        runs.push(r);
        if plan.satisfied(&real, started.elapsed().as_secs_f64()) {
            break;
        }
    }
    drop(s);
    check_interrupted()?;
    // The simulated machine is the guest's as the first run started on it.
    let zones = parse_zoneinfo(&runs[0].zoneinfo_before);
    let sim_scn = machine_from_zoneinfo(scn, &zones)?;
    let mut sim = crate::simulate_over_flush_phases(&sim_scn)?;
    // Direct reclaim stalls summed over the zone index they are counted at: the kernel
    // counts a user page's at ZONE_MOVABLE (gfp_zone() of GFP_HIGHUSER_MOVABLE), the model
    // at its highest zone.
    for c in [&mut sim.mean, &mut sim.min, &mut sim.max] {
        add_allocstall_total(c);
    }
    for r in &mut real {
        add_allocstall_total(r);
    }
    let kernel = format!(
        "{} (VM, {}{})",
        runs[0].kernel,
        match opts.accel {
            Accel::Tcg => "emulated: the guest's times are not a real machine's",
            Accel::Kvm => "KVM",
        },
        if runs[0].lru_gen.is_empty() {
            String::new()
        } else {
            format!(", lru_gen {}", runs[0].lru_gen)
        }
    );
    let mut rep = crate::compare(scn, &sim, &real, swap, kernel);
    rep.cgroup = crate::host::CgroupVersion::V2;
    rep.memcg_stat = runs.iter().map(|r| r.memcg_stat.clone()).collect();
    rep.real_task_seconds = runs.iter().map(|r| r.task_seconds.clone()).collect();
    rep.vm = Some(VmReport {
        accel: opts.accel,
        zones,
        simulated_zones: sim_scn
            .machine
            .zones
            .iter()
            .map(|z| (format!("{:?}", z.kind), z.pages))
            .collect(),
        simulated_min_free_kbytes: sim_scn.sysctl.min_free_kbytes,
        zoneinfo_before: runs[0].zoneinfo_before.clone(),
        buddyinfo_before: runs.iter().map(|r| r.buddyinfo_before.clone()).collect(),
        buddyinfo_after: runs.iter().map(|r| r.buddyinfo_after.clone()).collect(),
        zoneinfo_after: runs.iter().map(|r| r.zoneinfo_after.clone()).collect(),
    });
    Ok(rep)
}

/// What the VM twin adds to a report: the guest's own view of its memory.
#[derive(Clone, Debug, Serialize)]
pub struct VmReport {
    pub accel: Accel,
    /// The guest's zones as the first run started ([`parse_zoneinfo`]).
    pub zones: Vec<GuestZone>,
    /// The simulated machine's zones (kind, pages) and min_free_kbytes
    /// ([`machine_from_zoneinfo`]).
    pub simulated_zones: Vec<(String, u64)>,
    pub simulated_min_free_kbytes: Option<u64>,
    /// /proc/zoneinfo at the start of the first run.
    pub zoneinfo_before: String,
    /// Per run.
    pub zoneinfo_after: Vec<String>,
    pub buddyinfo_before: Vec<String>,
    pub buddyinfo_after: Vec<String>,
}

/// `allocstall_total`: the sum of the `allocstall_<zone>` counters.
pub fn add_allocstall_total(c: &mut Counters) {
    let t: u64 = c
        .iter()
        .filter(|(k, _)| k.starts_with("allocstall_") && *k != "allocstall_total")
        .map(|(_, v)| *v)
        .sum();
    c.insert("allocstall_total".into(), t);
}

/// One zone of /proc/zoneinfo.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct GuestZone {
    pub name: String,
    pub free: u64,
    pub min: u64,
    pub low: u64,
    pub high: u64,
    pub managed: u64,
}

/// The zones of a /proc/zoneinfo text (node 0), with managed pages.
pub fn parse_zoneinfo(text: &str) -> Vec<GuestZone> {
    let mut out: Vec<GuestZone> = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("Node ") {
            if let Some((_, name)) = rest.split_once("zone") {
                out.push(GuestZone {
                    name: name.trim().to_string(),
                    free: 0,
                    min: 0,
                    low: 0,
                    high: 0,
                    managed: 0,
                });
            }
            continue;
        }
        let Some(z) = out.last_mut() else { continue };
        let mut it = t.split_whitespace();
        let (k, v) = match (it.next(), it.next(), it.next()) {
            (Some("pages"), Some("free"), Some(v)) => ("free", v),
            (Some(k), Some(v), None) => (k, v),
            _ => continue,
        };
        let Ok(v) = v.parse::<u64>() else { continue };
        match k {
            "free" => z.free = v,
            "min" => z.min = v,
            "low" => z.low = v,
            "high" => z.high = v,
            "managed" => z.managed = v,
            _ => {}
        }
    }
    out.retain(|z| z.managed > 0);
    out
}

/// The scenario with the guest's machine: one simulated zone per guest zone kind — DMA and
/// DMA32 together as DMA32 (the model has no DMA zone; on the guest the 16 MiB DMA zone
/// serves user pages once DMA32 is below its watermark plus a small lowmem reserve),
/// Normal as Normal — each as large as the guest's free pages when the run started, and
/// `min_free_kbytes` the guest's (the sum of its zones' min watermarks), so that the
/// simulation starts with the free memory and watermarks the guest kernel had.
/// Simplification: the pages in use at the start (the guest kernel's slab, the initramfs
/// in its rootfs, the executor's own pages) are left out rather than modelled as
/// unreclaimable, so each zone's low/high gap (`watermark_scale_factor` of managed
/// pages) is computed from its free pages, slightly below the guest's.
pub fn machine_from_zoneinfo(scn: &Scenario, zones: &[GuestZone]) -> Result<Scenario, String> {
    use refault_scenario::{ZoneKind, ZoneSpec};
    let mut dma32 = 0;
    let mut normal = 0;
    let mut min = 0;
    for z in zones {
        match z.name.as_str() {
            "DMA" | "DMA32" => dma32 += z.free,
            "Normal" => normal += z.free,
            _ => continue,
        }
        min += z.min;
    }
    if dma32 + normal == 0 {
        return Err("the guest's /proc/zoneinfo has no DMA, DMA32 or Normal zone".into());
    }
    let mut out = scn.clone();
    out.machine.zones.clear();
    if dma32 > 0 {
        out.machine
            .zones
            .push(ZoneSpec::new(ZoneKind::Dma32, dma32));
    }
    if normal > 0 {
        out.machine
            .zones
            .push(ZoneSpec::new(ZoneKind::Normal, normal));
    }
    out.machine.memory_pages = dma32 + normal;
    out.sysctl.min_free_kbytes = Some(min * 4);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ZONEINFO: &str = "Node 0, zone      DMA
  per-node stats
      nr_inactive_anon 926
  pages free     3808
        boost    0
        min      31
        low      38
        high     45
        spanned  4095
        present  3998
        managed  3840
        protection: (0, 187, 187, 187, 187)
      nr_free_pages 3808
Node 0, zone    DMA32
  pages free     50000
        boost    0
        min      700
        low      875
        high     1050
        managed  56000
Node 0, zone   Normal
  pages free     0
        min      0
        managed  0
";

    #[test]
    fn zoneinfo_parsed_and_machine_built_from_it() {
        let z = parse_zoneinfo(ZONEINFO);
        assert_eq!(z.len(), 2, "the empty Normal zone is left out");
        assert_eq!(
            z[0],
            GuestZone {
                name: "DMA".into(),
                free: 3808,
                min: 31,
                low: 38,
                high: 45,
                managed: 3840
            }
        );
        assert_eq!((z[1].free, z[1].min, z[1].managed), (50000, 700, 56000));
        let scn = refault_scenario::parse(
            "[machine]\nmemory = \"256M\"\n[[object]]\nname = \"a\"\nkind = \"anon\"\nsize = \"1M\"\n[[task]]\nname = \"t\"\n[[task.phase]]\naccess = \"touch\"\nobject = \"a\"\npattern = \"sequential\"\n",
            "t.toml",
            &[],
            None,
        )
        .unwrap();
        let m = machine_from_zoneinfo(&scn, &z).unwrap();
        assert_eq!(m.machine.memory_pages, 53808);
        assert_eq!(m.machine.zones.len(), 1);
        assert_eq!(m.machine.zones[0].pages, 53808);
        assert_eq!(m.sysctl.min_free_kbytes, Some((31 + 700) * 4));
        // And the simulation runs on it.
        refault_sim::run(&m, Default::default()).unwrap();
    }

    #[test]
    fn cpio_newc_layout() {
        let mut c = Cpio::default();
        c.file("init", true, b"hi");
        let b = c.finish();
        // Header (110 bytes) + "init\0" padded to 116, data padded to 120, then the trailer.
        assert_eq!(&b[..6], b"070701");
        assert_eq!(&b[110..115], b"init\0");
        assert_eq!(&b[116..118], b"hi");
        assert_eq!(&b[120..126], b"070701");
        assert_eq!(b.len() % 4, 0);
        // mode 100755, size 2, namesize 5
        let h = std::str::from_utf8(&b[..110]).unwrap();
        assert_eq!(&h[14..22], "000081ed");
        assert_eq!(&h[54..62], "00000002");
        assert_eq!(&h[94..102], "00000005");
    }

    #[test]
    fn disk_holds_files_binary_and_slack() {
        let scn = refault_scenario::parse(
            "[machine]\nmemory = \"256M\"\n[[object]]\nname = \"f\"\nkind = \"file\"\nsize = \"100M\"\n[[task]]\nname = \"t\"\n[[task.phase]]\naccess = \"read\"\nobject = \"f\"\npattern = \"sequential\"\n",
            "t.toml",
            &[],
            None,
        )
        .unwrap();
        let b = disk_bytes(&scn, SwapKind::None, 10 << 20);
        // (100 + 10 + 64) MiB * 1.25, rounded up to a MiB.
        assert_eq!(b, ((174u64 << 20) * 5 / 4).div_ceil(1 << 20) << 20);
    }
}
