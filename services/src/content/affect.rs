//! Affect personas (`config/affect/*.yaml`): the calibration defaults file plus a persona that
//! overrides only what it names (objects merge key by key, lists are replaced), compiled into
//! the core's [`AffectModel`] — with file, line or field, and reason in every error, and an
//! unstable persona refused naming its loop.

use std::path::Path;

use geppetto_core::affect::{AffectConfig, AffectModel, merge_layers};

use super::ContentError;

/// The calibration defaults shipped in the repository.
pub const DEFAULTS: (&str, &str) = (
    "config/affect/defaults.yaml",
    include_str!("../../../config/affect/defaults.yaml"),
);

/// The personas shipped in the repository.
const EMBEDDED: [(&str, &str); 2] = [
    (
        "halgrim",
        include_str!("../../../config/affect/halgrim.yaml"),
    ),
    ("mira", include_str!("../../../config/affect/mira.yaml")),
];

fn parse_yaml(file: &str, text: &str) -> Result<serde_json::Value, ContentError> {
    serde_saphyr::from_str(text).map_err(|e| {
        let message = e.to_string();
        ContentError::Invalid {
            file: file.to_owned(),
            reason: message
                .strip_prefix("error: ")
                .unwrap_or(&message)
                .to_owned(),
        }
    })
}

fn read(path: &Path) -> Result<String, ContentError> {
    std::fs::read_to_string(path).map_err(|source| ContentError::Read {
        file: path.display().to_string(),
        source,
    })
}

/// Loads a persona: `persona` is a file path or the name of a shipped persona; `defaults` a
/// file path, or the shipped calibration when `None`.
pub fn load_persona(
    persona: &str,
    defaults: Option<&Path>,
) -> Result<(AffectConfig, AffectModel), ContentError> {
    let (defaults_file, defaults_text) = match defaults {
        Some(path) => (path.display().to_string(), read(path)?),
        None => (DEFAULTS.0.to_owned(), DEFAULTS.1.to_owned()),
    };
    let (persona_file, persona_text) = if Path::new(persona).is_file() {
        (persona.to_owned(), read(Path::new(persona))?)
    } else {
        let (_, text) = EMBEDDED
            .iter()
            .find(|(name, _)| *name == persona)
            .ok_or_else(|| ContentError::Invalid {
                file: persona.to_owned(),
                reason: format!(
                    "no such file, and no shipped persona of that name (shipped: {})",
                    EMBEDDED
                        .iter()
                        .map(|(name, _)| *name)
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            })?;
        (format!("config/affect/{persona}.yaml"), (*text).to_owned())
    };
    compile_persona(
        (&defaults_file, &defaults_text),
        (&persona_file, &persona_text),
    )
}

/// Compiles a persona given as `(file, text)` over the defaults given the same way.
pub fn compile_persona(
    (defaults_file, defaults_text): (&str, &str),
    (persona_file, persona_text): (&str, &str),
) -> Result<(AffectConfig, AffectModel), ContentError> {
    let mut merged = parse_yaml(defaults_file, defaults_text)?;
    merge_layers(&mut merged, parse_yaml(persona_file, persona_text)?);
    let config = AffectConfig::from_value(merged).map_err(|e| ContentError::Invalid {
        file: format!("{persona_file} (over {defaults_file})"),
        reason: e.to_string(),
    })?;
    let model = AffectModel::compile(&config).map_err(|e| ContentError::Invalid {
        file: format!("{persona_file} (over {defaults_file})"),
        reason: e.to_string(),
    })?;
    Ok((config, model))
}

/// Applies run-time tick overrides (`--time-scale`, `--resolution`) and recompiles.
pub fn with_tick(
    config: &AffectConfig,
    time_scale: Option<f64>,
    resolution: Option<f64>,
) -> Result<AffectModel, ContentError> {
    let mut config = config.clone();
    if let Some(scale) = time_scale {
        config.tick.time_scale = scale;
    }
    if let Some(resolution) = resolution {
        config.tick.resolution_factor = resolution;
    }
    AffectModel::compile(&config).map_err(|e| ContentError::Invalid {
        file: config.name.clone(),
        reason: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_personas_load_over_the_defaults() {
        for (name, _) in EMBEDDED {
            let (config, model) = load_persona(name, None).expect(name);
            assert_eq!(config.name, name);
            assert!(model.state_index("anger").is_some());
        }
        let (halgrim, _) = load_persona("halgrim", None).expect("halgrim");
        assert!(halgrim.outburst.enabled, "the persona turns the overlay on");
        assert_eq!(halgrim.states.len(), 9, "and keeps every default state");
        let (_, mira) = load_persona("mira", None).expect("mira");
        assert_eq!(mira.dt_s(), 2.0, "her 20 s anger half-life sets the tick");
    }

    #[test]
    fn bad_personas_are_refused_with_file_and_reason() {
        let dir = std::env::temp_dir().join(format!("geppetto-affect-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let unstable = dir.join("volcano.yaml");
        std::fs::write(&unstable, "name: volcano\ncouplings:\n  - { from: anger, to: stress, rate: 0.3 }\n  - { from: stress, to: anger, rate: 0.3 }\n").expect("write");
        let error = load_persona(unstable.to_str().expect("utf-8"), None)
            .expect_err("unstable")
            .to_string();
        assert!(
            error.contains("volcano.yaml") && error.contains("anger ↔ stress"),
            "{error}"
        );
        let typo = dir.join("typo.yaml");
        std::fs::write(&typo, "name: typo\nstates:\n  anger: { half_life: 3 }\n").expect("write");
        let error = load_persona(typo.to_str().expect("utf-8"), None)
            .expect_err("typo")
            .to_string();
        assert!(
            error.contains("typo.yaml") && error.contains("states.anger"),
            "{error}"
        );
        assert!(
            load_persona("nobody", None)
                .expect_err("unknown")
                .to_string()
                .contains("halgrim, mira")
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
