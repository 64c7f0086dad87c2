//! The zone name every stored record is filed under.
//!
//! Owns the validation of zone names, because a zone becomes part of a redb key and of a Redis
//! Cluster hash tag (`geppetto:{zone}:…`): a brace in a zone name would move the tag, a space or a
//! colon would make keys ambiguous. It does not decide which zones exist or who owns them
//! (leases are the service's concern).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// Longest accepted zone name, in bytes. Bounds the snapshot header and every key.
pub const ZONE_NAME_MAX_BYTES: usize = 128;

/// A validated zone name: 1 to [`ZONE_NAME_MAX_BYTES`] ASCII letters, digits, `-`, `_` or `.`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ZoneName(String);

/// Why a string is not a zone name.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("invalid zone name {name:?}: {reason}")]
pub struct InvalidZone {
    /// The refused name, as given.
    pub name: String,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl ZoneName {
    /// Validates `name` as a zone name.
    pub fn new(name: impl Into<String>) -> Result<Self, InvalidZone> {
        let name = name.into();
        let reason = if name.is_empty() {
            Some("it is empty")
        } else if name.len() > ZONE_NAME_MAX_BYTES {
            Some("it is longer than 128 bytes")
        } else if !name
            .bytes()
            .all(|byte| byte.is_ascii_alphanumeric() || matches!(byte, b'-' | b'_' | b'.'))
        {
            Some("only ASCII letters, digits, '-', '_' and '.' are allowed")
        } else {
            None
        };
        match reason {
            Some(reason) => Err(InvalidZone { name, reason }),
            None => Ok(Self(name)),
        }
    }

    /// The zone name.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for ZoneName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl Serialize for ZoneName {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for ZoneName {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let name = String::deserialize(deserializer)?;
        ZoneName::new(name).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn accepts_plain_names_and_refuses_the_rest() {
        let cases: &[(&str, bool)] = &[
            ("village", true),
            ("zone-1_north.v2", true),
            ("", false),
            ("a{b}", false),
            ("with space", false),
            ("colon:zone", false),
            ("é", false),
        ];
        for (name, ok) in cases {
            assert_eq!(ZoneName::new(*name).is_ok(), *ok, "{name:?}");
        }
        assert!(ZoneName::new("x".repeat(ZONE_NAME_MAX_BYTES)).is_ok());
        let long = ZoneName::new("x".repeat(ZONE_NAME_MAX_BYTES + 1));
        assert_eq!(
            long.map_err(|error| error.reason),
            Err("it is longer than 128 bytes")
        );
    }

    #[test]
    fn deserialising_validates() {
        let zone: Result<ZoneName, _> = serde_json::from_str("\"a}b\"");
        assert!(zone.is_err());
        let zone: ZoneName = serde_json::from_str("\"market\"").expect("valid zone");
        assert_eq!(zone.as_str(), "market");
    }
}
