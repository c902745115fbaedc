//! Previews: a version's or a proposal's image as PNG, fitted into a size.
//! It never decodes a file itself: the preview cache and readers do.

use axum::http::header;
use axum::response::{IntoResponse, Response};
use serde::Deserialize;

use super::super::errors::ApiResult;
use super::super::request::{in_range, On, Params};
use crate::backend::Backend;
use crate::model::*;
use crate::wire::APPROXIMATE_HEADER;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct PreviewQuery {
    version: Option<u64>,
    size: Option<u64>,
}

/// A preview's size: 16 to 4096, 512 when not given.
fn preview_size(size: Option<u64>) -> ApiResult<u32> {
    let size = size.unwrap_or(crate::preview::DEFAULT_SIZE.into());
    let size = u32::try_from(size).unwrap_or(u32::MAX);
    crate::previews::check_size(size)?;
    Ok(size)
}

/// A preview as PNG. One of a fixed version or a proposal never changes;
/// the head's does, so the client asks again each time.
fn png_response(png: Vec<u8>, immutable: bool) -> Response {
    let cache = if immutable {
        "private, max-age=31536000, immutable"
    } else {
        "private, no-cache"
    };
    let fidelity = crate::preview::fidelity_of(&png);
    let mut response = (
        [
            (header::CONTENT_TYPE, "image/png"),
            (header::CACHE_CONTROL, cache),
        ],
        png,
    )
        .into_response();
    if let Ok(value) = header::HeaderValue::from_str(&fidelity) {
        if fidelity != "exact" {
            response.headers_mut().insert(APPROXIMATE_HEADER, value);
        }
    }
    response
}

#[utoipa::path(get, path = "/v1/artifacts/{id}/preview", responses((status = 200, description = "The image fitted into size×size", content_type = "image/png", body = Vec<u8>, headers(("Leasedesk-Preview" = String, description = "`approximate` when the preview leaves out what the document shows (a Photoshop document's adjustment layers or effects, composited from its layers); `saved; by=\"Illustrator\"; size=256` when it is the thumbnail the application saved in the file")))))]
pub(crate) async fn artifact_preview(
    On(me, artifact): On<ArtifactId>,
    Params(q): Params<PreviewQuery>,
) -> ApiResult<Response> {
    let version = in_range("version", q.version)?;
    let size = preview_size(q.size)?;
    let of = PreviewOf::Version { artifact, version };
    Ok(png_response(me.preview(of, size).await?, version.is_some()))
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct SizeQuery {
    size: Option<u64>,
}

#[utoipa::path(get, path = "/v1/proposals/{id}/preview", responses((status = 200, description = "The image fitted into size×size", content_type = "image/png", body = Vec<u8>, headers(("Leasedesk-Preview" = String, description = "`approximate` when the preview leaves out what the document shows (a Photoshop document's adjustment layers or effects, composited from its layers); `saved; by=\"Illustrator\"; size=256` when it is the thumbnail the application saved in the file")))))]
pub(crate) async fn proposal_preview(
    On(me, proposal): On<ProposalId>,
    Params(q): Params<SizeQuery>,
) -> ApiResult<Response> {
    let size = preview_size(q.size)?;
    let of = PreviewOf::Proposal(proposal);
    Ok(png_response(me.preview(of, size).await?, true))
}
