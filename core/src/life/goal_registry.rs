//! Goals as data: a goal's predicate is written with a `predicate_type`
//! discriminator and read back through a [`GoalPredicateRegistry`], so goals survive a snapshot,
//! appear in the inspector as plain JSON, and content can add predicate types of its own.
//!
//! The registry holds one [`PredicateCodec`] per type. The built-in types mirror
//! [`GoalPredicate`]'s variants:
//!
//! | `predicate_type` | fields | met when |
//! |---|---|---|
//! | `has_fact` | `fact` | the agent holds the fact |
//! | `resource` | `name`, `min` | the agent holds at least `min` of it |
//! | `at_provider` | `provider` | the agent is using an action of that provider |
//! | `relationship` | `name`, `min` | the world's relationship value is at least `min` |
//! | `need_above` | `need`, `min` | the need is back above `min` (normalised) |
//!
//! A content pack registers a codec for a type of its own (say `wealthy` → `resource gold ≥
//! 100`): it decodes into a built-in predicate and is the one asked to encode it back, first
//! registered first asked. Symbols are written as their names, so records do not depend on the
//! vocabulary they were made with.

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::life::goals::{Goal, GoalBook, GoalCategory, GoalPredicate};
use crate::vocabulary::Vocabulary;

/// Why a goal record could not be read.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum GoalRecordError {
    /// No codec reads this type.
    #[error("predicate_type `{0}` is not registered")]
    UnknownType(String),
    /// The record has no `predicate_type`.
    #[error("predicate: missing `predicate_type`")]
    MissingType,
    /// A field is missing or of the wrong kind.
    #[error("predicate `{predicate_type}`.{field}: {problem}")]
    Field {
        /// The predicate's type.
        predicate_type: String,
        /// The field.
        field: String,
        /// What is wrong.
        problem: String,
    },
    /// The category is not one of `innate`, `need_derived`, `reactive`.
    #[error("category: unknown `{0}`")]
    UnknownCategory(String),
    /// Two codecs claim one type.
    #[error("predicate_type `{0}` is already registered")]
    Duplicate(String),
}

/// Reads and writes one predicate type.
pub trait PredicateCodec: Send + Sync {
    /// The `predicate_type` it reads.
    fn predicate_type(&self) -> &str;
    /// Writes `predicate` as fields (without `predicate_type`), or `None` when it is not one
    /// this codec writes.
    fn encode(
        &self,
        predicate: &GoalPredicate,
        vocabulary: &Vocabulary,
    ) -> Option<Map<String, Value>>;
    /// Reads the fields of a record of this type.
    fn decode(
        &self,
        fields: &Map<String, Value>,
        vocabulary: &mut Vocabulary,
    ) -> Result<GoalPredicate, GoalRecordError>;
}

/// The codecs by type; [`Default`] holds the built-in ones.
pub struct GoalPredicateRegistry {
    codecs: Vec<Box<dyn PredicateCodec>>,
}

impl std::fmt::Debug for GoalPredicateRegistry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let types: Vec<&str> = self.codecs.iter().map(|c| c.predicate_type()).collect();
        f.debug_struct("GoalPredicateRegistry")
            .field("types", &types)
            .finish()
    }
}

impl Default for GoalPredicateRegistry {
    fn default() -> Self {
        Self {
            codecs: BuiltIn::ALL
                .iter()
                .map(|kind| Box::new(*kind) as Box<dyn PredicateCodec>)
                .collect(),
        }
    }
}

impl GoalPredicateRegistry {
    /// Adds a codec for a new type. Custom codecs are asked to encode before the built-in ones.
    pub fn register(&mut self, codec: Box<dyn PredicateCodec>) -> Result<(), GoalRecordError> {
        let kind = codec.predicate_type().to_owned();
        if self.codecs.iter().any(|c| c.predicate_type() == kind) {
            return Err(GoalRecordError::Duplicate(kind));
        }
        let first_built_in = self
            .codecs
            .iter()
            .position(|c| {
                BuiltIn::ALL
                    .iter()
                    .any(|b| b.predicate_type() == c.predicate_type())
            })
            .unwrap_or(self.codecs.len());
        self.codecs.insert(first_built_in, codec);
        Ok(())
    }

    /// The registered types, in the order they are asked to encode.
    pub fn types(&self) -> Vec<&str> {
        self.codecs.iter().map(|c| c.predicate_type()).collect()
    }

    /// `predicate` as a JSON object with its `predicate_type`.
    pub fn encode(&self, predicate: &GoalPredicate, vocabulary: &Vocabulary) -> Value {
        for codec in &self.codecs {
            if let Some(mut fields) = codec.encode(predicate, vocabulary) {
                fields.insert("predicate_type".into(), codec.predicate_type().into());
                return Value::Object(fields);
            }
        }
        // Every variant has a built-in codec; this is only reached if one was removed.
        Value::Null
    }

    /// Reads a predicate written by [`GoalPredicateRegistry::encode`] (or by hand).
    pub fn decode(
        &self,
        record: &Value,
        vocabulary: &mut Vocabulary,
    ) -> Result<GoalPredicate, GoalRecordError> {
        let fields = record.as_object().ok_or(GoalRecordError::MissingType)?;
        let kind = fields
            .get("predicate_type")
            .and_then(Value::as_str)
            .ok_or(GoalRecordError::MissingType)?;
        let codec = self
            .codecs
            .iter()
            .find(|c| c.predicate_type() == kind)
            .ok_or_else(|| GoalRecordError::UnknownType(kind.to_owned()))?;
        codec.decode(fields, vocabulary)
    }

    /// A goal as a record.
    pub fn goal_record(&self, goal: &Goal, vocabulary: &Vocabulary) -> GoalRecord {
        GoalRecord {
            category: goal.category.as_str().to_owned(),
            source: goal.source.clone(),
            target: goal.target.clone(),
            description: goal.description.clone(),
            predicate: self.encode(&goal.predicate, vocabulary),
            deadline_hours: goal.deadline_hours,
            due_within_hours: goal.due_within_hours,
            priority_bonus: goal.priority_bonus,
            id: goal.id.clone(),
        }
    }

    /// A goal from its record.
    pub fn goal(
        &self,
        record: &GoalRecord,
        vocabulary: &mut Vocabulary,
    ) -> Result<Goal, GoalRecordError> {
        let category = GoalCategory::from_wire(&record.category)
            .ok_or_else(|| GoalRecordError::UnknownCategory(record.category.clone()))?;
        Ok(Goal {
            category,
            source: record.source.clone(),
            target: record.target.clone(),
            description: record.description.clone(),
            predicate: self.decode(&record.predicate, vocabulary)?,
            deadline_hours: record.deadline_hours,
            due_within_hours: record.due_within_hours,
            priority_bonus: record.priority_bonus,
            id: record.id.clone(),
        })
    }

    /// A book's active goals as records, oldest first.
    pub fn book_records(&self, book: &GoalBook, vocabulary: &Vocabulary) -> Vec<GoalRecord> {
        book.goals
            .iter()
            .map(|goal| self.goal_record(goal, vocabulary))
            .collect()
    }

    /// Replaces a book's active goals with `records` (all or nothing).
    pub fn restore_book(
        &self,
        book: &mut GoalBook,
        records: &[GoalRecord],
        vocabulary: &mut Vocabulary,
    ) -> Result<(), GoalRecordError> {
        let goals = records
            .iter()
            .map(|record| self.goal(record, vocabulary))
            .collect::<Result<Vec<_>, _>>()?;
        book.goals = goals;
        Ok(())
    }
}

/// A goal as it is stored and shown.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GoalRecord {
    /// `innate`, `need_derived`, `reactive` or `assigned`.
    pub category: String,
    /// Who or what caused it.
    pub source: String,
    /// Whom or what it is about.
    #[serde(default)]
    pub target: Option<String>,
    /// For humans and deduplication.
    pub description: String,
    /// The predicate with its `predicate_type`.
    pub predicate: Value,
    /// Game hour it fails if unmet.
    #[serde(default)]
    pub deadline_hours: Option<f64>,
    /// Game hours it has from the first review that sees it (see [`Goal::due_within_hours`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub due_within_hours: Option<f64>,
    /// Priority bonus for advancing actions.
    #[serde(default)]
    pub priority_bonus: f64,
    /// The game's id of an assigned goal (others are named by their hash).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

/// The built-in predicate types, one per [`GoalPredicate`] variant.
#[derive(Clone, Copy, Debug)]
enum BuiltIn {
    HasFact,
    Resource,
    AtProvider,
    Relationship,
    NeedAbove,
}

impl BuiltIn {
    const ALL: [BuiltIn; 5] = [
        Self::HasFact,
        Self::Resource,
        Self::AtProvider,
        Self::Relationship,
        Self::NeedAbove,
    ];
}

/// A string field of a record.
fn text<'f>(
    kind: &str,
    fields: &'f Map<String, Value>,
    field: &str,
) -> Result<&'f str, GoalRecordError> {
    fields
        .get(field)
        .and_then(Value::as_str)
        .ok_or_else(|| GoalRecordError::Field {
            predicate_type: kind.to_owned(),
            field: field.to_owned(),
            problem: "must be a string".into(),
        })
}

/// A finite number field of a record.
fn number(kind: &str, fields: &Map<String, Value>, field: &str) -> Result<f64, GoalRecordError> {
    fields
        .get(field)
        .and_then(Value::as_f64)
        .filter(|n| n.is_finite())
        .ok_or_else(|| GoalRecordError::Field {
            predicate_type: kind.to_owned(),
            field: field.to_owned(),
            problem: "must be a finite number".into(),
        })
}

/// A `{field: name, min}` record.
fn named_minimum(field: &str, name: &str, min: f64) -> Map<String, Value> {
    let mut fields = Map::new();
    fields.insert(field.into(), name.into());
    fields.insert("min".into(), min.into());
    fields
}

impl PredicateCodec for BuiltIn {
    fn predicate_type(&self) -> &str {
        match self {
            Self::HasFact => "has_fact",
            Self::Resource => "resource",
            Self::AtProvider => "at_provider",
            Self::Relationship => "relationship",
            Self::NeedAbove => "need_above",
        }
    }

    fn encode(
        &self,
        predicate: &GoalPredicate,
        vocabulary: &Vocabulary,
    ) -> Option<Map<String, Value>> {
        let mut fields = Map::new();
        match (self, predicate) {
            (Self::HasFact, GoalPredicate::HasFact(fact)) => {
                fields.insert("fact".into(), vocabulary.name(*fact).into());
            }
            (Self::Resource, GoalPredicate::Resource { name, min })
            | (Self::Relationship, GoalPredicate::Relationship { name, min }) => {
                fields = named_minimum("name", vocabulary.name(*name), *min);
            }
            (Self::AtProvider, GoalPredicate::AtProvider(provider)) => {
                fields.insert("provider".into(), provider.clone().into());
            }
            (Self::NeedAbove, GoalPredicate::NeedAbove { need, min }) => {
                fields = named_minimum("need", vocabulary.name(*need), *min);
            }
            _ => return None,
        }
        Some(fields)
    }

    fn decode(
        &self,
        fields: &Map<String, Value>,
        vocabulary: &mut Vocabulary,
    ) -> Result<GoalPredicate, GoalRecordError> {
        let kind = self.predicate_type();
        Ok(match self {
            Self::HasFact => GoalPredicate::HasFact(vocabulary.intern(text(kind, fields, "fact")?)),
            Self::Resource => GoalPredicate::Resource {
                name: vocabulary.intern(text(kind, fields, "name")?),
                min: number(kind, fields, "min")?,
            },
            Self::AtProvider => {
                GoalPredicate::AtProvider(text(kind, fields, "provider")?.to_owned())
            }
            Self::Relationship => GoalPredicate::Relationship {
                name: vocabulary.intern(text(kind, fields, "name")?),
                min: number(kind, fields, "min")?,
            },
            Self::NeedAbove => GoalPredicate::NeedAbove {
                need: vocabulary.intern(text(kind, fields, "need")?),
                min: number(kind, fields, "min")?,
            },
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_predicates(v: &mut Vocabulary) -> Vec<GoalPredicate> {
        vec![
            GoalPredicate::HasFact(v.intern("theft_reported")),
            GoalPredicate::Resource {
                name: v.intern("ore"),
                min: 3.0,
            },
            GoalPredicate::AtProvider("gatehouse".into()),
            GoalPredicate::Relationship {
                name: v.intern("trust_mira"),
                min: 0.7,
            },
            GoalPredicate::NeedAbove {
                need: v.intern("HUNGER"),
                min: 0.6,
            },
        ]
    }

    #[test]
    fn every_built_in_predicate_round_trips_through_json_into_another_vocabulary() {
        let registry = GoalPredicateRegistry::default();
        let mut written = Vocabulary::new();
        written.intern("padding so symbols differ between vocabularies");
        let predicates = all_predicates(&mut written);
        let mut read = Vocabulary::new();
        let expected = all_predicates(&mut read.clone());
        for (predicate, expected) in predicates.iter().zip(&expected) {
            let json = registry.encode(predicate, &written).to_string();
            let value: Value = serde_json::from_str(&json).expect("json");
            assert!(value["predicate_type"].is_string(), "{json}");
            let back = registry.decode(&value, &mut read).expect(&json);
            assert_eq!(&back, expected, "{json}");
        }
    }

    #[test]
    fn bad_records_are_refused_with_the_type_and_field() {
        let registry = GoalPredicateRegistry::default();
        let mut v = Vocabulary::new();
        let refuse = |record: Value, v: &mut Vocabulary| {
            registry
                .decode(&record, v)
                .expect_err("refused")
                .to_string()
        };
        assert_eq!(
            refuse(serde_json::json!({"predicate_type": "telepathy"}), &mut v),
            "predicate_type `telepathy` is not registered"
        );
        assert_eq!(
            refuse(serde_json::json!({"fact": "x"}), &mut v),
            "predicate: missing `predicate_type`"
        );
        assert_eq!(
            refuse(
                serde_json::json!({"predicate_type": "resource", "name": "gold"}),
                &mut v
            ),
            "predicate `resource`.min: must be a finite number"
        );
    }

    /// A content pack's own type: `wealthy {amount}` is a gold threshold.
    struct Wealthy;

    impl PredicateCodec for Wealthy {
        fn predicate_type(&self) -> &str {
            "wealthy"
        }
        fn encode(&self, predicate: &GoalPredicate, v: &Vocabulary) -> Option<Map<String, Value>> {
            match predicate {
                GoalPredicate::Resource { name, min } if v.name(*name) == "gold" => {
                    let mut fields = Map::new();
                    fields.insert("amount".into(), (*min).into());
                    Some(fields)
                }
                _ => None,
            }
        }
        fn decode(
            &self,
            fields: &Map<String, Value>,
            v: &mut Vocabulary,
        ) -> Result<GoalPredicate, GoalRecordError> {
            Ok(GoalPredicate::Resource {
                name: v.intern("gold"),
                min: number("wealthy", fields, "amount")?,
            })
        }
    }

    #[test]
    fn content_registers_its_own_types_once_and_they_encode_first() {
        let mut registry = GoalPredicateRegistry::default();
        registry.register(Box::new(Wealthy)).expect("new type");
        assert_eq!(
            registry.register(Box::new(Wealthy)),
            Err(GoalRecordError::Duplicate("wealthy".into()))
        );
        let mut v = Vocabulary::new();
        let gold = GoalPredicate::Resource {
            name: v.intern("gold"),
            min: 100.0,
        };
        let record = registry.encode(&gold, &v);
        assert_eq!(
            record,
            serde_json::json!({"predicate_type": "wealthy", "amount": 100.0})
        );
        assert_eq!(registry.decode(&record, &mut v), Ok(gold));
        let ore = GoalPredicate::Resource {
            name: v.intern("ore"),
            min: 2.0,
        };
        assert_eq!(registry.encode(&ore, &v)["predicate_type"], "resource");
    }

    #[test]
    fn a_book_round_trips_and_a_bad_record_leaves_it_untouched() {
        let registry = GoalPredicateRegistry::default();
        let mut v = Vocabulary::new();
        let mut book = GoalBook::default();
        for (i, predicate) in all_predicates(&mut v).into_iter().enumerate() {
            book.add(Goal {
                category: GoalCategory::Reactive,
                source: "event:theft".into(),
                target: Some("vex".into()),
                description: format!("goal {i}"),
                predicate,
                deadline_hours: Some(12.0 + i as f64),
                due_within_hours: None,
                priority_bonus: 2.0,
                id: (i == 0).then(|| "quest-7".to_owned()),
            })
            .expect("room");
        }
        let records = registry.book_records(&book, &v);
        let json = serde_json::to_string(&records).expect("json");
        let read: Vec<GoalRecord> = serde_json::from_str(&json).expect("records");
        let mut restored = GoalBook::default();
        registry
            .restore_book(&mut restored, &read, &mut v)
            .expect("restores");
        assert_eq!(restored.goals, book.goals);

        let mut broken = read.clone();
        broken[2].category = "whim".into();
        assert_eq!(
            registry.restore_book(&mut restored, &broken, &mut v),
            Err(GoalRecordError::UnknownCategory("whim".into()))
        );
        assert_eq!(restored.goals, book.goals, "all or nothing");
    }
}
