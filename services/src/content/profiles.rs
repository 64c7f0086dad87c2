//! Genre profiles (`config/profiles/*.yaml`): the embedded set (default, social, open-world,
//! tactical, survival) plus any found in a directory given at run time, selectable by name.

use std::collections::BTreeMap;
use std::path::Path;

use geppetto_core::Profile;

use super::ContentError;

/// The profile files shipped in the repository, compiled into the binary.
const EMBEDDED: [(&str, &str); 6] = [
    (
        "config/profiles/default.yaml",
        include_str!("../../../config/profiles/default.yaml"),
    ),
    (
        "config/profiles/social.yaml",
        include_str!("../../../config/profiles/social.yaml"),
    ),
    (
        "config/profiles/open-world.yaml",
        include_str!("../../../config/profiles/open-world.yaml"),
    ),
    (
        "config/profiles/tactical.yaml",
        include_str!("../../../config/profiles/tactical.yaml"),
    ),
    (
        "config/profiles/survival.yaml",
        include_str!("../../../config/profiles/survival.yaml"),
    ),
    (
        "config/profiles/village.yaml",
        include_str!("../../../config/profiles/village.yaml"),
    ),
];

/// The name a request gets when it names no profile.
pub const DEFAULT_PROFILE: &str = "default";

/// Profiles by name.
#[derive(Clone, Debug)]
pub struct ProfileLibrary {
    profiles: BTreeMap<String, Profile>,
}

/// Parses and checks one profile file's text; `file` is only used in errors.
pub fn parse_profile(file: &str, text: &str) -> Result<Profile, ContentError> {
    let profile: Profile = serde_saphyr::from_str(text).map_err(|e| ContentError::Invalid {
        file: file.to_owned(),
        reason: e.to_string(),
    })?;
    profile.validate().map_err(|e| ContentError::Invalid {
        file: file.to_owned(),
        reason: format!("tuning.{e}"),
    })?;
    if profile.name.is_empty() {
        return Err(ContentError::Invalid {
            file: file.to_owned(),
            reason: "name: must not be empty".into(),
        });
    }
    Ok(profile)
}

impl ProfileLibrary {
    /// The embedded profiles.
    pub fn embedded() -> Result<Self, ContentError> {
        let mut profiles = BTreeMap::new();
        for (file, text) in EMBEDDED {
            let profile = parse_profile(file, text)?;
            profiles.insert(profile.name.clone(), profile);
        }
        Ok(Self { profiles })
    }

    /// The embedded profiles, then every `*.yaml` / `*.yml` in `dir` (same name overrides).
    pub fn embedded_and_dir(dir: &Path) -> Result<Self, ContentError> {
        let mut library = Self::embedded()?;
        let read_error = |source| ContentError::Read {
            file: dir.display().to_string(),
            source,
        };
        let mut paths: Vec<_> = std::fs::read_dir(dir)
            .map_err(read_error)?
            .filter_map(Result::ok)
            .map(|entry| entry.path())
            .filter(|path| {
                path.extension()
                    .is_some_and(|ext| ext == "yaml" || ext == "yml")
            })
            .collect();
        paths.sort();
        for path in paths {
            let file = path.display().to_string();
            let text = std::fs::read_to_string(&path).map_err(|source| ContentError::Read {
                file: file.clone(),
                source,
            })?;
            let profile = parse_profile(&file, &text)?;
            library.profiles.insert(profile.name.clone(), profile);
        }
        Ok(library)
    }

    /// Replaces (or adds) a profile after checking its tuning; a what-if runs on a changed copy.
    pub fn replace(&mut self, profile: Profile) -> Result<(), ContentError> {
        profile.validate().map_err(|e| ContentError::Invalid {
            file: format!("profile {}", profile.name),
            reason: format!("tuning.{e}"),
        })?;
        self.profiles.insert(profile.name.clone(), profile);
        Ok(())
    }

    /// The profile called `name`.
    pub fn get(&self, name: &str) -> Option<&Profile> {
        self.profiles.get(name)
    }

    /// Every profile name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.profiles.keys().map(String::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_genre_profiles_and_the_villages_are_embedded_and_valid() {
        let library = ProfileLibrary::embedded().expect("embedded profiles load");
        let names: Vec<&str> = library.names().collect();
        assert_eq!(
            names,
            [
                "default",
                "open-world",
                "social",
                "survival",
                "tactical",
                "village"
            ]
        );
        let survival = library.get("survival").expect("survival");
        assert_eq!(survival.consideration_weights.get("HUNGER"), Some(&1.5));
        let tactical = library.get("tactical").expect("tactical").tuning.resolve();
        let social = library.get("social").expect("social").tuning.resolve();
        assert!(tactical.temperature < 1.0 && social.temperature > 1.0);
        assert!(social.preemption_margin > tactical.preemption_margin);
        assert!(tactical.perception_noise > 0.0);
    }

    #[test]
    fn a_bad_profile_names_its_file_and_field() {
        let error = parse_profile("mine.yaml", "name: x\ntuning:\n  temperature: hot\n")
            .expect_err("refused");
        let text = error.to_string();
        assert!(text.starts_with("mine.yaml:"), "{text}");
        assert!(text.contains("temperature"), "{text}");
        let error = parse_profile("neg.yaml", "name: x\ntuning:\n  distance_reference: -3\n")
            .expect_err("refused");
        assert!(error.to_string().contains("distance_reference"), "{error}");
        let error = parse_profile("typo.yaml", "name: x\ntunning: {}\n").expect_err("refused");
        assert!(error.to_string().contains("tunning"), "{error}");
    }
}
