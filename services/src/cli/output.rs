//! Where the commands write their output: stdout through a buffer. A reader that went away
//! (`| head`) ends the process quietly instead of a panic; any other failure ends it with exit
//! code 1.

use std::io::{BufWriter, StdoutLock, Write};

/// Writes to stdout through a buffer. A closed pipe (`| head`) ends the process quietly; any
/// other failure ends it with exit code 1.
pub fn write_stdout(
    write: impl FnOnce(&mut BufWriter<StdoutLock<'static>>) -> std::io::Result<()>,
) {
    let mut out = BufWriter::new(std::io::stdout().lock());
    if let Err(error) = write(&mut out).and_then(|()| out.flush()) {
        if error.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {error}");
        std::process::exit(1);
    }
}

/// Writes one line to stdout (see [`write_stdout`]).
pub fn print_line(line: &str) {
    write_stdout(|out| writeln!(out, "{line}"));
}
