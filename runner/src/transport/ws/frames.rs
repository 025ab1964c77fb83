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

use std::io::{self, Cursor};
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
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
}

impl FrameCount {
    fn new(limit: usize) -> FrameCount {
        FrameCount {
            position: Position::Handshake(0),
            header: Vec::with_capacity(LONGEST_HEADER),
            frames: 0,
            limit,
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
                            self.count(&header)?;
                            self.position = if length == 0 {
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

    fn count(&mut self, header: &FrameHeader) -> Result<(), FrameFlood> {
        match header.opcode {
            OpCode::Data(Data::Continue) => self.frames += 1,
            OpCode::Data(_) => self.frames = 1,
            // Control frames may come between a message's frames and are not its own.
            OpCode::Control(_) => return Ok(()),
        }
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
/// limit of frames; writes go through untouched.
pub(crate) struct FrameCounted<S> {
    inner: S,
    count: FrameCount,
}

impl<S> FrameCounted<S> {
    /// `inner`, read from its first byte (the handshake's answer), with `limit` frames a
    /// message.
    pub(crate) fn new(inner: S, limit: usize) -> FrameCounted<S> {
        FrameCounted {
            inner,
            count: FrameCount::new(limit),
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
        let before = buf.filled().len();
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled
            && let Err(flood) = this.count.read(&buf.filled()[before..])
        {
            return Poll::Ready(Err(io::Error::new(io::ErrorKind::InvalidData, flood)));
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

    fn counted(limit: usize) -> FrameCount {
        let mut count = FrameCount::new(limit);
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
        let mut count = FrameCount::new(10);
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
}
