//! Writing an output file so that readers see either the old contents or the complete new
//! ones: write a temporary file next to the target, flush it to disk, rename it over the target
//! (rename within one directory is atomic on POSIX filesystems), then flush the directory.
//!
//! Only a regular file or a missing path is replaced that way. Anything else is written
//! through, never replaced: a device (`/dev/null`), a FIFO, or a symlink (the link stays and
//! its target gets the bytes, not atomically). `-` is standard output. A directory is an error.
//!
//! The temporary file (`.<name>.tmp-<pid>-<n>`) is removed if the write fails, if SIGINT,
//! SIGTERM or SIGHUP arrives during the write (the signal then takes its previous course), and,
//! left behind by a process that died otherwise (SIGKILL), by the next write to the same path.

use std::ffi::CString;
use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};
use std::sync::Mutex;

/// How an output path is written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OutTarget {
    /// `-`: standard output.
    Stdout,
    /// A regular file or a missing path: temporary file + rename.
    Replace,
    /// A device, FIFO, socket or symlink: opened and written in place.
    WriteThrough,
}

/// Decides how `path` would be written; a directory is an error.
pub fn out_target(path: &Path) -> io::Result<OutTarget> {
    if path.as_os_str() == "-" {
        return Ok(OutTarget::Stdout);
    }
    let meta = match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(OutTarget::Replace),
        Err(e) => return Err(e),
        Ok(m) => m,
    };
    if meta.is_file() {
        return Ok(OutTarget::Replace);
    }
    // Follow a symlink to see whether it leads to a directory.
    if fs::metadata(path).is_ok_and(|m| m.is_dir()) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "is a directory, not a file",
        ));
    }
    Ok(OutTarget::WriteThrough)
}

/// Checks, before any work, that `path` can be written: its directory exists and takes new
/// files (a probe file is created and removed), or the existing non-regular target opens for
/// writing. Errors say what is wrong.
pub fn check_writable(path: &Path) -> io::Result<()> {
    match out_target(path)? {
        OutTarget::Stdout => Ok(()),
        OutTarget::WriteThrough => access_w(path),
        OutTarget::Replace => {
            let dir = parent_dir(path);
            match fs::metadata(dir) {
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    return Err(io::Error::new(
                        io::ErrorKind::NotFound,
                        format!("directory {} does not exist", dir.display()),
                    ))
                }
                Err(e) => return Err(e),
                Ok(m) if !m.is_dir() => {
                    return Err(io::Error::new(
                        io::ErrorKind::InvalidInput,
                        format!("{} is not a directory", dir.display()),
                    ))
                }
                Ok(_) => {}
            }
            let probe = temp_path(path)?;
            // The probe has the temporary files' name: a signal while it exists removes it
            // too (it was left behind when SIGTERM came in those microseconds).
            let guard = SignalCleanup::arm(&probe);
            let created = OpenOptions::new().write(true).create_new(true).open(&probe);
            if created.is_ok() {
                let _ = fs::remove_file(&probe);
            }
            drop(guard);
            match created {
                Ok(_) => Ok(()),
                Err(e) => Err(io::Error::new(
                    e.kind(),
                    format!("cannot create files in {}: {e}", dir.display()),
                )),
            }
        }
    }
}

#[cfg(unix)]
fn access_w(path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "path contains a NUL byte"))?;
    // SAFETY: a valid NUL-terminated path.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        return Ok(());
    }
    let e = io::Error::last_os_error();
    // A dangling symlink: its target will be created.
    if e.kind() == io::ErrorKind::NotFound {
        return Ok(());
    }
    Err(e)
}

#[cfg(not(unix))]
fn access_w(_: &Path) -> io::Result<()> {
    Ok(())
}

/// Writes `bytes` to `path` (see the module doc): a regular file or missing path atomically,
/// the target not existing (or keeping its old contents) until the new contents are complete
/// and on disk; an existing target is replaced, permissions included (the new file has the
/// default mode). Other targets are written through; `-` writes to standard output.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    match out_target(path)? {
        OutTarget::Stdout => {
            let mut out = io::stdout().lock();
            out.write_all(bytes)?;
            out.flush()
        }
        OutTarget::WriteThrough => {
            let mut f = OpenOptions::new()
                .write(true)
                .truncate(true)
                .create(true)
                .open(path)?;
            f.write_all(bytes)?;
            // Devices and FIFOs may refuse fsync; the bytes are written.
            let _ = f.sync_all();
            Ok(())
        }
        OutTarget::Replace => write_atomic_with(path, bytes, |_| Ok(())),
    }
}

/// [`write_atomic`] of a regular file, with a hook that runs after the temporary file is
/// complete and before the rename, so tests can look at the directory in between.
fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    remove_stale_temps(path);
    let tmp = temp_path(path)?;
    let guard = SignalCleanup::arm(&tmp);
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        before_rename(&tmp)?;
        fs::rename(&tmp, path)
    })();
    drop(guard);
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    sync_dir(parent_dir(path));
    Ok(())
}

/// Makes the rename durable. Best effort: the file itself is already complete, and some
/// filesystems refuse fsync on a directory.
fn sync_dir(dir: &Path) {
    #[cfg(unix)]
    if let Ok(d) = fs::File::open(dir) {
        let _ = d.sync_all();
    }
    #[cfg(not(unix))]
    let _ = dir;
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn temp_prefix(path: &Path) -> io::Result<String> {
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a file path", path.display()),
        )
    })?;
    Ok(format!(".{}.tmp-", name.to_string_lossy()))
}

fn temp_path(path: &Path) -> io::Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    Ok(parent_dir(path).join(format!("{}{}-{n}", temp_prefix(path)?, std::process::id())))
}

/// Removes temporary files of earlier writes to `path` whose process no longer exists
/// (killed by SIGKILL mid-write). Best effort: a failure here does not stop the write.
fn remove_stale_temps(path: &Path) {
    let Ok(prefix) = temp_prefix(path) else {
        return;
    };
    let Ok(entries) = fs::read_dir(parent_dir(path)) else {
        return;
    };
    let me = std::process::id();
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(rest) = name.to_str().and_then(|n| n.strip_prefix(&prefix)) else {
            continue;
        };
        let Some((pid, n)) = rest.split_once('-') else {
            continue;
        };
        let (Ok(pid), true) = (pid.parse::<u32>(), n.bytes().all(|b| b.is_ascii_digit())) else {
            continue;
        };
        if pid != me && !pid_alive(pid) {
            let _ = fs::remove_file(e.path());
        }
    }
}

#[cfg(unix)]
fn pid_alive(pid: u32) -> bool {
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return true;
    };
    // SAFETY: signal 0 only checks that the process exists.
    if unsafe { libc::kill(pid, 0) } == 0 {
        return true;
    }
    io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(not(unix))]
fn pid_alive(_: u32) -> bool {
    true
}

/// The temporary file of the write in progress, for the signal handler (a leaked CString;
/// null when none). Writes are serialised by `WRITE_LOCK`, so one slot is enough.
static IN_FLIGHT: AtomicPtr<libc::c_char> = AtomicPtr::new(std::ptr::null_mut());
static WRITE_LOCK: Mutex<()> = Mutex::new(());

#[cfg(unix)]
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// The dispositions our handler replaced during a write, restored after it (and by the
/// handler before it re-raises the signal).
#[cfg(unix)]
struct SavedActions(std::cell::UnsafeCell<[std::mem::MaybeUninit<libc::sigaction>; 3]>);
// SAFETY: written only under WRITE_LOCK before the handler is installed; read by the handler.
#[cfg(unix)]
unsafe impl Sync for SavedActions {}
#[cfg(unix)]
static SAVED: SavedActions = SavedActions(std::cell::UnsafeCell::new(
    [std::mem::MaybeUninit::uninit(); 3],
));

/// Removes the in-flight temporary file, if any (async-signal-safe: an atomic swap and
/// unlink()).
fn remove_in_flight_temp() {
    let p = IN_FLIGHT.swap(std::ptr::null_mut(), Ordering::SeqCst);
    if !p.is_null() {
        #[cfg(unix)]
        // SAFETY: p is a leaked, NUL-terminated CString that nobody frees any more.
        unsafe {
            libc::unlink(p);
        }
    }
}

#[cfg(unix)]
extern "C" fn on_signal(sig: libc::c_int) {
    remove_in_flight_temp();
    if let Some(i) = SIGNALS.iter().position(|&s| s == sig) {
        // SAFETY: SAVED[i] was written before this handler was installed; sigaction and
        // raise are async-signal-safe.
        unsafe {
            let old = (*SAVED.0.get())[i].as_ptr();
            libc::sigaction(sig, old, std::ptr::null_mut());
            libc::raise(sig);
        }
    }
}

/// While alive: the temporary file is registered and SIGINT/SIGTERM/SIGHUP remove it
/// before taking their previous course (a signal that was ignored stays ignored).
struct SignalCleanup {
    _lock: std::sync::MutexGuard<'static, ()>,
    #[cfg(unix)]
    installed: [bool; 3],
}

impl SignalCleanup {
    fn arm(tmp: &Path) -> Self {
        let lock = WRITE_LOCK.lock().unwrap_or_else(|e| e.into_inner());
        #[cfg(unix)]
        {
            use std::os::unix::ffi::OsStrExt;
            if let Ok(c) = CString::new(tmp.as_os_str().as_bytes()) {
                IN_FLIGHT.store(c.into_raw(), Ordering::SeqCst);
            }
            let mut installed = [false; 3];
            for (i, &sig) in SIGNALS.iter().enumerate() {
                // SAFETY: plain sigaction calls; SAVED is only touched under WRITE_LOCK.
                unsafe {
                    let saved = &mut (*SAVED.0.get())[i];
                    if libc::sigaction(sig, std::ptr::null(), saved.as_mut_ptr()) != 0 {
                        continue;
                    }
                    if saved.assume_init_ref().sa_sigaction == libc::SIG_IGN {
                        continue;
                    }
                    let mut act: libc::sigaction = std::mem::zeroed();
                    act.sa_sigaction = on_signal as *const () as libc::sighandler_t;
                    libc::sigemptyset(&mut act.sa_mask);
                    installed[i] = libc::sigaction(sig, &act, std::ptr::null_mut()) == 0;
                }
            }
            SignalCleanup {
                _lock: lock,
                installed,
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tmp;
            SignalCleanup { _lock: lock }
        }
    }
}

impl Drop for SignalCleanup {
    fn drop(&mut self) {
        #[cfg(unix)]
        for (i, &sig) in SIGNALS.iter().enumerate() {
            if self.installed[i] {
                // SAFETY: restores the disposition saved by arm().
                unsafe {
                    libc::sigaction(sig, (*SAVED.0.get())[i].as_ptr(), std::ptr::null_mut());
                }
            }
        }
        let p = IN_FLIGHT.swap(std::ptr::null_mut(), Ordering::SeqCst);
        if !p.is_null() {
            // SAFETY: p came from CString::into_raw in arm() and the handler did not take it.
            drop(unsafe { CString::from_raw(p) });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A fresh directory under the system temp dir, removed on drop.
    struct TestDir(PathBuf);

    impl TestDir {
        fn new(name: &str) -> Self {
            let dir =
                std::env::temp_dir().join(format!("refault-report-{name}-{}", std::process::id()));
            let _ = fs::remove_dir_all(&dir);
            fs::create_dir_all(&dir).unwrap();
            TestDir(dir)
        }

        fn entries(&self) -> Vec<String> {
            let mut names: Vec<String> = fs::read_dir(&self.0)
                .unwrap()
                .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            names
        }
    }

    impl Drop for TestDir {
        fn drop(&mut self) {
            let _ = fs::remove_dir_all(&self.0);
        }
    }

    #[test]
    fn target_appears_only_when_complete() {
        let dir = TestDir::new("appears");
        let target = dir.0.join("result.json");
        write_atomic_with(&target, b"{\"complete\": true}", |tmp| {
            assert!(!target.exists(), "target exists before the rename");
            assert_eq!(
                tmp.parent(),
                Some(dir.0.as_path()),
                "temp file in the same dir"
            );
            assert_eq!(fs::read(tmp)?, b"{\"complete\": true}");
            Ok(())
        })
        .unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"{\"complete\": true}");
        assert_eq!(dir.entries(), ["result.json"], "no temp file left");
    }

    #[test]
    fn existing_file_is_replaced() {
        let dir = TestDir::new("replaced");
        let target = dir.0.join("out.txt");
        fs::write(&target, "old contents, longer than the new ones").unwrap();
        write_atomic(&target, b"new").unwrap();
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(dir.entries(), ["out.txt"]);
    }

    #[test]
    fn failure_before_rename_keeps_the_old_file_and_cleans_up() {
        let dir = TestDir::new("failure");
        let target = dir.0.join("out.txt");
        fs::write(&target, "old").unwrap();
        let err =
            write_atomic_with(&target, b"new", |_| Err(io::Error::other("disk full"))).unwrap_err();
        assert_eq!(err.to_string(), "disk full");
        assert_eq!(fs::read(&target).unwrap(), b"old");
        assert_eq!(dir.entries(), ["out.txt"]);
    }

    #[test]
    fn missing_directory_is_an_error() {
        let dir = TestDir::new("missing");
        let target = dir.0.join("no-such-dir").join("out.txt");
        let err = write_atomic(&target, b"x").unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(!target.exists());
    }

    #[test]
    fn dash_is_stdout_and_a_directory_is_refused() {
        assert_eq!(out_target(Path::new("-")).unwrap(), OutTarget::Stdout);
        let dir = TestDir::new("dir-target");
        let err = write_atomic(&dir.0, b"x").unwrap_err();
        assert!(err.to_string().contains("directory"), "{err}");
        assert!(dir.0.is_dir());
    }

    #[cfg(unix)]
    #[test]
    fn a_symlink_is_written_through_and_stays_a_symlink() {
        let dir = TestDir::new("symlink");
        let target = dir.0.join("real.json");
        fs::write(&target, "old contents").unwrap();
        let link = dir.0.join("link.json");
        std::os::unix::fs::symlink(&target, &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink());
        assert_eq!(fs::read(&target).unwrap(), b"new");
        assert_eq!(dir.entries(), ["link.json", "real.json"]);
    }

    #[test]
    fn stale_temp_files_of_dead_processes_are_removed() {
        let dir = TestDir::new("stale");
        let target = dir.0.join("r.json");
        // A pid above the kernel's maximum (4194304) cannot be alive.
        let dead = dir.0.join(".r.json.tmp-999999999-3");
        let mine = dir
            .0
            .join(format!(".r.json.tmp-{}-999", std::process::id()));
        let other = dir.0.join(".other.json.tmp-999999999-0");
        for p in [&dead, &mine, &other] {
            fs::write(p, "partial").unwrap();
        }
        write_atomic(&target, b"x").unwrap();
        assert_eq!(
            dir.entries(),
            [
                ".other.json.tmp-999999999-0".to_string(),
                format!(".r.json.tmp-{}-999", std::process::id()),
                "r.json".to_string()
            ]
        );
    }

    #[test]
    fn the_in_flight_temp_file_is_registered_for_the_signal_handler() {
        let dir = TestDir::new("signal");
        let target = dir.0.join("r.json");
        // What the handler does first on SIGINT/SIGTERM/SIGHUP: the temp file goes away (the
        // rename then fails and nothing is left behind).
        let err = write_atomic_with(&target, b"x", |tmp| {
            assert!(tmp.exists());
            remove_in_flight_temp();
            assert!(
                !tmp.exists(),
                "the handler's cleanup did not remove {tmp:?}"
            );
            Ok(())
        })
        .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::NotFound);
        assert!(dir.entries().is_empty());
    }

    #[test]
    fn check_writable_finds_a_missing_directory() {
        let dir = TestDir::new("check");
        let err = check_writable(&dir.0.join("nope").join("r.json")).unwrap_err();
        assert!(err.to_string().contains("does not exist"), "{err}");
        check_writable(&dir.0.join("r.json")).unwrap();
        assert!(dir.entries().is_empty(), "the probe file is removed");
    }
}
