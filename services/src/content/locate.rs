//! Where an element stands in a content file: the line of the value a path names
//! (`agents[0].considerations[1].curve`, the form the wire and content errors use), in a YAML or
//! JSON text — so a problem found in a decoded value is reported at its line.

use serde::Deserialize;
use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_saphyr::Spanned;

/// A document read as a tree of the lines its nodes start at, nothing else kept.
enum Node {
    Map(Vec<(String, Spanned<Node>)>),
    Seq(Vec<Spanned<Node>>),
    Scalar,
}

impl<'de> Deserialize<'de> for Node {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NodeVisitor)
    }
}

struct NodeVisitor;

impl<'de> Visitor<'de> for NodeVisitor {
    type Value = Node;

    fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
        formatter.write_str("any YAML or JSON value")
    }

    fn visit_bool<E: de::Error>(self, _: bool) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_i64<E: de::Error>(self, _: i64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_u64<E: de::Error>(self, _: u64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_f64<E: de::Error>(self, _: f64) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_str<E: de::Error>(self, _: &str) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_unit<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_none<E: de::Error>(self) -> Result<Node, E> {
        Ok(Node::Scalar)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Node, D::Error> {
        Node::deserialize(deserializer)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Node, A::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element()? {
            items.push(item);
        }
        Ok(Node::Seq(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Node, A::Error> {
        let mut entries = Vec::new();
        while let Some((key, value)) = map.next_entry::<String, Spanned<Node>>()? {
            entries.push((key, value));
        }
        Ok(Node::Map(entries))
    }
}

/// One step of a path: a key or an index.
enum Step<'a> {
    Key(&'a str),
    Index(usize),
}

/// The steps of `path` (`a.b[2].c`; `.` or empty names the document itself).
fn steps(path: &str) -> Option<Vec<Step<'_>>> {
    let mut steps = Vec::new();
    for part in path.split('.').filter(|part| !part.is_empty()) {
        let (key, mut indices) = part.split_at(part.find('[').unwrap_or(part.len()));
        if !key.is_empty() {
            steps.push(Step::Key(key));
        }
        while let Some(rest) = indices.strip_prefix('[') {
            let (digits, after) = rest.split_once(']')?;
            steps.push(Step::Index(digits.parse().ok()?));
            indices = after;
        }
    }
    Some(steps)
}

/// The line (1-based) where the element `path` names starts in `text`, or of the deepest
/// element of the path the text holds; `None` when the text does not parse.
pub fn line_of(text: &str, path: &str) -> Option<u64> {
    let root: Spanned<Node> = serde_saphyr::from_str(text).ok()?;
    let steps = steps(path).unwrap_or_default();
    let mut here = &root;
    for step in steps {
        let next = match (&here.value, step) {
            (Node::Map(entries), Step::Key(key)) => {
                entries.iter().find(|(name, _)| name == key).map(|(_, v)| v)
            }
            (Node::Seq(items), Step::Index(index)) => items.get(index),
            _ => None,
        };
        match next {
            Some(next) => here = next,
            None => break,
        }
    }
    Some(here.referenced.line().max(1))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_path_is_found_in_json_and_in_yaml() {
        let json = "{\n  \"profile\": \"x\",\n  \"agents\": [\n    {\"id\": \"a\"},\n    {\n      \"id\": \"b\"\n    }\n  ]\n}\n";
        assert_eq!(line_of(json, "profile"), Some(2));
        assert_eq!(line_of(json, "agents[1].id"), Some(6));
        assert_eq!(line_of(json, "agents[0]"), Some(4));
        let yaml = "hours: 1\nagent:\n  id: a\n  needs:\n    - name: HUNGER\n    - name: SLEEP\n";
        assert_eq!(line_of(yaml, "agent.needs[1].name"), Some(6));
        assert_eq!(line_of(yaml, "hours"), Some(1));
    }

    #[test]
    fn a_path_the_text_does_not_hold_stops_at_its_deepest_known_element() {
        let yaml = "agent:\n  id: a\n";
        assert_eq!(line_of(yaml, "agent.needs[3]"), Some(2), "agent's value");
        assert_eq!(line_of(yaml, "."), Some(1));
        assert_eq!(line_of("{ not: [valid", "a"), None);
    }
}
