//! A consumer's own connection to one server over plain TCP, its replies read without
//! redis-rs's reply parser: the bytes of each reply of a pipeline are found by their lengths,
//! and an `XREADGROUP` reply is taken apart from them straight into deliveries — no `Value`
//! per entry, id and field (the parser that built those trees was the largest item on a zone's
//! thread). Every other reply reads as redis-rs's parser reads it — a bulk id, an integer or
//! a status (what a write or an acknowledgement answers) directly, anything else, a server's
//! error included, by that parser ([`redis::parse_redis_value`]) — so what they answer is what
//! it always was. Commands are packed by redis-rs.
//!
//! Only a server reached over TCP in RESP2 gets such a connection; TLS, a Unix socket, RESP3
//! and a cluster keep redis-rs's (see [`RawConnection::open`]). The load generator's blocking
//! writer finds its replies' ends the same way ([`reply_ends`]).

use std::time::Duration;

use redis::{ConnectionAddr, ConnectionInfo, ErrorKind, ProtocolVersion, RedisError, Value};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

use super::BODY_FIELD;
use crate::bus::Delivery;

/// Bytes read from the socket at a time, at least.
const READ_CHUNK: usize = 64 * 1024;

/// A connection whose replies are read here (see the module comment).
pub(super) struct RawConnection {
    stream: TcpStream,
    /// Bytes read and not yet consumed.
    buffer: Vec<u8>,
    /// A round trip began and did not finish (its future was dropped): what is left of its
    /// replies would answer the next, so the connection must not be used again.
    in_flight: bool,
    /// How long a command that does not block may wait for its reply.
    reply_timeout: Duration,
}

impl RawConnection {
    /// A connection to the server `info` names, when it is one this module reads (plain TCP,
    /// RESP2); `Ok(None)` for any other. It authenticates and selects the database as redis-rs
    /// would. `timeout` bounds connecting and its setup; `reply_timeout` every single command's reply
    /// ([`RawConnection::command`]).
    pub(super) async fn open(
        info: &ConnectionInfo,
        timeout: Duration,
        reply_timeout: Duration,
    ) -> Result<Option<Self>, RedisError> {
        let Some(address) = raw_address(info) else {
            return Ok(None);
        };
        let stream = tokio::time::timeout(timeout, TcpStream::connect(address))
            .await
            .map_err(|_| io_error("connect timed out"))??;
        stream.set_nodelay(true)?;
        let mut connection = Self {
            stream,
            buffer: Vec::with_capacity(READ_CHUNK),
            in_flight: false,
            reply_timeout,
        };
        let setup = setup(info);
        if !setup.is_empty() {
            let replies = tokio::time::timeout(timeout, connection.round_trip(&setup))
                .await
                .map_err(|_| io_error("connection setup timed out"))??;
            for reply in replies {
                reply.extract_error()?;
            }
        }
        Ok(Some(connection))
    }

    /// Sends `pipe` and reads one reply per command, each through redis-rs's parser (a
    /// server's error is a [`Value::ServerError`] in its place, as with `ignore_errors`).
    pub(super) async fn round_trip(
        &mut self,
        pipe: &redis::Pipeline,
    ) -> Result<Vec<Value>, RedisError> {
        let ends = self.send_and_receive(pipe).await?;
        let mut replies = Vec::with_capacity(ends.len());
        let mut start = 0;
        for &end in &ends {
            replies.push(parse_one(&self.buffer[start..end])?);
            start = end;
        }
        self.consume(start);
        Ok(replies)
    }

    /// One command's reply, waited for at most the connection's reply timeout (a server's
    /// error as a [`Value::ServerError`]).
    pub(super) async fn command(&mut self, command: redis::Cmd) -> Result<Value, RedisError> {
        let mut pipe = redis::pipe();
        pipe.add_command(command);
        let replies = tokio::time::timeout(self.reply_timeout, self.round_trip(&pipe))
            .await
            .map_err(|_| io_error("no reply within the response timeout"))??;
        Ok(replies.into_iter().next().unwrap_or(Value::Nil))
    }

    /// [`RawConnection::round_trip`] of a pipeline whose last command is an `XREADGROUP`: the
    /// other commands' replies, and the entries read (or why the read failed).
    pub(super) async fn round_trip_read(
        &mut self,
        pipe: &redis::Pipeline,
    ) -> Result<(Vec<Value>, Result<Vec<Delivery>, RedisError>), RedisError> {
        let ends = self.send_and_receive(pipe).await?;
        let Some((&last, others)) = ends.split_last() else {
            return Err(io_error("a read's pipeline without its read"));
        };
        let mut replies = Vec::with_capacity(others.len());
        let mut start = 0;
        for &end in others {
            replies.push(parse_one(&self.buffer[start..end])?);
            start = end;
        }
        let read = read_entries(&self.buffer[start..last]);
        self.consume(last);
        Ok((replies, read))
    }

    /// Sends `pipe` and reads until a reply for each of its commands is in the buffer: where
    /// each ends.
    async fn send_and_receive(&mut self, pipe: &redis::Pipeline) -> Result<Vec<usize>, RedisError> {
        if self.in_flight {
            return Err(io_error("an earlier round trip was abandoned"));
        }
        self.in_flight = true;
        self.stream.write_all(&pipe.get_packed_pipeline()).await?;
        let mut ends = Vec::with_capacity(pipe.len());
        let mut at = 0;
        while ends.len() < pipe.len() {
            match skip(&self.buffer, at)? {
                Some(end) => {
                    ends.push(end);
                    at = end;
                }
                None => {
                    self.buffer.reserve(READ_CHUNK);
                    if self.stream.read_buf(&mut self.buffer).await? == 0 {
                        return Err(io_error("the server closed the connection"));
                    }
                }
            }
        }
        self.in_flight = false;
        Ok(ends)
    }

    /// Drops the first `count` bytes of the buffer (the replies just read).
    fn consume(&mut self, count: usize) {
        self.buffer.drain(..count);
    }
}

/// Where a connection to `info` reads its replies itself: the server's host and port, when it
/// is reached over plain TCP in RESP2 (see the module comment).
pub(crate) fn raw_address(info: &ConnectionInfo) -> Option<(&str, u16)> {
    match info.addr() {
        ConnectionAddr::Tcp(host, port)
            if info.redis_settings().protocol() == ProtocolVersion::RESP2 =>
        {
            Some((host.as_str(), *port))
        }
        _ => None,
    }
}

/// What a new connection to `info` sends first, as redis-rs would: `AUTH` when it names a
/// password, `SELECT` when it names a database other than 0 (empty for neither).
pub(crate) fn setup(info: &ConnectionInfo) -> redis::Pipeline {
    let settings = info.redis_settings();
    let mut setup = redis::pipe();
    if let Some(password) = settings.password() {
        let auth = setup.cmd("AUTH");
        if let Some(username) = settings.username() {
            auth.arg(username);
        }
        auth.arg(password);
    }
    if settings.db() != 0 {
        setup.cmd("SELECT").arg(settings.db());
    }
    setup
}

/// Where each of the first `count` replies in `buffer` ends, or `None` while the buffer does
/// not hold them all yet; a reply of a kind RESP2 does not have is an error.
pub(crate) fn reply_ends(buffer: &[u8], count: usize) -> Result<Option<Vec<usize>>, RedisError> {
    let mut ends = Vec::with_capacity(count);
    let mut at = 0;
    while ends.len() < count {
        match skip(buffer, at)? {
            Some(end) => {
                ends.push(end);
                at = end;
            }
            None => return Ok(None),
        }
    }
    Ok(Some(ends))
}

fn io_error(what: &'static str) -> RedisError {
    RedisError::from((ErrorKind::Io, what))
}

fn protocol_error(what: &str) -> RedisError {
    RedisError::from((ErrorKind::Parse, "malformed reply", what.to_owned()))
}

/// One complete reply as redis-rs's parser reads it: a bulk string, an integer or a status
/// (what a write or an acknowledgement answers) read here, anything else by that parser.
pub(crate) fn parse_one(bytes: &[u8]) -> Result<Value, RedisError> {
    scalar(bytes).map_or_else(|| redis::parse_redis_value(bytes), Ok)
}

/// `bytes` (one complete reply) when it is a non-nil bulk string, an integer or a status.
fn scalar(bytes: &[u8]) -> Option<Value> {
    let (&kind, rest) = bytes.split_first()?;
    let (text, next) = line(bytes, 1)?;
    match kind {
        b'$' => {
            let length = usize::try_from(number(text).ok()?).ok()?;
            let body = rest.get(next - 1..next - 1 + length)?;
            (bytes.len() == next + length + 2).then(|| Value::BulkString(body.to_vec()))
        }
        b':' if next == bytes.len() => number(text).ok().map(Value::Int),
        b'+' if next == bytes.len() => Some(if text == b"OK" {
            Value::Okay
        } else {
            Value::SimpleString(std::str::from_utf8(text).ok()?.to_owned())
        }),
        _ => None,
    }
}

/// The line starting at `at` (without its CRLF) and where the next begins; `None` when the
/// buffer does not hold all of it yet.
fn line(buffer: &[u8], at: usize) -> Option<(&[u8], usize)> {
    let rest = buffer.get(at..)?;
    let end = rest.windows(2).position(|pair| pair == b"\r\n")?;
    Some((&rest[..end], at + end + 2))
}

/// A length or count line's number.
fn number(text: &[u8]) -> Result<i64, RedisError> {
    std::str::from_utf8(text)
        .ok()
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| protocol_error("a length that is not a number"))
}

/// Where the RESP2 reply starting at `at` ends, or `None` when the buffer does not hold all of
/// it yet.
fn skip(buffer: &[u8], at: usize) -> Result<Option<usize>, RedisError> {
    // Replies nest; the values still to skip at each level, walked without recursion.
    let mut pending: u64 = 1;
    let mut at = at;
    while pending > 0 {
        let Some(&kind) = buffer.get(at) else {
            return Ok(None);
        };
        let Some((text, next)) = line(buffer, at + 1) else {
            return Ok(None);
        };
        pending -= 1;
        at = next;
        match kind {
            b'+' | b'-' | b':' => {}
            b'$' => {
                let length = number(text)?;
                if length >= 0 {
                    let end = at + length as usize + 2;
                    if buffer.len() < end {
                        return Ok(None);
                    }
                    at = end;
                }
            }
            b'*' => {
                let count = number(text)?;
                if count > 0 {
                    pending += count as u64;
                }
            }
            _ => return Err(protocol_error("a reply of a kind RESP2 does not have")),
        }
    }
    Ok(Some(at))
}

/// A cursor over one complete reply's bytes.
struct Cursor<'b> {
    bytes: &'b [u8],
    at: usize,
}

/// One value of a read reply, as far as taking it apart needs.
enum Item<'b> {
    Nil,
    Text(&'b [u8]),
    Array(usize),
    Other,
}

impl<'b> Cursor<'b> {
    fn next(&mut self) -> Result<Item<'b>, RedisError> {
        let kind = *self
            .bytes
            .get(self.at)
            .ok_or_else(|| unexpected("a reply cut short"))?;
        let (text, next) =
            line(self.bytes, self.at + 1).ok_or_else(|| unexpected("a reply cut short"))?;
        self.at = next;
        Ok(match kind {
            b'+' => Item::Text(text),
            b'$' | b'*' if text == b"-1" => Item::Nil,
            b'$' => {
                let length = number(text)? as usize;
                let body = self
                    .bytes
                    .get(self.at..self.at + length)
                    .ok_or_else(|| unexpected("a reply cut short"))?;
                self.at += length + 2;
                Item::Text(body)
            }
            b'*' => Item::Array(number(text)?.max(0) as usize),
            _ => Item::Other,
        })
    }

    /// The text starting here, or `None` for a value of another kind (skipped whole).
    fn text_or_skip(&mut self) -> Result<Option<&'b [u8]>, RedisError> {
        match self.bytes.get(self.at) {
            Some(b'$' | b'+') => match self.next()? {
                Item::Text(text) => Ok(Some(text)),
                _ => Ok(None),
            },
            _ => self.skip_value().map(|()| None),
        }
    }

    /// Skips the value starting here.
    fn skip_value(&mut self) -> Result<(), RedisError> {
        match skip(self.bytes, self.at)? {
            Some(end) => {
                self.at = end;
                Ok(())
            }
            None => Err(unexpected("a reply cut short")),
        }
    }
}

fn unexpected(what: &str) -> RedisError {
    RedisError::from((
        ErrorKind::Parse,
        "unexpected XREADGROUP reply",
        what.to_owned(),
    ))
}

/// The entries of one complete `XREADGROUP` reply (RESP2), taken apart as
/// `consumer::read_reply` takes apart redis-rs's tree of it: nil (nothing came) or the streams
/// read, each `[key, entries]`, each entry `[id, fields]` — its fields nil when the entry was
/// deleted since it was delivered — and a body the last value of the field [`BODY_FIELD`]
/// (empty when there is none). A server's error is answered as redis-rs answers it.
pub(super) fn read_entries(bytes: &[u8]) -> Result<Vec<Delivery>, RedisError> {
    if bytes.first() == Some(&b'-') {
        return parse_one(bytes)?.extract_error().map(|_| Vec::new());
    }
    let mut cursor = Cursor { bytes, at: 0 };
    let streams = match cursor.next()? {
        Item::Nil => return Ok(Vec::new()),
        Item::Array(streams) => streams,
        _ => return Err(unexpected("neither nil, an array nor a map")),
    };
    let mut read = Vec::new();
    for _ in 0..streams {
        match cursor.next()? {
            Item::Array(2) => cursor.skip_value()?,
            // Not `[key, entries]`: redis-rs's tree of it reads as nil, then refused.
            _ => return Err(unexpected("a stream without its entries")),
        }
        let Item::Array(entries) = cursor.next()? else {
            return Err(unexpected("a stream without its entries"));
        };
        read.reserve(entries);
        for _ in 0..entries {
            match cursor.next()? {
                Item::Array(2) => {}
                Item::Array(_) => return Err(unexpected("an entry that is not [id, fields]")),
                _ => return Err(unexpected("an entry that is not an array")),
            }
            let id = match cursor.next()? {
                Item::Text(id) => std::str::from_utf8(id)
                    .map_err(|_| unexpected("an id that is not UTF-8"))?
                    .to_owned(),
                _ => return Err(unexpected("an id that is not a string")),
            };
            let mut body: &[u8] = &[];
            match cursor.next()? {
                Item::Nil => {}
                Item::Array(fields) => {
                    for _ in 0..fields / 2 {
                        let is_body = cursor.text_or_skip()? == Some(BODY_FIELD.as_bytes());
                        let value = cursor.text_or_skip()?;
                        if is_body {
                            body = value.unwrap_or_default();
                        }
                    }
                    if fields % 2 == 1 {
                        cursor.skip_value()?;
                    }
                }
                _ => return Err(unexpected("fields that are not an array")),
            }
            read.push(Delivery::from_bytes(id, body));
        }
    }
    Ok(read)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bus::redis::consumer::read_reply;

    /// A bulk string.
    fn bulk(text: &[u8]) -> Vec<u8> {
        let mut out = format!("${}\r\n", text.len()).into_bytes();
        out.extend_from_slice(text);
        out.extend_from_slice(b"\r\n");
        out
    }

    /// An array of `items`.
    fn array(items: &[Vec<u8>]) -> Vec<u8> {
        let mut out = format!("*{}\r\n", items.len()).into_bytes();
        for item in items {
            out.extend_from_slice(item);
        }
        out
    }

    fn replies() -> Vec<Vec<u8>> {
        let entry = |id: &str, fields: Vec<u8>| array(&[bulk(id.as_bytes()), fields]);
        let entries = array(&[
            entry(
                "1-0",
                array(&[bulk(b"m"), bulk(b"hello"), bulk(b"i"), bulk(b"a")]),
            ),
            entry("2-0", b"*-1\r\n".to_vec()),
            entry("3-0", array(&[bulk(b"m"), bulk(b"ok \xff")])),
            entry("4-0", array(&[bulk(b"x"), bulk(b"no body")])),
            entry(
                "5-0",
                array(&[bulk(b"m"), bulk(b"first"), bulk(b"m"), bulk(b"last\r\n")]),
            ),
            entry("6-0", array(&[bulk(b"m"), b":7\r\n".to_vec()])),
            entry(
                "7-0",
                array(&[array(&[bulk(b"m")]), bulk(b"x"), bulk(b"m")]),
            ),
            entry("8-0", array(&[bulk(b"m"), array(&[bulk(b"y")])])),
            entry("9-0", array(&[bulk(b"m"), b"$-1\r\n".to_vec()])),
            entry(
                "10-0",
                array(&[b"+m\r\n".to_vec(), b"+simple\r\n".to_vec()]),
            ),
        ]);
        let key = bulk(b"geppetto:{z}:world");
        vec![
            array(&[array(&[key.clone(), entries.clone()])]),
            array(&[
                array(&[key.clone(), entries.clone()]),
                array(&[key.clone(), array(&[])]),
            ]),
            b"*-1\r\n".to_vec(),
            b"$-1\r\n".to_vec(),
            array(&[]),
            b":1\r\n".to_vec(),
            b"+OK\r\n".to_vec(),
            array(&[b":1\r\n".to_vec()]),
            array(&[array(std::slice::from_ref(&key))]),
            array(&[array(&[key.clone(), array(&[array(&[bulk(b"1-0")])])])]),
            array(&[array(&[key.clone(), array(&[b":3\r\n".to_vec()])])]),
            array(&[array(&[
                key.clone(),
                array(&[array(&[b":1\r\n".to_vec(), b"*0\r\n".to_vec()])]),
            ])]),
            array(&[array(&[
                key.clone(),
                array(&[array(&[bulk(b"1-\xff"), b"*0\r\n".to_vec()])]),
            ])]),
            array(&[array(&[key, array(&[array(&[bulk(b"1-0"), bulk(b"m")])])])]),
        ]
    }

    #[test]
    fn a_read_reply_is_taken_apart_as_from_redis_rss_tree() {
        for reply in replies() {
            assert_eq!(skip(&reply, 0).expect("skips"), Some(reply.len()));
            let tree = redis::parse_redis_value(&reply).expect("a reply redis-rs reads");
            let (direct, through_tree) = (read_entries(&reply), read_reply(tree));
            match (&direct, &through_tree) {
                (Ok(direct), Ok(tree)) => assert_eq!(direct, tree),
                (Err(direct), Err(tree)) => {
                    assert!(
                        direct.to_string().contains("unexpected XREADGROUP reply"),
                        "{direct}"
                    );
                    assert!(
                        tree.to_string().contains("unexpected XREADGROUP reply"),
                        "{tree}"
                    );
                }
                _ => panic!(
                    "{}: {direct:?} against {through_tree:?}",
                    String::from_utf8_lossy(&reply)
                ),
            }
        }
        let read = read_entries(&replies()[0]).expect("read");
        let bodies: Vec<_> = read.iter().map(|d| d.body.as_str()).collect();
        assert_eq!(
            bodies,
            ["hello", "", "", "", "last\r\n", "", "", "", "", "simple"]
        );
    }

    #[test]
    fn a_writes_reply_reads_as_redis_rs_reads_it() {
        for reply in [
            &b"$9\r\n1700-0\r\nx\r\n"[..],
            b"$0\r\n\r\n",
            b"$-1\r\n",
            b":12\r\n",
            b":-3\r\n",
            b"+OK\r\n",
            b"+QUEUED\r\n",
            b"*-1\r\n",
            b"*2\r\n:1\r\n$1\r\na\r\n",
            b"-ERR no\r\n",
            b"-OOM command not allowed\r\n",
        ] {
            let ours = parse_one(reply).map_err(|e| e.to_string());
            let theirs = redis::parse_redis_value(reply).map_err(|e| e.to_string());
            assert_eq!(ours, theirs, "{}", String::from_utf8_lossy(reply));
        }
    }

    #[test]
    fn a_reply_is_complete_only_once_all_of_it_is_there() {
        for reply in replies() {
            for cut in 0..reply.len() {
                assert_eq!(skip(&reply[..cut], 0).expect("skips"), None, "cut at {cut}");
            }
        }
        assert!(skip(b"?what\r\n", 0).is_err());
        assert!(skip(b"$x\r\n", 0).is_err());
    }

    #[test]
    fn a_servers_error_is_answered_as_redis_rs_answers_it() {
        let error = read_entries(b"-NOGROUP No such key\r\n").expect_err("an error");
        assert!(error.to_string().contains("NOGROUP"), "{error}");
    }
}
