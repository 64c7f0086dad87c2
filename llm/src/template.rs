//! The deterministic template provider: narration lines drawn from
//! `config/templates/narration.yaml` by the request's seed, and perception candidates from the
//! keyword rules of `config/templates/perception_rules.yaml`. It serves when no LLM is
//! configured, when a breaker is open and when the tick budget is spent, and it writes every
//! placeholder. Same request ⇒ same text and candidates, on any machine.

use std::future::ready;

use serde_json::{Value, json};

use crate::assets::{NarrationTemplates, PerceptionRules, render};
use crate::perception::{EventType, truncate_chars};
use crate::provider::{Metered, Provider, ProviderFuture};
use crate::request::{NarrationRequest, NpcRef, PerceptionRequest};

/// Name the template provider reports.
pub const TEMPLATE_PROVIDER_NAME: &str = "template";

/// The deterministic fallback provider.
#[derive(Debug, Clone)]
pub struct TemplateProvider {
    templates: NarrationTemplates,
    rules: PerceptionRules,
    max_utterance_chars: usize,
}

impl TemplateProvider {
    /// A provider over parsed templates and rules; utterances are read up to
    /// `max_utterance_chars` characters.
    #[must_use]
    pub fn new(
        templates: NarrationTemplates,
        rules: PerceptionRules,
        max_utterance_chars: usize,
    ) -> Self {
        Self {
            templates,
            rules,
            max_utterance_chars,
        }
    }

    /// The line for a narration request, chosen by its seed and interaction kind.
    #[must_use]
    pub fn narrate_now(&self, request: &NarrationRequest) -> String {
        let lines = self.templates.lines_for(&request.interaction);
        let pick = mix(request.seed ^ fnv1a(request.interaction.as_bytes()));
        let index = usize::try_from(pick % lines.len().max(1) as u64).unwrap_or_default();
        let line = lines.get(index).map_or("", String::as_str);
        render(line, &request.placeholder_values())
    }

    /// Candidate events from the keyword rules, in rule order. A social rule aims at the
    /// first NPC named in the utterance, else at the addressee; a gossip rule needs
    /// a listener (the addressee, else the first NPC named) and a different NPC named as its
    /// subject. Rules without such NPCs propose nothing.
    #[must_use]
    pub fn perceive_now(&self, request: &PerceptionRequest) -> Vec<Value> {
        let text = truncate_chars(&request.text, self.max_utterance_chars).to_lowercase();
        let named = named_npcs(&text, request);
        let addressee = request.context.addressee.as_deref();
        let mut candidates = Vec::new();
        for rule in &self.rules.rules {
            let matched = rule
                .keywords
                .iter()
                .any(|keyword| find_phrase(&text, &keyword.to_lowercase()).is_some());
            if !matched {
                continue;
            }
            let summary = format!("{} (keyword rule)", rule.kind);
            match rule.event_type {
                EventType::SocialEvent => {
                    if let Some(target) = named.first().copied().or(addressee) {
                        candidates.push(json!({
                            "type": EventType::SocialEvent.as_str(),
                            "kind": rule.kind,
                            "target": target,
                            "magnitude": rule.magnitude,
                            "summary": summary,
                        }));
                    }
                }
                EventType::GossipEvent => {
                    let listener = addressee.or_else(|| named.first().copied());
                    let subject = listener
                        .and_then(|listener| named.iter().copied().find(|id| *id != listener));
                    if let (Some(listener), Some(subject)) = (listener, subject) {
                        candidates.push(json!({
                            "type": EventType::GossipEvent.as_str(),
                            "kind": rule.kind,
                            "listener": listener,
                            "subject": subject,
                            "magnitude": rule.magnitude,
                            "summary": summary,
                        }));
                    }
                }
            }
        }
        candidates
    }
}

impl Provider for TemplateProvider {
    fn name(&self) -> &str {
        TEMPLATE_PROVIDER_NAME
    }

    fn narrate<'a>(&'a self, request: &'a NarrationRequest) -> ProviderFuture<'a, String> {
        Box::pin(ready(Ok(Metered::free(self.narrate_now(request)))))
    }

    fn perceive<'a>(&'a self, request: &'a PerceptionRequest) -> ProviderFuture<'a, Vec<Value>> {
        Box::pin(ready(Ok(Metered::free(self.perceive_now(request)))))
    }
}

/// Ids of the context's NPCs whose name occurs in `text` (lowercase), by first occurrence.
/// Other zones' NPCs are included on purpose: aiming at one yields a candidate the validator
/// refuses (and reports), never a silent retarget to the addressee.
fn named_npcs<'a>(text: &str, request: &'a PerceptionRequest) -> Vec<&'a str> {
    let mut found: Vec<(usize, &NpcRef)> = request
        .context
        .npcs
        .iter()
        .filter_map(|npc| find_phrase(text, &npc.name.to_lowercase()).map(|at| (at, npc)))
        .collect();
    found.sort_by(|a, b| a.0.cmp(&b.0).then_with(|| a.1.id.cmp(&b.1.id)));
    found.into_iter().map(|(_, npc)| npc.id.as_str()).collect()
}

/// Byte position of the first occurrence of `phrase` in `text` that starts and ends on a
/// word boundary.
pub(crate) fn find_phrase(text: &str, phrase: &str) -> Option<usize> {
    if phrase.is_empty() {
        return None;
    }
    let is_word = |c: char| c.is_alphanumeric() || c == '\'';
    text.match_indices(phrase).map(|(at, _)| at).find(|&at| {
        let before = text[..at].chars().next_back();
        let after = text[at + phrase.len()..].chars().next();
        !before.is_some_and(is_word) && !after.is_some_and(is_word)
    })
}

/// SplitMix64's finaliser: a well-mixed, version-stable function of the seed.
fn mix(seed: u64) -> u64 {
    let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// FNV-1a, so the interaction kind shifts the pick without any process-seeded hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xCBF2_9CE4_8422_2325, |hash, byte| {
        (hash ^ u64::from(*byte)).wrapping_mul(0x0100_0000_01B3)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Participant, PerceptionContext, Priority};

    fn provider() -> TemplateProvider {
        TemplateProvider::new(
            NarrationTemplates::from_yaml_str(
                "default: [\"{initiator} and {target} {interaction}.\"]\nargue: [\"{initiator} and {target} argue.\", \"{initiator} snaps at {target}.\", \"{target} glares at {initiator}.\"]\n",
            )
            .expect("templates"),
            PerceptionRules::from_yaml_str(
                "rules:\n  - type: social_event\n    kind: insult\n    keywords: [idiot, \"you stink\"]\n    magnitude: 0.5\n  - type: gossip_event\n    kind: slander\n    keywords: [liar]\n    magnitude: 0.4\n",
            )
            .expect("rules"),
            400,
        )
    }

    fn narration(interaction: &str, seed: u64) -> NarrationRequest {
        NarrationRequest {
            interaction_id: "i".to_owned(),
            zone: "village".to_owned(),
            room: "square".to_owned(),
            initiator: Participant {
                id: "gundren".to_owned(),
                name: "Gundren".to_owned(),
            },
            target: Participant {
                id: "mira".to_owned(),
                name: "Mira".to_owned(),
            },
            interaction: interaction.to_owned(),
            mood: "calm".to_owned(),
            known: Default::default(),
            present: Vec::new(),
            priority: Priority::Witnessed,
            seed,
            tags: crate::request::SpendTags::default(),
        }
    }

    fn perception(text: &str, addressee: Option<&str>) -> PerceptionRequest {
        let npc = |id: &str, name: &str, zone: &str| NpcRef {
            id: id.to_owned(),
            name: name.to_owned(),
            zone: zone.to_owned(),
        };
        PerceptionRequest {
            utterance_id: "u".to_owned(),
            speaker: "p1".to_owned(),
            text: text.to_owned(),
            context: PerceptionContext {
                zone: "village".to_owned(),
                room: "square".to_owned(),
                addressee: addressee.map(str::to_owned),
                npcs: vec![
                    npc("mira", "Mira", "village"),
                    npc("gundren", "Gundren", "village"),
                    npc("guard", "Guard", "citadel"),
                ],
            },
            priority: Priority::Witnessed,
            seed: 1,
            tags: crate::request::SpendTags::default(),
        }
    }

    #[test]
    fn narration_is_a_deterministic_function_of_the_seed() {
        let provider = provider();
        assert_eq!(
            provider.narrate_now(&narration("trade", 7)),
            "Gundren and Mira trade."
        );
        let lines: std::collections::BTreeSet<String> = (0..64)
            .map(|seed| provider.narrate_now(&narration("argue", seed)))
            .collect();
        assert_eq!(lines.len(), 3, "every argue line is reachable: {lines:?}");
        for seed in 0..64 {
            assert_eq!(
                provider.narrate_now(&narration("argue", seed)),
                provider.narrate_now(&narration("argue", seed))
            );
        }
    }

    #[test]
    fn keyword_rules_aim_at_named_npcs_then_the_addressee() {
        let provider = provider();
        let named = provider.perceive_now(&perception("Gundren, you IDIOT!", Some("mira")));
        assert_eq!(named.len(), 1);
        assert_eq!(named[0]["target"], "gundren");
        assert_eq!(named[0]["kind"], "insult");
        let addressed = provider.perceive_now(&perception("you stink", Some("mira")));
        assert_eq!(addressed[0]["target"], "mira");
        let nobody = provider.perceive_now(&perception("you stink", None));
        assert!(nobody.is_empty());
        let partial_word = provider.perceive_now(&perception("idiotic weather", Some("mira")));
        assert!(partial_word.is_empty());
        let other_zone = provider.perceive_now(&perception("guard, you idiot", Some("mira")));
        assert_eq!(other_zone.len(), 1);
        assert_eq!(
            other_zone[0]["target"], "guard",
            "named, not retargeted to the addressee"
        );
    }

    #[test]
    fn gossip_rules_need_a_listener_and_a_different_subject() {
        let provider = provider();
        let gossip = provider.perceive_now(&perception("Gundren is a liar", Some("mira")));
        assert_eq!(gossip.len(), 1);
        assert_eq!(gossip[0]["listener"], "mira");
        assert_eq!(gossip[0]["subject"], "gundren");
        assert!(
            provider
                .perceive_now(&perception("Mira is a liar", Some("mira")))
                .is_empty()
        );
    }
}
