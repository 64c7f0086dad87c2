//! The LLM seams' own content: the prompts, narration templates and perception rules shipped
//! in `config/` (embedded, so the demo runs anywhere) or read from a directory, and the
//! template writer zones make placeholder lines with.

use std::path::Path;
use std::sync::Arc;

use geppetto_llm::{
    LlmAssets, LlmConfig, NarrationTemplates, PerceptionRules, PromptSet, TemplateProvider,
    load_assets_from_dir,
};

/// The prompts, templates and rules shipped in `config/`, embedded so the demo runs anywhere.
pub fn embedded_assets() -> Result<LlmAssets, geppetto_llm::AssetError> {
    Ok(LlmAssets {
        prompts: PromptSet::from_yaml_strs(
            include_str!("../../../config/prompts/narration.yaml"),
            include_str!("../../../config/prompts/perception.yaml"),
        )?,
        narration_templates: NarrationTemplates::from_yaml_str(include_str!(
            "../../../config/templates/narration.yaml"
        ))?,
        perception_rules: PerceptionRules::from_yaml_str(include_str!(
            "../../../config/templates/perception_rules.yaml"
        ))?,
    })
}

/// The assets under `dir` (`prompts/`, `templates/`), or the embedded ones.
pub fn assets(dir: Option<&Path>) -> Result<LlmAssets, geppetto_llm::AssetError> {
    match dir {
        Some(dir) => load_assets_from_dir(dir),
        None => embedded_assets(),
    }
}

/// The template provider zones write placeholders with (the same lines the worker falls back
/// to).
pub fn placeholder_writer(assets: &LlmAssets, config: &LlmConfig) -> Arc<TemplateProvider> {
    Arc::new(TemplateProvider::new(
        assets.narration_templates.clone(),
        assets.perception_rules.clone(),
        config.perception.max_utterance_chars,
    ))
}
