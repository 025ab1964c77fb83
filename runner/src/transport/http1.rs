//! The HTTP/1.1 a race step writes and reads by hand (`race.rs`): reqwest cannot hold a
//! request's final byte back, so the request text is written here, and its answer read to
//! the connection's end (`Connection: close`) and parsed with httparse: the status, the body
//! as its `Content-Length` bounds it, decoded when chunked, else everything after the head.

use tokio::io::{AsyncRead, AsyncReadExt};

use super::http::{self, Prepared};
use harness_protocol::wire::{TransportError, TransportErrorKind};

/// Headers read from an answer's head at most; a head with more is malformed.
const MAX_HEADERS: usize = 64;

/// The HTTP/1.1 request text: a GET of the URL's path and query, its `Host`, the
/// `Authorization` and body of the prepared request, and `Connection: close`, so the
/// answer ends with the connection.
pub(super) fn request_bytes(prepared: &Prepared) -> Vec<u8> {
    let target = http::request_uri(&prepared.url);
    let mut text = format!(
        "GET {target} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\nConnection: close\r\n",
        host_header(&prepared.url)
    );
    if let Some(value) = &prepared.authorization {
        text.push_str(&format!("Authorization: {value}\r\n"));
    }
    if let Some(body) = &prepared.body {
        text.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ));
    } else {
        text.push_str("\r\n");
    }
    text.into_bytes()
}

/// The `Host` header of a URL: its host, with the port when the URL gives one.
fn host_header(url: &str) -> String {
    let after_scheme = url.split_once("://").map_or(url, |(_, rest)| rest);
    after_scheme
        .split(['/', '?'])
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// Everything until the server closes, at most `cap` bytes beyond the head, read with room
/// in the process's budget of answer bytes in flight (`in_flight.rs`) taken once the head
/// is in: the length it announces, or the cap. The caller's deadline bounds the wait.
pub(super) async fn read_to_end<S: AsyncRead + Unpin + ?Sized>(
    stream: &mut S,
    cap: usize,
) -> Result<Vec<u8>, TransportError> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 16 * 1024];
    let mut room = None;
    loop {
        let read = stream.read(&mut chunk).await;
        match read {
            Ok(0) => return Ok(bytes),
            Ok(count) => {
                if bytes.len() + count > cap.saturating_add(MAX_HEAD_BYTES) {
                    return Err(TransportError::new(
                        TransportErrorKind::TooLarge,
                        format!("response body exceeds {cap} bytes"),
                    ));
                }
                bytes.extend_from_slice(&chunk[..count]);
                if room.is_none()
                    && let Some(needed) = room_needed(&bytes, cap)
                {
                    room = Some(super::in_flight::wait_for(needed).await);
                    // Sized once for what the room was taken for, so the body is not grown
                    // by doubling, each step holding the old buffer and the new.
                    bytes.reserve_exact(needed.saturating_sub(bytes.len()));
                }
            }
            // A TLS peer that closes without close_notify has sent what it had.
            Err(error)
                if error.kind() == std::io::ErrorKind::UnexpectedEof && !bytes.is_empty() =>
            {
                return Ok(bytes);
            }
            Err(error) => {
                return Err(TransportError::new(
                    TransportErrorKind::Closed,
                    format!("the answer broke off: {error}"),
                ));
            }
        }
    }
}

/// The most bytes of an answer's head read before room is taken for it.
const MAX_HEAD_BYTES: usize = 64 * 1024;

/// The bytes an answer whose first `bytes` are read may take in all, once its head is in:
/// the head and the length it announces (within `cap`), or the head and `cap` when it
/// announces none or cannot be parsed; `None` while the head is still coming.
fn room_needed(bytes: &[u8], cap: usize) -> Option<usize> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(bytes) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) if bytes.len() <= MAX_HEAD_BYTES => return None,
        Ok(httparse::Status::Partial) | Err(_) => return Some(bytes.len().saturating_add(cap)),
    };
    let announced = response
        .headers
        .iter()
        .find(|header| header.name.eq_ignore_ascii_case("content-length"))
        .and_then(|header| std::str::from_utf8(header.value).ok())
        .and_then(|value| value.trim().parse::<usize>().ok());
    Some(head_len.saturating_add(announced.unwrap_or(cap).min(cap)))
}

/// The status and body of an HTTP/1.1 response read to its end.
pub(super) fn parse_response(bytes: &[u8]) -> Result<(u16, Vec<u8>), TransportError> {
    let malformed = |what: String| {
        TransportError::new(
            TransportErrorKind::Closed,
            format!("malformed HTTP answer: {what}"),
        )
    };
    if bytes.is_empty() {
        return Err(TransportError::new(
            TransportErrorKind::Closed,
            "the connection closed without an answer",
        ));
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut headers);
    let head_len = match response.parse(bytes) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) => return Err(malformed("no end of head".to_owned())),
        Err(error) => return Err(malformed(error.to_string())),
    };
    let status = response
        .code
        .ok_or_else(|| malformed("no status".to_owned()))?;
    let header = |name: &str| {
        response
            .headers
            .iter()
            .find(|header| header.name.eq_ignore_ascii_case(name))
            .map(|header| String::from_utf8_lossy(header.value).trim().to_owned())
    };
    let body = &bytes[head_len..];
    let chunked = header("transfer-encoding")
        .is_some_and(|value| value.to_ascii_lowercase().contains("chunked"));
    if chunked {
        return dechunk(body)
            .map(|body| (status, body))
            .ok_or_else(|| malformed("bad chunk".to_owned()));
    }
    let body = match header("content-length").and_then(|value| value.parse::<usize>().ok()) {
        Some(length) if length <= body.len() => &body[..length],
        Some(_) => return Err(malformed("body shorter than its Content-Length".to_owned())),
        None => body,
    };
    Ok((status, body.to_vec()))
}

/// A chunked body decoded; `None` when it is not one.
fn dechunk(mut body: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    loop {
        let (consumed, size) = match httparse::parse_chunk_size(body).ok()? {
            httparse::Status::Complete(parsed) => parsed,
            httparse::Status::Partial => return None,
        };
        let size = usize::try_from(size).ok()?;
        body = &body[consumed..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(body.get(..size)?);
        body = body.get(size..)?.strip_prefix(b"\r\n")?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use harness_protocol::wire::SentRequest;

    #[test]
    fn responses_are_read_by_length_chunks_or_close() {
        let sized = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n{}extra";
        assert_eq!(parse_response(sized).ok(), Some((200, b"{}".to_vec())));
        let chunked =
            b"HTTP/1.1 400 Bad\r\nTransfer-Encoding: chunked\r\n\r\n2\r\n{}\r\n1\r\n \r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).ok(), Some((400, b"{} ".to_vec())));
        let extended =
            b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2;x=y\r\n{}\r\n0\r\n\r\n";
        assert_eq!(parse_response(extended).ok(), Some((200, b"{}".to_vec())));
        let closed = b"HTTP/1.1 200 OK\r\n\r\nabc";
        assert_eq!(parse_response(closed).ok(), Some((200, b"abc".to_vec())));
        assert!(parse_response(b"").is_err());
        assert!(parse_response(b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n{}").is_err());
        assert!(
            parse_response(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n").is_err()
        );
        assert!(parse_response(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n").is_err());
        assert!(parse_response(b"not http at all\r\n\r\n").is_err());
    }

    #[test]
    fn room_is_taken_once_the_head_is_in_for_what_it_announces_within_the_cap() {
        let head = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n";
        assert_eq!(room_needed(&head[..10], 100), None);
        assert_eq!(room_needed(head, 100), Some(head.len() + 2));
        let huge = b"HTTP/1.1 200 OK\r\nContent-Length: 999999\r\n\r\n";
        assert_eq!(room_needed(huge, 100), Some(huge.len() + 100));
        let closed = b"HTTP/1.1 200 OK\r\n\r\nabc";
        assert_eq!(room_needed(closed, 100), Some(closed.len() - 3 + 100));
        // A head that never ends, or is not HTTP, takes the cap at once.
        let endless = vec![b'a'; MAX_HEAD_BYTES + 1];
        assert!(room_needed(&endless, 100).is_some());
        assert!(room_needed(b"not http\r\n\r\n", 100).is_some());
    }

    #[test]
    fn the_request_text_ends_with_its_body_or_head() {
        let prepared = Prepared {
            request: SentRequest::default(),
            url: "http://127.0.0.1:9/api/v2/public/auth?a=1".to_owned(),
            body: Some("{}".to_owned()),
            authorization: Some("Bearer x".to_owned()),
        };
        let text = String::from_utf8(request_bytes(&prepared)).unwrap_or_default();
        assert!(text.starts_with("GET /api/v2/public/auth?a=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\n"));
        assert!(text.contains("Authorization: Bearer x\r\n"));
        assert!(text.ends_with("Content-Length: 2\r\n\r\n{}"));
    }
}
