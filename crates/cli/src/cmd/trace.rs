//! `refault trace convert|info|record-scenario` and `refault record -- CMD ARGS`.
//!
//! Traces: refault-trace (docs/traces.md). `record` runs a program under valgrind's lackey
//! tool and converts its memory trace into a binary refault trace.

use anyhow::{bail, Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

use refault_trace::binary::BinaryWriter;
use refault_trace::text::TextWriter;
use refault_trace::{Format, Header, Kind, Object, Record, RecordRead, RecordWrite, Writer};

#[derive(clap::Subcommand)]
pub enum TraceCmd {
    /// Convert a trace (any readable format) into refault's binary or text form.
    Convert(ConvertArgs),
    /// Print a trace's tasks, objects, events, footprint and reuse-distance summary.
    Info(InfoArgs),
    /// Write the event stream a scenario's generators produce as a trace (one trace task per
    /// task instance), to replay it or to edit it.
    RecordScenario(RecordScenarioArgs),
}

#[derive(clap::Args)]
pub struct TraceArgs {
    #[command(subcommand)]
    cmd: TraceCmd,
}

#[derive(clap::Args)]
pub struct InputFormat {
    /// Input format: auto, binary, text, lackey, oracle-general, csv.
    #[arg(long = "from", default_value = "auto")]
    from: String,
    /// csv only: the columns, e.g. offset=4,size=5,op=3,volume=2,skip=1 (docs/traces.md).
    #[arg(long)]
    columns: Option<String>,
}

#[derive(clap::Args)]
pub struct ConvertArgs {
    input: PathBuf,
    output: PathBuf,
    #[command(flatten)]
    fmt: InputFormat,
    /// Output form: binary (zstd-compressed) or text. Default: text if OUTPUT ends in .txt,
    /// else binary.
    #[arg(long)]
    to: Option<String>,
    /// zstd level of the binary form (1-19; 0 = stored uncompressed). The default, 1, is
    /// zstd's fastest: on refault traces it compresses as well as 3 (a 10 M-event Zipf trace:
    /// 13.71 MB at level 1, 13.72 MB at 3) in 75-85% of the CPU time.
    #[arg(long, default_value_t = DEFAULT_LEVEL)]
    level: i32,
}

#[derive(clap::Args)]
pub struct InfoArgs {
    input: PathBuf,
    #[command(flatten)]
    fmt: InputFormat,
}

#[derive(clap::Args)]
pub struct RecordScenarioArgs {
    /// The scenario file (TOML).
    scenario: PathBuf,
    /// The trace to write (.txt: text form, else binary).
    output: PathBuf,
    #[arg(long = "set", value_name = "KEY=VALUE")]
    set: Vec<String>,
    #[arg(long)]
    seed: Option<u64>,
    /// Events per task at most (required for tasks that run until the run's duration).
    #[arg(long)]
    max_events: Option<u64>,
}

#[derive(clap::Args)]
pub struct RecordArgs {
    /// The trace to write (.txt: text form, else binary).
    #[arg(long, short, default_value = "recorded.rft")]
    out: PathBuf,
    /// Keep valgrind's lackey log next to the trace (OUT.lackey) instead of deleting it.
    #[arg(long)]
    keep_log: bool,
    /// The program and its arguments.
    #[arg(trailing_var_arg = true, required = true, num_args = 1..)]
    cmd: Vec<String>,
}

pub fn main(a: TraceArgs) -> Result<()> {
    match a.cmd {
        TraceCmd::Convert(c) => convert(c),
        TraceCmd::Info(i) => info(i),
        TraceCmd::RecordScenario(r) => record_scenario(r),
    }
}

fn input_format(f: &InputFormat) -> Result<Format> {
    if f.columns.is_some() && f.from != "csv" {
        bail!("--columns applies to --from csv only");
    }
    Format::parse(&f.from, f.columns.as_deref()).map_err(anyhow::Error::msg)
}

/// A writer of the form `to` (or the one OUTPUT's name implies) into a temporary file next to
/// `out`; the caller renames it into place when complete (never a half-written trace).
/// zstd level of every binary trace the commands write (see `--level`).
const DEFAULT_LEVEL: i32 = 1;

fn writer(out: &Path, to: Option<&str>, level: i32, h: &Header) -> Result<(Writer, PathBuf)> {
    let text = match to {
        Some("text") => true,
        Some("binary") => false,
        Some(o) => bail!("--to {o}: binary or text"),
        None => out.extension().is_some_and(|e| e == "txt"),
    };
    if !(0..=19).contains(&level) {
        bail!("--level {level}: 0 (stored) to 19");
    }
    let tmp = out.with_extension(format!(
        "{}.partial",
        out.extension().and_then(|e| e.to_str()).unwrap_or("")
    ));
    let f = std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let f: Box<dyn Write + Send> = Box::new(f);
    let w = if text {
        Writer::Text(TextWriter::new(f, h)?)
    } else {
        Writer::Binary(BinaryWriter::new(f, h, (level > 0).then_some(level))?)
    };
    Ok((w, tmp))
}

fn convert(a: ConvertArgs) -> Result<()> {
    let fmt = input_format(&a.fmt)?;
    let t0 = std::time::Instant::now();
    let mut r = refault_trace::open(&a.input, &fmt)?;
    let (w, tmp) = writer(&a.output, a.to.as_deref(), a.level, r.header())?;
    let n = match refault_trace::copy(&mut r, w) {
        Ok(n) => n,
        Err(e) => {
            let _ = std::fs::remove_file(&tmp);
            return Err(e.into());
        }
    };
    std::fs::rename(&tmp, &a.output)
        .with_context(|| format!("renaming {} to {}", tmp.display(), a.output.display()))?;
    let s = t0.elapsed().as_secs_f64();
    eprintln!(
        "{}: {n} events in {s:.2} s ({:.1} M events/s), {} bytes written to {}",
        a.input.display(),
        n as f64 / s.max(1e-9) / 1e6,
        std::fs::metadata(&a.output).map(|m| m.len()).unwrap_or(0),
        a.output.display()
    );
    Ok(())
}

fn info(a: InfoArgs) -> Result<()> {
    let fmt = input_format(&a.fmt)?;
    let mut r = refault_trace::open(&a.input, &fmt)?;
    let info = refault_trace::info::collect(&mut r)?;
    out!("{}", info.render())?;
    Ok(())
}

/// The trace record of a generated op; None for kernel allocations (the kalloc workload) and
/// file creation (`create` phases), which the trace format has no record for. An fdatasync
/// (the pgbench emulation's WAL flush) is recorded as `fsync`, which the format has: a
/// replay commits the journal where the generated run did not.
fn map_op(op: refault_workload::Op) -> Option<refault_trace::Op> {
    use refault_trace::Op as T;
    use refault_workload::Op as W;
    let hint = |h| match h {
        refault_workload::Hint::Normal => refault_trace::Hint::Normal,
        refault_workload::Hint::Random => refault_trace::Hint::Random,
        refault_workload::Hint::Sequential => refault_trace::Hint::Sequential,
    };
    Some(match op {
        W::Touch { obj, page, write } => T::Touch { obj, page, write },
        W::Read { obj, page, nr } => T::Read { obj, page, nr },
        W::Write { obj, page, nr } => T::Write { obj, page, nr },
        W::Fsync { obj } | W::Fdatasync { obj } => T::Fsync { obj },
        W::Advise { obj, hint: h } => T::Advise { obj, hint: hint(h) },
        W::Think { ns } => T::Think { ns },
        W::OpEnd => T::OpEnd,
        W::Phase { idx } => T::Phase { idx },
        W::KernelAlloc { .. }
        | W::KernelFree { .. }
        | W::Fork { .. }
        | W::Exit { .. }
        | W::Create { .. } => return None,
    })
}

fn record_scenario(a: RecordScenarioArgs) -> Result<()> {
    use refault_workload::EventSource;
    let overrides = a
        .set
        .iter()
        .map(|s| refault_scenario::parse_override(s))
        .collect::<Result<Vec<_>, _>>()?;
    let scn = refault_scenario::load(&a.scenario, &overrides, a.seed)?;
    if let Some(t) = scn
        .tasks
        .iter()
        .find(|t| matches!(t.workload, refault_scenario::Workload::Kalloc(_)))
    {
        bail!(
            "task {} makes kernel allocations (workload = \"kalloc\"), which a trace cannot \
             hold: traces record user-space events only",
            t.name
        );
    }
    if let Some(t) = scn
        .tasks
        .iter()
        .find(|t| matches!(t.workload, refault_scenario::Workload::Process(_)))
    {
        bail!(
            "task {} forks and exits processes (workload = \"process\"), which a trace cannot \
             hold: traces have no fork or exit",
            t.name
        );
    }
    let mut sources = refault_workload::try_task_sources(&scn)?;
    if a.max_events.is_none() {
        if let Some(s) = sources.iter().find(|s| s.len_hint().is_none()) {
            bail!(
                "task {} runs until the run's duration (an endless stream); give --max-events",
                s.name
            );
        }
    }
    let header = Header {
        tasks: sources.iter().map(|s| s.name.clone()).collect(),
        objects: scn
            .objects
            .iter()
            .map(|o| Object {
                name: o.name.clone(),
                kind: match o.kind {
                    refault_scenario::ObjectKind::Anon => Kind::Anon,
                    refault_scenario::ObjectKind::Shmem => Kind::Shmem,
                    refault_scenario::ObjectKind::File => Kind::File,
                },
                pages: o.size_pages,
                exists: o.exists,
            })
            .collect(),
    };
    let (mut w, tmp) = writer(&a.output, None, DEFAULT_LEVEL, &header)?;
    let limit = a.max_events.unwrap_or(u64::MAX);
    let mut n = 0u64;
    for (t, s) in sources.iter_mut().enumerate() {
        let mut k = 0u64;
        while k < limit {
            let Some(op) = s.next_op() else { break };
            let Some(op) = map_op(op) else {
                bail!(
                    "task {}: a kernel allocation or a file creation (create phase) cannot be \
                     written to a trace",
                    s.name
                );
            };
            w.write_record(&Record { task: t as u32, op })?;
            k += 1;
        }
        n += k;
    }
    Box::new(w).finish()?;
    std::fs::rename(&tmp, &a.output)?;
    eprintln!(
        "{}: {} tasks, {n} events written to {}",
        scn.name,
        header.tasks.len(),
        a.output.display()
    );
    Ok(())
}

/// `refault record -- CMD ARGS`: valgrind --tool=lackey --trace-mem=yes, then convert.
pub fn record(a: RecordArgs) -> Result<()> {
    let log = a.out.with_extension("lackey");
    let status = std::process::Command::new("valgrind")
        .arg("--tool=lackey")
        .arg("--trace-mem=yes")
        .arg(format!("--log-file={}", log.display()))
        .args(&a.cmd)
        .status();
    let status = match status {
        Ok(s) => s,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => bail!(
            "valgrind is not installed (Debian/Ubuntu: apt-get install valgrind); `refault record` runs programs under its lackey tool"
        ),
        Err(e) => bail!("cannot run valgrind: {e}"),
    };
    let result = (|| -> Result<()> {
        if !log.exists() {
            bail!("valgrind wrote no log ({status})");
        }
        if !status.success() {
            eprintln!(
                "refault: note: {} exited with {status}; converting what it traced",
                a.cmd[0]
            );
        }
        let mut r = refault_trace::open(&log, &Format::Lackey)?;
        let (w, tmp) = writer(&a.out, None, DEFAULT_LEVEL, r.header())?;
        let n = refault_trace::copy(&mut r, w)?;
        std::fs::rename(&tmp, &a.out)?;
        eprintln!("{}: {n} events written to {}", a.cmd[0], a.out.display());
        Ok(())
    })();
    if !a.keep_log {
        let _ = std::fs::remove_file(&log);
    }
    result
}
