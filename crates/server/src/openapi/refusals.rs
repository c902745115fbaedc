//! What each operation of the API can answer besides its success, and what it
//! needs: a token or none, its parameters with every constraint, its body.
//! One table, read by `openapi` to write the document; it never answers a
//! request, so a row that is wrong here is caught by the test that sends
//! the document's requests to a real server (`tests/openapi.rs`).

use serde_json::{json, Value};

use super::patterns;
use crate::model::{RepoPath, MAX_MESSAGE_BYTES, MAX_PAGE, SEARCH_CHARS};

/// A request body: none, a JSON object (empty means `{}`), one that must
/// be sent (empty, it would leave out a field the operation needs), a file
/// (or none, naming a finished resumable upload), a chunk list, or the next
/// bytes of a resumable upload.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum Body {
    None,
    Json,
    JsonRequired,
    Upload,
    Chunks,
    Append,
}

/// One parameter: where it goes, whether it must be there, its JSON schema
/// (every constraint the server checks that a schema can say) and a sentence.
pub(super) struct Param {
    pub name: &'static str,
    pub location: &'static str,
    pub required: bool,
    pub schema: fn() -> Value,
    pub description: &'static str,
}

/// One operation: its method and path template, whether it needs a token,
/// its parameters and body, the refusals of its own (beyond those every
/// operation of its kind has, see `refusals`; written as statuses each with
/// its codes: `"404 not_found no_preview, 422 invalid"`), and a note for its
/// description.
pub(super) struct Operation {
    pub method: &'static str,
    pub path: &'static str,
    pub token: bool,
    pub params: &'static [Param],
    pub body: Body,
    pub refusals: &'static str,
    pub note: &'static str,
}

/// A sequence number or version: SQLite keeps them as signed 64-bit integers.
fn seq() -> Value {
    json!({ "type": "integer", "minimum": 0, "maximum": i64::MAX })
}

fn uuid() -> Value {
    json!({ "type": "string", "format": "uuid" })
}

fn digest() -> Value {
    json!({ "type": "string", "pattern": "^blake3:[0-9a-f]{64}$" })
}

/// A path as a lookup takes it (as stored, `RepoPath::stored`): never empty,
/// at most 1024 bytes of UTF-8 (a schema counts characters, so 1024
/// characters is the most it can say).
fn stored_path() -> Value {
    json!({ "type": "string", "minLength": 1, "maxLength": RepoPath::MAX_BYTES, "pattern": patterns::stored_path() })
}

/// A path a file is to be given (`RepoPath`'s `FromStr`).
pub(super) fn new_path() -> Value {
    json!({ "type": "string", "minLength": 1, "maxLength": RepoPath::MAX_BYTES, "pattern": patterns::new_path() })
}

/// A folder (`check_folder`): `""`, or a path as stored and `/`.
pub(super) fn folder() -> Value {
    json!({ "type": "string", "maxLength": RepoPath::MAX_BYTES + 1, "pattern": patterns::folder() })
}

const ID: Param = Param {
    name: "id",
    location: "path",
    required: true,
    schema: uuid,
    description: "A UUID; anything else is 400 `bad_request`",
};
const VERSION: Param = Param {
    name: "version",
    location: "query",
    required: false,
    schema: seq,
    description: "A version number (the head when not given); past 2^63 - 1 is 400 `bad_request`",
};
const SIZE: Param = Param {
    name: "size",
    location: "query",
    required: false,
    schema: || json!({ "type": "integer", "minimum": 16, "maximum": 4096, "default": 512 }),
    description:
        "The square the image is fitted into, 16 to 4096 px (default 512); outside: 422 `invalid`",
};
const AFTER: Param = Param {
    name: "after",
    location: "query",
    required: false,
    schema: seq,
    description: "Events with a higher seq, oldest first; not with `before` (both: 422 `invalid`)",
};
const PATH_RULES: &str = "A relative `/`-separated path, not empty, at most 1024 bytes of UTF-8, \
     safe on Windows, macOS and Linux (docs/API.md); else 422 `invalid`";
const DIGEST: Param = Param {
    name: "Leasedesk-Digest",
    location: "header",
    required: false,
    schema: digest,
    description: "The body's digest; a body that does not match is 400 `digest_mismatch` and nothing is stored",
};
const UPLOAD: Param = Param {
    name: "Leasedesk-Upload",
    location: "header",
    required: false,
    schema: uuid,
    description: "A finished resumable upload begun for this (docs/API-transfers.md), whose bytes are taken instead of the body, which is then empty; unknown: 404 `not_found`; not finished: 409 `upload_incomplete`; begun for something else: 422 `invalid`",
};
const RANGE: Param = Param {
    name: "Range",
    location: "header",
    required: false,
    schema: || json!({ "type": "string" }),
    description: "`bytes=A-B` or `bytes=A-`: 206 with those bytes; starting past the end: 416 `range_not_satisfiable`. Any other range is ignored (200, every byte)",
};
const IF_RANGE: Param = Param {
    name: "If-Range",
    location: "header",
    required: false,
    schema: || json!({ "type": "string" }),
    description: "The ETag a resumed download began with: if the bytes are not those any more, 200 with all of them",
};
const UPLOAD_SIZE: Param = Param {
    name: "size",
    location: "query",
    required: true,
    schema: seq,
    description: "The file's size in bytes, at most this server's limit (`serve --max-upload`); over it: 413 `too_large`",
};
const UPLOAD_CHECKOUT: Param = Param {
    name: "checkout",
    location: "query",
    required: false,
    schema: uuid,
    description: "For a check-in or a stage of this check-out of the caller's (exactly one of `checkout`, `edit`, `path`; else 422 `invalid`)",
};
const UPLOAD_EDIT: Param = Param {
    name: "edit",
    location: "query",
    required: false,
    schema: uuid,
    description: "For the commit of this edit of the caller's",
};
const UPLOAD_PATH: Param = Param {
    name: "path",
    location: "query",
    required: false,
    schema: new_path,
    description: "For an import at this path",
};
const UPLOAD_DIGEST: Param = Param {
    name: "Leasedesk-Digest",
    location: "header",
    required: true,
    schema: digest,
    description: "The whole file's digest, checked before anything commits",
};
const OFFSET: Param = Param {
    name: "Upload-Offset",
    location: "header",
    required: true,
    schema: seq,
    description:
        "Where these bytes go: the upload's offset (else 409 `wrong_offset` with `offset`)",
};
const ENCODING: Param = Param {
    name: "Content-Encoding",
    location: "header",
    required: false,
    schema: || json!({ "type": "string", "enum": ["zstd", "identity"] }),
    description: "`zstd` if the body is compressed; offsets count the bytes uncompressed",
};
const MESSAGE: Param = Param {
    name: "Leasedesk-Message",
    location: "header",
    required: false,
    schema: || json!({ "type": "string", "maxLength": MAX_MESSAGE_BYTES, "pattern": patterns::percent_encoded_utf8() }),
    description: "The version's description, percent-encoded UTF-8, at most 4096 bytes once decoded; else 422 `invalid`",
};

/// An operation that needs a token, with no note.
const fn op(
    method: &'static str,
    path: &'static str,
    params: &'static [Param],
    body: Body,
    refusals: &'static str,
) -> Operation {
    Operation {
        method,
        path,
        token: true,
        params,
        body,
        refusals,
        note: "",
    }
}

impl Operation {
    const fn without_token(self) -> Self {
        Operation {
            token: false,
            ..self
        }
    }

    const fn noting(self, note: &'static str) -> Self {
        Operation { note, ..self }
    }
}

const PATH_QUERY: Param = Param {
    name: "path",
    location: "query",
    required: true,
    schema: new_path,
    description: PATH_RULES,
};
const PATH_FILTER: Param = Param {
    name: "path",
    location: "query",
    required: false,
    schema: stored_path,
    description: "Only the artifact at this path (as stored); none there is 404 `not_found`",
};
const PAGE_LIMIT: Param = Param {
    name: "limit",
    location: "query",
    required: false,
    schema: || json!({ "type": "integer", "minimum": 1, "maximum": MAX_PAGE }),
    description: "One page of at most this many, sorted by path (bytewise on the NFC form); outside 1 to 10000: 422 `invalid`",
};
const PAGE_AFTER: Param = Param {
    name: "after",
    location: "query",
    required: false,
    schema: || json!({ "type": "string", "maxLength": RepoPath::MAX_BYTES }),
    description:
        "The artifacts whose path sorts after this one (the last page's `next`); it need not exist",
};
const PREFIX: Param = Param {
    name: "prefix",
    location: "query",
    required: false,
    schema: folder,
    description:
        "A folder, ending in `/` (`brand/`), or `\"\"` for the top; anything else is 422 `invalid`",
};
const SEARCH: Param = Param {
    name: "q",
    location: "query",
    required: false,
    schema: || json!({ "type": "string", "minLength": SEARCH_CHARS.start(), "maxLength": SEARCH_CHARS.end(), "pattern": patterns::no_control() }),
    description: "The artifacts whose path contains this text, ignoring case; 2 to 200 characters, no control character, else 422 `invalid`",
};
const HELD: Param = Param {
    name: "held",
    location: "query",
    required: false,
    schema: || json!({ "type": "boolean" }),
    description: "`true`: only the artifacts with a live lease",
};
const CHECKOUT_STATE: Param = Param {
    name: "state",
    location: "query",
    required: false,
    schema: || json!({ "type": "string", "enum": ["open", "closed"] }),
    description: "Only the caller's check-outs in this state",
};
const ARTIFACT_OF_PROPOSALS: Param = Param {
    name: "artifact",
    location: "query",
    required: false,
    schema: uuid,
    description: "Only this artifact's proposals; not a UUID: 400 `bad_request`",
};
const PROPOSAL_STATE: Param = Param {
    name: "state",
    location: "query",
    required: false,
    schema: || json!({ "type": "string", "enum": ["open", "accepted", "rejected", "superseded"] }),
    description: "Only proposals in this state",
};
const REQUEST_STATE: Param = Param {
    name: "state",
    location: "query",
    required: false,
    schema: || json!({ "type": "string", "enum": ["open", "replied", "withdrawn", "ended"] }),
    description:
        "Only requests in this state; `open` is every request that still stands (replied too)",
};
const DEVICE: Param = Param {
    name: "id",
    location: "path",
    required: true,
    schema: || json!({ "type": "string", "maxLength": 64 }),
    description: "A device's id, as its list gives it; one the caller has not: 404 `not_found`",
};
const PARTICIPANT: Param = Param {
    name: "participant",
    location: "path",
    required: true,
    schema: || json!({ "type": "string", "pattern": patterns::participant() }),
    description: "`user:NAME` or `agent:NAME`; else 400 `bad_request`",
};
const GROUP: Param = Param {
    name: "name",
    location: "path",
    required: true,
    schema: || json!({ "type": "string", "pattern": patterns::group() }),
    description: "1 to 64 letters, digits or `. _ - @`; else 422 `invalid`",
};
const BEFORE: Param = Param {
    name: "before",
    location: "query",
    required: false,
    schema: seq,
    description: "Events with a lower seq, newest first; not with `after` (both: 422 `invalid`)",
};
const LIMIT: Param = Param {
    name: "limit",
    location: "query",
    required: false,
    schema: seq,
    description: "At most this many events (default 100); more than 1000 is lowered to 1000",
};
const ARTIFACT_OF_EVENTS: Param = Param {
    name: "artifact",
    location: "query",
    required: false,
    schema: uuid,
    description: "That artifact's events only; not a UUID: 400 `bad_request`; one that does not exist for the caller: 404 `not_found`",
};
const LAST_EVENT_ID: Param = Param {
    name: "Last-Event-ID",
    location: "header",
    required: false,
    schema: seq,
    description: "Where a reconnecting client resumes, over `after`; not a seq: 400 `bad_request`",
};

/// Every operation of the API, in the order of docs/API.md, one a row
/// (kept on one line each, as a table reads, hence no rustfmt).
#[rustfmt::skip]
pub(super) const OPERATIONS: &[Operation] = &[
    op("get", "/v1/health", &[], Body::None, "")
        .without_token()
        .noting("Needs no token."),
    op("get", "/v1/openapi.json", &[], Body::None, ""),
    op("get", "/v1/me", &[], Body::None, ""),
    op("post", "/v1/artifacts", &[PATH_QUERY, DIGEST, MESSAGE, UPLOAD], Body::Upload, "403 forbidden, 404 not_found, 409 exists upload_incomplete, 422 invalid"),
    op("get", "/v1/artifacts", &[PATH_FILTER, PAGE_LIMIT, PAGE_AFTER, PREFIX, SEARCH, HELD], Body::None, "404 not_found, 422 invalid")
        .noting("Without `limit`, every artifact the caller may read; with it, one page. `path` is not combined with the others (422 `invalid`)."),
    op("get", "/v1/folders", &[PREFIX], Body::None, "422 invalid")
        .noting("What the caller may not read is neither listed nor counted; a folder with nothing they may read is left out."),
    op("get", "/v1/artifacts/{id}", &[ID], Body::None, "404 not_found"),
    op("get", "/v1/artifacts/{id}/versions", &[ID], Body::None, "404 not_found"),
    op("get", "/v1/artifacts/{id}/content", &[ID, VERSION, RANGE, IF_RANGE], Body::None, "404 not_found, 416 range_not_satisfiable"),
    op("get", "/v1/artifacts/{id}/chunks", &[ID, VERSION], Body::None, "404 not_found")
        .noting("The version's chunk list (docs/API-transfers.md): per chunk its BLAKE3 (32 bytes) and size (4 bytes, little-endian); the digest in `Leasedesk-Digest`."),
    op("get", "/v1/artifacts/{id}/preview", &[ID, VERSION, SIZE], Body::None, "404 not_found no_preview, 422 invalid"),
    op("post", "/v1/artifacts/{id}/checkouts", &[ID], Body::Json, "403 forbidden, 404 not_found, 409 artifact_busy, 422 invalid"),
    op("get", "/v1/checkouts", &[CHECKOUT_STATE], Body::None, ""),
    op("get", "/v1/checkouts/{id}", &[ID], Body::None, "403 forbidden, 404 not_found"),
    op("post", "/v1/checkouts/{id}/extend", &[ID], Body::Json, "403 forbidden, 404 not_found, 409 checkout_closed artifact_busy, 422 invalid"),
    op("post", "/v1/checkouts/{id}/checkin", &[ID, DIGEST, MESSAGE, UPLOAD], Body::Upload, "403 forbidden, 404 not_found, 409 checkout_closed upload_incomplete"),
    op("post", "/v1/checkouts/{id}/cancel", &[ID], Body::None, "403 forbidden, 404 not_found"),
    op("post", "/v1/artifacts/{id}/edits", &[ID], Body::Json, "403 forbidden, 404 not_found, 409 artifact_busy, 422 invalid"),
    op("post", "/v1/edits/{id}/commit", &[ID, DIGEST, MESSAGE, UPLOAD], Body::Upload, "403 forbidden, 404 not_found, 409 stale checkout_closed upload_incomplete"),
    op("delete", "/v1/edits/{id}", &[ID], Body::None, "403 forbidden, 404 not_found"),
    op("get", "/v1/proposals", &[ARTIFACT_OF_PROPOSALS, PROPOSAL_STATE], Body::None, ""),
    op("get", "/v1/proposals/{id}", &[ID], Body::None, "404 not_found"),
    op("get", "/v1/proposals/{id}/content", &[ID], Body::None, "404 not_found"),
    op("get", "/v1/proposals/{id}/preview", &[ID, SIZE], Body::None, "404 not_found no_preview, 422 invalid"),
    op("post", "/v1/proposals/{id}/accept", &[ID], Body::None, "403 forbidden, 404 not_found, 409 proposal_stale artifact_busy, 422 invalid")
        .noting("A proposal that is no longer open: 422 `invalid`."),
    op("post", "/v1/proposals/{id}/rebuild", &[ID], Body::None, "403 forbidden, 404 not_found, 409 artifact_busy, 422 invalid")
        .noting("A proposal that is no longer open: 422 `invalid`."),
    op("post", "/v1/proposals/{id}/reject", &[ID], Body::None, "403 forbidden, 404 not_found, 422 invalid")
        .noting("A proposal that is no longer open: 422 `invalid`."),
    op("post", "/v1/artifacts/{id}/break", &[ID], Body::JsonRequired, "403 forbidden, 404 not_found, 422 invalid")
        .noting("For admins only (403 `forbidden` otherwise)."),
    op("post", "/v1/artifacts/{id}/rename", &[ID], Body::JsonRequired, "403 forbidden, 404 not_found, 409 exists artifact_busy, 422 invalid")
        .noting("For admins only (403 `forbidden` otherwise)."),
    op("get", "/v1/events", &[AFTER, BEFORE, LIMIT, ARTIFACT_OF_EVENTS], Body::None, "404 not_found, 422 invalid")
        .noting("`after` and `before` are refused together (422 `invalid`). An `artifact` that does not exist for the caller is 404 `not_found`. Events of files the caller cannot see are left out: a page may skip sequence numbers, and `next` moves past them."),
    op("get", "/v1/events/stream", &[AFTER, LAST_EVENT_ID], Body::None, "")
        .noting("The stream ends when the token that opened it is revoked, or the server shuts down."),
    op("post", "/v1/artifacts/{id}/requests", &[ID], Body::Json, "404 not_found, 409 not_held, 422 invalid")
        .noting("Asks the participant whose check-out holds the file to release it. Nothing is released by itself. The caller's own check-out: 422 `invalid`."),
    op("get", "/v1/requests", &[REQUEST_STATE], Body::None, ""),
    op("post", "/v1/requests/{id}/reply", &[ID], Body::JsonRequired, "403 forbidden, 404 not_found, 422 invalid")
        .noting("Only the holder asked may reply (403 `forbidden` otherwise)."),
    op("post", "/v1/requests/{id}/withdraw", &[ID], Body::None, "403 forbidden, 404 not_found")
        .noting("Only the asker may withdraw (403 `forbidden` otherwise)."),
    op("post", "/v1/checkouts", &[], Body::JsonRequired, "403 forbidden, 404 not_found, 409 artifact_busy, 422 invalid")
        .noting("Takes every lease or none: if anyone else holds any file, 409 `artifact_busy` with `busy` listing each."),
    op("post", "/v1/checkouts/{id}/stage", &[ID, DIGEST, UPLOAD], Body::Upload, "403 forbidden, 404 not_found, 409 checkout_closed upload_incomplete")
        .noting("Keeps the file for the check-out's next change; staging again replaces it."),
    op("post", "/v1/changes", &[], Body::JsonRequired, "403 forbidden, 404 not_found, 409 checkout_closed not_staged, 422 invalid")
        .noting("Commits every file in one transaction, or keeps every changed file as a proposal of the change if any is stale. The same check-outs again return the same change."),
    op("get", "/v1/changes/{id}", &[ID], Body::None, "404 not_found"),
    op("post", "/v1/uploads", &[UPLOAD_SIZE, UPLOAD_CHECKOUT, UPLOAD_EDIT, UPLOAD_PATH, UPLOAD_DIGEST], Body::Chunks, "403 forbidden, 404 not_found, 409 checkout_closed exists, 413 too_large, 422 invalid, 429 too_many")
        .noting("Begins a resumable upload (docs/API-transfers.md). The body is the file's chunk list; the answer says which chunks to send (`send`), only those no version or proposal of the same file has. Refused as the check-in, commit or import it is for would be."),
    op("get", "/v1/uploads/{id}", &[ID], Body::None, "404 not_found")
        .noting("How far an upload of the caller's has come; another's does not exist for them."),
    op("patch", "/v1/uploads/{id}", &[ID, OFFSET, ENCODING], Body::Append, "404 not_found, 409 wrong_offset checkout_closed, 422 chunk_mismatch invalid")
        .noting("Appends the next bytes of the chunks to send. What arrives is kept, even if the connection breaks; a chunk whose bytes are not its id is dropped (422 `chunk_mismatch` with `index` and `offset`)."),
    op("delete", "/v1/uploads/{id}", &[ID], Body::None, "404 not_found"),
    op("post", "/v1/invites", &[], Body::JsonRequired, "403 forbidden, 422 invalid")
        .noting("For admins only. The code is shown only now; inviting a participant again adds a device (its flags must match, else 422 `invalid`)."),
    op("get", "/v1/invites", &[], Body::None, "403 forbidden")
        .noting("For admins only (docs/API-studio.md). The invites neither used nor lapsed, oldest first; never their codes."),
    op("delete", "/v1/invites/{id}", &[ID], Body::None, "403 forbidden, 404 not_found")
        .noting("For admins only (docs/API-studio.md). An invite neither used nor lapsed is revoked: its code then gets the 404 `invite_invalid` of an unknown one. One used, lapsed or revoked: 404 `not_found`."),
    op("post", "/v1/me/invites", &[], Body::Json, "403 forbidden, 422 invalid")
        .noting("A code for another device of the caller's."),
    op("post", "/v1/invites/redeem", &[], Body::JsonRequired, "404 invite_invalid, 422 invalid, 429 too_many, 500 internal")
        .without_token()
        .noting("Needs no token. An unknown, used or lapsed code is the same 404 `invite_invalid`; past 10 failures a minute from one address, 429 `too_many`."),
    op("get", "/v1/me/devices", &[], Body::None, ""),
    op("delete", "/v1/me/devices/{id}", &[DEVICE], Body::None, "404 not_found")
        .noting("That device's token stops working at once (this one's too)."),
    op("get", "/v1/participants", &[], Body::None, "403 forbidden")
        .noting("For admins only."),
    op("delete", "/v1/participants/{participant}/devices/{id}", &[PARTICIPANT, DEVICE], Body::None, "403 forbidden, 404 not_found")
        .noting("For admins only."),
    op("get", "/v1/groups", &[], Body::None, "403 forbidden")
        .noting("For admins only."),
    op("put", "/v1/groups/{name}", &[GROUP], Body::Json, "403 forbidden, 422 invalid")
        .noting("For admins only. Every member must be a participant (else 422 `invalid`)."),
    op("delete", "/v1/groups/{name}", &[GROUP], Body::None, "403 forbidden, 404 not_found, 422 invalid")
        .noting("For admins only. A group a rule names is kept (422 `invalid`)."),
    op("get", "/v1/permissions", &[], Body::None, "403 forbidden")
        .noting("For admins only."),
    op("put", "/v1/permissions", &[], Body::Json, "403 forbidden, 422 invalid")
        .noting("For admins only. Replaces every rule, for the next request on every server. A rule naming a group that does not exist or someone who is not a participant, a folder that is not a prefix ending in `/` (or `\"\"`), or a level that is not none, read or write: 422 `invalid`, and the rules stay as they were."),
];

/// Every status `op` can answer besides its success, each with its error
/// codes: those of the HTTP layer (a bad head, a head too large, the
/// connection cap), of a token, of its body, and its own.
pub(super) fn refusals(op: &Operation) -> Vec<(u16, Vec<&'static str>)> {
    let mut all: Vec<(u16, Vec<&'static str>)> = Vec::new();
    let mut add =
        |status: u16, codes: &[&'static str]| match all.iter_mut().find(|(s, _)| *s == status) {
            Some((_, known)) => {
                for code in codes {
                    if !known.contains(code) {
                        known.push(code);
                    }
                }
            }
            None => all.push((status, codes.to_vec())),
        };
    // The guard's refusals of a head, and the cap on connections.
    add(400, &["bad_request"]);
    add(414, &["too_large"]);
    add(431, &["too_large"]);
    add(503, &["unavailable"]);
    if op.token {
        add(401, &["unauthorized"]);
        add(500, &["internal"]);
    }
    match op.body {
        Body::None => {}
        Body::Json | Body::JsonRequired => add(413, &["too_large"]),
        Body::Upload => {
            add(400, &["digest_mismatch"]);
            add(413, &["too_large"]);
            add(422, &["invalid"]);
            add(507, &["storage_full"]);
        }
        Body::Chunks => add(507, &["storage_full"]),
        Body::Append => add(507, &["storage_full"]),
    }
    for refusal in op.refusals.split(", ").filter(|r| !r.is_empty()) {
        let mut words = refusal.split(' ');
        let status = words.next().and_then(|s| s.parse().ok());
        let codes: Vec<&'static str> = words.collect();
        add(status.expect("a refusal starts with its status"), &codes);
    }
    all.sort_by_key(|(status, _)| *status);
    all
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::Code;

    #[test]
    fn every_code_the_document_lists_is_one_a_server_sends() {
        for op in OPERATIONS {
            for (status, codes) in refusals(op) {
                for code in codes {
                    let said = format!("{} {}: {status} {code}", op.method, op.path);
                    let code: Code = code.parse().unwrap_or_else(|e| panic!("{said}: {e}"));
                    assert!(code.sent_by_server(), "{said}: a code no server sends");
                }
            }
        }
    }
}
