//! Why the demo or the load generator could not run: each layer's typed error kept as it is,
//! with what the drive itself adds (the Redis server, the zone in use, the file, the address).

use crate::bus::BusError;
use crate::content::ContentError;
use crate::runtime::RuntimeError;
use crate::runtime::actor::ZoneGone;
use crate::runtime::recovery::RecoveryError;
use crate::runtime::starter::StartError;
use crate::runtime::zone_loop::ServiceError;
use crate::zone::ZoneError;

/// Why a drive failed.
#[derive(Debug, thiserror::Error)]
pub enum DriveError {
    /// The embedded content or a synthetic world was refused.
    #[error(transparent)]
    Content(#[from] ContentError),
    /// A zone could not be built over its world (`world` names the world's file).
    #[error("{world}: {source}")]
    Zone {
        /// The world's file or name.
        world: String,
        /// Why.
        source: ZoneError,
    },
    /// The zone's streams on this Redis already hold entries and no reset was asked for.
    #[error(
        "zone `{zone}` already has streams at {url}: {held}. Another run or a `serve` may be \
         using them: pass --zone NAME to run in a zone of its own, or --reset to delete them \
         and start afresh"
    )]
    ZoneInUse {
        /// The zone.
        zone: String,
        /// The Redis server.
        url: String,
        /// Its streams that hold entries, with their lengths.
        held: String,
    },
    /// A Redis server could not be reached or refused a command.
    #[error("redis {url}: {source}")]
    Redis {
        /// The server.
        url: String,
        /// Why.
        source: redis::RedisError,
    },
    /// The bus failed.
    #[error(transparent)]
    Bus(#[from] BusError),
    /// The LLM seams or the service's parts could not start.
    #[error(transparent)]
    Start(#[from] StartError),
    /// The redb file that keeps the village could not be opened (the error names it).
    #[error(transparent)]
    Storage(#[from] geppetto_storage::RedbOpenError),
    /// The village kept in a redb file could not be recovered.
    #[error("{path}: {source}")]
    Recovery {
        /// The file.
        path: String,
        /// Why.
        source: RecoveryError,
    },
    /// The admin token could not be read.
    #[error(transparent)]
    Secret(#[from] geppetto_llm::SecretError),
    /// The admin API could not listen.
    #[error("admin {address}: {source}")]
    Admin {
        /// The address asked for.
        address: String,
        /// Why.
        source: std::io::Error,
    },
    /// A zone's loop stopped with an error.
    #[error(transparent)]
    ZoneLoop(#[from] ServiceError),
    /// A zone's actor stopped before the drive was done with it.
    #[error(transparent)]
    ZoneGone(#[from] ZoneGone),
    /// A task of the drive panicked or was cancelled.
    #[error("a task of the run failed: {0}")]
    Task(#[from] tokio::task::JoinError),
    /// The async runtime could not start.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl DriveError {
    /// Whether the input was refused (the content, the zone in use, the service's settings) —
    /// rather than something around it failing.
    pub fn is_refusal(&self) -> bool {
        match self {
            Self::Content(_) | Self::Zone { .. } | Self::ZoneInUse { .. } => true,
            Self::Start(error) => matches!(error, StartError::Refused(_)),
            _ => false,
        }
    }

    /// A Redis failure at `url`, for `map_err`.
    pub(crate) fn redis(url: &str) -> impl Fn(redis::RedisError) -> Self + '_ {
        move |source| Self::Redis {
            url: url.to_owned(),
            source,
        }
    }
}
