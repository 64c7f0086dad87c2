//! Size limits on JSON input from outside (bad input is refused, never a panic): checked on the raw text
//! before it is parsed, so an oversized or deeply nested document is refused without building
//! it. Every refusal names the limit by its config path so an operator knows which knob
//! to turn (`decide.max_depth`). The bus envelope parser of the service uses the same scan with
//! its own limits.

use serde::Deserialize;

/// A document over one of its limits.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{limit} exceeded: {detail}")]
pub struct LimitError {
    /// The limit's config path (`consumer.limits.max_bytes`).
    pub limit: String,
    /// What was found.
    pub detail: String,
}

/// What [`check_json`] enforces on one document.
#[derive(Clone, Copy, Debug)]
pub struct JsonLimits<'a> {
    /// Config path of the limits (`decide`); errors name `{prefix}.{field}`.
    pub prefix: &'a str,
    /// Largest document, bytes.
    pub max_bytes: usize,
    /// Deepest nesting of objects and arrays (the document's own object is depth 1).
    pub max_depth: usize,
    /// Longest string (ids, names, tags, object keys), bytes as written between the quotes.
    pub max_id_bytes: usize,
    /// Longest free text, bytes as written: the string values of the keys in `text_fields`.
    pub max_text_bytes: usize,
    /// Keys whose string values are free text rather than ids (`text`, `reason`).
    pub text_fields: &'a [&'a str],
}

impl JsonLimits<'_> {
    fn exceeded(&self, field: &str, detail: String) -> LimitError {
        LimitError {
            limit: format!("{}.{field}", self.prefix),
            detail,
        }
    }
}

/// Checks the size of a document in bytes; used before the bytes are even read as text.
pub fn check_bytes(len: usize, limits: &JsonLimits<'_>) -> Result<(), LimitError> {
    if len > limits.max_bytes {
        return Err(limits.exceeded(
            "max_bytes",
            format!("{len} bytes, at most {} allowed", limits.max_bytes),
        ));
    }
    Ok(())
}

/// The string whose opening quote is at `open` (as written, escapes not undone) and the index
/// of its closing quote (the end of `bytes` when it has none).
fn quoted(bytes: &[u8], open: usize) -> (&[u8], usize) {
    let start = open + 1;
    let mut end = start;
    while let Some(&b) = bytes.get(end) {
        match b {
            b'\\' => end += 2,
            b'"' => break,
            _ => end += 1,
        }
    }
    let end = end.min(bytes.len());
    (bytes.get(start..end).unwrap_or_default(), end)
}

/// Scans JSON text once, without building it: its size, its nesting depth and the length of
/// every string. Malformed JSON is left to the parser (this only refuses what is too big).
pub fn check_json(text: &str, limits: &JsonLimits<'_>) -> Result<(), LimitError> {
    check_bytes(text.len(), limits)?;
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    // Whether the next string in the current object is a key, and the last key read.
    let mut in_object: Vec<bool> = Vec::new();
    let mut expect_key = false;
    let mut last_key: &[u8] = &[];
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        match byte {
            b'{' | b'[' => {
                depth += 1;
                if depth > limits.max_depth {
                    return Err(limits.exceeded(
                        "max_depth",
                        format!("nesting deeper than {} at byte {i}", limits.max_depth),
                    ));
                }
                in_object.push(byte == b'{');
                expect_key = byte == b'{';
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                in_object.pop();
                expect_key = false;
            }
            b',' => expect_key = in_object.last().copied().unwrap_or(false),
            b'"' => {
                let (string, end) = quoted(bytes, i);
                let is_key = expect_key;
                let is_text = !is_key
                    && limits
                        .text_fields
                        .iter()
                        .any(|field| field.as_bytes() == last_key);
                let (field, max) = if is_text {
                    ("max_text_bytes", limits.max_text_bytes)
                } else {
                    ("max_id_bytes", limits.max_id_bytes)
                };
                if string.len() > max {
                    return Err(limits.exceeded(
                        field,
                        format!(
                            "a string of {} bytes at byte {i}, at most {max} allowed",
                            string.len()
                        ),
                    ));
                }
                if is_key {
                    last_key = string;
                    expect_key = false;
                }
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Counts, without building the document, the elements of every array that is the value of
/// a key of `counted` — `(key, limit field, most)`, summed over the document per key (every
/// provider's `actions`) — and refuses at the first count past its most, naming the limit
/// `{prefix}.{field}`. So a request over a count limit is refused before it is built.
/// Malformed JSON is left to the parser.
pub fn check_array_counts(
    text: &str,
    prefix: &str,
    counted: &[(&str, &str, usize)],
) -> Result<(), LimitError> {
    let bytes = text.as_bytes();
    let mut counts = vec![0usize; counted.len()];
    // For each open container: the counted key whose array it is, if any.
    let mut open: Vec<Option<usize>> = Vec::new();
    let mut last_string: &[u8] = &[];
    let mut key: Option<&[u8]> = None;
    // Whether the innermost counted array waits for its next element.
    let mut awaiting = false;
    let mut i = 0;
    while let Some(&byte) = bytes.get(i) {
        if byte.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if awaiting && byte != b']' {
            awaiting = false;
            if let Some(&Some(which)) = open.last() {
                counts[which] += 1;
                let (name, field, most) = counted[which];
                if counts[which] > most {
                    return Err(LimitError {
                        limit: format!("{prefix}.{field}"),
                        detail: format!(
                            "more than {most} {name}, at most {most} allowed (refused while \
                             reading, at byte {i})"
                        ),
                    });
                }
            }
        }
        match byte {
            b':' => key = Some(last_string),
            b'[' => {
                let which =
                    key.and_then(|k| counted.iter().position(|(n, _, _)| n.as_bytes() == k));
                open.push(which);
                awaiting = which.is_some();
                key = None;
            }
            b'{' => {
                open.push(None);
                key = None;
            }
            b']' | b'}' => {
                open.pop();
                awaiting = false;
                key = None;
            }
            b',' => {
                awaiting = matches!(open.last(), Some(Some(_)));
                key = None;
            }
            b'"' => {
                let (string, end) = quoted(bytes, i);
                last_string = string;
                i = end;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// Limits on a `decide` / `decide-batch` request (`[decide]` in `geppetto.toml`, read by
/// `geppetto decide --config`).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct DecideLimits {
    /// Largest request, bytes. Default 64 MiB (a 50,000-agent batch is about 15 MiB).
    pub max_bytes: usize,
    /// Deepest nesting of objects and arrays. Default 32 (the contract needs 7).
    pub max_depth: usize,
    /// Longest string (ids, names, tags, keys), bytes. Default 256.
    pub max_id_bytes: usize,
    /// Most agents in a `decide-batch` request. Default 100,000.
    pub max_agents: usize,
    /// Most providers in the world. Default 100,000.
    pub max_providers: usize,
    /// Most advertised actions over all providers. Default 1,000,000.
    pub max_actions: usize,
    /// Most agent–provider pairs a `decide-batch` may score (agents × providers, the bound on
    /// its work). Default 1,000,000,000 (50,000 agents over 2,000 providers is a tenth of it).
    pub max_agent_provider_pairs: u64,
}

impl Default for DecideLimits {
    fn default() -> Self {
        Self {
            max_bytes: 64 * 1024 * 1024,
            max_depth: 32,
            max_id_bytes: 256,
            max_agents: 100_000,
            max_providers: 100_000,
            max_actions: 1_000_000,
            max_agent_provider_pairs: 1_000_000_000,
        }
    }
}

impl DecideLimits {
    /// The config prefix its errors name.
    pub const PREFIX: &'static str = "decide";

    /// The raw-text limits of a request (no free-text fields: every string is an id).
    pub fn json(&self) -> JsonLimits<'static> {
        JsonLimits {
            prefix: Self::PREFIX,
            max_bytes: self.max_bytes,
            max_depth: self.max_depth,
            max_id_bytes: self.max_id_bytes,
            max_text_bytes: self.max_id_bytes,
            text_fields: &[],
        }
    }

    /// Counts a request's providers, actions (and with `agents`, its agents) on the raw text,
    /// refusing one over a count limit before it is built.
    pub fn check_counts_while_reading(&self, text: &str, agents: bool) -> Result<(), LimitError> {
        let mut counted = vec![
            ("providers", "max_providers", self.max_providers),
            ("actions", "max_actions", self.max_actions),
        ];
        if agents {
            counted.push(("agents", "max_agents", self.max_agents));
        }
        check_array_counts(text, Self::PREFIX, &counted)
    }

    /// Checks a batch's work: `agents` × `providers` against `max_agent_provider_pairs`.
    pub fn check_work(&self, agents: usize, providers: usize) -> Result<(), LimitError> {
        let pairs = (agents as u64).saturating_mul(providers as u64);
        if pairs > self.max_agent_provider_pairs {
            return Err(LimitError {
                limit: format!("{}.max_agent_provider_pairs", Self::PREFIX),
                detail: format!(
                    "{agents} agents × {providers} providers = {pairs} pairs to score, at most {} \
                     allowed (split the batch, or send each agent's part of the world)",
                    self.max_agent_provider_pairs
                ),
            });
        }
        Ok(())
    }

    /// Checks a count against the limit `field` of value `max`.
    pub fn check_count(
        &self,
        field: &str,
        what: &str,
        count: usize,
        max: usize,
    ) -> Result<(), LimitError> {
        if count > max {
            return Err(LimitError {
                limit: format!("{}.{field}", Self::PREFIX),
                detail: format!("{count} {what}, at most {max} allowed"),
            });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> JsonLimits<'static> {
        JsonLimits {
            prefix: "limits.test",
            max_bytes: 100,
            max_depth: 3,
            max_id_bytes: 5,
            max_text_bytes: 10,
            text_fields: &["text"],
        }
    }

    fn refused(text: &str) -> String {
        check_json(text, &limits())
            .expect_err("refused")
            .limit
            .clone()
    }

    #[test]
    fn within_limits_passes() {
        check_json(
            r#"{"a": [1, {"b": "abcde"}], "text": "0123456789"}"#,
            &limits(),
        )
        .expect("within");
        // Brackets inside strings do not nest; escaped quotes do not end a string.
        check_json(r#"{"a": "[[\"["}"#, &limits()).expect("strings are opaque");
    }

    #[test]
    fn each_limit_is_named() {
        assert_eq!(refused(&" ".repeat(101)), "limits.test.max_bytes");
        assert_eq!(refused("[[[[1]]]]"), "limits.test.max_depth");
        assert_eq!(refused(r#"{"a": "abcdef"}"#), "limits.test.max_id_bytes");
        assert_eq!(refused(r#"{"abcdef": 1}"#), "limits.test.max_id_bytes");
        assert_eq!(
            refused(r#"{"text": "0123456789x"}"#),
            "limits.test.max_text_bytes"
        );
        // A long value under another key is an id, even after a text field.
        assert_eq!(
            refused(r#"{"text": "ok", "b": "abcdef"}"#),
            "limits.test.max_id_bytes"
        );
        // Strings in an array under a text key are ids.
        assert_eq!(refused(r#"{"c": ["abcdef"]}"#), "limits.test.max_id_bytes");
    }

    #[test]
    fn an_unterminated_string_is_left_to_the_parser() {
        check_json(r#"{"a": "ab"#, &limits()).expect("the parser refuses it");
        check_json(r#"{"a": "ab\"#, &limits()).expect("the parser refuses it");
    }

    #[test]
    fn arrays_are_counted_while_reading_and_refused_past_their_most() {
        let counted = [
            ("providers", "max_providers", 2),
            ("actions", "max_actions", 3),
        ];
        let ok = r#"{"world": {"providers": [{"id": "a", "actions": [{"id": "x", "tags": ["actions"]}, {}]},
                     {"id": "b", "actions": [ {"id": "[y,z]"} ]}]}, "actions": 1}"#;
        check_array_counts(ok, "decide", &counted).expect("2 providers, 3 actions");
        let many = r#"{"world": {"providers": [{"actions": [1, 2]}, {"actions": [[3], {"actions": []}, 4]}]}}"#;
        let error = check_array_counts(many, "decide", &counted).expect_err("4 actions");
        assert_eq!(error.limit, "decide.max_actions");
        assert!(error.detail.contains("more than 3 actions"), "{error}");
        let empty = r#"{"providers": [ ], "actions": [
        ]}"#;
        check_array_counts(empty, "decide", &counted).expect("empty arrays count nothing");
        let limits = DecideLimits::default();
        let error = limits
            .check_work(100_000, 100_000)
            .expect_err("too much work");
        assert_eq!(error.limit, "decide.max_agent_provider_pairs");
        limits.check_work(50_000, 2_000).expect("the B50k batch");
    }
}
