//! Reactive utility sets authored as YAML (`config/sets/*.yaml`): parsing, checking with file,
//! line and field in every error, and compiling into the core's [`UtilitySet`] with the caller's
//! vocabulary (so set inputs and agent considerations share symbols).
//!
//! Refused at load: unknown fields (a typo is an error, not a silent default), a consideration
//! naming an input the set does not declare, duplicate names, an action without
//! considerations, bad curve parameters, negative weights or cooldowns.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use geppetto_core::decision::curve::{SampledCurve, Shape, ShapeParams};
use geppetto_core::life::reactive::{
    DEFAULT_COMMITMENT_BONUS, DEFAULT_DECISION_INTERVAL_S, Selector, SetAction, SetConsideration,
    SetInput, UtilitySet,
};
use geppetto_core::vocabulary::Vocabulary;
use serde::{Deserialize, Serialize};
use serde_saphyr::Spanned;

use super::ContentError;

/// The set files shipped in the repository, compiled into the binary.
const EMBEDDED: [(&str, &str); 2] = [
    (
        "config/sets/villager.yaml",
        include_str!("../../../config/sets/villager.yaml"),
    ),
    (
        "config/sets/duel.yaml",
        include_str!("../../../config/sets/duel.yaml"),
    ),
];

/// Top-n of `top_weighted_random` when the file does not say.
pub const DEFAULT_TOP_N: usize = 3;

fn default_bonus() -> f64 {
    DEFAULT_COMMITMENT_BONUS
}

fn default_interval() -> f64 {
    DEFAULT_DECISION_INTERVAL_S
}

fn one() -> f64 {
    1.0
}

fn default_top_n() -> usize {
    DEFAULT_TOP_N
}

geppetto_core::wire_enum! {
    /// A selector's name in a set file.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub enum SelectorName {
        /// The best one.
        #[default]
        Highest = "highest",
        /// Score as weight.
        WeightedRandom = "weighted_random",
        /// Weighted random among the best `top_n`.
        TopWeightedRandom = "top_weighted_random",
        /// Highest non-empty bucket, best inside it.
        Bucketed = "bucketed",
    }
}

/// An input declaration.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct InputFile {
    /// The key it reads.
    pub name: String,
    /// Raw value mapped to 0; default 0.
    #[serde(default)]
    pub min: f64,
    /// Raw value mapped to 1; default 1.
    #[serde(default = "one")]
    pub max: f64,
}

/// Curve parameters as authored (unknown keys refused, unlike the lenient wire form).
#[derive(Clone, Copy, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ParamsFile {
    /// `m`; default 1.
    #[serde(default = "one")]
    pub slope: f64,
    /// `k`; default 1.
    #[serde(default = "one")]
    pub exponent: f64,
    /// `c`; default 0.
    #[serde(default)]
    pub x_shift: f64,
    /// `b`; default 0.
    #[serde(default)]
    pub y_shift: f64,
}

/// A curve as authored, tagged by `kind`.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CurveFile {
    /// `m(x − c) + b`.
    Linear(ParamsFile),
    /// `m(x − c)^k + b`.
    Polynomial(ParamsFile),
    /// `m / (1 + e^(−k(x − c))) + b`.
    Logistic(ParamsFile),
    /// The logistic's inverse.
    Logit(ParamsFile),
    /// `m·e^(−(x − c)²/2k²) + b`.
    Gaussian(ParamsFile),
    /// Piecewise linear through `[[x, y], …]`.
    Sampled {
        /// The keys.
        keys: Vec<[f64; 2]>,
    },
}

/// A consideration as authored.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ConsiderationFile {
    /// Its name.
    pub name: String,
    /// The declared input it reads.
    pub input: Spanned<String>,
    /// Its curve.
    pub curve: Spanned<CurveFile>,
}

/// An action as authored.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ActionFile {
    /// Its name.
    pub name: Spanned<String>,
    /// Multiplier; default 1.
    #[serde(default = "one")]
    pub weight: f64,
    /// Bucket; default 0.
    #[serde(default)]
    pub bucket: u32,
    /// Seconds of cooldown after it ends; default 0.
    #[serde(default)]
    pub cooldown_s: f64,
    /// Its considerations.
    pub considerations: Vec<ConsiderationFile>,
}

/// A set file.
#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SetFile {
    /// The set's name.
    pub name: String,
    /// For humans.
    #[serde(default)]
    pub description: String,
    /// Declared inputs.
    pub inputs: Vec<InputFile>,
    /// Picking policy; default `highest`.
    #[serde(default)]
    pub selector: SelectorName,
    /// For `top_weighted_random`; default 3.
    #[serde(default = "default_top_n")]
    pub top_n: usize,
    /// Bonus for the running action; default 0.15.
    #[serde(default = "default_bonus")]
    pub commitment_bonus: f64,
    /// Seconds between re-scorings; default 0.2.
    #[serde(default = "default_interval")]
    pub decision_interval_s: f64,
    /// Buckets at or above this preempt needs-driven actions; default none.
    #[serde(default)]
    pub emergency_bucket: Option<u32>,
    /// The actions.
    pub actions: Vec<ActionFile>,
}

/// A checked set file, ready to compile against any vocabulary.
#[derive(Clone, Debug)]
pub struct LoadedSet {
    /// Where it came from.
    pub file: String,
    /// What it says.
    pub spec: SetFile,
}

fn shape(curve: &CurveFile) -> Result<Shape, String> {
    let params = |p: &ParamsFile| ShapeParams {
        slope: p.slope,
        exponent: p.exponent,
        x_shift: p.x_shift,
        y_shift: p.y_shift,
    };
    let shape = match curve {
        CurveFile::Linear(p) => Shape::Linear(params(p)),
        CurveFile::Polynomial(p) => Shape::Polynomial(params(p)),
        CurveFile::Logistic(p) => Shape::Logistic(params(p)),
        CurveFile::Logit(p) => Shape::Logit(params(p)),
        CurveFile::Gaussian(p) => Shape::Gaussian(params(p)),
        CurveFile::Sampled { keys } => {
            let keys = keys.iter().map(|[x, y]| (*x, *y)).collect();
            Shape::Sampled(SampledCurve::new(keys).map_err(|e| e.to_string())?)
        }
    };
    shape.validate().map_err(|e| e.to_string())?;
    Ok(shape)
}

/// Parses and checks one set file's text; `file` names it in errors.
pub fn parse_set(file: &str, text: &str) -> Result<LoadedSet, ContentError> {
    let invalid = |reason: String| ContentError::Invalid {
        file: file.to_owned(),
        reason,
    };
    let at =
        |line: u64, field: &str, reason: &str| invalid(format!("line {line}: {field}: {reason}"));
    let spec: SetFile = serde_saphyr::from_str(text).map_err(|e| {
        let message = e.to_string();
        invalid(
            message
                .strip_prefix("error: ")
                .unwrap_or(&message)
                .to_owned(),
        )
    })?;
    if spec.name.is_empty() {
        return Err(invalid("name: must not be empty".into()));
    }
    let mut declared = HashSet::new();
    for (i, input) in spec.inputs.iter().enumerate() {
        if !declared.insert(input.name.as_str()) {
            return Err(invalid(format!(
                "inputs[{i}].name: `{}` is declared twice",
                input.name
            )));
        }
        if !(input.min.is_finite() && input.max.is_finite() && input.max > input.min) {
            return Err(invalid(format!("inputs[{i}]: needs finite min < max")));
        }
    }
    let checks = [
        ("commitment_bonus", spec.commitment_bonus),
        ("decision_interval_s", spec.decision_interval_s),
    ];
    for (field, value) in checks {
        if !(value.is_finite() && value >= 0.0) {
            return Err(invalid(format!(
                "{field}: must be a finite, non-negative number"
            )));
        }
    }
    if spec.actions.is_empty() {
        return Err(invalid("actions: a set needs at least one action".into()));
    }
    let mut names = HashSet::new();
    for (a, action) in spec.actions.iter().enumerate() {
        let line = action.name.referenced.line();
        let field = format!("actions[{a}]");
        if !names.insert(action.name.value.as_str()) {
            return Err(at(
                line,
                &format!("{field}.name"),
                &format!("`{}` is declared twice", action.name.value),
            ));
        }
        if !(action.weight.is_finite() && action.weight >= 0.0) {
            return Err(at(
                line,
                &format!("{field}.weight"),
                "must be a finite, non-negative number",
            ));
        }
        if !(action.cooldown_s.is_finite() && action.cooldown_s >= 0.0) {
            return Err(at(
                line,
                &format!("{field}.cooldown_s"),
                "must be a finite, non-negative number",
            ));
        }
        if action.considerations.is_empty() {
            return Err(at(
                line,
                &format!("{field}.considerations"),
                "an action needs at least one consideration",
            ));
        }
        for (c, consideration) in action.considerations.iter().enumerate() {
            let field = format!("{field}.considerations[{c}]");
            if !declared.contains(consideration.input.value.as_str()) {
                let known: Vec<&str> = spec.inputs.iter().map(|i| i.name.as_str()).collect();
                let reason = format!(
                    "unknown input `{}` (declared: {})",
                    consideration.input.value,
                    known.join(", ")
                );
                return Err(at(
                    consideration.input.referenced.line(),
                    &format!("{field}.input"),
                    &reason,
                ));
            }
            shape(&consideration.curve.value).map_err(|reason| {
                at(
                    consideration.curve.referenced.line(),
                    &format!("{field}.curve"),
                    &reason,
                )
            })?;
        }
    }
    Ok(LoadedSet {
        file: file.to_owned(),
        spec,
    })
}

impl LoadedSet {
    /// The set's name.
    pub fn name(&self) -> &str {
        &self.spec.name
    }

    /// The core set, its input names interned in `vocabulary`.
    pub fn compile(&self, vocabulary: &mut Vocabulary) -> UtilitySet {
        let spec = &self.spec;
        let index_of: BTreeMap<&str, usize> = spec
            .inputs
            .iter()
            .enumerate()
            .map(|(i, input)| (input.name.as_str(), i))
            .collect();
        let selector = match spec.selector {
            SelectorName::Highest => Selector::Highest,
            SelectorName::WeightedRandom => Selector::WeightedRandom,
            SelectorName::TopWeightedRandom => Selector::TopWeightedRandom(spec.top_n),
            SelectorName::Bucketed => Selector::Bucketed,
        };
        UtilitySet {
            name: spec.name.clone(),
            inputs: spec
                .inputs
                .iter()
                .map(|input| SetInput {
                    name: vocabulary.intern(&input.name),
                    min: input.min,
                    max: input.max,
                })
                .collect(),
            selector,
            commitment_bonus: spec.commitment_bonus,
            decision_interval_s: spec.decision_interval_s,
            emergency_bucket: spec.emergency_bucket,
            actions: spec
                .actions
                .iter()
                .map(|action| SetAction {
                    name: action.name.value.clone(),
                    weight: action.weight,
                    bucket: action.bucket,
                    cooldown_s: action.cooldown_s,
                    considerations: action
                        .considerations
                        .iter()
                        .filter_map(|c| {
                            // Both were checked at load; a failure here cannot happen.
                            let input = *index_of.get(c.input.value.as_str())?;
                            let shape = shape(&c.curve.value).ok()?;
                            Some(SetConsideration {
                                name: c.name.clone(),
                                input,
                                shape,
                            })
                        })
                        .collect(),
                })
                .collect(),
        }
    }
}

/// Sets by name: the embedded ones plus any from a directory.
#[derive(Clone, Debug)]
pub struct SetLibrary {
    sets: BTreeMap<String, LoadedSet>,
}

impl SetLibrary {
    /// The embedded sets.
    pub fn embedded() -> Result<Self, ContentError> {
        let mut sets = BTreeMap::new();
        for (file, text) in EMBEDDED {
            let set = parse_set(file, text)?;
            sets.insert(set.name().to_owned(), set);
        }
        Ok(Self { sets })
    }

    /// Replaces (or adds) a set from its JSON text, checked as a set file would be (a
    /// what-if runs on a changed copy); `file` names it in errors.
    pub fn replace_from_text(&mut self, file: &str, text: &str) -> Result<(), ContentError> {
        let set = parse_set(file, text)?;
        self.sets.insert(set.name().to_owned(), set);
        Ok(())
    }

    /// The set called `name`.
    pub fn get(&self, name: &str) -> Option<&LoadedSet> {
        self.sets.get(name)
    }

    /// Every set name, sorted.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.sets.keys().map(String::as_str)
    }

    /// A set by file path (when it exists) or by embedded name.
    pub fn resolve(&self, path_or_name: &str) -> Result<LoadedSet, ContentError> {
        let path = Path::new(path_or_name);
        if path.is_file() {
            let text = std::fs::read_to_string(path).map_err(|source| ContentError::Read {
                file: path_or_name.to_owned(),
                source,
            })?;
            return parse_set(path_or_name, &text);
        }
        self.get(path_or_name)
            .cloned()
            .ok_or_else(|| ContentError::Invalid {
                file: path_or_name.to_owned(),
                reason: format!(
                    "no such file, and no embedded set of that name (embedded: {})",
                    self.names().collect::<Vec<_>>().join(", ")
                ),
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shipped_sets_load() {
        let library = SetLibrary::embedded().expect("embedded sets load");
        assert_eq!(library.names().collect::<Vec<_>>(), ["duel", "villager"]);
        let villager = library
            .get("villager")
            .expect("villager")
            .compile(&mut Vocabulary::new());
        assert_eq!(villager.selector, Selector::Bucketed);
        assert_eq!(villager.emergency_bucket, Some(5));
        assert!(
            villager
                .actions
                .iter()
                .all(|a| !a.considerations.is_empty())
        );
    }

    #[test]
    fn load_errors_name_the_file_line_and_field() {
        let base = "name: s\ninputs:\n  - { name: danger }\nactions:\n  - name: flee\n    considerations:\n";
        let cases = [
            (
                format!("{base}      - {{ name: a, input: dangr, curve: {{ kind: linear }} }}\n"),
                "line 7",
                "actions[0].considerations[0].input: unknown input `dangr`",
            ),
            (
                format!(
                    "{base}      - {{ name: a, input: danger, curve: {{ kind: gaussian, exponent: 0 }} }}\n"
                ),
                "line 7",
                "actions[0].considerations[0].curve",
            ),
            (
                format!(
                    "{base}      - {{ name: a, input: danger, curve: {{ kind: linear, centre: 2 }} }}\n"
                ),
                "line 7",
                "centre",
            ),
            (
                format!("{base}      - {{ name: a, input: danger, curve: {{ kind: wiggly }} }}\n"),
                "line 7",
                "wiggly",
            ),
            (
                "name: s\ninputs: []\nactions:\n  - name: flee\n    considerations: []\n"
                    .to_owned(),
                "line 4",
                "actions[0].considerations",
            ),
            (
                format!(
                    "{base}      - {{ name: a, input: danger, curve: {{ kind: linear }} }}\nselector: best\n"
                ),
                "line 8",
                "best",
            ),
        ];
        for (text, line, field) in cases {
            let error = parse_set("my_set.yaml", &text)
                .expect_err(field)
                .to_string();
            assert!(error.starts_with("my_set.yaml: "), "{error}");
            assert!(
                error.contains(line) && error.contains(field),
                "expected {line} and {field} in: {error}"
            );
        }
    }
}
