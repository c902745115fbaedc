//! The `preview` URI scheme: the window's `<img>` tags load previews from
//! it, so pictures never pass through the IPC bridge as JSON. The window
//! builds its addresses with `convertFileSrc(path, "preview")`, which
//! percent-encodes the path (`/` included) into one segment:
//! `preview://localhost/artifact%2F{id}%2Fhead%2F512` on Linux and macOS,
//! `http://preview.localhost/artifact%2F…` on Windows. Paths:
//!
//! - `artifact/{id}/{version|head}/{size}`: a version (the head by name);
//! - `proposal/{id}/{size}`;
//! - `local/{id}/{size}`: your local copy as it is now.
//!
//! Answers are `image/png`, or a JSON `{code, message}` error (404
//! `no_preview` for a file with no picture Leasedesk can read).

use leasedesk_desk::Desk;
use leasedesk_model::model::{ArtifactId, PreviewOf, ProposalId};
use tauri::http::{header, Response, StatusCode};

use crate::error::{Code, UiError};

/// What a `preview:` address asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Wanted {
    Version {
        artifact: ArtifactId,
        version: Option<u64>,
        size: u32,
    },
    Proposal {
        proposal: ProposalId,
        size: u32,
    },
    Local {
        artifact: ArtifactId,
        size: u32,
    },
}

impl Wanted {
    /// Reads a request's path (`uri.path()`, encoded or not).
    pub fn parse(path: &str) -> Result<Self, UiError> {
        let decoded = percent_decode(path).ok_or_else(|| {
            UiError::new(Code::Invalid, format!("{path:?} is not a preview address"))
        })?;
        let bad = || {
            UiError::new(
                Code::Invalid,
                format!(
                    "{decoded:?} is not a preview address: use artifact/ID/VERSION|head/SIZE, \
                     proposal/ID/SIZE or local/ID/SIZE"
                ),
            )
        };
        let parts: Vec<&str> = decoded.trim_matches('/').split('/').collect();
        let size = |s: &str| s.parse::<u32>().map_err(|_| bad());
        Ok(match parts.as_slice() {
            ["artifact", artifact, version, size_text] => Wanted::Version {
                artifact: artifact.parse().map_err(|_| bad())?,
                version: match *version {
                    "head" => None,
                    number => Some(number.parse().map_err(|_| bad())?),
                },
                size: size(size_text)?,
            },
            ["proposal", proposal, size_text] => Wanted::Proposal {
                proposal: proposal.parse().map_err(|_| bad())?,
                size: size(size_text)?,
            },
            ["local", artifact, size_text] => Wanted::Local {
                artifact: artifact.parse().map_err(|_| bad())?,
                size: size(size_text)?,
            },
            _ => return Err(bad()),
        })
    }

    /// Whether the same address always shows the same picture (a version by
    /// number, a proposal), so the web view may keep it: the head and your
    /// local copy change under one address.
    pub fn is_immutable(&self) -> bool {
        matches!(
            self,
            Wanted::Version {
                version: Some(_),
                ..
            } | Wanted::Proposal { .. }
        )
    }
}

/// `%2F` → `/` and so on; `None` for a broken escape or bytes that are not UTF-8.
pub fn percent_decode(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = bytes.get(i + 1..i + 3)?;
            let hex = std::str::from_utf8(hex).ok()?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// The answer to one `preview:` request path.
pub async fn answer(desk: &Desk, path: &str) -> Response<Vec<u8>> {
    let wanted = match Wanted::parse(path) {
        Ok(wanted) => wanted,
        Err(e) => return error_response(StatusCode::BAD_REQUEST, &e),
    };
    let made = match wanted {
        Wanted::Version {
            artifact,
            version,
            size,
        } => {
            desk.preview(PreviewOf::Version { artifact, version }, size)
                .await
        }
        Wanted::Proposal { proposal, size } => {
            desk.preview(PreviewOf::Proposal(proposal), size).await
        }
        Wanted::Local { artifact, size } => desk.local_preview(artifact, size).await,
    };
    let read = match made {
        Ok(file) => tokio::fs::read(&file)
            .await
            .map_err(leasedesk_model::Error::from),
        Err(e) => Err(e),
    };
    match read {
        Ok(png) => Response::builder()
            .status(StatusCode::OK)
            .header(header::CONTENT_TYPE, "image/png")
            // The window (another origin) reads the pixels to compare two
            // previews, and whether one is approximate.
            .header(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")
            .header(
                header::ACCESS_CONTROL_EXPOSE_HEADERS,
                leasedesk_model::wire::APPROXIMATE_HEADER,
            )
            .header(
                leasedesk_model::wire::APPROXIMATE_HEADER,
                leasedesk_preview::fidelity_of(&png),
            )
            .header(
                header::CACHE_CONTROL,
                if wanted.is_immutable() {
                    "max-age=31536000, immutable"
                } else {
                    "no-cache"
                },
            )
            .body(png)
            .expect("a well-formed response"),
        Err(e) => {
            let status = match &e {
                leasedesk_model::Error::NoPreview(_) | leasedesk_model::Error::NotFound(_) => {
                    StatusCode::NOT_FOUND
                }
                leasedesk_model::Error::Invalid(_) | leasedesk_model::Error::BadRequest(_) => {
                    StatusCode::UNPROCESSABLE_ENTITY
                }
                leasedesk_model::Error::Unauthorized(_) => StatusCode::UNAUTHORIZED,
                leasedesk_model::Error::Forbidden(_) => StatusCode::FORBIDDEN,
                leasedesk_model::Error::Unavailable(_) => StatusCode::SERVICE_UNAVAILABLE,
                _ => StatusCode::INTERNAL_SERVER_ERROR,
            };
            error_response(status, &UiError::from(e))
        }
    }
}

/// No store is open (the settings name none that works).
pub fn unavailable(error: &UiError) -> Response<Vec<u8>> {
    error_response(StatusCode::SERVICE_UNAVAILABLE, error)
}

fn error_response(status: StatusCode, error: &UiError) -> Response<Vec<u8>> {
    Response::builder()
        .status(status)
        .header(header::CONTENT_TYPE, "application/json")
        .header(header::ACCESS_CONTROL_ALLOW_ORIGIN, "*")
        .header(header::CACHE_CONTROL, "no-store")
        .body(serde_json::to_vec(error).unwrap_or_default())
        .expect("a well-formed response")
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use leasedesk_backend::{Backend, Upload};
    use leasedesk_desk::workspace::Workspace;
    use leasedesk_engine::Bundled;
    use leasedesk_model::clock::Clock;
    use leasedesk_model::model::RepoPath;

    use super::*;

    const ID: &str = "5f0c2c7e-8a43-4d1e-9a55-2f7f4b0c9d11";

    /// The window's addresses on both platforms, as `convertFileSrc` makes
    /// them: the path is one percent-encoded segment. Unencoded paths too.
    #[test]
    fn addresses_read_alike_on_windows_linux_and_macos() {
        let artifact = ArtifactId(ID.parse().unwrap());
        for address in [
            format!("preview://localhost/artifact%2F{ID}%2Fhead%2F512"),
            format!("http://preview.localhost/artifact%2F{ID}%2Fhead%2F512"),
            format!("preview://localhost/artifact/{ID}/head/512"),
        ] {
            let uri: tauri::http::Uri = address.parse().unwrap();
            assert_eq!(
                Wanted::parse(uri.path()).unwrap(),
                Wanted::Version {
                    artifact,
                    version: None,
                    size: 512
                },
                "{address}"
            );
        }
        let uri: tauri::http::Uri = format!("http://preview.localhost/artifact%2F{ID}%2F3%2F128")
            .parse()
            .unwrap();
        assert_eq!(
            Wanted::parse(uri.path()).unwrap(),
            Wanted::Version {
                artifact,
                version: Some(3),
                size: 128
            }
        );
        assert_eq!(
            Wanted::parse(&format!("/proposal%2F{ID}%2F64")).unwrap(),
            Wanted::Proposal {
                proposal: ProposalId(ID.parse().unwrap()),
                size: 64
            }
        );
        assert_eq!(
            Wanted::parse(&format!("/local%2F{ID}%2F256")).unwrap(),
            Wanted::Local {
                artifact,
                size: 256
            }
        );
        for bad in [
            "/artifact%2Fnot-an-id%2Fhead%2F512".to_owned(),
            format!("/artifact%2F{ID}%2Fv3%2F512"),
            format!("/artifact%2F{ID}%2Fhead"),
            format!("/thumb%2F{ID}%2F64"),
            format!("/local%2F{ID}%2F2%ZZ"),
        ] {
            assert!(Wanted::parse(&bad).is_err(), "{bad}");
        }
    }

    /// A real bundled store and workspace: a PNG of a readable file with a
    /// long cache header for a version by number (none for the head), and a
    /// 404 with the JSON `{code, message}` for a file with no picture.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn answers_a_png_or_a_json_404() {
        let home = tempfile::tempdir().unwrap();
        let store = Bundled::open(&home.path().join("store"))
            .unwrap()
            .acting_as("user:alice".parse().unwrap());
        let workspace = Workspace::open(
            &home.path().join("files"),
            &home.path().join("state"),
            Clock::system(),
        )
        .unwrap();
        let desk = Desk::new(Arc::new(store.clone()), workspace, Clock::system());
        let source = home.path().join("dot.png");
        let dot = image::RgbaImage::from_pixel(2, 2, image::Rgba([200, 30, 30, 255]));
        std::fs::write(&source, leasedesk_preview::encode_png(&dot)).unwrap();
        let picture: RepoPath = "dot.png".parse().unwrap();
        let a = store.import(&picture, Upload::file(&source)).await.unwrap();
        let notes: RepoPath = "notes.txt".parse().unwrap();
        std::fs::write(&source, b"just words").unwrap();
        let b = store.import(&notes, Upload::file(&source)).await.unwrap();

        let by_number = answer(&desk, &format!("/artifact%2F{}%2F1%2F64", a.id)).await;
        assert_eq!(by_number.status(), StatusCode::OK);
        assert_eq!(by_number.headers()[header::CONTENT_TYPE], "image/png");
        assert_eq!(
            by_number.headers()[header::CACHE_CONTROL],
            "max-age=31536000, immutable"
        );
        let shown = image::load_from_memory(by_number.body())
            .unwrap()
            .to_rgba8();
        assert_eq!(shown.dimensions(), (2, 2));
        assert_eq!(shown.get_pixel(1, 1).0, [200, 30, 30, 255]);
        let head = answer(&desk, &format!("/artifact%2F{}%2Fhead%2F64", a.id)).await;
        assert_eq!(head.status(), StatusCode::OK);
        assert_eq!(head.headers()[header::CACHE_CONTROL], "no-cache");
        assert_eq!(head.body(), by_number.body(), "one picture, one digest");

        let none = answer(&desk, &format!("/artifact%2F{}%2Fhead%2F64", b.id)).await;
        assert_eq!(none.status(), StatusCode::NOT_FOUND);
        assert_eq!(none.headers()[header::CONTENT_TYPE], "application/json");
        let body: serde_json::Value = serde_json::from_slice(none.body()).unwrap();
        assert_eq!(body["code"], "no_preview");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));

        let bad = answer(&desk, "/artifact%2Fnope").await;
        assert_eq!(bad.status(), StatusCode::BAD_REQUEST);
        let body: serde_json::Value = serde_json::from_slice(bad.body()).unwrap();
        assert_eq!(body["code"], "invalid");
        let unknown = answer(&desk, &format!("/proposal%2F{ID}%2F64")).await;
        assert_eq!(unknown.status(), StatusCode::NOT_FOUND);
    }
}
