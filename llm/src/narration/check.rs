//! The check a model's narration passes before it is delivered; an answer that fails keeps
//! the template line and is counted by reason. It keeps the first sentence of the answer's
//! first line (small models ramble on), and refuses it when it is empty, over the length cap,
//! unfinished (cut by the token cap), an echo of the instructions it was given (a run of words
//! from the prompt, or a chat-role marker), about neither participant, or naming an NPC of the
//! zone who is not in the room. This module owns that check; it calls nothing.

use std::collections::BTreeSet;

use crate::perception::truncate_chars;
use crate::request::NarrationRequest;
use crate::template::find_phrase;

geppetto_wire_enum::wire_enum! {
    /// Why a model's narration was refused.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    pub enum NarrativeRejection {
        /// Nothing but whitespace, quotes or control characters.
        Empty = "empty",
        /// Longer than `narration_max_chars`.
        TooLong = "too_long",
        /// No sentence ends in it (the token cap cut it).
        Unfinished = "unfinished",
        /// It names neither participant.
        NoParticipant = "no_participant",
        /// It names an NPC of the zone who is not in the room.
        AbsentNpc = "absent_npc",
        /// It repeats the instructions, or speaks in a chat role.
        EchoedInstructions = "echoed_instructions",
    }
}

/// Words in a row shared with the instructions that make an answer an echo of them.
const ECHO_WORDS: usize = 4;

/// Chat-template and role markers a line of prose never contains.
const ROLE_MARKERS: [&str; 7] = [
    "<|",
    "|>",
    "assistant:",
    "system:",
    "user:",
    "[inst]",
    "narrator:",
];

/// The check, built once per provider from the instructions it sends.
#[derive(Debug, Clone, Default)]
pub struct NarrativeCheck {
    max_chars: usize,
    /// Every run of `ECHO_WORDS` words of the instructions, lowercase, space-joined.
    instructions: BTreeSet<String>,
}

impl NarrativeCheck {
    /// A check refusing answers over `max_chars` characters or echoing `instructions`.
    #[must_use]
    pub fn new(instructions: &str, max_chars: usize) -> Self {
        Self {
            max_chars,
            instructions: runs(&words(instructions)).collect(),
        }
    }

    /// The line to deliver, or why there is none.
    ///
    /// # Errors
    /// The first rule the answer breaks, in the order empty, too long, unfinished, echo, no
    /// participant, absent NPC.
    pub fn check(
        &self,
        answer: &str,
        request: &NarrationRequest,
    ) -> Result<String, NarrativeRejection> {
        let line = first_line(answer);
        if line.is_empty() {
            return Err(NarrativeRejection::Empty);
        }
        let sentence = first_sentence(line);
        let candidate = sentence.unwrap_or(line);
        if truncate_chars(candidate, self.max_chars).len() < candidate.len() {
            return Err(NarrativeRejection::TooLong);
        }
        let sentence = sentence.ok_or(NarrativeRejection::Unfinished)?;
        let lower = sentence.to_lowercase();
        if ROLE_MARKERS.iter().any(|marker| lower.contains(marker))
            || runs(&words(sentence)).any(|run| self.instructions.contains(&run))
        {
            return Err(NarrativeRejection::EchoedInstructions);
        }
        let participants = [&request.initiator.name, &request.target.name];
        if !participants
            .iter()
            .any(|name| names_participant(&lower, name))
        {
            return Err(NarrativeRejection::NoParticipant);
        }
        if request
            .known
            .iter()
            .filter(|name| !request.present.contains(name))
            .any(|name| names_absent(sentence, &lower, name, request))
        {
            return Err(NarrativeRejection::AbsentNpc);
        }
        Ok(sentence.to_owned())
    }
}

/// The first line with text, trimmed of whitespace and quotes, control characters gone.
fn first_line(answer: &str) -> &str {
    answer
        .lines()
        .map(|line| line.trim_matches(|c: char| c.is_whitespace() || c.is_control() || c == '"'))
        .find(|line| !line.is_empty())
        .unwrap_or_default()
}

/// The line up to its first sentence end (`.`, `!`, `?` or `…` before a space, a closing
/// quote or the end), if one ends in it.
fn first_sentence(line: &str) -> Option<&str> {
    let mut chars = line.char_indices().peekable();
    while let Some((at, c)) = chars.next() {
        if matches!(c, '.' | '!' | '?' | '…') {
            let next = chars.peek().map(|(_, next)| *next);
            if next.is_none_or(|next| next.is_whitespace() || next == '"' || next == '\'') {
                return Some(line[..at + c.len_utf8()].trim_end());
            }
        }
    }
    None
}

fn first_word(name: &str) -> &str {
    name.split_whitespace().next().unwrap_or_default()
}

/// Whether the lowercase text names a participant: its whole name or its first word.
fn names_participant(lower: &str, name: &str) -> bool {
    let name = name.to_lowercase();
    find_phrase(lower, &name).is_some() || find_phrase(lower, first_word(&name)).is_some()
}

/// Whether `line` (and its lowercase) names the absent NPC called `name`: its whole name in any
/// case, or its first word as a proper noun (capitalised, three letters or more) that no
/// participant shares.
fn names_absent(line: &str, lower: &str, name: &str, request: &NarrationRequest) -> bool {
    if find_phrase(lower, &name.to_lowercase()).is_some() {
        return true;
    }
    let word = first_word(name);
    let proper = word.chars().next().is_some_and(char::is_uppercase) && word.chars().count() >= 3;
    let shared = [&request.initiator.name, &request.target.name]
        .iter()
        .any(|participant| first_word(participant) == word);
    proper && !shared && find_phrase(line, word).is_some()
}

/// The text's words, lowercase.
fn words(text: &str) -> Vec<String> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '\''))
        .filter(|word| !word.is_empty())
        .map(str::to_lowercase)
        .collect()
}

/// Every run of `ECHO_WORDS` consecutive words, space-joined.
fn runs(words: &[String]) -> impl Iterator<Item = String> + '_ {
    words.windows(ECHO_WORDS).map(|run| run.join(" "))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::{Participant, Priority};

    fn request() -> NarrationRequest {
        NarrationRequest {
            interaction_id: "i".to_owned(),
            zone: "village".to_owned(),
            room: "the square".to_owned(),
            initiator: Participant {
                id: "bram".to_owned(),
                name: "Bram the smith".to_owned(),
            },
            target: Participant {
                id: "greta".to_owned(),
                name: "Greta the merchant".to_owned(),
            },
            interaction: "argue".to_owned(),
            mood: "tense".to_owned(),
            known: vec![
                "Bram the smith".to_owned(),
                "Greta the merchant".to_owned(),
                "Ulla of the taproom".to_owned(),
                "Bram the younger".to_owned(),
                "the miller".to_owned(),
                "Hild the weaver".to_owned(),
            ]
            .into(),
            present: vec![
                "Bram the smith".to_owned(),
                "Greta the merchant".to_owned(),
                "Hild the weaver".to_owned(),
            ],
            priority: Priority::Witnessed,
            seed: 1,
            tags: crate::request::SpendTags::default(),
        }
    }

    fn check() -> NarrativeCheck {
        NarrativeCheck::new(
            "Write one sentence in the present tense about the scene you are given.",
            80,
        )
    }

    #[test]
    fn a_good_line_passes_trimmed_to_its_first_sentence() {
        let answers = [
            "\n  \"Bram jabs a finger at Greta over the price of nails.\"\nThen more.",
            "Bram jabs a finger at Greta over the price of nails. Greta sniffs, and the",
        ];
        for answer in answers {
            assert_eq!(
                check().check(answer, &request()).as_deref(),
                Ok("Bram jabs a finger at Greta over the price of nails."),
                "{answer:?}"
            );
        }
    }

    #[test]
    fn every_rule_refuses_with_its_reason() {
        let cases: [(&str, NarrativeRejection); 11] = [
            ("  \u{7} \"\" \n\n", NarrativeRejection::Empty),
            (
                "Bram and Greta argue, and argue, and argue, and argue, and argue, and argue on and on.",
                NarrativeRejection::TooLong,
            ),
            (
                "Bram and Greta argue about the price of nails while the",
                NarrativeRejection::Unfinished,
            ),
            (
                "Bram says: I will write it in the present tense.",
                NarrativeRejection::EchoedInstructions,
            ),
            ("The mood is tense.", NarrativeRejection::NoParticipant),
            ("I'd be happy to help!", NarrativeRejection::NoParticipant),
            (
                "Assistant: Bram glares.",
                NarrativeRejection::EchoedInstructions,
            ),
            (
                "<|im_start|>Bram glares.",
                NarrativeRejection::EchoedInstructions,
            ),
            (
                "Bram glares while Ulla watches.",
                NarrativeRejection::AbsentNpc,
            ),
            (
                "Bram glares; ulla of the taproom sighs.",
                NarrativeRejection::AbsentNpc,
            ),
            (
                "Bram glares and the miller turns away.",
                NarrativeRejection::AbsentNpc,
            ),
        ];
        for (answer, reason) in cases {
            assert_eq!(check().check(answer, &request()), Err(reason), "{answer:?}");
        }
    }

    #[test]
    fn an_npc_in_the_room_may_be_named() {
        assert_eq!(
            check().check("Bram glares while Hild watches.", &request()),
            Ok("Bram glares while Hild watches.".to_owned())
        );
    }

    #[test]
    fn a_first_name_shared_with_a_participant_or_a_common_word_is_not_an_absent_npc() {
        // "Bram the younger" is absent, but "Bram" is the initiator; "the" is no proper noun.
        assert!(
            check()
                .check("Bram glares at the stall.", &request())
                .is_ok()
        );
    }
}
