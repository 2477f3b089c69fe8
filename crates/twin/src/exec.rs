//! The native executor: each task instance is a forked process that moves itself into its
//! memory cgroup and performs its event stream for real — one load or store per touched
//! page, pread()/pwrite() of whole pages, fsync(), posix_fadvise()/madvise() hints, and
//! busy-waiting for think time — consuming the very same `TaskSource` the simulator does.

use refault_scenario::{ObjectKind, Scenario};
use refault_workload::{EventSource, Hint, Op, TaskSource};
use std::ffi::CString;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

const PAGE: usize = 4096;

/// Objects prepared in the parent before fork: open files and shared (shmem) mappings.
/// Each task instance opens the files again after the fork ([`Objects::reopen_files`]), so
/// it reads through its own `struct file` (its own `f_ra` readahead state and
/// POSIX_FADV_* mode), as separate processes do and as the model keeps it
/// (refault_mm's `OpenFile`).
pub struct Objects {
    pub files: Vec<Option<std::fs::File>>,
    /// The file objects' paths (None for anon and shmem).
    pub paths: Vec<Option<PathBuf>>,
    pub shmem: Vec<usize>,
    pub sizes: Vec<usize>,
    pub kinds: Vec<ObjectKind>,
}

impl Objects {
    pub fn open(scn: &Scenario, workdir: &Path) -> std::io::Result<Objects> {
        let mut files = Vec::new();
        let mut paths = Vec::new();
        let mut shmem = Vec::new();
        for o in &scn.objects {
            paths.push((o.kind == ObjectKind::File).then(|| file_path(workdir, &o.name)));
            let bytes = o.size_pages as usize * PAGE;
            match o.kind {
                ObjectKind::File => {
                    let f = std::fs::OpenOptions::new()
                        .read(true)
                        .write(true)
                        .open(file_path(workdir, &o.name))?;
                    files.push(Some(f));
                    shmem.push(0);
                }
                ObjectKind::Shmem => {
                    let p = unsafe {
                        libc::mmap(
                            std::ptr::null_mut(),
                            bytes,
                            libc::PROT_READ | libc::PROT_WRITE,
                            libc::MAP_SHARED | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                            -1,
                            0,
                        )
                    };
                    if p == libc::MAP_FAILED {
                        return Err(std::io::Error::last_os_error());
                    }
                    files.push(None);
                    shmem.push(p as usize);
                }
                ObjectKind::Anon => {
                    files.push(None);
                    shmem.push(0);
                }
            }
        }
        Ok(Objects {
            files,
            paths,
            shmem,
            sizes: scn
                .objects
                .iter()
                .map(|o| o.size_pages as usize * PAGE)
                .collect(),
            kinds: scn.objects.iter().map(|o| o.kind).collect(),
        })
    }
}

impl Objects {
    /// Open every file object again, replacing the descriptors inherited from the parent:
    /// called by a task instance after the fork, so each instance has its own open file.
    pub fn reopen_files(&mut self) -> std::io::Result<()> {
        for (f, p) in self.files.iter_mut().zip(&self.paths) {
            if let Some(p) = p {
                *f = Some(std::fs::OpenOptions::new().read(true).write(true).open(p)?);
            }
        }
        Ok(())
    }
}

impl Drop for Objects {
    fn drop(&mut self) {
        for (i, &p) in self.shmem.iter().enumerate() {
            if p != 0 {
                unsafe { libc::munmap(p as *mut libc::c_void, self.sizes[i]) };
            }
        }
    }
}

pub fn file_path(workdir: &Path, name: &str) -> PathBuf {
    workdir.join(format!("{name}.data"))
}

/// CLOCK_MONOTONIC in ns.
pub fn now_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// What one op does for real; `record` collects ops instead of doing IO (conformance test).
pub struct Executor<'a> {
    objs: &'a Objects,
    /// Private anonymous mappings of this process (created on first use).
    anon: Vec<usize>,
    /// Shared mappings of files (created on first touch).
    fmap: Vec<usize>,
    buf: Vec<u8>,
    pub sink: u64,
}

impl<'a> Executor<'a> {
    pub fn new(objs: &'a Objects) -> Self {
        let n = objs.sizes.len();
        Executor {
            objs,
            anon: vec![0; n],
            fmap: vec![0; n],
            buf: vec![0x5a; 256 * PAGE],
            sink: 0,
        }
    }

    fn mapping(&mut self, obj: usize) -> *mut u8 {
        match self.objs.kinds[obj] {
            ObjectKind::Shmem => self.objs.shmem[obj] as *mut u8,
            ObjectKind::Anon => {
                if self.anon[obj] == 0 {
                    let p = unsafe {
                        libc::mmap(
                            std::ptr::null_mut(),
                            self.objs.sizes[obj],
                            libc::PROT_READ | libc::PROT_WRITE,
                            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                            -1,
                            0,
                        )
                    };
                    assert!(
                        p != libc::MAP_FAILED,
                        "mmap anon: {}",
                        std::io::Error::last_os_error()
                    );
                    self.anon[obj] = p as usize;
                }
                self.anon[obj] as *mut u8
            }
            ObjectKind::File => {
                if self.fmap[obj] == 0 {
                    let fd = self.objs.files[obj].as_ref().expect("file").as_raw_fd();
                    // A mapping past EOF would fault with SIGBUS: extend (sparse) first.
                    let mut st: libc::stat = unsafe { std::mem::zeroed() };
                    unsafe { libc::fstat(fd, &mut st) };
                    if (st.st_size as usize) < self.objs.sizes[obj] {
                        unsafe { libc::ftruncate(fd, self.objs.sizes[obj] as i64) };
                    }
                    let p = unsafe {
                        libc::mmap(
                            std::ptr::null_mut(),
                            self.objs.sizes[obj],
                            libc::PROT_READ | libc::PROT_WRITE,
                            libc::MAP_SHARED,
                            fd,
                            0,
                        )
                    };
                    assert!(
                        p != libc::MAP_FAILED,
                        "mmap file: {}",
                        std::io::Error::last_os_error()
                    );
                    self.fmap[obj] = p as usize;
                }
                self.fmap[obj] as *mut u8
            }
        }
    }

    /// Perform one op.
    pub fn exec(&mut self, op: Op) {
        match op {
            Op::Touch { obj, page, write } => {
                let base = self.mapping(obj as usize);
                let p = unsafe { base.add(page as usize * PAGE) };
                if write {
                    unsafe { std::ptr::write_volatile(p, (page as u8).wrapping_add(1)) };
                } else {
                    self.sink += unsafe { std::ptr::read_volatile(p) } as u64;
                }
            }
            Op::Read { obj, page, nr } => {
                let fd = self.objs.files[obj as usize]
                    .as_ref()
                    .expect("file")
                    .as_raw_fd();
                let mut left = nr as usize * PAGE;
                let mut off = page as usize * PAGE;
                while left > 0 {
                    let n = left.min(self.buf.len());
                    let r = unsafe { libc::pread(fd, self.buf.as_mut_ptr().cast(), n, off as i64) };
                    if r <= 0 {
                        break;
                    }
                    left -= r as usize;
                    off += r as usize;
                }
            }
            Op::Write { obj, page, nr } => {
                let fd = self.objs.files[obj as usize]
                    .as_ref()
                    .expect("file")
                    .as_raw_fd();
                let mut left = nr as usize * PAGE;
                let mut off = page as usize * PAGE;
                while left > 0 {
                    let n = left.min(self.buf.len());
                    let r = unsafe { libc::pwrite(fd, self.buf.as_ptr().cast(), n, off as i64) };
                    if r <= 0 {
                        break;
                    }
                    left -= r as usize;
                    off += r as usize;
                }
            }
            Op::Fsync { obj } => {
                if let Some(f) = &self.objs.files[obj as usize] {
                    unsafe { libc::fsync(f.as_raw_fd()) };
                }
            }
            Op::Fdatasync { obj } => {
                if let Some(f) = &self.objs.files[obj as usize] {
                    unsafe { libc::fdatasync(f.as_raw_fd()) };
                }
            }
            Op::Advise { obj, hint } => {
                let (fadv, madv) = match hint {
                    Hint::Normal => (libc::POSIX_FADV_NORMAL, libc::MADV_NORMAL),
                    Hint::Random => (libc::POSIX_FADV_RANDOM, libc::MADV_RANDOM),
                    Hint::Sequential => (libc::POSIX_FADV_SEQUENTIAL, libc::MADV_SEQUENTIAL),
                };
                if let Some(f) = &self.objs.files[obj as usize] {
                    unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, fadv) };
                }
                // The hint covers the object's mapping too (created now if needed, so a later
                // first touch already sees it).
                let m = self.mapping(obj as usize) as usize;
                if m != 0 {
                    unsafe {
                        libc::madvise(m as *mut libc::c_void, self.objs.sizes[obj as usize], madv)
                    };
                }
            }
            Op::Think { ns } => {
                let until = now_ns() + ns as u64;
                while now_ns() < until {
                    std::hint::spin_loop();
                }
            }
            Op::OpEnd | Op::Phase { .. } => {}
            // Refused by setup(): user space cannot make kernel allocations, and create
            // phases (a directory modelled as one file object) have no executor yet.
            Op::KernelAlloc { .. }
            | Op::KernelFree { .. }
            | Op::Fork { .. }
            | Op::Exit { .. }
            | Op::Create { .. } => {}
        }
    }
}

/// In a forked child: be killed when the parent dies (`PR_SET_PDEATHSIG`), and exit at once
/// if it already has (it died between the fork and the prctl: the child was reparented), so
/// that a twin killed with SIGKILL leaves no worker holding memory.
pub fn die_with_parent(parent: libc::pid_t) {
    unsafe {
        libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong);
        if libc::getppid() != parent {
            libc::_exit(4);
        }
    }
}

/// Run one task instance in this (child) process: join the cgroup, wait for the start
/// time, perform every op, note how long that took (ns) in `elapsed`, count itself done in
/// `done`, then keep its memory (as a finished task does in the simulation) until the
/// parent ends it. Never returns.
pub fn child_main(
    src: &mut TaskSource,
    objs: &Objects,
    cgroup_procs: Option<&Path>,
    t0: u64,
    done: &std::sync::atomic::AtomicU64,
    elapsed: &std::sync::atomic::AtomicU64,
) -> ! {
    // The executor's own memory is not part of the scenario: fault in its I/O buffer and
    // a stretch of stack before joining the cgroup, so they stay charged to the parent's
    // cgroup (a page is charged when it is faulted in and stays with that memcg). Left in
    // the cgroup, these always-young pages sat at the tail of the inactive anon list and
    // were what the kernel's anon scans found in f01 (kept, never reclaimed).
    let mut ex = Executor::new(objs);
    prefault_stack();
    if let Some(p) = cgroup_procs {
        let pid = unsafe { libc::getpid() };
        if std::fs::write(p, pid.to_string()).is_err() {
            unsafe { libc::_exit(3) };
        }
    }
    while now_ns() < t0 + src.start_ns {
        std::thread::sleep(std::time::Duration::from_micros(200));
    }
    let start = t0 + src.start_ns;
    while let Some(op) = src.next_op() {
        ex.exec(op);
    }
    std::hint::black_box(ex.sink);
    elapsed.store(
        now_ns().saturating_sub(start),
        std::sync::atomic::Ordering::SeqCst,
    );
    done.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    loop {
        unsafe { libc::pause() };
    }
}

/// Write to 256 KiB of stack below the current frame so the pages the executor's calls
/// use later are already private to this process (not copy-on-write faults charged to the
/// scenario's cgroup).
#[inline(never)]
fn prefault_stack() {
    let mut a = [0u8; 256 * 1024];
    for i in (0..a.len()).step_by(PAGE) {
        unsafe { std::ptr::write_volatile(&mut a[i], 1) };
    }
    std::hint::black_box(&a);
}

/// The op sequence each task instance would execute (no syscalls): the conformance check.
pub fn record_ops(scn: &Scenario) -> Vec<Vec<Op>> {
    refault_workload::task_sources(scn)
        .into_iter()
        .map(|mut s| std::iter::from_fn(|| s.next_op()).collect())
        .collect()
}

/// Write a scenario file object's initial contents (`exists = true`: full size of data).
pub fn create_file(path: &Path, pages: u64, exists: bool) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = std::fs::File::create(path)?;
    if exists {
        let chunk = vec![0xa5u8; 1 << 20];
        let mut left = pages as usize * PAGE;
        while left > 0 {
            let n = left.min(chunk.len());
            f.write_all(&chunk[..n])?;
            left -= n;
        }
    } else {
        // Starts empty, as in the model; writes extend it.
        f.set_len(0)?;
    }
    f.sync_all()?;
    drop_cache(path)
}

/// Drop a file's pages from the page cache (after writing them back).
pub fn drop_cache(path: &Path) -> std::io::Result<()> {
    let f = std::fs::OpenOptions::new().read(true).open(path)?;
    f.sync_all()?;
    let r = unsafe { libc::posix_fadvise(f.as_raw_fd(), 0, 0, libc::POSIX_FADV_DONTNEED) };
    if r != 0 {
        return Err(std::io::Error::from_raw_os_error(r));
    }
    Ok(())
}

pub fn cstr(s: &str) -> CString {
    CString::new(s).expect("no NUL in path")
}
