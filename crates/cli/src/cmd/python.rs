//! `refault sweep|plot|report ...`: handed to the Python package, `python3 -m refault <same
//! arguments>`.
//!
//! Sweeps (local threads or Ray), plots (matplotlib) and HTML reports live in the Python layer
//! (`python/refault`), which drives the same core through the extension module. This command
//! passes its arguments through verbatim, `--help` included, and takes the Python command's
//! exit status as its own: on Unix it replaces this process, so Ctrl-C and the status reach
//! the Python program directly.
//!
//! The interpreter is `$REFAULT_PYTHON` if set, else `python3`. When it cannot be started, or
//! the `refault` package is not importable by it, the error says how to install it.

use anyhow::{bail, Context, Result};
use std::ffi::OsString;
use std::process::Command;

/// The arguments of a delegated subcommand, unparsed.
#[derive(clap::Args)]
#[command(disable_help_flag = true)]
pub struct Args {
    /// Arguments for `python3 -m refault <subcommand>` (see `refault <subcommand> --help`).
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0..)]
    pub args: Vec<OsString>,
}

const INSTALL_HINT: &str = "install the Python package from the repository root with \
     `pip install .` (or `./scripts/python-setup.sh`, which also installs what the tests need), \
     or set REFAULT_PYTHON to an interpreter that has it";

/// The Python interpreter to use.
fn python() -> OsString {
    std::env::var_os("REFAULT_PYTHON")
        .filter(|p| !p.is_empty())
        .unwrap_or_else(|| OsString::from("python3"))
}

/// Fails with an installation hint unless `python` can import `refault`.
fn check_importable(python: &OsString) -> Result<()> {
    // find_spec does not import the package (and so not pandas): a few milliseconds.
    let probe = "import importlib.util, sys; \
                 sys.exit(0 if importlib.util.find_spec('refault') else 3)";
    let status = Command::new(python)
        .args(["-c", probe])
        .status()
        .with_context(|| {
            format!(
                "cannot start {} (the Python layer needs Python >= 3.11); {INSTALL_HINT}",
                python.to_string_lossy()
            )
        })?;
    match status.code() {
        Some(0) => Ok(()),
        Some(3) => bail!(
            "the Python package `refault` is not installed for {}; {INSTALL_HINT}",
            python.to_string_lossy()
        ),
        _ => bail!(
            "{} failed to look for the `refault` package ({status}); {INSTALL_HINT}",
            python.to_string_lossy()
        ),
    }
}

/// Runs `python3 -m refault <subcommand> <args>`; does not return on success.
pub fn main(subcommand: &str, a: Args) -> Result<()> {
    let python = python();
    check_importable(&python)?;
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "refault", subcommand]).args(&a.args);
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // Only returns on failure.
        let err = cmd.exec();
        Err(err).with_context(|| format!("cannot start {}", python.to_string_lossy()))
    }
    #[cfg(not(unix))]
    {
        let status = cmd
            .status()
            .with_context(|| format!("cannot start {}", python.to_string_lossy()))?;
        std::process::exit(status.code().unwrap_or(1));
    }
}
