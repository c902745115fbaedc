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
    proposals::*, requests::*, review::*, studio::*, uploads::*,
};
use crate::model::*;

#[rustfmt::skip]
mod params;
mod patterns;
mod refusals;

use refusals::{refusals, Body, Operation, OPERATIONS};

#[derive(OpenApi)]
#[openapi(
    info(
        title = "Leasedesk",
        description = "Leases for files that cannot be merged (docs/API.md).\n\n\
        Every operation but `GET /v1/health` needs `Authorization: Bearer <token>` (401 `unauthorized` without). \
        Every refusal is `{\"error\": CODE, \"message\"}` with the fields its code names. \
        A JSON body is at most 64 KiB (413 `too_large` past it). \
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
        open_thread,
        threads,
        comment,
        resolve,
        reopen,
        review,
        reviews,
        request_review,
        inbox,
        read_inbox,
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
        UploadState,
        CommentBody,
        ReadBody,
        Unread
    ))
)]
struct ApiDoc;

/// The OpenAPI document of a server that takes uploads of at most
/// `max_upload` bytes: generated from the handlers and the model types, then
/// completed from the table of operations.
pub fn openapi(max_upload: u64) -> Value {
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
    // The one limit that is this server's own (413 `too_large` past it).
    for param in doc["paths"]["/v1/uploads"]["post"]["parameters"]
        .as_array_mut()
        .expect("the parameters of POST /v1/uploads")
    {
        if param["name"] == "size" {
            param["schema"]["maximum"] = json!(max_upload.min(i64::MAX as u64));
        }
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
                "schema": (p.schema)(),
            })
        })
        .collect();
    match op.body {
        Body::None => {
            operation.as_object_mut().map(|o| o.remove("requestBody"));
        }
        // Empty means `{}`; fields the body does not have are 400.
        Body::Json => operation["requestBody"]["required"] = json!(false),
        // An empty body would leave out a field the operation needs.
        Body::JsonRequired => operation["requestBody"]["required"] = json!(true),
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
    let note = match (op.admins_only, op.note) {
        (false, note) => note.to_owned(),
        (true, "") => "For admins only.".to_owned(),
        (true, note) => format!("For admins only. {note}"),
    };
    if !note.is_empty() {
        let said = operation["description"].as_str().unwrap_or("").to_owned();
        operation["description"] = json!(format!("{said}\n\n{note}").trim().to_owned());
    }
}

/// What the JSON bodies' schemas cannot say from their Rust types: ranges,
/// lengths, the shapes of names and paths, and that fields they do not have
/// are refused.
fn constrain_bodies(schemas: &mut Value) {
    let ttl = json!({ "type": ["integer", "null"], "minimum": 1, "maximum": MAX_TTL_SECONDS });
    for name in ["TtlBody", "CheckoutRequest", "CheckoutsRequest"] {
        schemas[name]["properties"]["ttl_seconds"] = ttl.clone();
        schemas[name]["additionalProperties"] = json!(false);
    }
    for name in ["CheckoutRequest", "CheckoutsRequest"] {
        schemas[name]["properties"]["note"] = json!({
            "type": ["string", "null"],
            "description": "Shown with the lease: at most 1024 bytes once trimmed, no control character but line breaks; blank is none",
            "pattern": patterns::note(),
        });
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
    schemas["BreakBody"]["properties"]["reason"] = json!({
        "type": "string",
        "description": "Why, told to the holder: not blank",
        "pattern": patterns::not_blank(),
    });
    schemas["RenameBody"]["properties"]["path"] = params::new_path();
    schemas["AskBody"]["properties"]["message"] = json!({ "anyOf": [
        { "type": "string", "pattern": patterns::request_message() },
        { "type": "null" },
    ]});
    schemas["ReplyBody"]["properties"]["message"] =
        json!({ "type": "string", "pattern": patterns::reply_message() });
    let expires = json!({
        "type": ["integer", "null"],
        "description": "Seconds until the code lapses: 60 to 30 days (default 7 days)",
        "minimum": 60,
        "maximum": MAX_INVITE_SECONDS,
    });
    schemas["InviteRequest"]["properties"]["expires_seconds"] = expires.clone();
    schemas["MyInviteBody"]["properties"]["expires_seconds"] = expires;
    schemas["InviteRequest"]["properties"]["name"] = json!({
        "type": "string",
        "description": "`NAME`, `user:NAME` or `agent:NAME` (`agent:` with `\"agent\": true` only)",
        "pattern": patterns::invited(),
    });
    let is_true = json!({ "const": true });
    let named = |prefix: &str| {
        let pattern = format!("^[{}]*{prefix}:", patterns::WHITESPACE);
        json!({ "required": ["name"], "properties": { "name": { "pattern": pattern } } })
    };
    schemas["InviteRequest"]["allOf"] = json!([
        // Only users can be admins.
        { "not": { "required": ["admin", "agent"],
                   "properties": { "admin": is_true, "agent": is_true } } },
        // An `agent:` name is an agent's, a `user:` name a user's.
        { "anyOf": [{ "not": named("agent") },
                    { "required": ["agent"], "properties": { "agent": is_true } }] },
        { "anyOf": [{ "not": named("user") },
                    { "properties": { "agent": { "const": false } } }] },
    ]);
    schemas["RedeemBody"]["properties"]["device"] = json!({
        "type": "string",
        "description": "This device's name, shown in the lists of devices: 1 to 64 characters once trimmed, no control character",
        "pattern": patterns::device_name(),
    });
    schemas["GroupBody"]["properties"]["members"]["items"] =
        json!({ "type": "string", "pattern": patterns::participant() });
    let rule = &mut schemas["RuleBody"]["properties"];
    rule["folder"] = params::folder();
    rule["who"] = json!({ "type": "string", "pattern": patterns::who() });
    rule["level"] = json!({ "type": "string", "enum": ["none", "read", "write"] });
    schemas["RulesBody"]["properties"]["rules"]["maxItems"] = json!(MAX_RULES);
    for name in ["BreakBody", "RenameBody", "AskBody", "ReplyBody"] {
        schemas[name]["additionalProperties"] = json!(false);
    }
    constrain_review_bodies(schemas);
}

/// Like every endpoint but health, for a caller with a token.
pub(crate) async fn openapi_json(Caller(me): Caller) -> Json<Value> {
    Json(openapi(me.max_upload()))
}

/// Review's bodies: a comment's text, a pin within the picture, a version
/// from 1, reviewers who are participants. That a body names exactly one of
/// `version` and `proposal_id` is said in words (and kept by the tests'
/// hooks), as is a box's needing both `w` and `h` and ending within.
fn constrain_review_bodies(schemas: &mut Value) {
    let text = json!({ "type": "string", "pattern": patterns::comment() });
    let version = json!({ "type": ["integer", "null"], "minimum": 1, "maximum": i64::MAX });
    let fraction = json!({ "type": "number", "minimum": 0, "maximum": 1 });
    let side = json!({ "type": ["number", "null"], "exclusiveMinimum": 0, "maximum": 1 });
    let pixels = json!({ "type": "integer", "minimum": 1, "maximum": 1 << 20 });
    schemas["CommentBody"]["properties"]["body"] = text.clone();
    schemas["NewThread"]["properties"]["body"] = text.clone();
    // A blank message is none.
    schemas["NewReview"]["properties"]["message"] = json!({ "anyOf": [
        { "type": "string", "pattern": patterns::review_message() },
        { "type": "null" },
    ]});
    for name in ["NewThread", "NewReview", "NewReviewRequest"] {
        schemas[name]["properties"]["version"] = version.clone();
        schemas[name]["additionalProperties"] = json!(false);
    }
    let pin = &mut schemas["Pin"]["properties"];
    pin["x"] = fraction.clone();
    pin["y"] = fraction;
    pin["w"] = side.clone();
    pin["h"] = side;
    schemas["Pin"]["additionalProperties"] = json!(false);
    schemas["ImageSize"]["properties"]["width"] = pixels.clone();
    schemas["ImageSize"]["properties"]["height"] = pixels;
    schemas["ImageSize"]["additionalProperties"] = json!(false);
    let reviewers = &mut schemas["NewReviewRequest"]["properties"]["reviewers"];
    reviewers["minItems"] = json!(1);
    reviewers["maxItems"] = json!(MAX_REVIEWERS);
    reviewers["items"] = json!({ "type": "string", "pattern": patterns::participant() });
    schemas["ReadBody"]["properties"]["up_to"] =
        json!({ "type": "integer", "minimum": 0, "maximum": i64::MAX });
    schemas["ReadBody"]["required"] = json!(["up_to"]);
    for name in ["CommentBody", "ReadBody"] {
        schemas[name]["additionalProperties"] = json!(false);
    }
}
