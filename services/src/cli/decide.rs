//! `geppetto decide` and `geppetto decide-batch`: a JSON request in, a JSON answer out, per the
//! contract in docs/contract.md (implemented once, in `geppetto_core::wire`). The request's
//! text is dropped once it is compiled, and the answer is written as it is serialized, so a
//! large request is never held as text, specs, engine values and answer at once.
//!
//! Owns the commands' arguments ([`DecideArgs`]) and their whole run ([`run`], [`run_batch`]):
//! the request read within the limits, decided, and the answer written to stdout.

use std::io::{self, Read, Write};
use std::path::PathBuf;

use geppetto_core::wire;
use geppetto_core::wire::batch::DecidedBatch;
use geppetto_core::wire::decide::Decided;
use geppetto_core::wire::limits::{DecideLimits, check_bytes};
use serde::Serialize;

use super::error::CommandError;
use super::input::{config, profiles};
use super::output::write_stdout;
use crate::content::profiles::{DEFAULT_PROFILE, ProfileLibrary};

/// The arguments of `geppetto decide` (and `decide-batch`'s, flattened).
#[derive(clap::Args)]
pub struct DecideArgs {
    /// Read the request from this file instead of stdin.
    #[arg(long, short)]
    input: Option<PathBuf>,
    /// Indent the answer for humans.
    #[arg(long)]
    pretty: bool,
    /// Also load profiles from this directory (same name overrides the embedded one).
    #[arg(long)]
    profiles_dir: Option<PathBuf>,
    /// Take the request limits from this service config's `[decide]` section (default: the
    /// documented defaults).
    #[arg(long)]
    config: Option<PathBuf>,
}

impl DecideArgs {
    fn limits(&self) -> Result<DecideLimits, CommandError> {
        match &self.config {
            Some(path) => config(path).map(|config| config.decide),
            None => Ok(DecideLimits::default()),
        }
    }

    /// The request, read within `limits`.
    fn request(&self, limits: &DecideLimits) -> Result<String, CommandError> {
        match &self.input {
            Some(path) => {
                let file = std::fs::File::open(path).map_err(|e| {
                    CommandError::Environment(format!("{}: cannot read: {e}", path.display()))
                })?;
                let length = file.metadata().ok().map(|m| m.len());
                read_request(file, &path.display().to_string(), length, limits)
            }
            None => read_request(std::io::stdin().lock(), "stdin", None, limits),
        }
    }
}

/// `geppetto decide`: reads the request, decides it and writes the answer to stdout (nothing
/// is left to print).
pub fn run(args: &DecideArgs) -> Result<String, CommandError> {
    let library = profiles(args.profiles_dir.as_deref())?;
    let limits = args.limits()?;
    let input = args.request(&limits)?;
    let answered = decide(input, &library, &limits)?;
    write_stdout(|out| answered.write(out, args.pretty));
    Ok(String::new())
}

/// `geppetto decide-batch`: as [`run`], scoring on `threads` threads (default: the machine's
/// cores).
pub fn run_batch(args: &DecideArgs, threads: Option<usize>) -> Result<String, CommandError> {
    let library = profiles(args.profiles_dir.as_deref())?;
    let workers = threads.unwrap_or_else(crate::runtime::cores);
    let limits = args.limits()?;
    let input = args.request(&limits)?;
    let answered = decide_batch(input, &library, &limits, workers)?;
    write_stdout(|out| answered.write(out, args.pretty));
    Ok(String::new())
}

fn profile<'a>(
    library: &'a ProfileLibrary,
    name: Option<&str>,
) -> Result<&'a geppetto_core::Profile, CommandError> {
    let name = name.unwrap_or(DEFAULT_PROFILE);
    library.get(name).ok_or_else(|| {
        let known: Vec<&str> = library.names().collect();
        CommandError::BadInput(format!(
            "profile: unknown profile `{name}` (known: {})",
            known.join(", ")
        ))
    })
}

/// A decided request, written with [`Answered::write`].
#[derive(Debug)]
pub enum Answered {
    /// A `decide` request's decision.
    Decide(Decided),
    /// A `decide-batch` request's decisions.
    Batch(DecidedBatch),
}

fn write_json<T: Serialize>(out: &mut impl Write, answer: &T, pretty: bool) -> io::Result<()> {
    if pretty {
        serde_json::to_writer_pretty(&mut *out, answer)?;
    } else {
        serde_json::to_writer(&mut *out, answer)?;
    }
    out.write_all(b"\n")
}

impl Answered {
    /// Writes the answer and a newline to `out` (indented for humans with `pretty`), each
    /// item as it is serialized.
    pub fn write(&self, out: &mut impl Write, pretty: bool) -> io::Result<()> {
        match self {
            Self::Decide(decided) => write_json(out, &decided.answer(), pretty),
            Self::Batch(decided) => write_json(out, &decided.answer(), pretty),
        }
    }
}

/// Reads a request from `source` (a file or stdin, named `name` in errors): at most
/// `limits.max_bytes` are read, and the bytes must be UTF-8. Either failure is a refused
/// input. `expected_bytes` (a file's length) sizes the buffer once: grown by doubling, a
/// request's text would hold up to twice its size.
fn read_request(
    source: impl Read,
    name: &str,
    expected_bytes: Option<u64>,
    limits: &DecideLimits,
) -> Result<String, CommandError> {
    let cap = u64::try_from(limits.max_bytes).unwrap_or(u64::MAX);
    let reserve = expected_bytes.map_or(0, |expected| expected.min(cap.saturating_add(1)));
    let mut bytes = Vec::with_capacity(usize::try_from(reserve).unwrap_or(0));
    source
        .take(cap.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| CommandError::Environment(format!("{name}: cannot read: {e}")))?;
    check_bytes(bytes.len(), &limits.json())
        .map_err(|e| CommandError::BadInput(format!("{name}: {e}")))?;
    String::from_utf8(bytes).map_err(|e| {
        CommandError::BadInput(format!(
            "{name}: not UTF-8: invalid byte at {}",
            e.utf8_error().valid_up_to()
        ))
    })
}

/// Decides one `decide` request; `input` is dropped as soon as the request is compiled.
pub fn decide(
    input: String,
    library: &ProfileLibrary,
    limits: &DecideLimits,
) -> Result<Answered, CommandError> {
    let request = wire::parse_decide(&input, limits)?;
    let profile = profile(library, request.profile())?;
    let compiled = request.compile(profile)?;
    drop(input);
    let decided = compiled.decide()?;
    Ok(Answered::Decide(decided))
}

/// Decides one `decide-batch` request, scoring on `workers` threads; `input` is dropped as
/// soon as the request is compiled.
pub fn decide_batch(
    input: String,
    library: &ProfileLibrary,
    limits: &DecideLimits,
    workers: usize,
) -> Result<Answered, CommandError> {
    let request = wire::parse_decide_batch(&input, limits)?;
    let profile = profile(library, request.profile())?;
    let compiled = request.compile(profile)?;
    drop(input);
    let decided = compiled.decide(workers)?;
    Ok(Answered::Batch(decided))
}
