//! [`wire_enum!`]: an enum of unit variants whose wire names are declared
//! once, beside the variants. From that one list it derives `as_str`, `from_wire`, the
//! declaration-order `VARIANTS` and `WIRE_NAMES`, serde's `Serialize` and `Deserialize`, and
//! the JSON Schema (`schemars::JsonSchema`: a string, one of the names),
//! so the name a metric label, a log line or a snapshot carries can never disagree with the
//! name JSON and YAML carry. Serialisation and deserialisation behave exactly as serde's
//! derive of a unit-variant enum with the same names (variant index, `unknown variant` errors).

/// Declares an enum of unit variants with its wire names, once.
///
/// ```
/// geppetto_wire_enum::wire_enum! {
///     /// Whether a door lets anyone through.
///     #[derive(Clone, Copy, Debug, PartialEq, Eq)]
///     pub enum DoorState {
///         /// Anyone may pass.
///         Open = "open",
///         /// Nobody may pass.
///         HalfOpen = "half_open",
///     }
/// }
/// assert_eq!(DoorState::HalfOpen.as_str(), "half_open");
/// assert_eq!(DoorState::from_wire("open"), Some(DoorState::Open));
/// assert_eq!(serde_json::to_string(&DoorState::HalfOpen).unwrap(), "\"half_open\"");
/// ```
///
/// The enum must be `Copy` (derive it). Do not derive serde's traits as well: the macro
/// implements them from the same names. Attributes on the enum and on each variant (docs,
/// derives, `#[default]`) are kept.
#[macro_export]
macro_rules! wire_enum {
    (
        $(#[$meta:meta])*
        $vis:vis enum $name:ident {
            $(
                $(#[$vmeta:meta])*
                $variant:ident = $wire:literal
            ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        $vis enum $name {
            $(
                $(#[$vmeta])*
                $variant,
            )+
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const VARIANTS: &'static [Self] = &[$(Self::$variant),+];

            /// Every variant's wire name, in declaration order.
            pub const WIRE_NAMES: &'static [&'static str] = &[$($wire),+];

            /// The wire name.
            #[must_use]
            pub const fn as_str(self) -> &'static str {
                match self {
                    $(Self::$variant => $wire,)+
                }
            }

            /// The variant a wire name names, if any.
            #[must_use]
            pub fn from_wire(name: &str) -> ::core::option::Option<Self> {
                match name {
                    $($wire => ::core::option::Option::Some(Self::$variant),)+
                    _ => ::core::option::Option::None,
                }
            }
        }

        impl $crate::__private::serde::Serialize for $name {
            fn serialize<S>(&self, serializer: S) -> ::core::result::Result<S::Ok, S::Error>
            where
                S: $crate::__private::serde::Serializer,
            {
                serializer.serialize_unit_variant(
                    ::core::stringify!($name),
                    *self as u32,
                    self.as_str(),
                )
            }
        }

        impl $crate::__private::schemars::JsonSchema for $name {
            fn schema_name() -> ::std::borrow::Cow<'static, str> {
                ::std::borrow::Cow::Borrowed(::core::stringify!($name))
            }

            fn json_schema(
                _: &mut $crate::__private::schemars::SchemaGenerator,
            ) -> $crate::__private::schemars::Schema {
                $crate::__private::schemars::json_schema!({
                    "type": "string",
                    "enum": Self::WIRE_NAMES,
                })
            }
        }

        impl<'de> $crate::__private::serde::Deserialize<'de> for $name {
            fn deserialize<D>(deserializer: D) -> ::core::result::Result<Self, D::Error>
            where
                D: $crate::__private::serde::Deserializer<'de>,
            {
                $crate::__private::deserialize_unit_enum(
                    deserializer,
                    ::core::stringify!($name),
                    Self::VARIANTS,
                    Self::WIRE_NAMES,
                )
            }
        }
    };
}

/// Asserts that the wire names of a [`wire_enum!`] enum agree everywhere: for
/// every variant, `as_str` gives its name and JSON writes and reads it back under that name.
/// For the agreement tests of the crates that declare such enums; it panics on a mismatch.
pub fn assert_wire_names_agree<T>(variants: &[T], names: &[&str], as_str: fn(T) -> &'static str)
where
    T: Copy + PartialEq + std::fmt::Debug + serde::Serialize + serde::de::DeserializeOwned,
{
    assert_eq!(variants.len(), names.len(), "one wire name a variant");
    for (variant, name) in variants.iter().zip(names) {
        assert_eq!(as_str(*variant), *name);
        let json = serde_json::to_string(variant).expect("a wire enum serialises");
        assert_eq!(json, format!("\"{name}\""));
        let back: T = serde_json::from_str(&json).expect("a wire enum deserialises");
        assert_eq!(back, *variant);
    }
}

/// What [`wire_enum!`] expands to refers to; not an API.
#[doc(hidden)]
pub mod __private {
    use std::fmt;
    use std::marker::PhantomData;

    pub use schemars;
    pub use serde;
    use serde::de::{self, Deserializer, EnumAccess, Unexpected, VariantAccess, Visitor};

    /// Deserialises a unit variant the way serde's derive does: from its name or its
    /// declaration index, reporting an unknown name with the list of known ones.
    pub fn deserialize_unit_enum<'de, D, T>(
        deserializer: D,
        enum_name: &'static str,
        variants: &'static [T],
        names: &'static [&'static str],
    ) -> Result<T, D::Error>
    where
        D: Deserializer<'de>,
        T: Copy + 'static,
    {
        deserializer.deserialize_enum(
            enum_name,
            names,
            EnumVisitor {
                enum_name,
                variants,
                names,
                marker: PhantomData,
            },
        )
    }

    struct EnumVisitor<T: 'static> {
        enum_name: &'static str,
        variants: &'static [T],
        names: &'static [&'static str],
        marker: PhantomData<T>,
    }

    impl<'de, T: Copy + 'static> Visitor<'de> for EnumVisitor<T> {
        type Value = T;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            write!(f, "enum {}", self.enum_name)
        }

        fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<T, A::Error> {
            let (index, access) = data.variant_seed(Field { names: self.names })?;
            access.unit_variant()?;
            Ok(self.variants[index])
        }
    }

    /// A variant identifier, resolved to its declaration index.
    struct Field {
        names: &'static [&'static str],
    }

    impl<'de> de::DeserializeSeed<'de> for Field {
        type Value = usize;

        fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<usize, D::Error> {
            deserializer.deserialize_identifier(self)
        }
    }

    impl<'de> Visitor<'de> for Field {
        type Value = usize;

        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("variant identifier")
        }

        fn visit_u64<E: de::Error>(self, value: u64) -> Result<usize, E> {
            match usize::try_from(value) {
                Ok(index) if index < self.names.len() => Ok(index),
                _ => Err(E::invalid_value(
                    Unexpected::Unsigned(value),
                    &format!("variant index 0 <= i < {}", self.names.len()).as_str(),
                )),
            }
        }

        fn visit_str<E: de::Error>(self, value: &str) -> Result<usize, E> {
            self.names
                .iter()
                .position(|name| *name == value)
                .ok_or_else(|| E::unknown_variant(value, self.names))
        }

        fn visit_bytes<E: de::Error>(self, value: &[u8]) -> Result<usize, E> {
            match std::str::from_utf8(value) {
                Ok(text) => self.visit_str(text),
                Err(_) => Err(E::unknown_variant(
                    &String::from_utf8_lossy(value),
                    self.names,
                )),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    crate::wire_enum! {
        /// A test enum.
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        enum Door {
            /// Open.
            Open = "open",
            /// Half open.
            HalfOpen = "half_open",
        }
    }

    #[test]
    fn serde_uses_the_declared_names() {
        for (door, name) in Door::VARIANTS.iter().zip(Door::WIRE_NAMES) {
            assert_eq!(door.as_str(), *name);
            assert_eq!(Door::from_wire(name), Some(*door));
            let json = serde_json::to_string(door).expect("serialises");
            assert_eq!(json, format!("\"{name}\""));
            let back: Door = serde_json::from_str(&json).expect("deserialises");
            assert_eq!(back, *door);
        }
    }

    #[test]
    fn errors_read_like_the_derive() {
        let error = serde_json::from_str::<Door>("\"ajar\"").expect_err("unknown");
        assert_eq!(
            error.to_string(),
            "unknown variant `ajar`, expected `open` or `half_open` at line 1 column 6"
        );
        let from_yaml: Door = serde_saphyr::from_str("half_open").expect("yaml");
        assert_eq!(from_yaml, Door::HalfOpen);
    }
}
