//! Crash-safe cleanup. A twin that is killed (SIGKILL, a lost terminal, a power-off of its
//! session) cannot run its `Drop`, so every resource it is about to create is first written
//! to a state file in its work directory (`<workdir>/state`, one line per resource, synced
//! before the resource exists) and the work directory is registered in
//! [`REGISTRY`] (a tmpfs, emptied by a reboot that also ends every resource but the files).
//! Every twin start, and `refault twin --cleanup`, reads the state of runs whose owner is
//! gone and undoes it: workers left in the cgroups are killed, cgroups removed, swap areas
//! turned off, zram devices reset and removed, `lru_gen` settings restored, files and
//! directories removed — and says what it removed.
//!
//! A run's owner is identified by its pid and the process start time (field 22 of
//! `/proc/<pid>/stat`), so a recycled pid does not keep a dead run's leftovers alive.

use std::io::Write;
use std::path::{Path, PathBuf};

/// Where live and dead runs register their work directory: one symlink per run.
pub const REGISTRY: &str = "/run/refault-twin";

/// The state file of one run, appended to before each resource is created.
pub struct StateFile {
    path: PathBuf,
    file: std::fs::File,
    registered: Option<PathBuf>,
}

/// One resource a run creates.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Resource {
    /// The run's owner: pid and start time (clock ticks after boot).
    Owner(u32, u64),
    /// A directory the run created (removed when empty: the `--workdir` it was given).
    BaseDir(PathBuf),
    /// The run's work directory (removed with everything in it).
    WorkDir(PathBuf),
    /// `lru_gen/enabled` and `lru_gen/min_ttl_ms` as they were before the run changed them.
    LruGen(String, String),
    Cgroup(PathBuf),
    Zram(u32),
    Swap(String),
    File(PathBuf),
    /// A process the run started outside the host's cgroups (the VM): killed if alive with
    /// the recorded start time.
    Process(u32, u64),
}

impl Resource {
    fn line(&self) -> String {
        let p = |p: &Path| p.display().to_string();
        match self {
            Resource::Owner(pid, st) => format!("owner {pid} {st}"),
            Resource::BaseDir(d) => format!("basedir {}", p(d)),
            Resource::WorkDir(d) => format!("workdir {}", p(d)),
            Resource::LruGen(e, t) => format!("lru_gen {} {}", e.trim(), t.trim()),
            Resource::Cgroup(d) => format!("cgroup {}", p(d)),
            Resource::Zram(id) => format!("zram {id}"),
            Resource::Swap(dev) => format!("swap {dev}"),
            Resource::File(f) => format!("file {}", p(f)),
            Resource::Process(pid, st) => format!("process {pid} {st}"),
        }
    }

    fn parse(line: &str) -> Option<Resource> {
        let (kind, rest) = line.split_once(' ')?;
        let two = || -> Option<(u64, u64)> {
            let (a, b) = rest.split_once(' ')?;
            Some((a.parse().ok()?, b.parse().ok()?))
        };
        Some(match kind {
            "owner" => {
                let (a, b) = two()?;
                Resource::Owner(a as u32, b)
            }
            "process" => {
                let (a, b) = two()?;
                Resource::Process(a as u32, b)
            }
            "basedir" => Resource::BaseDir(rest.into()),
            "workdir" => Resource::WorkDir(rest.into()),
            "lru_gen" => {
                let (a, b) = rest.split_once(' ')?;
                Resource::LruGen(a.into(), b.into())
            }
            "cgroup" => Resource::Cgroup(rest.into()),
            "zram" => Resource::Zram(rest.parse().ok()?),
            "swap" => Resource::Swap(rest.into()),
            "file" => Resource::File(rest.into()),
            _ => return None,
        })
    }
}

/// The start time of process `pid` (clock ticks after boot), None if it does not exist.
pub fn start_time(pid: u32) -> Option<u64> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) may hold spaces and parentheses: count after the last ')'.
    let rest = &s[s.rfind(')')? + 2..];
    rest.split_whitespace().nth(19)?.parse().ok()
}

fn alive(pid: u32, start: u64) -> bool {
    start_time(pid) == Some(start)
}

impl StateFile {
    /// Create `<workdir>/state` (the work directory must exist) recording this process as
    /// the owner, then register the work directory.
    pub fn create(workdir: &Path, resources: &[Resource]) -> Result<StateFile, String> {
        let path = workdir.join("state");
        let file = std::fs::OpenOptions::new()
            .create_new(true)
            .append(true)
            .open(&path)
            .map_err(|e| format!("creating {}: {e}", path.display()))?;
        let mut s = StateFile {
            path,
            file,
            registered: None,
        };
        let me = std::process::id();
        s.record(&Resource::Owner(me, start_time(me).unwrap_or(0)))?;
        for r in resources {
            s.record(r)?;
        }
        // The registry lets a later run find this one whatever --workdir it is given.
        if std::fs::create_dir_all(REGISTRY).is_ok() {
            let link = Path::new(REGISTRY).join(workdir.file_name().unwrap_or_default());
            let _ = std::fs::remove_file(&link);
            if std::os::unix::fs::symlink(workdir, &link).is_ok() {
                s.registered = Some(link);
            }
        }
        Ok(s)
    }

    /// Append `r` and sync, before the resource is created.
    pub fn record(&mut self, r: &Resource) -> Result<(), String> {
        writeln!(self.file, "{}", r.line())
            .and_then(|_| self.file.sync_data())
            .map_err(|e| format!("writing {}: {e}", self.path.display()))
    }

    /// The run ended cleanly (its resources are gone): unregister.
    pub fn finish(&mut self) {
        if let Some(l) = self.registered.take() {
            let _ = std::fs::remove_file(l);
        }
    }
}

impl Drop for StateFile {
    fn drop(&mut self) {
        self.finish();
    }
}

/// Read a state file (unknown lines are skipped).
pub fn read_state(path: &Path) -> Vec<Resource> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(Resource::parse)
        .collect()
}

/// Whether a `refault-twin-<pid>-...` name belongs to a process that is gone.
fn name_pid_dead(name: &str) -> bool {
    let Some(rest) = name.strip_prefix("refault-twin-") else {
        return false;
    };
    let pid: u32 = match rest.split(['-', '.']).next().and_then(|p| p.parse().ok()) {
        Some(p) => p,
        None => return false,
    };
    pid != std::process::id() && start_time(pid).is_none()
}

/// Undo what the runs whose owner is gone left behind: those registered in [`REGISTRY`],
/// the `refault-twin-*` work directories under `base`, and `refault-twin-<pid>-*` memory
/// cgroups under `cgroup_root` whose pid is gone. Returns one line per thing removed.
pub fn remove_dead_runs(base: Option<&Path>, cgroup_root: Option<&Path>) -> Vec<String> {
    let mut said = Vec::new();
    let mut workdirs: Vec<(Option<PathBuf>, PathBuf)> = Vec::new();
    if let Ok(d) = std::fs::read_dir(REGISTRY) {
        for e in d.flatten() {
            let link = e.path();
            match std::fs::read_link(&link) {
                Ok(target) => workdirs.push((Some(link), target)),
                Err(_) => {
                    let _ = std::fs::remove_file(&link);
                }
            }
        }
    }
    if let Some(base) = base {
        if let Ok(d) = std::fs::read_dir(base) {
            for e in d.flatten() {
                let name = e.file_name().to_string_lossy().into_owned();
                if name.starts_with("refault-twin-") && e.path().is_dir() {
                    let p = e.path();
                    if !workdirs.iter().any(|(_, w)| *w == p) {
                        workdirs.push((None, p));
                    }
                }
            }
        }
    }
    workdirs.sort_by(|a, b| a.1.cmp(&b.1));
    for (link, wd) in workdirs {
        let state = wd.join("state");
        let res = read_state(&state);
        let owner_gone = match res.iter().find_map(|r| match r {
            Resource::Owner(p, s) => Some((*p, *s)),
            _ => None,
        }) {
            Some((pid, st)) => !alive(pid, st),
            // No state (a work directory of a twin before state files, or one killed
            // before it wrote its first line): judged by the pid in its name.
            None => {
                let name = wd.file_name().unwrap_or_default().to_string_lossy();
                name_pid_dead(&name) || !wd.exists()
            }
        };
        if !owner_gone {
            continue;
        }
        undo(&res, &wd, &mut said);
        if let Some(l) = link {
            let _ = std::fs::remove_file(l);
        }
    }
    // Cgroups of dead twins whose state was lost (or that a later version names alike).
    if let Some(root) = cgroup_root {
        if let Ok(d) = std::fs::read_dir(root) {
            let mut names: Vec<String> = d
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| name_pid_dead(n))
                .collect();
            names.sort();
            for n in names {
                remove_cgroup(&root.join(n), &mut said);
            }
        }
    }
    said
}

fn remove_cgroup(cg: &Path, said: &mut Vec<String>) {
    if !cg.exists() {
        return;
    }
    let mut killed = 0;
    for _ in 0..100 {
        let procs: Vec<i32> = std::fs::read_to_string(cg.join("cgroup.procs"))
            .unwrap_or_default()
            .lines()
            .filter_map(|l| l.trim().parse().ok())
            .collect();
        for &p in &procs {
            unsafe { libc::kill(p, libc::SIGKILL) };
            killed += 1;
        }
        if std::fs::remove_dir(cg).is_ok() || !cg.exists() {
            said.push(if killed > 0 {
                format!(
                    "memory cgroup {} (killed {killed} leftover worker(s))",
                    cg.display()
                )
            } else {
                format!("memory cgroup {}", cg.display())
            });
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    said.push(format!(
        "could not remove memory cgroup {} (still busy)",
        cg.display()
    ));
}

fn undo(res: &[Resource], workdir: &Path, said: &mut Vec<String>) {
    // In reverse order of creation, processes first (they hold the rest).
    for r in res.iter().rev() {
        if let Resource::Process(pid, st) = r {
            if alive(*pid, *st) {
                unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
                said.push(format!("process {pid}"));
            }
        }
    }
    let swaps = crate::host::active_swaps();
    for r in res.iter().rev() {
        match r {
            Resource::LruGen(enabled, ttl) => {
                let _ = std::fs::write(crate::LRU_GEN_MIN_TTL, ttl);
                let _ = std::fs::write(crate::LRU_GEN_ENABLED, enabled);
                said.push(format!(
                    "restored lru_gen enabled={enabled} min_ttl_ms={ttl}"
                ));
            }
            Resource::Cgroup(cg) => remove_cgroup(cg, said),
            Resource::Swap(dev) if swaps.iter().any(|s| s == dev) => {
                let c = crate::exec::cstr(dev);
                if unsafe { libc::swapoff(c.as_ptr()) } == 0 {
                    said.push(format!("swap area {dev} (swapoff)"));
                } else {
                    said.push(format!(
                        "could not swapoff {dev}: {}",
                        std::io::Error::last_os_error()
                    ));
                }
            }
            Resource::Zram(id) if Path::new(&format!("/sys/block/zram{id}")).exists() => {
                let _ = std::fs::write(format!("/sys/block/zram{id}/reset"), "1");
                let _ = std::fs::write("/sys/class/zram-control/hot_remove", id.to_string());
                said.push(format!("zram device zram{id}"));
            }
            Resource::File(f) if std::fs::remove_file(f).is_ok() => {
                said.push(format!("file {}", f.display()));
            }
            _ => {}
        }
    }
    if workdir.exists() {
        let bytes = dir_bytes(workdir);
        if std::fs::remove_dir_all(workdir).is_ok() {
            said.push(format!(
                "work directory {} ({:.1} MB)",
                workdir.display(),
                bytes as f64 / 1e6
            ));
        }
    }
    for r in res {
        if let Resource::BaseDir(d) = r {
            if std::fs::remove_dir(d).is_ok() {
                said.push(format!("directory {}", d.display()));
            }
        }
    }
}

fn dir_bytes(d: &Path) -> u64 {
    use std::os::unix::fs::MetadataExt;
    std::fs::read_dir(d)
        .map(|it| {
            it.flatten()
                .map(|e| match e.metadata() {
                    Ok(m) if m.is_dir() => dir_bytes(&e.path()),
                    Ok(m) => m.blocks() * 512,
                    Err(_) => 0,
                })
                .sum()
        })
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_lines_round_trip() {
        let all = [
            Resource::Owner(12, 345),
            Resource::BaseDir("/var/tmp/x".into()),
            Resource::WorkDir("/var/tmp/x/refault-twin-1-0".into()),
            Resource::LruGen("0x0007".into(), "0".into()),
            Resource::Cgroup("/sys/fs/cgroup/memory/refault-twin-1-0-r1-box".into()),
            Resource::Zram(3),
            Resource::Swap("/dev/zram3".into()),
            Resource::File("/var/tmp/a b".into()),
            Resource::Process(99, 7),
        ];
        for r in all {
            assert_eq!(Resource::parse(&r.line()), Some(r.clone()), "{}", r.line());
        }
    }

    #[test]
    fn start_time_of_self_and_of_nothing() {
        assert!(start_time(std::process::id()).is_some());
        assert_eq!(start_time(u32::MAX - 1), None);
    }

    #[test]
    fn names_of_dead_and_live_runs() {
        assert!(!name_pid_dead(&format!(
            "refault-twin-{}-0",
            std::process::id()
        )));
        assert!(name_pid_dead(&format!("refault-twin-{}-0", u32::MAX - 1)));
        assert!(!name_pid_dead("something-else"));
    }
}
