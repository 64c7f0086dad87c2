//! `geppetto validate [PATH…]`: checks content files the way the service would load them and
//! prints one `file:line: field: problem` line per error: the line of the element at fault,
//! or line 1 when the problem is the file's place or the whole file. The kind of a file is told by its folder: `profiles/`, `sets/`, `affect/`,
//! `archetypes/`, `worlds/`, and `examples/` (scenarios, decide requests, affect event files).
//! With no path it checks the repository's `config/`.

use std::path::{Path, PathBuf};

use geppetto_core::vocabulary::Vocabulary;
use geppetto_core::wire::{self, limits::DecideLimits};

use super::error::CommandError;
use crate::content::archetypes::ArchetypeLibrary;
use crate::content::profiles::ProfileLibrary;
use crate::content::profiles::parse_profile;
use crate::content::sets::parse_set;
use crate::content::{ContentError, affect};

/// What a validation found.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Findings {
    /// Files checked.
    pub checked: usize,
    /// One line per problem, `file:line: message` (line 1 when the problem is the file's
    /// place or the whole file).
    pub problems: Vec<String>,
}

/// Rewrites a loader's `file: … line N … rest` message as `file:N: rest`.
fn as_line(error: &ContentError) -> String {
    let text = error.to_string();
    let Some((file, rest)) = text.split_once(": ") else {
        return text;
    };
    let rest = rest.strip_prefix("error: ").unwrap_or(rest);
    let Some(after) = rest.strip_prefix("line ") else {
        return format!("{file}:1: {rest}");
    };
    let digits: String = after.chars().take_while(char::is_ascii_digit).collect();
    let remainder = after[digits.len()..].trim_start_matches([':', ' ']);
    // Drop a "column N:" that follows the line.
    let remainder = match remainder.strip_prefix("column ") {
        Some(col) => col
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start_matches([':', ' ']),
        None => remainder,
    };
    // serde-saphyr appends a source snippet after the first line; keep only the message.
    let message = remainder.lines().next().unwrap_or(remainder);
    format!("{file}:{digits}: {message}")
}

fn yaml_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| {
                    p.extension()
                        .is_some_and(|ext| ext == "yaml" || ext == "yml" || ext == "json")
                })
                .collect()
        })
        .unwrap_or_default();
    files.sort();
    files
}

fn read(path: &Path, findings: &mut Findings) -> Option<String> {
    match std::fs::read_to_string(path) {
        Ok(text) => Some(text),
        Err(e) => {
            findings
                .problems
                .push(format!("{}:1: cannot read: {e}", path.display()));
            None
        }
    }
}

fn check_file(kind: &str, path: &Path, findings: &mut Findings) {
    let file = path.display().to_string();
    let Some(text) = read(path, findings) else {
        return;
    };
    findings.checked += 1;
    let result: Result<(), String> = match kind {
        "profiles" => parse_profile(&file, &text)
            .map(|_| ())
            .map_err(|e| as_line(&e)),
        "sets" => parse_set(&file, &text).map(|_| ()).map_err(|e| as_line(&e)),
        "affect" if path.file_stem().is_some_and(|s| s == "defaults") => {
            affect::load_persona(&file, Some(path))
                .map(|_| ())
                .map_err(|e| as_line(&e))
        }
        "affect" => affect::load_persona(&file, None)
            .map(|_| ())
            .map_err(|e| as_line(&e)),
        "examples" => check_example(path, &file, &text),
        "worlds" => crate::content::world_file::parse_world_file(&file, &text)
            .map(|_| ())
            .map_err(|e| as_line(&e)),
        other => Err(format!(
            "{file}:1: in a folder `{other}` that is no kind of content ({}): not checked; move it \
             into the folder of its kind",
            CONTENT_KINDS.join("/, ") + "/"
        )),
    };
    if let Err(problem) = result {
        findings.problems.push(problem);
    }
}

/// Worlds given as directories of section files under `dir`, each checked whole.
fn check_world_dirs(dir: &Path, findings: &mut Findings) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut worlds: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    worlds.sort();
    for world in worlds {
        check_world_dir(&world, findings);
    }
}

/// One world given as a directory of section files, checked whole.
fn check_world_dir(world: &Path, findings: &mut Findings) {
    findings.checked += 1;
    if let Err(e) = crate::content::world_file::load_world_file(world) {
        findings.problems.push(as_line(&e));
    }
}

fn check_example(path: &Path, file: &str, text: &str) -> Result<(), String> {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    // A problem in a decoded value is reported at the line of the element its path names.
    let at_path = |path: &str, message: &str| {
        let line = crate::content::locate::line_of(text, path).unwrap_or(1);
        format!("{file}:{line}: {path}: {message}")
    };
    let wire_error = |e: wire::WireError| at_path(&e.path, &e.message);
    // A decide request is checked as `geppetto decide` checks it: its limits, its profile,
    // and the decision itself; its refusal reads `path: problem`.
    let decided = |e: CommandError| {
        let said = e.to_string();
        match said.split_once(": ") {
            Some((path, message)) if !path.contains(' ') => at_path(path, message),
            _ => format!("{file}:1: {said}"),
        }
    };
    let library = || ProfileLibrary::embedded().map_err(|e| format!("{file}:1: {e}"));
    let limits = DecideLimits::default();
    if name.starts_with("decide-batch") {
        super::decide::decide_batch(text.to_owned(), &library()?, &limits, 1)
            .map(|_| ())
            .map_err(decided)
    } else if name.starts_with("decide") {
        super::decide::decide(text.to_owned(), &library()?, &limits)
            .map(|_| ())
            .map_err(decided)
    } else if name.starts_with("simulate") {
        let spec = super::simulate::parse_scenario(path, text).map_err(|e| e.to_string())?;
        wire::scenario::compile_scenario(&spec, None, &mut Vocabulary::new())
            .map(|_| ())
            .map_err(wire_error)
    } else if name.starts_with("affect") {
        serde_saphyr::from_str::<super::affect::EventsFile>(text)
            .map(|_| ())
            .map_err(|e| {
                as_line(&ContentError::Invalid {
                    file: file.to_owned(),
                    reason: e.to_string(),
                })
            })
    } else {
        Err(format!(
            "{file}:1: an example's name says what it is — it starts with `decide`, \
             `decide-batch`, `simulate` or `affect`; this one is not checked"
        ))
    }
}

/// The content folders under a config root, each checked as its kind.
const CONTENT_KINDS: [&str; 6] = [
    "profiles",
    "sets",
    "affect",
    "archetypes",
    "examples",
    "worlds",
];

/// Checks `paths` (files or folders); an empty list checks `default_root`.
pub fn validate(paths: &[PathBuf], default_root: &Path) -> Findings {
    let mut findings = Findings::default();
    let roots: Vec<PathBuf> = if paths.is_empty() {
        vec![default_root.to_path_buf()]
    } else {
        paths.to_vec()
    };
    for root in roots {
        if root.is_file() {
            let kind = root
                .parent()
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if kind == "archetypes" {
                check_archetypes(root.parent().unwrap_or(&root), &mut findings);
            } else {
                check_file(&kind, &root, &mut findings);
            }
            continue;
        }
        let in_worlds = root
            .parent()
            .and_then(|p| p.file_name())
            .is_some_and(|n| n == "worlds");
        if root.is_dir() && in_worlds {
            check_world_dir(&root, &mut findings);
            continue;
        }
        let folders: Vec<(String, PathBuf)> =
            match root.file_name().map(|n| n.to_string_lossy().into_owned()) {
                Some(kind) if CONTENT_KINDS.contains(&kind.as_str()) => {
                    vec![(kind, root.clone())]
                }
                _ => CONTENT_KINDS
                    .iter()
                    .map(|kind| ((*kind).to_owned(), root.join(kind)))
                    .filter(|(_, dir)| dir.is_dir())
                    .collect(),
            };
        if folders.is_empty() {
            findings.problems.push(format!(
                "{}: no content here: neither a folder of one kind ({}) nor one holding them",
                root.display(),
                CONTENT_KINDS.join(", ")
            ));
        }
        for (kind, dir) in folders {
            if kind == "archetypes" {
                check_archetypes(&dir, &mut findings);
                continue;
            }
            if kind == "worlds" {
                check_world_dirs(&dir, &mut findings);
            }
            for path in yaml_files(&dir) {
                check_file(&kind, &path, &mut findings);
            }
        }
    }
    findings
}

/// Archetypes are checked together: inheritance spans files.
fn check_archetypes(dir: &Path, findings: &mut Findings) {
    let files = yaml_files(dir);
    let mut texts = Vec::new();
    for path in &files {
        if let Some(text) = read(path, findings) {
            findings.checked += 1;
            texts.push((path.display().to_string(), text));
        }
    }
    if let Err(error) =
        ArchetypeLibrary::from_sources(texts.iter().map(|(f, t)| (f.clone(), t.as_str())))
    {
        findings.problems.push(as_line(&error));
    }
}

/// Runs `validate` and renders its report; problems make it an error (exit code 1).
pub fn run(paths: &[PathBuf], default_root: &Path) -> Result<String, CommandError> {
    let findings = validate(paths, default_root);
    if findings.problems.is_empty() {
        Ok(format!(
            "{} content files checked, no problems",
            findings.checked
        ))
    } else {
        Err(CommandError::Environment(format!(
            "{}\n{} problem(s) in {} content files checked",
            findings.problems.join("\n"),
            findings.problems.len(),
            findings.checked
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_content_is_valid() {
        let root = Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../config"));
        let findings = validate(&[], root);
        assert!(findings.problems.is_empty(), "{:#?}", findings.problems);
        assert!(findings.checked >= 25, "{} files", findings.checked);
    }

    #[test]
    fn examples_are_checked_as_their_commands_check_them_and_stray_files_are_named() {
        let dir = std::env::temp_dir().join(format!("geppetto-examples-{}", std::process::id()));
        let examples = dir.join("examples");
        std::fs::create_dir_all(&examples).expect("dir");
        let tavern = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../config/examples/decide-tavern.json"
        ))
        .expect("example");
        let mut request: serde_json::Value = serde_json::from_str(&tavern).expect("json");
        request["profile"] = serde_json::json!("no-such-profile");
        let pretty = serde_json::to_string_pretty(&request).expect("json");
        let profile_line = 1 + pretty
            .lines()
            .position(|line| line.contains("\"profile\""))
            .expect("a profile line");
        std::fs::write(examples.join("decide-unknown-profile.json"), &pretty).expect("write");
        std::fs::write(
            examples.join("simulate-forever.yaml"),
            "hours: 1e308\nagent: {id: a, position: [0, 0]}\nworld: {providers: []}\n",
        )
        .expect("write");
        std::fs::write(examples.join("notes.yaml"), "a: 1\n").expect("write");
        let findings = validate(std::slice::from_ref(&dir), Path::new("unused"));
        let said = |name: &str| {
            findings
                .problems
                .iter()
                .find(|p| p.contains(name))
                .unwrap_or_else(|| panic!("{name} not reported: {:#?}", findings.problems))
                .clone()
        };
        assert!(said("decide-unknown-profile").contains("no-such-profile"));
        assert!(
            said("decide-unknown-profile").contains(&format!(
                "decide-unknown-profile.json:{profile_line}: profile: "
            )),
            "{}",
            said("decide-unknown-profile")
        );
        assert!(said("simulate-forever").contains("hours"));
        assert!(said("notes.yaml").contains("notes.yaml:1: "));
        assert!(said("notes.yaml").contains("not checked"));
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn problems_are_reported_as_file_line_message() {
        let dir = std::env::temp_dir().join(format!("geppetto-validate-{}", std::process::id()));
        let sets = dir.join("sets");
        std::fs::create_dir_all(&sets).expect("dir");
        std::fs::write(sets.join("bad.yaml"), "name: s\ninputs:\n  - { name: danger }\nactions:\n  - name: flee\n    considerations:\n      - { name: a, input: dangr, curve: { kind: linear } }\n").expect("write");
        std::fs::write(sets.join("typo.yaml"), "name: t\ninputz: []\nactions: []\n")
            .expect("write");
        let findings = validate(std::slice::from_ref(&dir), Path::new("unused"));
        assert_eq!(findings.checked, 2);
        let bad = findings
            .problems
            .iter()
            .find(|p| p.contains("bad.yaml"))
            .expect("bad reported");
        assert!(
            bad.contains("bad.yaml:7: actions[0].considerations[0].input: unknown input `dangr`"),
            "{bad}"
        );
        let typo = findings
            .problems
            .iter()
            .find(|p| p.contains("typo.yaml"))
            .expect("typo reported");
        assert!(
            typo.contains("typo.yaml:2:") && typo.contains("inputz"),
            "{typo}"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
