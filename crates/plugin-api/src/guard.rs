//! Who may call, and what a request may carry. A web page in a browser can
//! reach loopback: it always sends `Origin` on the requests that could act,
//! and a DNS-rebinding page sends its own `Host`, so either is refused
//! before the secret is even looked at. Bodies, paths and queries are
//! untrusted and bounded.

use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Limited};
use hyper::header::{AUTHORIZATION, HOST, ORIGIN};
use hyper::HeaderMap;
use leasedesk_model::Error;

/// The largest body a request may have: a path and a note.
pub const MAX_BODY: usize = 64 * 1024;

/// How long a client may take to send its body.
pub const BODY_TIME: Duration = Duration::from_secs(5);

/// The longest local path taken (Windows' long paths reach 32,767 UTF-16 units).
const MAX_PATH_BYTES: usize = 32 * 1024;

/// Refuses a request from a web page (403) or without the secret (401).
pub fn admit(headers: &HeaderMap, port: u16, secret: &str) -> Result<(), Error> {
    if headers.contains_key(ORIGIN) {
        return Err(Error::Forbidden(
            "requests from a web page are refused: only editor plugins on this computer may call"
                .into(),
        ));
    }
    let host = headers.get(HOST).and_then(|h| h.to_str().ok());
    let loopback = [format!("127.0.0.1:{port}"), format!("localhost:{port}")];
    if !host.is_some_and(|host| loopback.iter().any(|l| l.eq_ignore_ascii_case(host))) {
        return Err(Error::Forbidden(format!(
            "the Host must be 127.0.0.1:{port} or localhost:{port}"
        )));
    }
    let given = headers
        .get(AUTHORIZATION)
        .and_then(|h| h.as_bytes().strip_prefix(b"Bearer "));
    match given {
        Some(given) if same_secret(given, secret.as_bytes()) => Ok(()),
        Some(_) => Err(Error::Unauthorized(
            "the secret is not this start's: read plugin-api.json again".into(),
        )),
        None => Err(Error::Unauthorized(
            "send Authorization: Bearer with the secret in plugin-api.json".into(),
        )),
    }
}

/// Compares in time that does not depend on where the bytes differ.
fn same_secret(given: &[u8], secret: &[u8]) -> bool {
    given.len() == secret.len()
        && given
            .iter()
            .zip(secret)
            .fold(0u8, |differ, (a, b)| differ | (a ^ b))
            == 0
}

/// The body, whole, when it is at most [`MAX_BODY`] and comes within [`BODY_TIME`].
pub async fn body(body: hyper::body::Incoming) -> Result<Bytes, Error> {
    let read = Limited::new(body, MAX_BODY).collect();
    match tokio::time::timeout(BODY_TIME, read).await {
        Err(_) => Err(Error::BadRequest(format!(
            "the body did not arrive within {} s",
            BODY_TIME.as_secs()
        ))),
        Ok(Err(e)) if e.is::<http_body_util::LengthLimitError>() => Err(Error::TooLarge {
            limit: MAX_BODY as u64,
        }),
        Ok(Err(e)) => Err(Error::BadRequest(format!(
            "the body could not be read: {e}"
        ))),
        Ok(Ok(collected)) => Ok(collected.to_bytes()),
    }
}

/// A JSON body as `T`, with the reason it is not one.
pub fn json<T: serde::de::DeserializeOwned>(bytes: &[u8]) -> Result<T, Error> {
    serde_json::from_slice(bytes).map_err(|e| Error::BadRequest(format!("the body: {e}")))
}

/// The query parameter `name`, percent-decoded; it must be UTF-8.
pub fn query_param(query: Option<&str>, name: &str) -> Result<Option<String>, Error> {
    for pair in query.unwrap_or("").split('&') {
        let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
        if key == name {
            let bytes = percent_decode(value)?;
            return String::from_utf8(bytes)
                .map(Some)
                .map_err(|_| Error::BadRequest(format!("`{name}` is not UTF-8")));
        }
    }
    Ok(None)
}

fn percent_decode(text: &str) -> Result<Vec<u8>, Error> {
    let bad = || Error::BadRequest("a malformed %-escape in the query".into());
    let mut bytes = Vec::with_capacity(text.len());
    let mut rest = text.as_bytes();
    while let Some((&byte, after)) = rest.split_first() {
        rest = after;
        match byte {
            b'%' => {
                let hex = rest.get(..2).ok_or_else(bad)?;
                let hex = std::str::from_utf8(hex).map_err(|_| bad())?;
                bytes.push(u8::from_str_radix(hex, 16).map_err(|_| bad())?);
                rest = &rest[2..];
            }
            b'+' => bytes.push(b' '),
            _ => bytes.push(byte),
        }
    }
    Ok(bytes)
}

/// A local path a plugin names: absolute, without `..`, of a sane length.
/// Whether it is in the workspace is the caller's question.
pub fn local_path(text: &str) -> Result<PathBuf, Error> {
    if text.is_empty() || text.len() > MAX_PATH_BYTES || text.contains('\0') {
        return Err(Error::BadRequest(
            "the path must be a file's full path".into(),
        ));
    }
    let path = Path::new(text);
    if !path.is_absolute() {
        return Err(Error::BadRequest(format!(
            "{text} is not a full path: give the file's whole path"
        )));
    }
    if path.components().any(|c| c == Component::ParentDir) {
        return Err(Error::BadRequest(format!(
            "{text} has `..` in it: give the file's own path"
        )));
    }
    Ok(path.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, value.parse().unwrap());
        }
        map
    }

    #[test]
    fn only_loopback_with_the_secret_and_no_origin_is_admitted() {
        let ok = [("host", "127.0.0.1:9"), ("authorization", "Bearer s")];
        assert!(admit(&headers(&ok), 9, "s").is_ok());
        let localhost = [("host", "localhost:9"), ("authorization", "Bearer s")];
        assert!(admit(&headers(&localhost), 9, "s").is_ok());
        let cases: [(&[(&str, &str)], u16); 6] = [
            (&[("host", "127.0.0.1:9")], 401),
            (
                &[("host", "127.0.0.1:9"), ("authorization", "Bearer t")],
                401,
            ),
            (&[("host", "127.0.0.1:9"), ("authorization", "s")], 401),
            (
                &[("host", "evil.example:9"), ("authorization", "Bearer s")],
                403,
            ),
            (
                &[("host", "127.0.0.1:8"), ("authorization", "Bearer s")],
                403,
            ),
            (
                &[
                    ("host", "127.0.0.1:9"),
                    ("authorization", "Bearer s"),
                    ("origin", "null"),
                ],
                403,
            ),
        ];
        for (given, status) in cases {
            let refused = admit(&headers(given), 9, "s").unwrap_err();
            assert_eq!(refused.status(), status, "{given:?}");
        }
        assert_eq!(admit(&HeaderMap::new(), 9, "s").unwrap_err().status(), 403);
    }

    #[test]
    fn a_query_is_decoded_strictly() {
        let q = Some("x=1&path=%2Fa%20b%2Bc+d.blend");
        assert_eq!(
            query_param(q, "path").unwrap().as_deref(),
            Some("/a b+c d.blend")
        );
        assert_eq!(query_param(q, "other").unwrap(), None);
        for bad in ["path=%ff%fe", "path=%2", "path=%zz"] {
            assert_eq!(
                query_param(Some(bad), "path").unwrap_err().status(),
                400,
                "{bad}"
            );
        }
    }

    #[test]
    fn only_full_paths_without_parents_are_taken() {
        #[cfg(unix)]
        let full = "/home/a/Leasedesk/hero.blend";
        #[cfg(windows)]
        let full = r"C:\Users\a\Leasedesk\hero.blend";
        assert_eq!(local_path(full).unwrap(), PathBuf::from(full));
        for bad in ["", "hero.blend", "/home/a/Leasedesk/../.ssh/id", "/a\0b"] {
            assert_eq!(local_path(bad).unwrap_err().status(), 400, "{bad:?}");
        }
        assert!(local_path(&format!("/{}", "a".repeat(MAX_PATH_BYTES))).is_err());
    }
}
