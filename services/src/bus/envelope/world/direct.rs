//! The direct read of a well-formed world message: two passes over its text, no JSON tree.
//! The first reads the header through its own derive, with the `type` field kept aside on the
//! way ([`TypeAside`]); the second reads the event under that type ([`Tagged`]). Whatever
//! either refuses is left to the tree read, which says why.

use std::cell::Cell;

use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, IntoDeserializer, MapAccess, Visitor};

use super::{Tagged, WorldEvent};
use crate::bus::envelope::{ENVELOPE_VERSION, Header};

/// A well-formed message of this version read straight from its text into its types, or `None`
/// for anything else (see [`super::read_tree`]).
pub(super) fn read_direct(text: &str) -> Option<(Header, WorldEvent)> {
    // serde reads a struct from an array too; an envelope is an object.
    if !text.trim_start().starts_with('{') {
        return None;
    }
    let mut kind = None;
    let mut reader = serde_json::Deserializer::from_str(text);
    let header = Header::deserialize(HeaderAndType {
        object: &mut reader,
        kind: &mut kind,
    })
    .ok()?;
    reader.end().ok()?;
    let kind = kind?;
    if header.v != ENVELOPE_VERSION {
        return None;
    }
    let mut reader = serde_json::Deserializer::from_str(text);
    let unknown_type = Cell::new(false);
    let event = WorldEvent::deserialize(Tagged {
        kind,
        payload: &mut reader,
        unknown_type: &unknown_type,
    })
    .ok()?;
    reader.end().ok()?;
    Some((header, event))
}

/// The envelope object as the header's derive sees it: every field but `type`, whose string
/// goes to `kind`.
struct HeaderAndType<'k, 'de, D> {
    object: D,
    kind: &'k mut Option<&'de str>,
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for HeaderAndType<'_, 'de, D> {
    type Error = D::Error;

    fn deserialize_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
        self.object.deserialize_map(TypeAsideVisitor {
            visitor,
            kind: self.kind,
        })
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
        option unit unit_struct newtype_struct seq tuple tuple_struct map struct enum
        identifier ignored_any
    }
}

/// Hands the header's visitor the object's fields through [`TypeAside`].
struct TypeAsideVisitor<'k, 'de, V> {
    visitor: V,
    kind: &'k mut Option<&'de str>,
}

impl<'de, V: Visitor<'de>> Visitor<'de> for TypeAsideVisitor<'_, 'de, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        self.visitor.expecting(f)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Self::Value, A::Error> {
        self.visitor.visit_map(TypeAside {
            map,
            kind: self.kind,
        })
    }
}

/// An object's fields without its `type`, whose string it keeps. A `type` given twice, or not
/// as a string without escapes, is refused.
struct TypeAside<'k, 'de, A> {
    map: A,
    kind: &'k mut Option<&'de str>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for TypeAside<'_, 'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, Self::Error> {
        while let Some(key) = self.map.next_key::<&'de str>()? {
            if key != "type" {
                return seed.deserialize(key.into_deserializer()).map(Some);
            }
            if self.kind.is_some() {
                return Err(de::Error::duplicate_field("type"));
            }
            *self.kind = Some(self.map.next_value()?);
        }
        Ok(None)
    }

    fn next_value_seed<V: DeserializeSeed<'de>>(
        &mut self,
        seed: V,
    ) -> Result<V::Value, Self::Error> {
        self.map.next_value_seed(seed)
    }
}
