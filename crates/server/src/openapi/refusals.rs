//! What each operation of the API can answer besides its success, and what it
//! needs: a token or none, its parameters with every constraint, its body.
//! One table, read by `openapi` to write the document; it never answers a
//! request, so a row that is wrong here is caught by the test that sends
//! the document's requests to a real server (`tests/openapi.rs`).

use super::params::*;

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

/// One operation: its method and path template, whether it needs a token,
/// its parameters and body, the refusals of its own (beyond those every
/// operation of its kind has, see `refusals`; written as statuses each with
/// its codes: `"404 not_found no_preview, 422 invalid"`), whether only
/// admins may call it, and a note for its description.
pub(super) struct Operation {
    pub method: &'static str,
    pub path: &'static str,
    pub token: bool,
    pub params: &'static [Param],
    pub body: Body,
    pub refusals: &'static str,
    pub admins_only: bool,
    pub note: &'static str,
}

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
        admins_only: false,
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

    /// Its description then begins "For admins only.".
    const fn for_admins(self) -> Self {
        Operation {
            admins_only: true,
            ..self
        }
    }

    const fn noting(self, note: &'static str) -> Self {
        Operation { note, ..self }
    }
}

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
    op("post", "/v1/artifacts/{id}/threads", &[ID], Body::JsonRequired, "404 not_found, 422 invalid")
        .noting("Exactly one of `version` (one that exists) and `proposal_id` (one of this file's), else 422 `invalid`. A pin within 0..1; a body of 1 to 10,000 characters with at most 50 `@names`; at most 10,000 threads and 8 MiB of comments a file."),
    op("get", "/v1/artifacts/{id}/threads", &[ID, THREAD_VERSION, THREAD_PROPOSAL, THREAD_STATE], Body::None, "404 not_found, 422 invalid"),
    op("post", "/v1/threads/{id}/comments", &[ID], Body::JsonRequired, "404 not_found, 422 invalid")
        .noting("A thread on a file the caller may not read is 404 `not_found`, as one that never was. At most 1,000 comments a thread, and 8 MiB of comments a file."),
    op("post", "/v1/threads/{id}/resolve", &[ID], Body::None, "404 not_found"),
    op("post", "/v1/threads/{id}/reopen", &[ID], Body::None, "404 not_found"),
    op("post", "/v1/artifacts/{id}/reviews", &[ID], Body::JsonRequired, "404 not_found, 422 invalid")
        .noting("A reviewer's newest decision on a version or a proposal is theirs. A message of at most 1,000 characters; at most 2,000 decisions a file."),
    op("get", "/v1/artifacts/{id}/reviews", &[ID, THREAD_VERSION, THREAD_PROPOSAL], Body::None, "404 not_found, 422 invalid")
        .noting("Exactly one of `version` and `proposal`, else 422 `invalid`."),
    op("post", "/v1/artifacts/{id}/review-requests", &[ID], Body::JsonRequired, "404 not_found, 422 invalid")
        .noting("Each reviewer must be a participant who may read the file, and not the caller (else 422 `invalid`); at most 50."),
    op("get", "/v1/inbox", &[INBOX_AFTER, INBOX_BEFORE, INBOX_LIMIT, INBOX_UNREAD], Body::None, "422 invalid")
        .noting("Never the caller's own acts, never a file they may not read (a page may then skip seqs; `next` moves past them). `after` and `before` together: 422 `invalid`."),
    op("post", "/v1/inbox/read", &[], Body::JsonRequired, ""),
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
        .for_admins()
        .noting("The code is shown only now; inviting a participant again adds a device (its flags must match, else 422 `invalid`)."),
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
        .for_admins(),
    op("delete", "/v1/participants/{participant}/devices/{id}", &[PARTICIPANT, DEVICE], Body::None, "403 forbidden, 404 not_found")
        .for_admins(),
    op("get", "/v1/groups", &[], Body::None, "403 forbidden")
        .for_admins(),
    op("put", "/v1/groups/{name}", &[GROUP], Body::Json, "403 forbidden, 422 invalid")
        .for_admins()
        .noting("Every member must be a participant (else 422 `invalid`)."),
    op("delete", "/v1/groups/{name}", &[GROUP], Body::None, "403 forbidden, 404 not_found, 422 invalid")
        .for_admins()
        .noting("A group a rule names is kept (422 `invalid`)."),
    op("get", "/v1/permissions", &[], Body::None, "403 forbidden")
        .for_admins(),
    op("put", "/v1/permissions", &[], Body::Json, "403 forbidden, 422 invalid")
        .for_admins()
        .noting("Replaces every rule, for the next request on every server. A rule naming a group that does not exist or someone who is not a participant, a folder that is not a prefix ending in `/` (or `\"\"`), or a level that is not none, read or write: 422 `invalid`, and the rules stay as they were."),
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
