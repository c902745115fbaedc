//! A request head, whole, checked before hyper sees it: its size, request
//! line, target and headers, and how its body is framed (the one reading of
//! Content-Length and Transfer-Encoding). It never reads a socket.

use axum::http::StatusCode;

use super::{Limits, Refusal};
use crate::error::Code;

/// As many headers as hyper itself accepts, so that it never refuses a head
/// the guard let through.
pub(super) const MAX_HEADERS: usize = 100;

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Framing {
    Head,
    Body {
        left: u64,
    },
    Chunked(Chunk),
    /// After a stall or a malformed body: hyper reads the end.
    Ended,
    /// After a refusal: hyper reads nothing more (the end would make it drop
    /// the stand-in unanswered), and on closing, the client's unread bytes
    /// are drained so that the answer is not lost to a reset.
    Refused,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Chunk {
    Size,
    Data { left: u64 },
    DataEnd,
    Trailers,
}

pub(super) fn too_long_uri(limits: &Limits) -> Refusal {
    Refusal {
        status: StatusCode::URI_TOO_LONG,
        code: Code::TooLarge,
        message: format!(
            "the request target is longer than {} bytes",
            limits.max_uri_bytes
        ),
    }
}

pub(super) fn too_large_head(limits: &Limits) -> Refusal {
    Refusal {
        status: StatusCode::REQUEST_HEADER_FIELDS_TOO_LARGE,
        code: Code::TooLarge,
        message: format!(
            "the request's headers are larger than {} bytes (or more than {MAX_HEADERS})",
            limits.max_head_bytes
        ),
    }
}

/// Checks a whole request head; says how its body is framed.
pub(super) fn check_head(head: &[u8], limits: &Limits) -> Result<Framing, Refusal> {
    if head.len() > limits.max_head_bytes {
        return Err(too_large_head(limits));
    }
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    let parsed = request.parse(head);
    if let Some(target) = request.path {
        if target.len() > limits.max_uri_bytes {
            return Err(too_long_uri(limits));
        }
    }
    match parsed {
        Ok(httparse::Status::Complete(n)) if n == head.len() => {}
        Ok(_) => return Err(Refusal::bad("the request head is malformed")),
        Err(httparse::Error::TooManyHeaders) => return Err(too_large_head(limits)),
        Err(e) => {
            return Err(Refusal::bad(format!(
                "the request head is malformed: {}",
                describe(e)
            )))
        }
    }
    let target = request.path.unwrap_or_default();
    if target.parse::<axum::http::Uri>().is_err() {
        return Err(Refusal::bad("the request target is not a valid URI"));
    }
    let mut length = None;
    let mut chunked = false;
    for header in request.headers.iter() {
        if header.name.eq_ignore_ascii_case("content-length") {
            // ASCII spaces only: hyper would refuse others (e.g. U+00A0) itself.
            let value = std::str::from_utf8(header.value.trim_ascii()).unwrap_or("");
            let valid = !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit());
            match value.parse::<u64>() {
                Ok(n) if valid && length.is_none() => length = Some(n),
                _ if length.is_some() => {
                    return Err(Refusal::bad("the request has more than one Content-Length"))
                }
                _ => return Err(Refusal::bad("the request's Content-Length is not a number")),
            }
        } else if header.name.eq_ignore_ascii_case("transfer-encoding") {
            let value = header.value.trim_ascii();
            if chunked || !value.eq_ignore_ascii_case(b"chunked") {
                return Err(Refusal::bad(
                    "the only transfer coding accepted is a single chunked",
                ));
            }
            chunked = true;
        }
    }
    match (length, chunked) {
        (Some(_), true) => Err(Refusal::bad(
            "the request has both Content-Length and Transfer-Encoding",
        )),
        (_, true) if request.version == Some(0) => Err(Refusal::bad(
            "HTTP/1.0 requests cannot use Transfer-Encoding",
        )),
        (_, true) => Ok(Framing::Chunked(Chunk::Size)),
        (Some(left), false) => Ok(Framing::Body { left }),
        (None, false) => Ok(Framing::Head),
    }
}

fn describe(e: httparse::Error) -> &'static str {
    match e {
        httparse::Error::HeaderName => "a header name has a character that is not allowed",
        httparse::Error::HeaderValue => {
            "a header value has a character that is not allowed (such as NUL)"
        }
        httparse::Error::NewLine => "a line does not end as HTTP requires",
        httparse::Error::Token => "the request line is not METHOD TARGET HTTP/1.1",
        httparse::Error::Version => "the HTTP version is not 1.0 or 1.1",
        httparse::Error::Status | httparse::Error::TooManyHeaders => "it cannot be read",
    }
}

/// Whether the guard lets a whole request head through (for fuzzing).
pub fn accepts_head(head: &[u8]) -> bool {
    check_head(head, &Limits::default()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framing_of(head: &str) -> Result<Framing, Refusal> {
        check_head(head.as_bytes(), &Limits::default())
    }

    #[test]
    fn heads_are_framed_by_their_headers() {
        assert_eq!(framing_of("GET / HTTP/1.1\r\n\r\n"), Ok(Framing::Head));
        assert_eq!(
            framing_of("POST / HTTP/1.1\r\nContent-Length: 5\r\n\r\n"),
            Ok(Framing::Body { left: 5 })
        );
        assert_eq!(
            framing_of("POST / HTTP/1.1\r\ntransfer-encoding: Chunked\r\n\r\n"),
            Ok(Framing::Chunked(Chunk::Size))
        );
    }

    #[test]
    fn ambiguous_framing_is_refused() {
        for head in [
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: +5\r\n\r\n",
            "POST / HTTP/1.1\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n",
            "POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            "POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            "GET / HTTP/1.1\r\nX-A: a\0b\r\n\r\n",
            "GET /\r\n\r\n",
        ] {
            let refusal = framing_of(head).expect_err(head);
            assert_eq!(refusal.status, StatusCode::BAD_REQUEST, "{head:?}");
        }
    }
}
