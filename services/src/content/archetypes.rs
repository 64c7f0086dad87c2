//! Archetypes (`config/archetypes/*.yaml`): the shipped ones embedded in the binary plus any in
//! a directory, parsed with line-numbered errors, resolved through their `parent` chains
//! (cycles and unknown parents refused) and compiled once per vocabulary.

use std::collections::BTreeMap;
use std::path::Path;

use geppetto_core::archetype::{ArchetypeSpec, CompiledArchetype, resolve_archetypes};
use geppetto_core::vocabulary::Vocabulary;

use super::ContentError;

/// The archetype files shipped in the repository.
const EMBEDDED: [(&str, &str); 9] = [
    (
        "config/archetypes/villager.yaml",
        include_str!("../../../config/archetypes/villager.yaml"),
    ),
    (
        "config/archetypes/blacksmith.yaml",
        include_str!("../../../config/archetypes/blacksmith.yaml"),
    ),
    (
        "config/archetypes/guard.yaml",
        include_str!("../../../config/archetypes/guard.yaml"),
    ),
    (
        "config/archetypes/merchant.yaml",
        include_str!("../../../config/archetypes/merchant.yaml"),
    ),
    (
        "config/archetypes/innkeeper.yaml",
        include_str!("../../../config/archetypes/innkeeper.yaml"),
    ),
    (
        "config/archetypes/farmer.yaml",
        include_str!("../../../config/archetypes/farmer.yaml"),
    ),
    (
        "config/archetypes/priest.yaml",
        include_str!("../../../config/archetypes/priest.yaml"),
    ),
    (
        "config/archetypes/child.yaml",
        include_str!("../../../config/archetypes/child.yaml"),
    ),
    (
        "config/archetypes/thief.yaml",
        include_str!("../../../config/archetypes/thief.yaml"),
    ),
];

/// Resolved archetypes by name.
#[derive(Clone, Debug)]
pub struct ArchetypeLibrary {
    resolved: BTreeMap<String, ArchetypeSpec>,
}

fn parse(file: &str, text: &str) -> Result<(String, serde_json::Value), ContentError> {
    let invalid = |e: serde_saphyr::Error| {
        let message = e.to_string();
        ContentError::Invalid {
            file: file.to_owned(),
            reason: message
                .strip_prefix("error: ")
                .unwrap_or(&message)
                .to_owned(),
        }
    };
    // Typed first, alone: typos and wrong types are reported with their line; then as data
    // for inheritance.
    let _: ArchetypeSpec = serde_saphyr::from_str(text).map_err(invalid)?;
    let value: serde_json::Value = serde_saphyr::from_str(text).map_err(invalid)?;
    let name = value
        .get("name")
        .and_then(|n| n.as_str())
        .filter(|n| !n.is_empty())
        .ok_or_else(|| ContentError::Invalid {
            file: file.to_owned(),
            reason: "name: missing or empty".into(),
        })?
        .to_owned();
    Ok((name, value))
}

impl ArchetypeLibrary {
    /// Resolves a set of `(file, text)` archetype sources; a later file with the same name
    /// replaces an earlier one.
    pub fn from_sources<'a>(
        sources: impl IntoIterator<Item = (String, &'a str)>,
    ) -> Result<Self, ContentError> {
        let mut authored = BTreeMap::new();
        let mut files = BTreeMap::new();
        for (file, text) in sources {
            let (name, value) = parse(&file, text)?;
            // Where its `parent:` is written, for errors about its ancestry.
            let parent_line = text
                .lines()
                .position(|line| line.trim_start().starts_with("parent:"))
                .map(|at| at + 1);
            files.insert(name.clone(), (file, parent_line));
            authored.insert(name, value);
        }
        let resolved = resolve_archetypes(&authored).map_err(|error| {
            use geppetto_core::archetype::ArchetypeError;
            let (name, about_parent) = match &error {
                ArchetypeError::UnknownParent { child, .. } => (child, true),
                ArchetypeError::Cycle { name, .. } | ArchetypeError::TooDeep { name, .. } => {
                    (name, true)
                }
                ArchetypeError::Invalid { name, .. } => (name, false),
            };
            let file = match files.get(name) {
                Some((file, Some(line))) if about_parent => format!("{file}:{line}"),
                Some((file, _)) => file.clone(),
                None => name.clone(),
            };
            ContentError::Invalid {
                file,
                reason: error.to_string(),
            }
        })?;
        Ok(Self { resolved })
    }

    /// The shipped archetypes.
    pub fn embedded() -> Result<Self, ContentError> {
        Self::from_sources(
            EMBEDDED
                .iter()
                .map(|(file, text)| ((*file).to_owned(), *text)),
        )
    }

    /// The shipped archetypes plus every `*.yaml` in `dir`.
    pub fn embedded_and_dir(dir: &Path) -> Result<Self, ContentError> {
        let mut texts: Vec<(String, String)> = EMBEDDED
            .iter()
            .map(|(file, text)| ((*file).to_owned(), (*text).to_owned()))
            .collect();
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .map_err(|source| ContentError::Read {
                file: dir.display().to_string(),
                source,
            })?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| {
                path.extension()
                    .is_some_and(|ext| ext == "yaml" || ext == "yml")
            })
            .collect();
        paths.sort();
        for path in paths {
            let text = std::fs::read_to_string(&path).map_err(|source| ContentError::Read {
                file: path.display().to_string(),
                source,
            })?;
            texts.push((path.display().to_string(), text));
        }
        Self::from_sources(
            texts
                .iter()
                .map(|(file, text)| (file.clone(), text.as_str())),
        )
    }

    /// Replaces a resolved archetype (a what-if runs on a changed copy; archetypes inheriting
    /// from it keep what they resolved).
    pub fn replace(&mut self, name: &str, spec: ArchetypeSpec) {
        self.resolved.insert(name.to_owned(), spec);
    }

    /// The archetype called `name`.
    pub fn get(&self, name: &str) -> Option<&ArchetypeSpec> {
        self.resolved.get(name)
    }

    /// Every archetype name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.resolved.keys().map(String::as_str)
    }

    /// Every archetype compiled with `vocabulary`, by name.
    pub fn compile_all(&self, vocabulary: &mut Vocabulary) -> BTreeMap<String, CompiledArchetype> {
        self.resolved
            .iter()
            .map(|(name, spec)| {
                (
                    name.clone(),
                    CompiledArchetype::new(spec.clone(), vocabulary),
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ancestry_errors_name_the_file_and_line_of_the_parent_and_deep_chains_are_refused_fast() {
        let cycle = [
            ("mods/a.yaml".to_owned(), "name: a\nparent: b\n"),
            ("mods/b.yaml".to_owned(), "name: b\n# note\nparent: a\n"),
        ];
        let error = ArchetypeLibrary::from_sources(cycle).expect_err("a cycle");
        assert!(error.to_string().starts_with("mods/a.yaml:2: "), "{error}");
        assert!(error.to_string().contains("a → b → a"), "{error}");
        let texts: Vec<String> = (0..5000)
            .map(|i| match i {
                0 => "name: a0\n".to_owned(),
                i => format!("name: a{i}\nparent: a{}\n", i - 1),
            })
            .collect();
        let chain = texts
            .iter()
            .enumerate()
            .map(|(i, text)| (format!("deep/a{i}.yaml"), text.as_str()));
        let error = ArchetypeLibrary::from_sources(chain).expect_err("too deep");
        assert!(
            error.to_string().contains("more than 32 ancestors"),
            "{error}"
        );
    }

    #[test]
    fn the_shipped_archetypes_resolve() {
        let library = ArchetypeLibrary::embedded().expect("resolves");
        assert_eq!(library.names().count(), 9);
        assert_eq!(
            library.get("innkeeper").map(|a| a.parent.as_deref()),
            Some(Some("merchant"))
        );
    }

    #[test]
    fn errors_name_the_file() {
        let broken = [("a.yaml".to_owned(), "name: a\nparent: nobody\n")];
        let error = ArchetypeLibrary::from_sources(broken.iter().map(|(f, t)| (f.clone(), *t)))
            .expect_err("orphan");
        assert!(
            error.to_string().starts_with("a.yaml:") && error.to_string().contains("nobody"),
            "{error}"
        );
        let typo = [(
            "b.yaml".to_owned(),
            "name: b\nneeds:\n  HUNGER: { wieght: 2 }\n",
        )];
        let error = ArchetypeLibrary::from_sources(typo.iter().map(|(f, t)| (f.clone(), *t)))
            .expect_err("typo");
        assert!(
            error.to_string().contains("line 3") && error.to_string().contains("wieght"),
            "{error}"
        );
    }
}
