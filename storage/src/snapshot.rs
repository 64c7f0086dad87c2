//! A snapshot of one zone's NPC state and its on-disk encoding.
//!
//! Owns the byte format every store writes: a small fixed header, the zone and the event id the
//! snapshot covers, then the payload, with one CRC32 over the header and one over the payload.
//! Decoding checks, in this order, magic, format version, header length and checksum, schema
//! version, payload length and checksum, and the zone and sequence the caller expected; the first
//! failure is reported as a typed [`SnapshotDefect`] and the payload is never handed out.
//!
//! It deliberately does not know what the payload means: the service serialises its NPC state
//! (as JSON, with string enums and game time in integer ticks) and owns `schema_version` and any
//! migration between schema versions. It does not compress.
//!
//! Layout (all integers little-endian):
//!
//! | offset | size | field |
//! |---|---|---|
//! | 0 | 4 | magic `GPSN` |
//! | 4 | 2 | format version (this crate writes [`FORMAT_VERSION`]) |
//! | 6 | 2 | zone length `z` |
//! | 8 | 2 | last-event-id length `e` |
//! | 10 | 2 | reserved, zero |
//! | 12 | 4 | schema version of the payload |
//! | 16 | 8 | sequence |
//! | 24 | 8 | game time, ticks |
//! | 32 | 8 | payload length `p` |
//! | 40 | 4 | CRC32 of the payload |
//! | 44 | 4 | CRC32 of bytes 0..44, the zone and the last event id |
//! | 48 | z | zone (UTF-8) |
//! | 48+z | e | last event id (UTF-8) |
//! | 48+z+e | p | payload |

use crate::zone::{ZONE_NAME_MAX_BYTES, ZoneName};

/// The four bytes every encoded snapshot starts with.
pub const MAGIC: [u8; 4] = *b"GPSN";
/// The encoding version this crate writes and the newest it reads.
pub const FORMAT_VERSION: u16 = 1;
/// Longest accepted `last_event_id`, in bytes (a Redis stream id is at most 41).
pub const LAST_EVENT_ID_MAX_BYTES: usize = 128;
/// Size of the fixed part of the header.
pub const FIXED_HEADER_BYTES: usize = 48;
/// Longest possible header: enough bytes to read any snapshot's metadata without its payload.
pub const MAX_HEADER_BYTES: usize =
    FIXED_HEADER_BYTES + ZONE_NAME_MAX_BYTES + LAST_EVENT_ID_MAX_BYTES;

/// One zone's state at one point of its event log.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Snapshot {
    /// The zone whose NPCs the payload describes.
    pub zone: ZoneName,
    /// Strictly increasing per zone; stores refuse a sequence that is not newer than the newest
    /// they hold.
    pub sequence: u64,
    /// The last world-log event folded into the payload: a Redis stream id
    /// (`"1700000000000-3"`) or an embedded log's numeric id (`"42"`). Recovery replays what
    /// comes after it.
    pub last_event_id: String,
    /// Game time of the snapshot, in ticks.
    pub game_time_ticks: u64,
    /// Version of the payload's schema, owned by the service.
    pub schema_version: u32,
    /// The serialised state (JSON in the service). Opaque here.
    pub payload: Vec<u8>,
}

/// The metadata of an encoded snapshot, readable without its payload.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SnapshotHeader {
    /// Zone written in the snapshot.
    pub zone: String,
    /// Sequence written in the snapshot.
    pub sequence: u64,
    /// Last event id the snapshot covers.
    pub last_event_id: String,
    /// Game time, ticks.
    pub game_time_ticks: u64,
    /// Payload schema version.
    pub schema_version: u32,
    /// Payload length in bytes.
    pub payload_bytes: u64,
    /// Length of the whole encoding in bytes.
    pub encoded_bytes: u64,
}

/// What the reader expects of a snapshot it loads.
#[derive(Clone, Copy, Debug)]
pub struct Expected<'a> {
    /// The zone it was asked for.
    pub zone: &'a ZoneName,
    /// The sequence it was filed under.
    pub sequence: u64,
    /// The newest payload schema version the reader understands.
    pub supported_schema_version: u32,
}

/// Why a snapshot cannot be written.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    /// `last_event_id` is longer than [`LAST_EVENT_ID_MAX_BYTES`].
    #[error("last_event_id is {length} bytes long, more than the 128 allowed")]
    LastEventIdTooLong {
        /// Its length.
        length: usize,
    },
}

/// Why stored bytes are not a usable snapshot. Stores report these per snapshot; none of them
/// ever lets the payload through.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SnapshotDefect {
    /// The bytes do not start with [`MAGIC`].
    #[error("not a geppetto snapshot: the first bytes are {found:02x?}, not \"GPSN\"")]
    BadMagic {
        /// The first bytes found (up to four).
        found: Vec<u8>,
    },
    /// Written by a newer geppetto whose encoding this build cannot read.
    #[error(
        "encoding format {found} is newer than format {supported}, the newest this build reads"
    )]
    FormatTooNew {
        /// Format version in the header.
        found: u16,
        /// [`FORMAT_VERSION`].
        supported: u16,
    },
    /// Fewer bytes than the header announces: a torn or cut-off write.
    #[error("truncated: {needed} bytes needed, {available} present")]
    Truncated {
        /// Bytes the header (or the fixed header) requires.
        needed: u64,
        /// Bytes present.
        available: u64,
    },
    /// More bytes than the header announces.
    #[error("{extra} unexpected bytes after the payload")]
    TrailingBytes {
        /// How many.
        extra: u64,
    },
    /// The header checksum does not match: some metadata byte changed.
    #[error("header checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    HeaderChecksum {
        /// CRC32 in the header.
        stored: u32,
        /// CRC32 of the bytes read.
        computed: u32,
    },
    /// The payload checksum does not match: some payload byte changed.
    #[error("payload checksum mismatch: stored {stored:#010x}, computed {computed:#010x}")]
    PayloadChecksum {
        /// CRC32 in the header.
        stored: u32,
        /// CRC32 of the payload read.
        computed: u32,
    },
    /// The payload uses a schema newer than the reader's; it is refused, never decoded.
    #[error(
        "schema version {found} is newer than {supported}, the newest this build understands; \
         upgrade geppetto or restore from an older snapshot"
    )]
    SchemaTooNew {
        /// Schema version in the header.
        found: u32,
        /// The reader's supported schema version.
        supported: u32,
    },
    /// A header field holds an impossible value (bad UTF-8, a non-zero reserved field, an
    /// over-long name).
    #[error("malformed header: {reason}")]
    MalformedHeader {
        /// Which field and why.
        reason: &'static str,
    },
    /// The snapshot names another zone than the one it is filed under.
    #[error("filed under zone {expected} but written for zone {found}")]
    ZoneMismatch {
        /// Zone asked for.
        expected: String,
        /// Zone in the header.
        found: String,
    },
    /// The snapshot names another sequence than the one it is filed under.
    #[error("filed under sequence {expected} but written as sequence {found}")]
    SequenceMismatch {
        /// Sequence of the key.
        expected: u64,
        /// Sequence in the header.
        found: u64,
    },
    /// Listed by the store's index, but its bytes are gone.
    #[error("listed in the index but its value is missing")]
    Missing,
}

impl Snapshot {
    /// Encodes the snapshot with its checksums.
    pub fn encode(&self) -> Result<Vec<u8>, EncodeError> {
        let zone = self.zone.as_str().as_bytes();
        let event_id = self.last_event_id.as_bytes();
        if event_id.len() > LAST_EVENT_ID_MAX_BYTES {
            return Err(EncodeError::LastEventIdTooLong {
                length: event_id.len(),
            });
        }
        // Both lengths are bounded by 128 (zone validation and the check above), so they fit u16.
        let zone_len = u16::try_from(zone.len()).unwrap_or(u16::MAX);
        let event_id_len = u16::try_from(event_id.len()).unwrap_or(u16::MAX);
        let mut bytes = Vec::with_capacity(
            FIXED_HEADER_BYTES + zone.len() + event_id.len() + self.payload.len(),
        );
        bytes.extend_from_slice(&MAGIC);
        bytes.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
        bytes.extend_from_slice(&zone_len.to_le_bytes());
        bytes.extend_from_slice(&event_id_len.to_le_bytes());
        bytes.extend_from_slice(&0u16.to_le_bytes());
        bytes.extend_from_slice(&self.schema_version.to_le_bytes());
        bytes.extend_from_slice(&self.sequence.to_le_bytes());
        bytes.extend_from_slice(&self.game_time_ticks.to_le_bytes());
        bytes.extend_from_slice(&(self.payload.len() as u64).to_le_bytes());
        bytes.extend_from_slice(&crc32fast::hash(&self.payload).to_le_bytes());
        let mut header_crc = crc32fast::Hasher::new();
        header_crc.update(&bytes[..44]);
        header_crc.update(zone);
        header_crc.update(event_id);
        bytes.extend_from_slice(&header_crc.finalize().to_le_bytes());
        bytes.extend_from_slice(zone);
        bytes.extend_from_slice(event_id);
        bytes.extend_from_slice(&self.payload);
        Ok(bytes)
    }

    /// Decodes and verifies `bytes` as the snapshot `expected` names.
    pub fn decode(bytes: &[u8], expected: Expected<'_>) -> Result<Self, SnapshotDefect> {
        let header = SnapshotHeader::decode(bytes)?;
        if header.schema_version > expected.supported_schema_version {
            return Err(SnapshotDefect::SchemaTooNew {
                found: header.schema_version,
                supported: expected.supported_schema_version,
            });
        }
        let available = bytes.len() as u64;
        if available < header.encoded_bytes {
            return Err(SnapshotDefect::Truncated {
                needed: header.encoded_bytes,
                available,
            });
        }
        if available > header.encoded_bytes {
            return Err(SnapshotDefect::TrailingBytes {
                extra: available - header.encoded_bytes,
            });
        }
        let payload_start = FIXED_HEADER_BYTES + header.zone.len() + header.last_event_id.len();
        let payload = bytes.get(payload_start..).unwrap_or_default();
        let stored = read_u32(bytes, 40);
        let computed = crc32fast::hash(payload);
        if stored != computed {
            return Err(SnapshotDefect::PayloadChecksum { stored, computed });
        }
        if header.zone != expected.zone.as_str() {
            return Err(SnapshotDefect::ZoneMismatch {
                expected: expected.zone.to_string(),
                found: header.zone,
            });
        }
        if header.sequence != expected.sequence {
            return Err(SnapshotDefect::SequenceMismatch {
                expected: expected.sequence,
                found: header.sequence,
            });
        }
        Ok(Self {
            zone: expected.zone.clone(),
            sequence: header.sequence,
            last_event_id: header.last_event_id,
            game_time_ticks: header.game_time_ticks,
            schema_version: header.schema_version,
            payload: payload.to_vec(),
        })
    }
}

impl SnapshotHeader {
    /// Reads and verifies the header at the start of `bytes`, which may stop anywhere after it
    /// (the first [`MAX_HEADER_BYTES`] of a snapshot are always enough).
    pub fn decode(bytes: &[u8]) -> Result<Self, SnapshotDefect> {
        let magic = bytes.get(..4).unwrap_or(bytes);
        if magic.len() < MAGIC.len() && MAGIC.starts_with(magic) {
            return Err(SnapshotDefect::Truncated {
                needed: FIXED_HEADER_BYTES as u64,
                available: magic.len() as u64,
            });
        }
        if magic != MAGIC {
            return Err(SnapshotDefect::BadMagic {
                found: magic.to_vec(),
            });
        }
        let available = bytes.len() as u64;
        if bytes.len() < FIXED_HEADER_BYTES {
            return Err(SnapshotDefect::Truncated {
                needed: FIXED_HEADER_BYTES as u64,
                available,
            });
        }
        let format = read_u16(bytes, 4);
        if format > FORMAT_VERSION {
            return Err(SnapshotDefect::FormatTooNew {
                found: format,
                supported: FORMAT_VERSION,
            });
        }
        if format == 0 {
            return Err(SnapshotDefect::MalformedHeader {
                reason: "format version 0 does not exist",
            });
        }
        let zone_len = usize::from(read_u16(bytes, 6));
        let event_id_len = usize::from(read_u16(bytes, 8));
        let variable_end = FIXED_HEADER_BYTES + zone_len + event_id_len;
        let Some(variable) = bytes.get(FIXED_HEADER_BYTES..variable_end) else {
            return Err(SnapshotDefect::Truncated {
                needed: variable_end as u64,
                available,
            });
        };
        let stored = read_u32(bytes, 44);
        let mut hasher = crc32fast::Hasher::new();
        hasher.update(&bytes[..44]);
        hasher.update(variable);
        let computed = hasher.finalize();
        if stored != computed {
            return Err(SnapshotDefect::HeaderChecksum { stored, computed });
        }
        // The checksum passed, so what follows was written by `encode`, or by a newer
        // format-1 writer that this validation still guards.
        if read_u16(bytes, 10) != 0 {
            return Err(SnapshotDefect::MalformedHeader {
                reason: "the reserved field is not zero",
            });
        }
        if zone_len > ZONE_NAME_MAX_BYTES || event_id_len > LAST_EVENT_ID_MAX_BYTES {
            return Err(SnapshotDefect::MalformedHeader {
                reason: "the zone or last_event_id is longer than 128 bytes",
            });
        }
        let (zone, event_id) = variable.split_at(zone_len);
        let zone = std::str::from_utf8(zone).map_err(|_| SnapshotDefect::MalformedHeader {
            reason: "the zone is not UTF-8",
        })?;
        let last_event_id =
            std::str::from_utf8(event_id).map_err(|_| SnapshotDefect::MalformedHeader {
                reason: "last_event_id is not UTF-8",
            })?;
        let payload_bytes = read_u64(bytes, 32);
        let encoded_bytes = (variable_end as u64).checked_add(payload_bytes).ok_or(
            SnapshotDefect::MalformedHeader {
                reason: "the payload length overflows",
            },
        )?;
        Ok(Self {
            zone: zone.to_owned(),
            sequence: read_u64(bytes, 16),
            last_event_id: last_event_id.to_owned(),
            game_time_ticks: read_u64(bytes, 24),
            schema_version: read_u32(bytes, 12),
            payload_bytes,
            encoded_bytes,
        })
    }
}

// The readers below are only called at offsets inside the fixed header, after its length was
// checked; a short slice reads as zeros rather than panicking.
fn read_array<const N: usize>(bytes: &[u8], offset: usize) -> [u8; N] {
    let mut out = [0u8; N];
    if let Some(source) = bytes.get(offset..offset + N) {
        out.copy_from_slice(source);
    }
    out
}

fn read_u16(bytes: &[u8], offset: usize) -> u16 {
    u16::from_le_bytes(read_array(bytes, offset))
}

fn read_u32(bytes: &[u8], offset: usize) -> u32 {
    u32::from_le_bytes(read_array(bytes, offset))
}

fn read_u64(bytes: &[u8], offset: usize) -> u64 {
    u64::from_le_bytes(read_array(bytes, offset))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn zone() -> ZoneName {
        ZoneName::new("village").expect("valid zone")
    }

    fn sample() -> Snapshot {
        Snapshot {
            zone: zone(),
            sequence: 7,
            last_event_id: "1700000000000-3".to_owned(),
            game_time_ticks: 1440,
            schema_version: 2,
            payload: br#"{"npcs":[{"id":"smith","needs":{"hunger":42}}]}"#.to_vec(),
        }
    }

    fn expected(zone: &ZoneName, sequence: u64, supported: u32) -> Expected<'_> {
        Expected {
            zone,
            sequence,
            supported_schema_version: supported,
        }
    }

    #[test]
    fn round_trips_and_reads_the_header_alone() {
        let snapshot = sample();
        let bytes = snapshot.encode().expect("encodes");
        let zone = zone();
        assert_eq!(
            Snapshot::decode(&bytes, expected(&zone, 7, 2)),
            Ok(snapshot.clone())
        );
        let header = SnapshotHeader::decode(&bytes[..MAX_HEADER_BYTES.min(bytes.len())])
            .expect("header decodes");
        assert_eq!(header.sequence, 7);
        assert_eq!(header.last_event_id, "1700000000000-3");
        assert_eq!(header.encoded_bytes, bytes.len() as u64);
        assert_eq!(header.payload_bytes, snapshot.payload.len() as u64);
    }

    #[test]
    fn every_single_byte_flip_is_detected() {
        let bytes = sample().encode().expect("encodes");
        let zone = zone();
        for index in 0..bytes.len() {
            let mut corrupt = bytes.clone();
            corrupt[index] ^= 0x20;
            let result = Snapshot::decode(&corrupt, expected(&zone, 7, 2));
            assert!(result.is_err(), "flip at byte {index} went unnoticed");
        }
    }

    #[test]
    fn every_truncation_is_detected() {
        let bytes = sample().encode().expect("encodes");
        let zone = zone();
        for length in 0..bytes.len() {
            let result = Snapshot::decode(&bytes[..length], expected(&zone, 7, 2));
            assert!(
                result.is_err(),
                "truncation to {length} bytes went unnoticed"
            );
        }
        let payload_cut = Snapshot::decode(&bytes[..bytes.len() - 1], expected(&zone, 7, 2));
        assert_eq!(
            payload_cut,
            Err(SnapshotDefect::Truncated {
                needed: bytes.len() as u64,
                available: bytes.len() as u64 - 1,
            })
        );
    }

    #[test]
    fn names_each_defect() {
        let snapshot = sample();
        let bytes = snapshot.encode().expect("encodes");
        let zone = zone();
        let other = ZoneName::new("market").expect("valid zone");

        let too_new = Snapshot::decode(&bytes, expected(&zone, 7, 1));
        assert_eq!(
            too_new,
            Err(SnapshotDefect::SchemaTooNew {
                found: 2,
                supported: 1
            })
        );
        let message = too_new
            .err()
            .map(|defect| defect.to_string())
            .unwrap_or_default();
        assert!(
            message.contains("schema version 2 is newer than 1"),
            "{message}"
        );

        assert!(matches!(
            Snapshot::decode(&bytes, expected(&other, 7, 2)),
            Err(SnapshotDefect::ZoneMismatch { .. })
        ));
        assert_eq!(
            Snapshot::decode(&bytes, expected(&zone, 8, 2)),
            Err(SnapshotDefect::SequenceMismatch {
                expected: 8,
                found: 7
            })
        );

        let mut trailing = bytes.clone();
        trailing.push(0);
        assert_eq!(
            Snapshot::decode(&trailing, expected(&zone, 7, 2)),
            Err(SnapshotDefect::TrailingBytes { extra: 1 })
        );

        let mut payload_flip = bytes.clone();
        let last = payload_flip.len() - 1;
        payload_flip[last] ^= 1;
        assert!(matches!(
            Snapshot::decode(&payload_flip, expected(&zone, 7, 2)),
            Err(SnapshotDefect::PayloadChecksum { .. })
        ));

        let mut future_format = bytes.clone();
        future_format[4..6].copy_from_slice(&2u16.to_le_bytes());
        assert_eq!(
            Snapshot::decode(&future_format, expected(&zone, 7, 2)),
            Err(SnapshotDefect::FormatTooNew {
                found: 2,
                supported: 1
            })
        );

        assert!(matches!(
            Snapshot::decode(b"{\"json\":1}", expected(&zone, 7, 2)),
            Err(SnapshotDefect::BadMagic { .. })
        ));
    }

    proptest::proptest! {
        #[test]
        fn any_snapshot_round_trips(
            sequence in proptest::prelude::any::<u64>(),
            game_time_ticks in proptest::prelude::any::<u64>(),
            schema_version in proptest::prelude::any::<u32>(),
            last_event_id in "[0-9]{1,20}(-[0-9]{1,20})?",
            payload in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..512),
        ) {
            let snapshot = Snapshot { zone: zone(), sequence, last_event_id, game_time_ticks, schema_version, payload };
            let bytes = snapshot.encode().expect("encodes");
            let zone = zone();
            proptest::prop_assert_eq!(
                Snapshot::decode(&bytes, expected(&zone, sequence, u32::MAX)),
                Ok(snapshot)
            );
        }

        #[test]
        fn arbitrary_bytes_never_decode_and_never_panic(
            bytes in proptest::collection::vec(proptest::prelude::any::<u8>(), 0..256),
        ) {
            let zone = zone();
            proptest::prop_assert!(Snapshot::decode(&bytes, expected(&zone, 7, u32::MAX)).is_err());
            let _ = SnapshotHeader::decode(&bytes);
        }
    }

    #[test]
    fn refuses_an_over_long_event_id() {
        let mut snapshot = sample();
        snapshot.last_event_id = "9".repeat(LAST_EVENT_ID_MAX_BYTES + 1);
        assert_eq!(
            snapshot.encode(),
            Err(EncodeError::LastEventIdTooLong { length: 129 })
        );
    }
}
