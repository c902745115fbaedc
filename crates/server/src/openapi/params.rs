//! The parameters the operations of `refusals`' table take: each where it
//! goes, whether it must be there, its JSON schema and a sentence. Kept one
//! a line, as a table reads (hence no rustfmt, see `openapi.rs`).

use serde_json::{json, Value};

use super::patterns;
use crate::model::{RepoPath, MAX_MESSAGE_BYTES, MAX_PAGE, SEARCH_CHARS};

/// One parameter: where it goes, whether it must be there, its JSON schema
/// (every constraint the server checks that a schema can say) and a sentence.
pub(super) struct Param {
    pub name: &'static str,
    pub location: &'static str,
    pub required: bool,
    pub schema: fn() -> Value,
    pub description: &'static str,
}

impl Param {
    /// A part of the path, always there.
    const fn path(name: &'static str, schema: fn() -> Value, description: &'static str) -> Self {
        Param {
            name,
            location: "path",
            required: true,
            schema,
            description,
        }
    }

    /// A query parameter, optional unless [`Param::required`].
    const fn query(name: &'static str, schema: fn() -> Value, description: &'static str) -> Self {
        Param {
            name,
            location: "query",
            required: false,
            schema,
            description,
        }
    }

    /// A header, optional unless [`Param::required`].
    const fn header(name: &'static str, schema: fn() -> Value, description: &'static str) -> Self {
        Param {
            name,
            location: "header",
            required: false,
            schema,
            description,
        }
    }

    const fn required(self) -> Self {
        Param {
            required: true,
            ..self
        }
    }
}

/// A sequence number or version: SQLite keeps them as signed 64-bit integers.
pub(super) fn seq() -> Value {
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

pub(super) const ID: Param = Param::path("id", uuid, "A UUID; anything else is 400 `bad_request`");
pub(super) const VERSION: Param = Param::query("version", seq, "A version number (the head when not given); past 2^63 - 1 is 400 `bad_request`");
pub(super) const SIZE: Param = Param::query("size", || json!({ "type": "integer", "minimum": 16, "maximum": 4096, "default": 512 }), "The square the image is fitted into, 16 to 4096 px (default 512); outside: 422 `invalid`");
pub(super) const AFTER: Param = Param::query("after", seq, "Events with a higher seq, oldest first; not with `before` (both: 422 `invalid`)");
const PATH_RULES: &str = "A relative `/`-separated path, not empty, at most 1024 bytes of UTF-8, \
     safe on Windows, macOS and Linux (docs/API.md); else 422 `invalid`";
pub(super) const DIGEST: Param = Param::header("Leasedesk-Digest", digest, "The body's digest; a body that does not match is 400 `digest_mismatch` and nothing is stored");
pub(super) const UPLOAD: Param = Param::header("Leasedesk-Upload", uuid, "A finished resumable upload begun for this (docs/API-transfers.md), whose bytes are taken instead of the body, which is then empty; unknown: 404 `not_found`; not finished: 409 `upload_incomplete`; begun for something else: 422 `invalid`");
pub(super) const RANGE: Param = Param::header("Range", || json!({ "type": "string" }), "`bytes=A-B` or `bytes=A-`: 206 with those bytes; starting past the end: 416 `range_not_satisfiable`. Any other range is ignored (200, every byte)");
pub(super) const IF_RANGE: Param = Param::header("If-Range", || json!({ "type": "string" }), "The ETag a resumed download began with: if the bytes are not those any more, 200 with all of them");
pub(super) const UPLOAD_SIZE: Param = Param::query("size", seq, "The file's size in bytes, at most this server's limit (`serve --max-upload`); over it: 413 `too_large`").required();
pub(super) const UPLOAD_CHECKOUT: Param = Param::query("checkout", uuid, "For a check-in or a stage of this check-out of the caller's (exactly one of `checkout`, `edit`, `path`; else 422 `invalid`)");
pub(super) const UPLOAD_EDIT: Param = Param::query("edit", uuid, "For the commit of this edit of the caller's");
pub(super) const UPLOAD_PATH: Param = Param::query("path", new_path, "For an import at this path");
pub(super) const UPLOAD_DIGEST: Param = Param::header("Leasedesk-Digest", digest, "The whole file's digest, checked before anything commits").required();
pub(super) const OFFSET: Param = Param::header("Upload-Offset", seq, "Where these bytes go: the upload's offset (else 409 `wrong_offset` with `offset`)").required();
pub(super) const ENCODING: Param = Param::header("Content-Encoding", || json!({ "type": "string", "enum": ["zstd", "identity"] }), "`zstd` if the body is compressed; offsets count the bytes uncompressed");
pub(super) const MESSAGE: Param = Param::header("Leasedesk-Message", || json!({ "type": "string", "maxLength": MAX_MESSAGE_BYTES, "pattern": patterns::percent_encoded_utf8() }), "The version's description, percent-encoded UTF-8, at most 4096 bytes once decoded; else 422 `invalid`");
pub(super) const PATH_QUERY: Param = Param::query("path", new_path, PATH_RULES).required();
pub(super) const PATH_FILTER: Param = Param::query("path", stored_path, "Only the artifact at this path (as stored); none there is 404 `not_found`");
pub(super) const PAGE_LIMIT: Param = Param::query("limit", || json!({ "type": "integer", "minimum": 1, "maximum": MAX_PAGE }), "One page of at most this many, sorted by path (bytewise on the NFC form); outside 1 to 10000: 422 `invalid`");
pub(super) const PAGE_AFTER: Param = Param::query("after", || json!({ "type": "string", "maxLength": RepoPath::MAX_BYTES }), "The artifacts whose path sorts after this one (the last page's `next`); it need not exist");
pub(super) const PREFIX: Param = Param::query("prefix", folder, "A folder, ending in `/` (`brand/`), or `\"\"` for the top; anything else is 422 `invalid`");
pub(super) const SEARCH: Param = Param::query("q", || json!({ "type": "string", "minLength": SEARCH_CHARS.start(), "maxLength": SEARCH_CHARS.end(), "pattern": patterns::no_control() }), "The artifacts whose path contains this text, ignoring case; 2 to 200 characters, no control character, else 422 `invalid`");
pub(super) const HELD: Param = Param::query("held", || json!({ "type": "boolean" }), "`true`: only the artifacts with a live lease");
pub(super) const CHECKOUT_STATE: Param = Param::query("state", || json!({ "type": "string", "enum": ["open", "closed"] }), "Only the caller's check-outs in this state");
pub(super) const ARTIFACT_OF_PROPOSALS: Param = Param::query("artifact", uuid, "Only this artifact's proposals; not a UUID: 400 `bad_request`");
pub(super) const PROPOSAL_STATE: Param = Param::query("state", || json!({ "type": "string", "enum": ["open", "accepted", "rejected", "superseded"] }), "Only proposals in this state");
pub(super) const REQUEST_STATE: Param = Param::query("state", || json!({ "type": "string", "enum": ["open", "replied", "withdrawn", "ended"] }), "Only requests in this state; `open` is every request that still stands (replied too)");
pub(super) const DEVICE: Param = Param::path("id", || json!({ "type": "string", "maxLength": 64 }), "A device's id, as its list gives it; one the caller has not: 404 `not_found`");
pub(super) const PARTICIPANT: Param = Param::path("participant", || json!({ "type": "string", "pattern": patterns::participant() }), "`user:NAME` or `agent:NAME`; else 400 `bad_request`");
pub(super) const GROUP: Param = Param::path("name", || json!({ "type": "string", "pattern": patterns::group() }), "1 to 64 letters, digits or `. _ - @`; else 422 `invalid`");
pub(super) const BEFORE: Param = Param::query("before", seq, "Events with a lower seq, newest first; not with `after` (both: 422 `invalid`)");
pub(super) const LIMIT: Param = Param::query("limit", seq, "At most this many events (default 100); more than 1000 is lowered to 1000");
pub(super) const ARTIFACT_OF_EVENTS: Param = Param::query("artifact", uuid, "That artifact's events only; not a UUID: 400 `bad_request`; one that does not exist for the caller: 404 `not_found`");
pub(super) const LAST_EVENT_ID: Param = Param::header("Last-Event-ID", seq, "Where a reconnecting client resumes, over `after`; not a seq: 400 `bad_request`");
pub(super) const THREAD_VERSION: Param = Param::query("version", || json!({ "type": "integer", "minimum": 1, "maximum": i64::MAX }), "Only those on this version (a proposal's once it was accepted as this version too)");
pub(super) const THREAD_PROPOSAL: Param = Param::query("proposal", uuid, "Only those on this proposal; not a UUID: 400 `bad_request`");
pub(super) const THREAD_STATE: Param = Param::query("state", || json!({ "type": "string", "enum": ["open", "resolved"] }), "Only threads in this state");
pub(super) const INBOX_AFTER: Param = Param::query("after", seq, "Items with a higher seq, oldest first (to follow); not with `before`");
pub(super) const INBOX_BEFORE: Param = Param::query("before", seq, "Items with a lower seq, newest first (to show); not with `after`");
pub(super) const INBOX_LIMIT: Param = Param::query("limit", seq, "At most this many items (default 50); more than 200 is lowered to 200");
pub(super) const INBOX_UNREAD: Param = Param::query("unread", || json!({ "type": "boolean" }), "`true`: only unread items");
