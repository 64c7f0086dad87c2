//! Progress of the long commands (a replay or an export of a large log, a world simulated over
//! many days) on stderr, drawn only when stderr is a terminal: piped or captured output, and
//! every test, see nothing of it. Stdout, where the results go, is never touched.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar of `length` steps of `unit`, labelled `what`; hidden unless stderr is a terminal.
pub fn bar(length: u64, what: &str, unit: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(Some(length), ProgressDrawTarget::stderr());
    let template = format!("{{msg}} [{{bar:32}}] {{pos}}/{{len}} {unit} ({{eta}} left)");
    if let Ok(style) = ProgressStyle::with_template(&template) {
        bar.set_style(style.progress_chars("=> "));
    }
    bar.set_message(what.to_owned());
    bar
}

/// A count of `unit` steps, labelled `what`, for work of unknown length (a log read as it
/// comes); hidden unless stderr is a terminal.
pub fn counter(what: &str, unit: &str) -> ProgressBar {
    let counter = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template(&format!("{{msg}} {{pos}} {unit}")) {
        counter.set_style(style);
    }
    counter.set_message(what.to_owned());
    counter
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bar_counts_its_steps_and_draws_nothing_without_a_terminal() {
        let progress = bar(10, "replaying", "events");
        progress.inc(4);
        assert_eq!(progress.position(), 4);
        assert_eq!(progress.length(), Some(10));
        // The test harness captures stderr: no terminal, so nothing is drawn.
        assert!(progress.is_hidden());
        progress.finish_and_clear();
        let counter = counter("exporting", "entries");
        counter.inc(3);
        assert_eq!((counter.position(), counter.length()), (3, None));
        assert!(counter.is_hidden());
    }
}
