//! The versioned JSON envelope of every bus message:
//! `{"v": 1, "type", "id", "zone", "game_time", ...payload}`.
//!
//! This module owns the header every envelope shares, the one way a message's `type` is named
//! ([`type_name`], read from the message's serde derive) and the writer of tagged bodies
//! ([`to_envelope`]). Each message family is declared once, as a serde-tagged enum, in a module
//! of its own: the world events geppetto accepts ([`world`]), the intents it emits
//! ([`intent`]), the NPC lifecycle events ([`npc_event`]) and the dead-letter record
//! ([`dead_letter`]). It does not decide anything: the zone turns world events into intents;
//! these modules only shape and check the JSON. Game time is an integer count of ticks.

use std::borrow::Cow;
use std::fmt;

use serde::ser::{self, Impossible, Serialize, SerializeMap, SerializeStruct, Serializer};
use serde::{Deserialize, Serialize as SerializeDerive};

pub mod dead_letter;
pub mod intent;
pub mod npc_event;
pub mod world;

pub use dead_letter::{DeadLetter, dead_letter_envelope};
pub use intent::Intent;
pub use npc_event::{NpcEvent, Regard};
pub use world::{
    Arrival, AssignedGoal, Completion, EnvelopeError, EnvelopeLimits, GovernorDecision, WorldEvent,
    WorldMessage, parse_world, parse_world_within,
};

/// The envelope version this build reads and writes.
pub const ENVELOPE_VERSION: u64 = 1;

/// The common header of every envelope.
#[derive(Clone, Debug, PartialEq, Eq, SerializeDerive, Deserialize)]
pub struct Header {
    /// Schema version.
    pub v: u64,
    /// Message id, unique per stream; deterministic for intents and NPC events.
    pub id: String,
    /// The zone the message belongs to.
    pub zone: String,
    /// Game time in ticks.
    pub game_time: u64,
    /// `geppetto` on the world events geppetto writes itself (hand-overs, governor records,
    /// admin reinstatements); the game never sets it. Not written on other streams.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub origin: Option<String>,
}

/// The [`Header::origin`] of the world events geppetto writes.
pub const GEPPETTO_ORIGIN: &str = "geppetto";

/// A header with the current version.
pub fn header(id: impl Into<String>, zone: &str, game_time: u64) -> Header {
    Header {
        v: ENVELOPE_VERSION,
        id: id.into(),
        zone: zone.to_owned(),
        game_time,
        origin: None,
    }
}

impl Header {
    /// The header marked as geppetto's own (see [`Header::origin`]).
    pub fn from_geppetto(self) -> Self {
        Self {
            origin: Some(GEPPETTO_ORIGIN.to_owned()),
            ..self
        }
    }

    /// Whether geppetto wrote the message ([`Header::origin`]).
    pub fn is_from_geppetto(&self) -> bool {
        self.origin.as_deref() == Some(GEPPETTO_ORIGIN)
    }

    /// Whether geppetto wrote the message (see [`Header::origin`]).
    pub fn is_geppetto(&self) -> bool {
        self.origin.as_deref() == Some(GEPPETTO_ORIGIN)
    }
}

/// Bytes reserved for an envelope line up front: most intents and events fit.
const ENVELOPE_CAPACITY_HINT: usize = 256;

/// Serialises a tagged payload (an [`Intent`] or [`NpcEvent`]) into an envelope line.
pub fn to_envelope<T: Serialize>(header: &Header, body: &T) -> String {
    // The header goes first, then the body serialises straight into the same buffer and its
    // opening brace becomes the comma after the header: one allocation, no intermediate JSON
    // tree (this runs for every intent and event). Bodies are tagged structs (`{"type": …, …}`)
    // whose absent options are skipped, as the schemas expect.
    let mut decimal = itoa::Buffer::new();
    let mut out: Vec<u8> = Vec::with_capacity(ENVELOPE_CAPACITY_HINT);
    out.extend_from_slice(b"{\"v\":");
    out.extend_from_slice(decimal.format(header.v).as_bytes());
    out.extend_from_slice(b",\"id\":");
    let header_written = serde_json::to_writer(&mut out, &header.id)
        .and_then(|()| {
            out.extend_from_slice(b",\"zone\":");
            serde_json::to_writer(&mut out, &header.zone)
        })
        .is_ok();
    out.extend_from_slice(b",\"game_time\":");
    out.extend_from_slice(decimal.format(header.game_time).as_bytes());
    let body_at = out.len();
    let body_written = header_written && serde_json::to_writer(&mut out, body).is_ok();
    match out.get(body_at..) {
        // `{…}` with fields: its brace becomes the separator, its closing brace ours.
        Some([b'{', rest @ ..]) if body_written && rest.len() > 1 && rest.ends_with(b"}") => {
            out[body_at] = b',';
        }
        // `{}`, or a body that did not serialise: the header alone.
        _ => {
            out.truncate(body_at);
            out.push(b'}');
        }
    }
    String::from_utf8(out).unwrap_or_default()
}

/// Writes `header`, `type` and the fields of `payload` (an object; its `null`s left out) as one
/// envelope line. Keys come out in the order of `serde_json::Map` (sorted), as they always have
/// for world events and dead letters.
fn flat_envelope(header: &Header, kind: &str, payload: serde_json::Value) -> String {
    use serde_json::Value;
    let mut object = serde_json::Map::new();
    object.insert("v".into(), Value::from(header.v));
    object.insert("type".into(), Value::from(kind));
    object.insert("id".into(), Value::from(header.id.clone()));
    object.insert("zone".into(), Value::from(header.zone.clone()));
    object.insert("game_time".into(), Value::from(header.game_time));
    if let Some(origin) = &header.origin {
        object.insert("origin".into(), Value::from(origin.clone()));
    }
    if let Value::Object(fields) = payload {
        for (key, value) in fields {
            if !value.is_null() {
                object.insert(key, value);
            }
        }
    }
    Value::Object(object).to_string()
}

/// The `type` a message carries on the wire, as its serde derive names it — the variant name of
/// an externally tagged enum ([`WorldEvent`]) or the `type` field of an internally tagged one
/// ([`Intent`], [`NpcEvent`]); empty for anything else. Only the tag is serialised, not the
/// fields.
pub fn type_name<T: Serialize + ?Sized>(message: &T) -> Cow<'static, str> {
    match message.serialize(TypeName) {
        Ok(name) | Err(Found::Name(name)) => name,
        Err(Found::None) => Cow::Borrowed(""),
    }
}

/// How [`TypeName`] stops: with the tag it found, or with none.
#[derive(Debug)]
enum Found {
    /// The tag.
    Name(Cow<'static, str>),
    /// Not a tagged enum.
    None,
}

impl fmt::Display for Found {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Name(name) => write!(f, "tag `{name}`"),
            Self::None => f.write_str("not a tagged enum"),
        }
    }
}

impl std::error::Error for Found {}

impl ser::Error for Found {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Self::None
    }
}

/// A serializer that only reads a message's tag and stops there.
struct TypeName;

/// The tag field's value as text, when it is a string.
fn tag_text<T: Serialize + ?Sized>(value: &T) -> Found {
    match serde_json::to_value(value) {
        Ok(serde_json::Value::String(name)) => Found::Name(Cow::Owned(name)),
        _ => Found::None,
    }
}

/// Serializer methods that mean "not a tagged enum".
macro_rules! not_tagged {
    ($($method:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok, Found> { Err(Found::None) })*
    };
}

impl Serializer for TypeName {
    type Ok = Cow<'static, str>;
    type Error = Found;
    type SerializeSeq = Impossible<Self::Ok, Found>;
    type SerializeTuple = Impossible<Self::Ok, Found>;
    type SerializeTupleStruct = Impossible<Self::Ok, Found>;
    type SerializeTupleVariant = Impossible<Self::Ok, Found>;
    type SerializeMap = TagEntry;
    type SerializeStruct = TagField;
    type SerializeStructVariant = Impossible<Self::Ok, Found>;

    not_tagged! {
        serialize_bool(bool) -> Self::Ok;
        serialize_i8(i8) -> Self::Ok;
        serialize_i16(i16) -> Self::Ok;
        serialize_i32(i32) -> Self::Ok;
        serialize_i64(i64) -> Self::Ok;
        serialize_u8(u8) -> Self::Ok;
        serialize_u16(u16) -> Self::Ok;
        serialize_u32(u32) -> Self::Ok;
        serialize_u64(u64) -> Self::Ok;
        serialize_f32(f32) -> Self::Ok;
        serialize_f64(f64) -> Self::Ok;
        serialize_char(char) -> Self::Ok;
        serialize_str(&str) -> Self::Ok;
        serialize_bytes(&[u8]) -> Self::Ok;
        serialize_none() -> Self::Ok;
        serialize_unit() -> Self::Ok;
        serialize_unit_struct(&'static str) -> Self::Ok;
        serialize_seq(Option<usize>) -> Self::SerializeSeq;
        serialize_tuple(usize) -> Self::SerializeTuple;
        serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<Self::Ok, Found> {
        value.serialize(self)
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        value: &T,
    ) -> Result<Self::Ok, Found> {
        value.serialize(self)
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Self::Ok, Found> {
        Ok(Cow::Borrowed(variant))
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: &T,
    ) -> Result<Self::Ok, Found> {
        Ok(Cow::Borrowed(variant))
    }

    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeTupleVariant, Found> {
        Err(Found::Name(Cow::Borrowed(variant)))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStructVariant, Found> {
        Err(Found::Name(Cow::Borrowed(variant)))
    }

    fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Found> {
        Ok(TagEntry { at_tag: false })
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self::SerializeStruct, Found> {
        Ok(TagField)
    }
}

/// The fields of an internally tagged struct variant: the tag comes first.
struct TagField;

impl SerializeStruct for TagField {
    type Ok = Cow<'static, str>;
    type Error = Found;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Found> {
        if key == "type" {
            return Err(tag_text(value));
        }
        Ok(())
    }

    fn end(self) -> Result<Self::Ok, Found> {
        Err(Found::None)
    }
}

/// The entries of an internally tagged newtype or unit variant (serde writes them as a map).
struct TagEntry {
    /// Whether the key just written is `type`.
    at_tag: bool,
}

impl SerializeMap for TagEntry {
    type Ok = Cow<'static, str>;
    type Error = Found;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), Found> {
        self.at_tag = matches!(tag_text(key), Found::Name(name) if name == "type");
        Ok(())
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), Found> {
        if self.at_tag {
            return Err(tag_text(value));
        }
        Ok(())
    }

    fn end(self) -> Result<Self::Ok, Found> {
        Err(Found::None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_is_the_header_then_the_body_with_absent_options_left_out() {
        let h = header("village:bram:3:0", "vill\"age", 42);
        let text = to_envelope(
            &h,
            &NpcEvent::ActivityChanged {
                npc: "bram".into(),
                from: None,
                to: Some("work".into()),
            },
        );
        let value: serde_json::Value = serde_json::from_str(&text).expect(&text);
        assert_eq!(
            value,
            serde_json::json!({"v": 1, "id": "village:bram:3:0", "zone": "vill\"age",
                "game_time": 42, "type": "activity_changed", "npc": "bram", "to": "work"})
        );
        #[derive(SerializeDerive)]
        struct Empty {}
        let bare: serde_json::Value =
            serde_json::from_str(&to_envelope(&h, &Empty {})).expect("json");
        assert_eq!(bare["game_time"], 42);
    }

    #[test]
    fn type_name_reads_the_tag_of_either_kind_of_enum() {
        assert_eq!(type_name(&WorldEvent::TimeAdvanced), "time_advanced");
        assert_eq!(
            type_name(&WorldEvent::PlayerLeft {
                player: "ann".into(),
                room: None,
            }),
            "player_left"
        );
        assert_eq!(
            type_name(&WorldEvent::GovernorDecision(GovernorDecision::default())),
            "governor_decision"
        );
        assert_eq!(
            type_name(&NpcEvent::TierChanged {
                npc: "a".into(),
                from: "background".into(),
                to: "active".into(),
            }),
            "tier_changed"
        );
        assert_eq!(
            type_name(&Intent::Bark {
                npc: "a".into(),
                text: "hi".into(),
            }),
            "bark"
        );
        #[derive(SerializeDerive)]
        #[serde(tag = "type", rename_all = "snake_case")]
        enum Newtype {
            Decision(GovernorDecision),
            Nothing,
        }
        assert_eq!(
            type_name(&Newtype::Decision(GovernorDecision::default())),
            "decision"
        );
        assert_eq!(type_name(&Newtype::Nothing), "nothing");
        assert_eq!(type_name(&3_u32), "");
        assert_eq!(type_name(&header("a", "z", 1)), "");
    }
}
