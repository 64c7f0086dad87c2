//! What the load generator sends: the clock's ticks to every zone, social events and player
//! lines at their rates aimed at NPCs a player can see ([`Schedule`]), written through the
//! in-process bus or — on Redis — as a game server writes them ([`Injector`]).

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use redis::IntoConnectionInfo;
use redis::streams::StreamMaxlen;

use crate::bus::envelope::{WorldEvent, WorldMessage, header};
use crate::bus::redis::{
    BODY_FIELD, RedisBusConfig, parse_one, raw_address, reply_ends, setup, tcp_settings,
};
use crate::bus::{EventBus, StreamKind};
use crate::drive::error::DriveError;
use crate::drive::load::probe::{Sent, tick_key};

/// Ticks the load clock advances per second.
pub const LOAD_TICKS_PER_SECOND: u64 = 10;

/// Strides that spread the social events and the lines said over a zone's NPCs (primes, so
/// that consecutive events reach different NPCs).
const SOCIAL_STRIDE: usize = 7919;
const SAY_STRIDE: usize = 104_729;

/// World events due to go out: (zone, message as JSON).
pub(crate) type Due = Vec<(String, String)>;

/// One zone as the schedule aims at it: its name and the NPCs a player can see.
pub(crate) struct Aim {
    /// The zone.
    pub zone: String,
    /// Where its social events and lines said go.
    pub targets: Vec<String>,
}

/// What the generator has sent so far, and at which rates it sends.
pub(crate) struct Schedule {
    aims: Vec<Aim>,
    events_per_sec: f64,
    says_per_sec: f64,
    /// The game minute the clock has reached.
    pub game_time: u64,
    /// Social events sent.
    social: u64,
    /// Player lines sent.
    pub says: u64,
    /// World events sent, of every kind.
    pub world: u64,
}

impl Schedule {
    /// A schedule over `aims` (one a zone) at these rates a second.
    pub(crate) fn new(aims: Vec<Aim>, events_per_sec: f64, says_per_sec: f64) -> Self {
        Self {
            aims,
            events_per_sec,
            says_per_sec,
            game_time: 0,
            social: 0,
            says: 0,
            world: 0,
        }
    }

    /// The zone the `n`th social event or line said goes to, and one of its NPCs.
    fn aim(&self, n: u64, stride: usize) -> (String, String) {
        let aim = &self.aims[n as usize % self.aims.len()];
        let target = aim.targets[(n as usize * stride) % aim.targets.len().max(1)].clone();
        (aim.zone.clone(), target)
    }

    /// Adds to `due` everything due `elapsed` seconds into the run, noting each probe in
    /// `sent` as it goes.
    pub(crate) fn catch_up(&mut self, elapsed: f64, sent: &Sent, due: &mut Due) {
        let due_ticks = (elapsed * LOAD_TICKS_PER_SECOND as f64) as u64;
        while self.game_time < due_ticks {
            self.game_time += 1;
            let t = self.game_time;
            for aim in &self.aims {
                sent.note(tick_key(&aim.zone, t));
                let tick = WorldMessage {
                    header: header(format!("t{t}"), &aim.zone, t),
                    event: WorldEvent::TimeAdvanced,
                };
                due.push((aim.zone.clone(), tick.to_json()));
                self.world += 1;
            }
        }
        let due_social = (elapsed * self.events_per_sec) as u64;
        while self.social < due_social {
            self.social += 1;
            let n = self.social;
            let source = format!("load-{n}");
            let (zone, target) = self.aim(n, SOCIAL_STRIDE);
            sent.note(source.clone());
            let social = WorldMessage {
                header: header(format!("s{n}"), &zone, self.game_time),
                event: WorldEvent::SocialEvent {
                    kind: "greeting".into(),
                    source,
                    target,
                    deltas: BTreeMap::from([("FUN".into(), 1.0)]),
                    mood: None,
                    about: None,
                },
            };
            due.push((zone, social.to_json()));
            self.world += 1;
        }
        let due_says = (elapsed * self.says_per_sec) as u64;
        while self.says < due_says {
            self.says += 1;
            let n = self.says;
            let (zone, addressee) = self.aim(n, SAY_STRIDE);
            let said = WorldMessage {
                header: header(format!("say{n}"), &zone, self.game_time),
                event: WorldEvent::Say {
                    speaker: "load-player".into(),
                    room: None,
                    text: format!("{addressee}, you are a liar and a thief"),
                    addressee: Some(addressee),
                },
            };
            due.push((zone, said.to_json()));
            self.world += 1;
        }
    }
}

/// Where the generator sends world events: through the in-process bus, or — on Redis — as a
/// game server does, on a connection of its own, each send period's events in one pipeline
/// (a blocking client: the generator's thread has nothing else to do while Redis answers).
pub(crate) enum Injector {
    Bus(Arc<dyn EventBus>),
    Redis {
        connection: Box<redis::Connection>,
        url: String,
    },
    /// A server reached over plain TCP in RESP2: each pipeline written on a socket of the
    /// generator's own and its replies' ends found by their lengths, only a refusal parsed (a
    /// reply tree per `XADD` was the largest cost of the generator's thread after the events).
    Raw {
        stream: TcpStream,
        /// Replies read and not yet looked at.
        buffer: Vec<u8>,
        url: String,
    },
}

/// How long the generator waits for Redis to answer a pipeline: the bus's own consumers'
/// patience (`read_block_ms` plus `response_timeout_margin_ms` of `[bus.redis]`'s defaults).
fn reply_timeout() -> Duration {
    let config = RedisBusConfig::default();
    Duration::from_millis(config.read_block_ms + config.response_timeout_margin_ms)
}

/// Writes `pipe` on `stream` and reads its replies (one a command) into `buffer`: the first
/// refusal among them as the error.
fn raw_round_trip(
    stream: &mut TcpStream,
    buffer: &mut Vec<u8>,
    pipe: &redis::Pipeline,
) -> Result<(), redis::RedisError> {
    stream.write_all(&pipe.get_packed_pipeline())?;
    buffer.clear();
    let mut chunk = [0u8; 64 * 1024];
    let ends = loop {
        if let Some(ends) = reply_ends(buffer, pipe.len())? {
            break ends;
        }
        let read = stream.read(&mut chunk)?;
        if read == 0 {
            return Err(redis::RedisError::from((
                redis::ErrorKind::Io,
                "the server closed the connection",
            )));
        }
        buffer.extend_from_slice(&chunk[..read]);
    };
    let mut start = 0;
    for end in ends {
        if buffer.get(start) == Some(&b'-') {
            parse_one(&buffer[start..end])?.extract_error()?;
        }
        start = end;
    }
    Ok(())
}

impl Injector {
    /// The injector for `bus`, or for the Redis server at `redis`.
    pub(crate) fn open(bus: &Arc<dyn EventBus>, redis: Option<&str>) -> Result<Self, DriveError> {
        let Some(url) = redis else {
            return Ok(Self::Bus(Arc::clone(bus)));
        };
        let failed = DriveError::redis(url);
        let info = url
            .into_connection_info()
            .map_err(&failed)?
            .set_tcp_settings(tcp_settings());
        if let Some(address) = raw_address(&info) {
            let mut stream = TcpStream::connect(address)
                .map_err(redis::RedisError::from)
                .map_err(&failed)?;
            stream
                .set_nodelay(true)
                .and_then(|()| stream.set_read_timeout(Some(reply_timeout())))
                .map_err(redis::RedisError::from)
                .map_err(&failed)?;
            let mut buffer = Vec::new();
            let setup = setup(&info);
            if !setup.is_empty() {
                raw_round_trip(&mut stream, &mut buffer, &setup).map_err(&failed)?;
            }
            return Ok(Self::Raw {
                stream,
                buffer,
                url: url.to_owned(),
            });
        }
        let connection = redis::Client::open(info)
            .and_then(|client| client.get_connection())
            .map_err(&failed)?;
        Ok(Self::Redis {
            connection: Box::new(connection),
            url: url.to_owned(),
        })
    }

    /// Sends `due`, in order, and empties it.
    pub(crate) fn send(&mut self, due: &mut Due) -> Result<(), DriveError> {
        match self {
            Self::Bus(bus) => {
                for (zone, body) in due.drain(..) {
                    bus.publish(&zone, StreamKind::World, body);
                }
                Ok(())
            }
            Self::Redis { connection, url } => {
                if due.is_empty() {
                    return Ok(());
                }
                pipeline(due)
                    .query::<()>(&mut **connection)
                    .map_err(DriveError::redis(url))
            }
            Self::Raw {
                stream,
                buffer,
                url,
            } => {
                if due.is_empty() {
                    return Ok(());
                }
                raw_round_trip(stream, buffer, &pipeline(due)).map_err(DriveError::redis(url))
            }
        }
    }
}

/// The `XADD`s of `due`, in order, each trimming its stream as the bus does; `due` emptied.
fn pipeline(due: &mut Due) -> redis::Pipeline {
    let maxlen = StreamMaxlen::Approx(RedisBusConfig::default().stream_maxlen);
    let mut pipe = redis::pipe();
    for (zone, body) in due.drain(..) {
        pipe.xadd_maxlen(
            StreamKind::World.key(&zone),
            maxlen,
            "*",
            &[(BODY_FIELD, body)],
        )
        .ignore();
    }
    pipe
}
