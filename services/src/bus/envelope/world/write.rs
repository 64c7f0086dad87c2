//! The direct write of a world message ([`super::WorldMessage::to_json`]): the event's payload
//! fields are serialised one by one, straight from its derive, and written beside the header in
//! the order a JSON tree keeps (keys sorted, the payload's `null`s left out) — the bytes the
//! tree wrote, without building it. A field holding an object is written through a tree of its
//! own (that is where the tree sorts keys a derive writes in another order); an event whose
//! shape this write does not know is left to the whole tree ([`super::flat_envelope`]).

use std::fmt;
use std::ops::Range;

use serde::Serialize;
use serde::ser::{self, Impossible, SerializeStruct, SerializeStructVariant, Serializer};

use crate::bus::envelope::Header;

/// Bytes reserved for a world message's line up front: a social event fits.
const LINE_CAPACITY_HINT: usize = 256;

/// `header` and the fields of `event` (a [`super::WorldEvent`] of type `kind`) as one envelope
/// line, byte for byte what the tree writes; `None` when the event's shape is not one this
/// write knows (the caller writes it through the tree).
pub(super) fn write_direct<E: Serialize>(header: &Header, kind: &str, event: &E) -> Option<String> {
    let mut payload = Payload {
        text: Vec::with_capacity(LINE_CAPACITY_HINT),
        fields: Vec::with_capacity(16),
    };
    // The header's fields first: sorted stably with the payload's below, a payload field of
    // the same name comes after the header's and replaces it, as it did in the tree.
    let mut number = itoa::Buffer::new();
    payload.raw("game_time", number.format(header.game_time).as_bytes());
    payload.field("id", &header.id).ok()?;
    if let Some(origin) = &header.origin {
        payload.field("origin", origin).ok()?;
    }
    payload.field("type", kind).ok()?;
    payload.raw("v", number.format(header.v).as_bytes());
    payload.field("zone", &header.zone).ok()?;
    let header_fields = payload.fields.len();
    event.serialize(Top(&mut payload)).ok()?;
    // The payload's `null`s are left out.
    let mut index = 0;
    payload.fields.retain(|(_, range)| {
        index += 1;
        index <= header_fields || payload.text[range.clone()] != *b"null"
    });
    payload.fields.sort_by_key(|(key, _)| *key);
    let mut out = Vec::with_capacity(payload.text.len() + 16 * payload.fields.len() + 2);
    out.push(b'{');
    let mut fields = payload.fields.iter().peekable();
    while let Some((key, range)) = fields.next() {
        if fields.peek().is_some_and(|(next, _)| next == key) {
            continue;
        }
        if out.len() > 1 {
            out.push(b',');
        }
        if key.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_') {
            out.push(b'"');
            out.extend_from_slice(key.as_bytes());
            out.push(b'"');
        } else {
            serde_json::to_writer(&mut out, key).ok()?;
        }
        out.push(b':');
        out.extend_from_slice(&payload.text[range.clone()]);
    }
    out.push(b'}');
    String::from_utf8(out).ok()
}

/// The payload's fields as written: each one's name and where its JSON lies in `text`.
struct Payload {
    text: Vec<u8>,
    fields: Vec<(&'static str, Range<usize>)>,
}

impl Payload {
    /// Writes `json` as field `key`.
    fn raw(&mut self, key: &'static str, json: &[u8]) {
        let start = self.text.len();
        self.text.extend_from_slice(json);
        self.fields.push((key, start..self.text.len()));
    }

    /// Writes `value` as field `key`: straight from its derive when that holds no object,
    /// else through a tree (which sorts the object's keys, as the whole tree did).
    fn field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Unknown> {
        let start = self.text.len();
        serde_json::to_writer(&mut self.text, value).map_err(|_| Unknown)?;
        if self.text[start..].contains(&b'{') {
            self.text.truncate(start);
            let tree = serde_json::to_value(value).map_err(|_| Unknown)?;
            serde_json::to_writer(&mut self.text, &tree).map_err(|_| Unknown)?;
        }
        self.fields.push((key, start..self.text.len()));
        Ok(())
    }
}

/// An event this write does not know the shape of.
#[derive(Debug)]
struct Unknown;

impl fmt::Display for Unknown {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("not an event of known shape")
    }
}

impl std::error::Error for Unknown {}

impl ser::Error for Unknown {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Self
    }
}

/// Serializer methods that mean "not a shape this write knows".
macro_rules! unknown {
    ($($method:ident($($arg:ty),*) -> $ok:ty;)*) => {
        $(fn $method(self, $(_: $arg),*) -> Result<$ok, Unknown> { Err(Unknown) })*
    };
}

/// The refusals both serializers share: every value that is not a struct or a variant, and
/// every sequence, tuple and map.
macro_rules! refuse_values {
    () => {
        unknown! {
            serialize_bool(bool) -> ();
            serialize_i8(i8) -> ();
            serialize_i16(i16) -> ();
            serialize_i32(i32) -> ();
            serialize_i64(i64) -> ();
            serialize_u8(u8) -> ();
            serialize_u16(u16) -> ();
            serialize_u32(u32) -> ();
            serialize_u64(u64) -> ();
            serialize_f32(f32) -> ();
            serialize_f64(f64) -> ();
            serialize_char(char) -> ();
            serialize_str(&str) -> ();
            serialize_bytes(&[u8]) -> ();
            serialize_none() -> ();
            serialize_unit() -> ();
            serialize_unit_struct(&'static str) -> ();
            serialize_seq(Option<usize>) -> Self::SerializeSeq;
            serialize_tuple(usize) -> Self::SerializeTuple;
            serialize_tuple_struct(&'static str, usize) -> Self::SerializeTupleStruct;
            serialize_tuple_variant(&'static str, u32, &'static str, usize) -> Self::SerializeTupleVariant;
            serialize_map(Option<usize>) -> Self::SerializeMap;
        }

        fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Unknown> {
            Err(Unknown)
        }

        fn serialize_newtype_struct<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: &T,
        ) -> Result<(), Unknown> {
            Err(Unknown)
        }
    };
}

/// Serializes the event itself: a unit variant (no payload), a struct variant (its fields) or
/// a newtype variant holding a struct (that struct's fields).
struct Top<'p>(&'p mut Payload);

impl<'p> Serializer for Top<'p> {
    type Ok = ();
    type Error = Unknown;
    type SerializeSeq = Impossible<(), Unknown>;
    type SerializeTuple = Impossible<(), Unknown>;
    type SerializeTupleStruct = Impossible<(), Unknown>;
    type SerializeTupleVariant = Impossible<(), Unknown>;
    type SerializeMap = Impossible<(), Unknown>;
    type SerializeStruct = Impossible<(), Unknown>;
    type SerializeStructVariant = Fields<'p>;

    refuse_values!();

    unknown! {
        serialize_struct(&'static str, usize) -> Self::SerializeStruct;
    }

    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
    ) -> Result<(), Unknown> {
        Ok(())
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        value: &T,
    ) -> Result<(), Unknown> {
        value.serialize(Inner(self.0))
    }

    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Fields<'p>, Unknown> {
        Ok(Fields(self.0))
    }
}

/// Serializes what a newtype variant holds: a struct (through any box), its fields the payload.
struct Inner<'p>(&'p mut Payload);

impl<'p> Serializer for Inner<'p> {
    type Ok = ();
    type Error = Unknown;
    type SerializeSeq = Impossible<(), Unknown>;
    type SerializeTuple = Impossible<(), Unknown>;
    type SerializeTupleStruct = Impossible<(), Unknown>;
    type SerializeTupleVariant = Impossible<(), Unknown>;
    type SerializeMap = Impossible<(), Unknown>;
    type SerializeStruct = Fields<'p>;
    type SerializeStructVariant = Impossible<(), Unknown>;

    refuse_values!();

    unknown! {
        serialize_unit_variant(&'static str, u32, &'static str) -> ();
        serialize_struct_variant(&'static str, u32, &'static str, usize) -> Self::SerializeStructVariant;
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: &T,
    ) -> Result<(), Unknown> {
        Err(Unknown)
    }

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Fields<'p>, Unknown> {
        Ok(Fields(self.0))
    }
}

/// The fields of a struct variant, or of the struct a newtype variant holds.
struct Fields<'p>(&'p mut Payload);

impl SerializeStructVariant for Fields<'_> {
    type Ok = ();
    type Error = Unknown;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Unknown> {
        self.0.field(key, value)
    }

    fn end(self) -> Result<(), Unknown> {
        Ok(())
    }
}

impl SerializeStruct for Fields<'_> {
    type Ok = ();
    type Error = Unknown;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Unknown> {
        self.0.field(key, value)
    }

    fn end(self) -> Result<(), Unknown> {
        Ok(())
    }
}
