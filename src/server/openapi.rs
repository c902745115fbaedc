//! The OpenAPI document published at `/v1/openapi.json`, generated from the
//! handlers' annotations and the model's types. It never answers a request
//! but its own: the routes do.

use axum::Json;
use utoipa::OpenApi;

use super::errors::ErrorBody;
use super::request::Caller;
use super::routes::{
    artifacts::*, checkouts::*, edits::*, events::*, health::*, previews::*, proposals::*,
};
use crate::model::*;

#[derive(OpenApi)]
#[openapi(
    info(title = "Leasedesk", description = "Leases for files that cannot be merged (shared/API.md)."),
    paths(
        health, me, artifacts, import, artifact, versions, content, check_out, checkouts, checkout,
        extend, check_in, cancel, begin_edit, commit_edit, release_edit, proposals, accept, rebuild,
        reject, break_lease, rename, events, event_stream, artifact_preview, proposal,
        proposal_content, proposal_preview
    ),
    components(schemas(ErrorBody, TtlBody, BreakBody, RenameBody, CheckoutRequest, Artifact, Head, Lease, Checkout, CheckinResult, Proposal, Edit, Event, EventPage)),
    modifiers(&BearerAuth)
)]
struct ApiDoc;

/// Every endpoint but health wants `Authorization: Bearer <token>`.
struct BearerAuth;

impl utoipa::Modify for BearerAuth {
    fn modify(&self, api: &mut utoipa::openapi::OpenApi) {
        use utoipa::openapi::security::{
            HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme,
        };
        let components = api.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        api.security = Some(vec![SecurityRequirement::new(
            "bearer",
            Vec::<String>::new(),
        )]);
    }
}

/// The OpenAPI document, generated from the handlers and the model types.
pub fn openapi() -> utoipa::openapi::OpenApi {
    ApiDoc::openapi()
}

/// Like every endpoint but health, for a caller with a token.
pub(in crate::server) async fn openapi_json(_: Caller) -> Json<utoipa::openapi::OpenApi> {
    Json(openapi())
}
