//! The data files of the LLM seams — prompts (`config/prompts/`), narration templates and
//! perception keyword rules (`config/templates/`) — parsed from text and checked at load
//! (unknown placeholders, empty lists, unknown event kinds are refused). The only filesystem
//! access in the crate is `load_assets_from_dir`, an optional helper; everything else takes
//! the file's text.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;

use crate::file_error::AssetError;
use crate::perception::{EventType, kind_is_known};

fn parse<T: for<'de> Deserialize<'de>>(what: &'static str, text: &str) -> Result<T, AssetError> {
    serde_saphyr::from_str(text).map_err(|source| AssetError::Parse {
        what,
        message: source.to_string(),
    })
}

/// Whether `name` (the text between braces) is a placeholder name: lowercase ASCII letters
/// and underscores. Anything else in braces (JSON examples in a prompt) is literal text.
fn is_placeholder_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_lowercase() || b == b'_')
}

/// Replaces each `{name}` in `template` by its value, in one pass: text substituted in is
/// never scanned again, so a player's `{utterance}` containing braces cannot expand anything.
/// An unknown `{name}` is kept as written (load-time checks refuse them in data files).
#[must_use]
pub fn render(template: &str, values: &[(&str, &str)]) -> String {
    let mut out = String::with_capacity(template.len());
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let replaced = after.find('}').and_then(|close| {
            let name = &after[..close];
            values
                .iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value, close))
        });
        match replaced {
            Some((value, close)) => {
                out.push_str(value);
                rest = &after[close + 1..];
            }
            None => {
                out.push('{');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

/// Placeholders a template uses, in order.
fn placeholders(template: &str) -> Vec<&str> {
    let mut names = Vec::new();
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        let after = &rest[open + 1..];
        match after.find('}') {
            Some(close) if is_placeholder_name(&after[..close]) => {
                names.push(&after[..close]);
                rest = &after[close + 1..];
            }
            Some(_) => rest = after,
            None => break,
        }
    }
    names
}

fn check_placeholders(
    what: &'static str,
    path: &str,
    template: &str,
    allowed: &[&str],
) -> Result<(), AssetError> {
    match placeholders(template)
        .into_iter()
        .find(|name| !allowed.contains(name))
    {
        Some(unknown) => Err(AssetError::Invalid {
            what,
            path: path.to_owned(),
            reason: format!("unknown placeholder {{{unknown}}}; allowed: {allowed:?}"),
        }),
        None => Ok(()),
    }
}

/// One prompt: a system message and a user-message template.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PromptTemplate {
    /// The system message (instructions).
    pub system: String,
    /// The user message, with placeholders.
    pub user: String,
}

/// Placeholders a narration prompt may use.
pub const NARRATION_PLACEHOLDERS: [&str; 5] =
    ["initiator", "target", "interaction", "room", "mood"];
/// Placeholders a perception prompt may use.
pub const PERCEPTION_PLACEHOLDERS: [&str; 4] = ["speaker", "addressee", "npcs", "utterance"];

impl PromptTemplate {
    fn load(what: &'static str, text: &str, allowed: &[&str]) -> Result<Self, AssetError> {
        let prompt: Self = parse(what, text)?;
        check_placeholders(what, "system", &prompt.system, allowed)?;
        check_placeholders(what, "user", &prompt.user, allowed)?;
        Ok(prompt)
    }
}

/// The two prompts of the LLM provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PromptSet {
    /// Events → text (`config/prompts/narration.yaml`).
    pub narration: PromptTemplate,
    /// Text → candidate events (`config/prompts/perception.yaml`).
    pub perception: PromptTemplate,
}

impl PromptSet {
    /// Parses the two prompt files' text.
    ///
    /// # Errors
    /// A parse error or a placeholder the seam does not provide.
    pub fn from_yaml_strs(narration: &str, perception: &str) -> Result<Self, AssetError> {
        Ok(Self {
            narration: PromptTemplate::load(
                "narration prompt",
                narration,
                &NARRATION_PLACEHOLDERS,
            )?,
            perception: PromptTemplate::load(
                "perception prompt",
                perception,
                &PERCEPTION_PLACEHOLDERS,
            )?,
        })
    }
}

/// Narration templates keyed by interaction kind; `default` serves unknown kinds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NarrationTemplates {
    by_interaction: BTreeMap<String, Vec<String>>,
    default: Vec<String>,
}

impl NarrationTemplates {
    /// Parses `config/templates/narration.yaml`: a map from interaction kind to a non-empty
    /// list of lines, which must include `default`.
    ///
    /// # Errors
    /// A parse error, a missing or empty `default`, an empty list, an unknown placeholder.
    pub fn from_yaml_str(text: &str) -> Result<Self, AssetError> {
        const WHAT: &str = "narration templates";
        let mut by_interaction: BTreeMap<String, Vec<String>> = parse(WHAT, text)?;
        for (kind, lines) in &by_interaction {
            if lines.is_empty() {
                return Err(AssetError::Invalid {
                    what: WHAT,
                    path: kind.clone(),
                    reason: "needs at least one line".to_owned(),
                });
            }
            for (index, line) in lines.iter().enumerate() {
                check_placeholders(
                    WHAT,
                    &format!("{kind}[{index}]"),
                    line,
                    &NARRATION_PLACEHOLDERS,
                )?;
            }
        }
        let default = by_interaction
            .remove("default")
            .ok_or_else(|| AssetError::Invalid {
                what: WHAT,
                path: "default".to_owned(),
                reason: "is required (it serves interaction kinds with no lines)".to_owned(),
            })?;
        Ok(Self {
            by_interaction,
            default,
        })
    }

    /// The lines for an interaction kind (case-insensitive), or the default lines.
    #[must_use]
    pub fn lines_for(&self, interaction: &str) -> &[String] {
        self.by_interaction
            .get(&interaction.to_ascii_lowercase())
            .unwrap_or(&self.default)
    }
}

/// One keyword rule: when a phrase occurs in an utterance, propose an event.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KeywordRule {
    /// Event type proposed.
    #[serde(rename = "type")]
    pub event_type: EventType,
    /// Event kind proposed (must be known for the type).
    pub kind: String,
    /// Phrases matched case-insensitively on word boundaries.
    pub keywords: Vec<String>,
    /// Magnitude proposed (clamped like any other candidate's).
    pub magnitude: f64,
}

/// The keyword/rule fallback of perception (`config/templates/perception_rules.yaml`).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PerceptionRules {
    /// Rules in priority order: earlier rules' candidates come first.
    pub rules: Vec<KeywordRule>,
}

impl PerceptionRules {
    /// Parses the rules file.
    ///
    /// # Errors
    /// A parse error, an unknown kind for the type, an empty keyword list, a keyword that is
    /// blank, a magnitude that is not finite.
    pub fn from_yaml_str(text: &str) -> Result<Self, AssetError> {
        const WHAT: &str = "perception rules";
        let rules: Self = parse(WHAT, text)?;
        for (index, rule) in rules.rules.iter().enumerate() {
            let invalid = |reason: &str| AssetError::Invalid {
                what: WHAT,
                path: format!("rules[{index}]"),
                reason: reason.to_owned(),
            };
            if !kind_is_known(rule.event_type, &rule.kind) {
                return Err(invalid("unknown kind for this event type"));
            }
            if rule.keywords.is_empty() || rule.keywords.iter().any(|k| k.trim().is_empty()) {
                return Err(invalid(
                    "keywords must be a non-empty list of non-blank phrases",
                ));
            }
            if !rule.magnitude.is_finite() {
                return Err(invalid("magnitude must be finite"));
            }
        }
        Ok(rules)
    }
}

/// Every data file of the crate, parsed.
#[derive(Debug, Clone)]
pub struct LlmAssets {
    /// The provider's prompts.
    pub prompts: PromptSet,
    /// The template provider's narration lines.
    pub narration_templates: NarrationTemplates,
    /// The template provider's perception rules.
    pub perception_rules: PerceptionRules,
}

/// Reads and parses the asset files under a config directory: `prompts/narration.yaml`,
/// `prompts/perception.yaml`, `templates/narration.yaml`, `templates/perception_rules.yaml`.
///
/// # Errors
/// The first file that cannot be read or parsed, named in the error.
pub fn load_assets_from_dir(config_dir: &Path) -> Result<LlmAssets, AssetError> {
    let read = |relative: &str| {
        let path = config_dir.join(relative);
        std::fs::read_to_string(&path).map_err(|source| AssetError::Io { path, source })
    };
    let with_file = |relative: &str, error: AssetError| match error {
        AssetError::Parse { what, message } => AssetError::Parse {
            what,
            message: format!("{}: {message}", config_dir.join(relative).display()),
        },
        AssetError::Invalid { what, path, reason } => AssetError::Invalid {
            what,
            path: format!("{}: {path}", config_dir.join(relative).display()),
            reason,
        },
        other @ AssetError::Io { .. } => other,
    };
    let narration_prompt = read("prompts/narration.yaml")?;
    let perception_prompt = read("prompts/perception.yaml")?;
    let prompts = PromptSet::from_yaml_strs(&narration_prompt, &perception_prompt)
        .map_err(|e| with_file("prompts/", e))?;
    let narration_templates = NarrationTemplates::from_yaml_str(&read("templates/narration.yaml")?)
        .map_err(|e| with_file("templates/narration.yaml", e))?;
    let perception_rules =
        PerceptionRules::from_yaml_str(&read("templates/perception_rules.yaml")?)
            .map_err(|e| with_file("templates/perception_rules.yaml", e))?;
    Ok(LlmAssets {
        prompts,
        narration_templates,
        perception_rules,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_substitutes_once_and_keeps_unknown_braces() {
        type Case<'a> = (&'a str, &'a [(&'a str, &'a str)], &'a str);
        let cases: [Case; 5] = [
            ("{a} and {b}", &[("a", "X"), ("b", "Y")], "X and Y"),
            ("{a}", &[("a", "{b}"), ("b", "boom")], "{b}"),
            ("{unknown} {a}", &[("a", "X")], "{unknown} X"),
            ("no braces", &[("a", "X")], "no braces"),
            ("dangling {a", &[("a", "X")], "dangling {a"),
        ];
        for (template, values, expected) in cases {
            assert_eq!(render(template, values), expected, "{template}");
        }
    }

    #[test]
    fn shipped_prompts_templates_and_rules_load() {
        let prompts = PromptSet::from_yaml_strs(
            include_str!("../../config/prompts/narration.yaml"),
            include_str!("../../config/prompts/perception.yaml"),
        )
        .expect("shipped prompts load");
        assert!(prompts.perception.user.contains("{utterance}"));
        let templates = NarrationTemplates::from_yaml_str(include_str!(
            "../../config/templates/narration.yaml"
        ))
        .expect("shipped templates load");
        assert!(!templates.lines_for("argue").is_empty());
        assert_eq!(
            templates.lines_for("no such kind"),
            templates.default.as_slice()
        );
        let rules = PerceptionRules::from_yaml_str(include_str!(
            "../../config/templates/perception_rules.yaml"
        ))
        .expect("shipped rules load");
        assert!(!rules.rules.is_empty());
    }

    #[test]
    fn bad_data_files_are_refused_with_where_and_why() {
        let unknown_placeholder =
            NarrationTemplates::from_yaml_str("default: [\"{initiator} hits {victim}\"]\n")
                .expect_err("unknown placeholder");
        assert!(unknown_placeholder.to_string().contains("{victim}"));
        let no_default =
            NarrationTemplates::from_yaml_str("argue: [\"x\"]\n").expect_err("default");
        assert!(no_default.to_string().contains("default"));
        let empty = NarrationTemplates::from_yaml_str("default: []\n").expect_err("empty");
        assert!(empty.to_string().contains("at least one"));
        let bad_kind = PerceptionRules::from_yaml_str(
            "rules:\n  - type: social_event\n    kind: bribe\n    keywords: [gold]\n    magnitude: 1\n",
        )
        .expect_err("unknown kind");
        assert!(bad_kind.to_string().contains("rules[0]"));
        let bad_prompt = PromptSet::from_yaml_strs(
            "system: s\nuser: \"{utterance}\"\n",
            "system: s\nuser: \"{utterance}\"\n",
        )
        .expect_err("narration prompt cannot see the utterance");
        assert!(bad_prompt.to_string().contains("narration prompt"));
    }

    #[test]
    fn directory_loader_reads_the_shipped_config() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../config");
        let assets = load_assets_from_dir(&dir).expect("shipped config dir loads");
        assert!(!assets.perception_rules.rules.is_empty());
        let missing = load_assets_from_dir(&dir.join("no-such-dir")).expect_err("missing dir");
        assert!(matches!(missing, AssetError::Io { .. }));
    }
}
