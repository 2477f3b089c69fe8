//! Writing a file so that readers see either the old contents or the complete new ones:
//! write a temporary file next to the target, flush it to disk, rename it over the target
//! (rename within one directory is atomic on POSIX filesystems), then flush the directory.

use std::fs::{self, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes `bytes` to `path` atomically: the target does not exist (or keeps its old contents)
/// until the new contents are complete and on disk. The temporary file
/// (`.<name>.tmp-<pid>-<n>` in the same directory) is removed if anything fails.
/// An existing target is replaced, permissions included (the new file has the default mode).
pub fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    write_atomic_with(path, bytes, |_| Ok(()))
}

/// [`write_atomic`] with a hook that runs after the temporary file is complete and before the
/// rename, so tests can look at the directory in between.
fn write_atomic_with(
    path: &Path,
    bytes: &[u8],
    before_rename: impl FnOnce(&Path) -> io::Result<()>,
) -> io::Result<()> {
    let tmp = temp_path(path)?;
    let result = (|| {
        let mut file = OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        drop(file);
        before_rename(&tmp)?;
        fs::rename(&tmp, path)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
        return result;
    }
    sync_dir(parent_dir(path));
    Ok(())
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

fn temp_path(path: &Path) -> io::Result<PathBuf> {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let name = path.file_name().ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("{}: not a file path", path.display()),
        )
    })?;
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    Ok(parent_dir(path).join(format!(
        ".{}.tmp-{}-{n}",
        name.to_string_lossy(),
        std::process::id()
    )))
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
}
