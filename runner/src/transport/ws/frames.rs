//! A WebSocket message bounded in frames: the connection's bytes, under tungstenite, read
//! through [`FrameCounted`], which follows the frame headers going by and fails the read
//! once one message has taken more than its limit of frames.
//!
//! tungstenite bounds a message in bytes, not in frames: empty continuation frames (legal,
//! two bytes each, never completing the message) would keep a call busy until its timeout,
//! tungstenite assembling nothing as fast as the target sends. Counted here, they end the
//! call in microseconds with a [`FrameFlood`] naming the cause. The headers are read with
//! tungstenite's own parser ([`FrameHeader::parse`]); the payloads are skipped unread. The
//! count starts after the handshake's answer (its blank line); a header tungstenite would
//! refuse stops the counting, and tungstenite reports the error itself.
//!
//! The same headers say how many bytes a data message will take while tungstenite
//! assembles it, so [`FrameCounted`] takes room for it from the process's budget of answer
//! bytes in flight (`in_flight.rs`) before reading its payload: its frame's length when it
//! comes in one frame, the message cap and half again when in fragments (their total is
//! not known up front, and tungstenite grows the message by doubling). The room is given back once the message's final frame has been read, or with the
//! connection. While the budget is taken, the connection is not read, and the call waits
//! within its timeout.

use std::io::{self, Cursor};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::super::in_flight::PolledRoom;
use tokio_tungstenite::tungstenite::protocol::frame::FrameHeader;
use tokio_tungstenite::tungstenite::protocol::frame::coding::{Data, OpCode};

/// The most frames one message may take: far more than a server fragmenting an answer of
/// the size cap into frames of a kilobyte, and few enough to be read in a blink.
pub(crate) const MAX_FRAMES_PER_MESSAGE: usize = 10_000;

/// The longest frame header (RFC 6455 5.2): 2 bytes, 8 of length, 4 of mask.
const LONGEST_HEADER: usize = 14;

/// The read error of a message that took more than its limit of frames.
#[derive(Debug)]
pub(crate) struct FrameFlood {
    /// The limit it went past.
    pub(crate) limit: usize,
}

impl std::fmt::Display for FrameFlood {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "more than {} frames of one message without its final frame \
             (continuation frames that never end the message)",
            self.limit
        )
    }
}

impl std::error::Error for FrameFlood {}

/// Where the bytes read so far stand.
#[derive(Debug)]
enum Position {
    /// In the handshake's answer: this many bytes of its closing blank line seen.
    Handshake(usize),
    /// In a frame header, whose bytes so far are kept.
    Header,
    /// In a payload, this many bytes of it still to come.
    Payload(u64),
    /// Past a header tungstenite refuses: nothing more is counted.
    Stopped,
}

/// The frames of the message being read, counted as its bytes go by.
#[derive(Debug)]
struct FrameCount {
    position: Position,
    header: Vec<u8>,
    /// Data frames of the message not yet finished.
    frames: usize,
    limit: usize,
    /// The most bytes a message may take (tungstenite's cap).
    max_message_bytes: usize,
    /// Data messages started on the connection so far.
    messages: u64,
    /// The data message being read, by its number, and the bytes it may take; `None`
    /// between messages.
    reading: Option<(u64, usize)>,
    /// The frame whose payload is going by is its message's final frame.
    final_frame: bool,
}

impl FrameCount {
    fn new(limit: usize, max_message_bytes: usize) -> FrameCount {
        FrameCount {
            position: Position::Handshake(0),
            header: Vec::with_capacity(LONGEST_HEADER),
            frames: 0,
            limit,
            max_message_bytes,
            messages: 0,
            reading: None,
            final_frame: false,
        }
    }

    /// The data message being read, numbered, and the bytes it may take.
    fn reading(&self) -> Option<(u64, usize)> {
        self.reading
    }

    /// A frame's payload has gone by: the message is read when it was the final frame.
    fn payload_read(&mut self) {
        if std::mem::take(&mut self.final_frame) {
            self.reading = None;
        }
    }

    /// Follows `bytes`, read after those already seen.
    fn read(&mut self, mut bytes: &[u8]) -> Result<(), FrameFlood> {
        while !bytes.is_empty() {
            match self.position {
                Position::Stopped => return Ok(()),
                Position::Handshake(seen) => {
                    let (next, rest) = blank_line(seen, bytes);
                    self.position = next;
                    bytes = rest;
                }
                Position::Payload(left) => {
                    let skipped = usize::try_from(left).unwrap_or(usize::MAX).min(bytes.len());
                    bytes = &bytes[skipped..];
                    let left = left - skipped as u64;
                    self.position = if left == 0 {
                        self.payload_read();
                        Position::Header
                    } else {
                        Position::Payload(left)
                    };
                }
                Position::Header => {
                    let kept = self.header.len();
                    let taken = (LONGEST_HEADER - kept).min(bytes.len());
                    self.header.extend_from_slice(&bytes[..taken]);
                    let mut cursor = Cursor::new(&self.header);
                    match FrameHeader::parse(&mut cursor) {
                        Ok(Some((header, length))) => {
                            // The header's bytes beyond what it kept before came from
                            // `bytes`; what follows them is payload or the next header.
                            let used = cursor.position() as usize - kept;
                            bytes = &bytes[used..];
                            self.header.clear();
                            self.count(&header, length)?;
                            self.position = if length == 0 {
                                self.payload_read();
                                Position::Header
                            } else {
                                Position::Payload(length)
                            };
                        }
                        Ok(None) => bytes = &bytes[taken..],
                        Err(_) => self.position = Position::Stopped,
                    }
                }
            }
        }
        Ok(())
    }

    fn count(&mut self, header: &FrameHeader, length: u64) -> Result<(), FrameFlood> {
        match header.opcode {
            OpCode::Data(Data::Continue) => self.frames += 1,
            OpCode::Data(_) => {
                self.frames = 1;
                self.messages += 1;
                // One frame is read into a buffer of its length. Fragments' total is not
                // known up front, and tungstenite assembles them in a string that grows
                // by doubling, holding the old and the new at once: the cap and half again.
                let bytes = if header.is_final {
                    usize::try_from(length)
                        .unwrap_or(usize::MAX)
                        .min(self.max_message_bytes)
                } else {
                    self.max_message_bytes.saturating_mul(3) / 2
                };
                self.reading = Some((self.messages, bytes));
            }
            // Control frames may come between a message's frames and are not its own.
            OpCode::Control(_) => {
                self.final_frame = false;
                return Ok(());
            }
        }
        self.final_frame = header.is_final;
        if self.frames > self.limit {
            return Err(FrameFlood { limit: self.limit });
        }
        if header.is_final {
            self.frames = 0;
        }
        Ok(())
    }
}

/// Where the handshake's answer stands after `bytes`, `seen` bytes of its closing
/// `\r\n\r\n` seen before them, and the bytes after it.
fn blank_line(mut seen: usize, bytes: &[u8]) -> (Position, &[u8]) {
    const END: &[u8] = b"\r\n\r\n";
    for (at, byte) in bytes.iter().enumerate() {
        seen = if *byte == END[seen] {
            seen + 1
        } else if *byte == END[0] {
            1
        } else {
            0
        };
        if seen == END.len() {
            return (Position::Header, &bytes[at + 1..]);
        }
    }
    (Position::Handshake(seen), &[])
}

/// A connection whose reads fail with a [`FrameFlood`] once a message takes more than its
/// limit of frames, and wait for room in the process's budget of answer bytes before
/// reading a data message's payload; writes go through untouched.
pub(crate) struct FrameCounted<S> {
    inner: S,
    count: FrameCount,
    room: PolledRoom,
}

impl<S> FrameCounted<S> {
    /// `inner`, read from its first byte (the handshake's answer), with `limit` frames and
    /// `max_message_bytes` a message.
    pub(crate) fn new(inner: S, limit: usize, max_message_bytes: usize) -> FrameCounted<S> {
        FrameCounted {
            inner,
            count: FrameCount::new(limit, max_message_bytes),
            room: PolledRoom::in_process(),
        }
    }
}

impl<S> std::fmt::Debug for FrameCounted<S> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameCounted")
            .field("count", &self.count)
            .finish_non_exhaustive()
    }
}

impl<S: AsyncRead + Unpin> AsyncRead for FrameCounted<S> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.room.poll_ready(cx).is_pending() {
            return Poll::Pending;
        }
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            if let Err(flood) = this.count.read(&buf.filled()[before..]) {
                return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, flood)));
            }
            this.room.want(this.count.reading());
        }
        polled
    }
}

impl<S: AsyncWrite + Unpin> AsyncWrite for FrameCounted<S> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.get_mut().inner).poll_write(cx, buf)
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const HANDSHAKE: &[u8] = b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n";

    /// The message cap of the tests.
    const CAP: usize = 1 << 20;

    fn counted(limit: usize) -> FrameCount {
        let mut count = FrameCount::new(limit, CAP);
        count.read(HANDSHAKE).unwrap();
        count
    }

    #[test]
    fn empty_continuation_frames_past_the_limit_flood() {
        let mut count = counted(3);
        count.read(&[0x01, 0x01, b'{']).unwrap();
        count.read(&[0x00, 0x00, 0x00, 0x00]).unwrap();
        let flood = count.read(&[0x00, 0x00]).unwrap_err();
        assert!(
            flood
                .to_string()
                .contains("more than 3 frames of one message")
        );
    }

    #[test]
    fn a_final_frame_ends_the_message_and_its_count() {
        let mut count = counted(2);
        for _ in 0..5 {
            count.read(&[0x01, 0x00, 0x80, 0x00]).unwrap();
        }
        // Control frames between fragments are not the message's.
        count
            .read(&[0x01, 0x00, 0x89, 0x00, 0x89, 0x00, 0x80, 0x00])
            .unwrap();
    }

    #[test]
    fn headers_and_payloads_split_anywhere_are_followed() {
        // A 300-byte fragment (16-bit length), its continuation, then empty ones, a byte
        // at a time.
        let mut stream = vec![0x01, 126, 0x01, 0x2c];
        stream.extend([b'a'; 300]);
        stream.extend([0x00, 0x02, b'b', b'c']);
        stream.extend([0x00, 0x00].repeat(9));
        let mut count = FrameCount::new(10, CAP);
        let mut flooded = None;
        for (at, byte) in HANDSHAKE.iter().chain(&stream).enumerate() {
            if count.read(&[*byte]).is_err() {
                flooded = Some(at);
                break;
            }
        }
        // The eleventh frame's second byte.
        assert_eq!(flooded, Some(HANDSHAKE.len() + stream.len() - 1));
    }

    #[test]
    fn a_header_tungstenite_refuses_stops_the_count() {
        let mut count = counted(1);
        count.read(&[0x03, 0x00]).unwrap();
        count.read(&[0x00, 0x00].repeat(5)).unwrap();
    }

    #[test]
    fn a_message_is_read_from_its_first_header_to_its_final_payload() {
        let mut count = counted(10);
        // One frame of 3 bytes: its length, until the payload has gone by.
        count.read(&[0x81, 0x03, b'{', b'}']).unwrap();
        assert_eq!(count.reading(), Some((1, 3)));
        count.read(b" ").unwrap();
        assert_eq!(count.reading(), None);
        // Fragments take the cap until the final one is read, pings between them aside.
        count.read(&[0x01, 0x01, b'[']).unwrap();
        assert_eq!(count.reading(), Some((2, CAP * 3 / 2)));
        count.read(&[0x89, 0x00, 0x00, 0x01, b'1']).unwrap();
        assert_eq!(count.reading(), Some((2, CAP * 3 / 2)));
        count.read(&[0x80, 0x01]).unwrap();
        assert_eq!(count.reading(), Some((2, CAP * 3 / 2)));
        count.read(b"]").unwrap();
        assert_eq!(count.reading(), None);
        // A frame announcing more than the cap takes the cap; an empty final one, nothing.
        count.read(&[0x82, 127, 0, 0, 0, 1, 0, 0, 0, 0]).unwrap();
        assert_eq!(count.reading(), Some((3, CAP)));
        let mut empty = counted(10);
        empty.read(&[0x81, 0x00]).unwrap();
        assert_eq!(empty.reading(), None);
    }
}
