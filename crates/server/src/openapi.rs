//! The OpenAPI document published at `/v1/openapi.json`: the handlers'
//! annotations and the model's types, completed from `refusals`' table with
//! every parameter's constraints, every refusal's status and codes, and which
//! operations need no token. It never answers a request but its own.

use axum::Json;
use serde_json::{json, Value};
use utoipa::OpenApi;

use super::errors::ErrorBody;
use super::request::Caller;
use super::routes::{
    artifacts::*, changes::*, checkouts::*, edits::*, events::*, health::*, previews::*,
    proposals::*, requests::*, studio::*, uploads::*,
};
use crate::model::*;

mod refusals;

use refusals::{refusals, Body, Operation, OPERATIONS};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Leasedesk",
        description = "Leases for files that cannot be merged (docs/API.md).\n\n\
        Every operation but `GET /v1/health` needs `Authorization: Bearer <token>` (401 `unauthorized` without). \
        Every refusal is `{\"error\": CODE, \"message\"}` with the fields its code names. \
        A method that a path does not have is 405 `method_not_allowed`, with `Allow` listing the methods it has."
    ),
    paths(
        health,
        me,
        artifacts,
        folders,
        import,
        artifact,
        versions,
        content,
        check_out,
        checkouts,
        checkout,
        extend,
        check_in,
        cancel,
        begin_edit,
        commit_edit,
        release_edit,
        proposals,
        accept,
        rebuild,
        reject,
        break_lease,
        rename,
        events,
        event_stream,
        ask,
        requests,
        reply,
        withdraw,
        check_out_many,
        stage,
        commit_change,
        change,
        artifact_preview,
        proposal,
        proposal_content,
        proposal_preview,
        invite,
        invites,
        revoke_invite,
        invite_myself,
        redeem,
        my_devices,
        revoke_my_device,
        participants,
        revoke_device,
        groups,
        put_group,
        delete_group,
        permissions,
        put_permissions,
        version_chunks,
        begin_upload,
        upload_state,
        append_upload,
        cancel_upload
    ),
    components(schemas(
        ErrorBody,
        TtlBody,
        BreakBody,
        RenameBody,
        CheckoutRequest,
        Artifact,
        ArtifactPage,
        PathHold,
        FolderList,
        FolderCount,
        Head,
        Lease,
        Checkout,
        DeviceRef,
        CheckinResult,
        Proposal,
        Edit,
        Event,
        EventPage,
        AskBody,
        ReplyBody,
        Request,
        RequestState,
        RequestList,
        CheckoutsRequest,
        CheckoutsTaken,
        StagedFile,
        ChangeRequest,
        Change,
        ChangeFile,
        ChangeOutcome,
        BusyFile,
        Access,
        Device,
        Member,
        MemberList,
        MyDevices,
        InviteRequest,
        MyInviteBody,
        Invite,
        OpenInvite,
        InviteList,
        RedeemBody,
        Redeemed,
        Group,
        GroupList,
        GroupBody,
        Level,
        Rule,
        Rules,
        RuleBody,
        RulesBody,
        UploadState
    ))
)]
struct ApiDoc;

/// The OpenAPI document: generated from the handlers and the model types,
/// then completed from the table of operations.
pub fn openapi() -> Value {
    let mut doc = serde_json::to_value(ApiDoc::openapi()).expect("the document is JSON");
    doc["components"]["securitySchemes"] = json!({
        "bearer": { "type": "http", "scheme": "bearer" }
    });
    doc["security"] = json!([{ "bearer": [] }]);
    doc["paths"]["/v1/openapi.json"] = json!({ "get": {
        "operationId": "openapi_json",
        "summary": "This document",
        "responses": { "200": { "description": "The OpenAPI document",
            "content": { "application/json": { "schema": { "type": "object" } } } } }
    }});
    constrain_bodies(&mut doc["components"]["schemas"]);
    for op in OPERATIONS {
        complete(&mut doc["paths"][op.path][op.method], op);
    }
    doc
}

/// One operation's parameters, body, refusals and security, from its row.
fn complete(operation: &mut Value, op: &Operation) {
    assert!(
        operation.is_object(),
        "{} {} is in the table of operations but has no handler's annotation",
        op.method,
        op.path
    );
    operation["parameters"] = op
        .params
        .iter()
        .map(|p| {
            json!({
                "name": p.name,
                "in": p.location,
                "required": p.required,
                "description": p.description,
                "schema": serde_json::from_str::<Value>(p.schema).expect("a parameter's schema"),
            })
        })
        .collect();
    match op.body {
        Body::None => {
            operation.as_object_mut().map(|o| o.remove("requestBody"));
        }
        // Empty means `{}`; fields the body does not have are 400.
        Body::Json => operation["requestBody"]["required"] = json!(false),
        Body::Upload => {
            operation["requestBody"] = json!({ "required": false, "content": {
                "application/octet-stream": { "schema": { "type": "string", "format": "binary" } }
            }})
        }
        // Bytes of their own format (docs/API-transfers.md), sent as any
        // binary body is: the server reads no media type.
        Body::Chunks | Body::Append => {
            operation["requestBody"] = json!({ "required": false, "content": {
                "application/octet-stream": { "schema": { "type": "string", "format": "binary" } }
            }})
        }
    }
    let responses = &mut operation["responses"];
    for (status, codes) in refusals(op) {
        let list = codes
            .iter()
            .map(|c| format!("`{c}`"))
            .collect::<Vec<_>>()
            .join(", ");
        let refused = json!({
            "allOf": [
                { "$ref": "#/components/schemas/ErrorBody" },
                { "properties": { "error": { "type": "string", "enum": codes } } }
            ]
        });
        let key = status.to_string();
        let schema = match responses.get(&key) {
            // Health's own 503 (`{"status": "unavailable", "reason"}`) or the
            // connection cap's refusal.
            Some(own) => {
                json!({ "anyOf": [own["content"]["application/json"]["schema"].clone(), refused] })
            }
            None => refused,
        };
        responses[key] = json!({
            "description": format!("Refused: {list}"),
            "content": { "application/json": { "schema": schema } }
        });
    }
    if !op.token {
        operation["security"] = json!([]);
    }
    if !op.note.is_empty() {
        let said = operation["description"].as_str().unwrap_or("").to_owned();
        operation["description"] = json!(format!("{said}\n\n{}", op.note).trim().to_owned());
    }
}

/// What the JSON bodies' schemas cannot say from their Rust types: ranges,
/// lengths, and that fields they do not have are refused.
fn constrain_bodies(schemas: &mut Value) {
    let ttl = json!({ "type": ["integer", "null"], "minimum": 1, "maximum": MAX_TTL_SECONDS });
    for name in ["TtlBody", "CheckoutRequest", "CheckoutsRequest"] {
        schemas[name]["properties"]["ttl_seconds"] = ttl.clone();
        schemas[name]["additionalProperties"] = json!(false);
    }
    for name in ["CheckoutRequest", "CheckoutsRequest"] {
        schemas[name]["properties"]["note"] =
            json!({ "type": ["string", "null"], "maxLength": MAX_NOTE_BYTES });
    }
    for (name, ids) in [
        ("CheckoutsRequest", "artifact_ids"),
        ("ChangeRequest", "checkouts"),
    ] {
        let list = &mut schemas[name]["properties"][ids];
        list["minItems"] = json!(1);
        list["maxItems"] = json!(MAX_CHANGE_FILES);
        list["uniqueItems"] = json!(true);
    }
    schemas["ChangeRequest"]["properties"]["message"] =
        json!({ "type": ["string", "null"], "maxLength": MAX_MESSAGE_BYTES });
    schemas["ChangeRequest"]["additionalProperties"] = json!(false);
    schemas["RenameBody"]["properties"]["path"] =
        json!({ "type": "string", "minLength": 1, "maxLength": 1024 });
    let message = |min: usize| json!({ "type": "string", "minLength": min, "maxLength": MAX_REQUEST_MESSAGE_CHARS });
    schemas["AskBody"]["properties"]["message"] =
        json!({ "anyOf": [message(0), { "type": "null" }] });
    schemas["ReplyBody"]["properties"]["message"] = message(1);
    for name in ["BreakBody", "RenameBody", "AskBody", "ReplyBody"] {
        schemas[name]["additionalProperties"] = json!(false);
    }
}

/// Like every endpoint but health, for a caller with a token.
pub(crate) async fn openapi_json(_: Caller) -> Json<Value> {
    Json(openapi())
}
