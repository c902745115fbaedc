//! [`Backend`] for [`Remote`]: each call as the request `docs/API.md`
//! gives for it, and its answer read back. Only paths, queries and bodies
//! here; how a request is sent, resent or refused is the parent's.

use std::ops::Range;
use std::pin::Pin;

use async_trait::async_trait;
use reqwest::Method;
use serde::Deserialize;
use serde_json::json;
use tokio::io::AsyncRead;

use super::servers::Resend;
use super::{encoded, Remote};
use crate::backend::{Backend, Content, Upload};
use crate::chunking::Chunked;
use crate::error::{Error, Result};
use crate::model::*;
use crate::wire::DIGEST_HEADER;

/// The body of a request that may ask for a lease's length.
fn ttl_body(ttl_seconds: Option<u64>) -> serde_json::Value {
    match ttl_seconds {
        Some(ttl) => json!({ "ttl_seconds": ttl }),
        None => json!({}),
    }
}

#[async_trait]
impl Backend for Remote {
    async fn me(&self) -> Result<Participant> {
        #[derive(Deserialize)]
        struct Me {
            participant: Participant,
        }
        Ok(self.get::<Me>("/v1/me").await?.participant)
    }

    async fn import(&self, path: &RepoPath, upload: Upload) -> Result<Artifact> {
        let at = format!("/v1/artifacts?path={}", encoded(path.as_str()));
        self.post_file(&at, UploadFor::Import(path.clone()), upload)
            .await
    }

    async fn artifacts(&self) -> Result<Vec<Artifact>> {
        Ok(self.get::<ArtifactList>("/v1/artifacts").await?.artifacts)
    }

    async fn artifact_page(&self, query: ArtifactQuery) -> Result<ArtifactPage> {
        let query = query.checked()?;
        let mut asked = Vec::new();
        if let Some(limit) = query.limit {
            asked.push(format!("limit={limit}"));
        }
        for (name, value) in [
            ("after", &query.after),
            ("prefix", &query.prefix),
            ("q", &query.text),
        ] {
            if let Some(value) = value {
                asked.push(format!("{name}={}", encoded(value)));
            }
        }
        if query.held {
            asked.push("held=true".into());
        }
        self.get(&format!("/v1/artifacts?{}", asked.join("&")))
            .await
    }

    async fn folders(&self, folder: &str) -> Result<FolderList> {
        check_folder(folder)?;
        self.get(&format!("/v1/folders?prefix={}", encoded(folder)))
            .await
    }

    async fn artifact(&self, id: ArtifactId) -> Result<Artifact> {
        self.get(&format!("/v1/artifacts/{id}")).await
    }

    async fn artifact_by_path(&self, path: &RepoPath) -> Result<Artifact> {
        let found: ArtifactList = self
            .get(&format!("/v1/artifacts?path={}", encoded(path.as_str())))
            .await?;
        found
            .artifacts
            .into_iter()
            .next()
            .ok_or_else(|| Error::NotFound(format!("no artifact at {path}")))
    }

    async fn versions(&self, id: ArtifactId) -> Result<Vec<Head>> {
        Ok(self
            .get::<VersionList>(&format!("/v1/artifacts/{id}/versions"))
            .await?
            .versions)
    }

    async fn content(&self, id: ArtifactId, version: Option<u64>) -> Result<Content> {
        self.content_range(id, version, 0, None).await
    }

    async fn version_head(&self, id: ArtifactId, version: Option<u64>) -> Result<Head> {
        let versions = self.versions(id).await?;
        match version {
            None => versions.into_iter().next(),
            Some(n) => versions.into_iter().find(|h| h.version == n),
        }
        .ok_or_else(|| {
            Error::NotFound(format!(
                "artifact {id} has no version {}",
                version.unwrap_or(0)
            ))
        })
    }

    async fn open_range(&self, id: ArtifactId, head: Head, range: Range<u64>) -> Result<Content> {
        let path = format!("/v1/artifacts/{id}/content?version={}", head.version);
        let reader = if range.is_empty() {
            // An empty version: nothing to resume.
            self.download(&path).await?
        } else {
            let etag = format!("\"{}\"", head.digest);
            self.resuming_download(path, etag, range.start, range.end, None)
        };
        Ok(Content { head, reader })
    }

    fn over_a_link(&self) -> bool {
        true
    }

    async fn chunks(&self, id: ArtifactId, version: Option<u64>) -> Result<Chunked> {
        let path = match version {
            Some(v) => format!("/v1/artifacts/{id}/chunks?version={v}"),
            None => format!("/v1/artifacts/{id}/chunks"),
        };
        let response = self.get_response(&path).await?;
        let digest: Digest = response
            .headers()
            .get(DIGEST_HEADER)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse().ok())
            .ok_or_else(|| Error::Internal("a chunk list came without its digest".into()))?;
        let bytes = response
            .bytes()
            .await
            .map_err(|e| Error::Unavailable(format!("the chunk list was cut off: {e}")))?;
        Chunked::decode_list(digest, None, &bytes)
            .map_err(|e| Error::Internal(format!("the server's chunk list: {e}")))
    }

    async fn check_out(&self, id: ArtifactId, request: CheckoutRequest) -> Result<Checkout> {
        self.post(&format!("/v1/artifacts/{id}/checkouts"), json!(request))
            .await
    }

    async fn checkout(&self, id: CheckoutId) -> Result<Checkout> {
        self.get(&format!("/v1/checkouts/{id}")).await
    }

    async fn checkouts(&self, open_only: bool) -> Result<Vec<Checkout>> {
        let path = if open_only {
            "/v1/checkouts?state=open"
        } else {
            "/v1/checkouts"
        };
        Ok(self.get::<CheckoutList>(path).await?.checkouts)
    }

    async fn extend(&self, id: CheckoutId, ttl_seconds: Option<u64>) -> Result<Checkout> {
        self.post(&format!("/v1/checkouts/{id}/extend"), ttl_body(ttl_seconds))
            .await
    }

    async fn check_in(&self, id: CheckoutId, upload: Upload) -> Result<Checkout> {
        self.post_checkout_file(id, "checkin", upload).await
    }

    async fn cancel(&self, id: CheckoutId) -> Result<Checkout> {
        self.post(&format!("/v1/checkouts/{id}/cancel"), json!({}))
            .await
    }

    async fn check_out_many(&self, request: CheckoutsRequest) -> Result<Vec<Checkout>> {
        #[derive(Deserialize)]
        struct Taken {
            checkouts: Vec<Checkout>,
        }
        let taken: Taken = self.post("/v1/checkouts", json!(request)).await?;
        Ok(taken.checkouts)
    }

    async fn stage(&self, id: CheckoutId, upload: Upload) -> Result<StagedFile> {
        self.post_checkout_file(id, "stage", upload).await
    }

    async fn commit_change(&self, request: ChangeRequest) -> Result<Change> {
        self.post("/v1/changes", json!(request)).await
    }

    async fn change(&self, id: ChangeId) -> Result<Change> {
        self.get(&format!("/v1/changes/{id}")).await
    }

    async fn begin_edit(&self, id: ArtifactId, ttl_seconds: Option<u64>) -> Result<Edit> {
        self.post(&format!("/v1/artifacts/{id}/edits"), ttl_body(ttl_seconds))
            .await
    }

    async fn commit_edit(&self, id: EditId, upload: Upload) -> Result<CheckinResult> {
        let at = format!("/v1/edits/{id}/commit");
        self.post_file(&at, UploadFor::Edit(id), upload).await
    }

    async fn release_edit(&self, id: EditId) -> Result<()> {
        let path = format!("/v1/edits/{id}");
        self.send(Resend::Safe, |base| {
            Ok(self.request(base, Method::DELETE, &path))
        })
        .await?;
        Ok(())
    }

    async fn proposals(&self, filter: ProposalFilter) -> Result<Vec<Proposal>> {
        let mut query = Vec::new();
        if let Some(artifact) = filter.artifact {
            query.push(format!("artifact={artifact}"));
        }
        if let Some(state) = filter.state {
            let state = serde_json::to_value(state).expect("a state serializes");
            query.push(format!("state={}", state.as_str().unwrap_or_default()));
        }
        let path = format!("/v1/proposals?{}", query.join("&"));
        Ok(self.get::<ProposalList>(&path).await?.proposals)
    }

    async fn proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.get(&format!("/v1/proposals/{id}")).await
    }

    async fn proposal_content(
        &self,
        id: ProposalId,
    ) -> Result<(Proposal, Pin<Box<dyn AsyncRead + Send>>)> {
        let proposal = self.proposal(id).await?;
        let reader = self
            .download(&format!("/v1/proposals/{id}/content"))
            .await?;
        Ok((proposal, reader))
    }

    async fn preview(&self, of: PreviewOf, size: u32) -> Result<Vec<u8>> {
        let path = match of {
            PreviewOf::Version {
                artifact,
                version: Some(n),
            } => format!("/v1/artifacts/{artifact}/preview?version={n}&size={size}"),
            PreviewOf::Version {
                artifact,
                version: None,
            } => format!("/v1/artifacts/{artifact}/preview?size={size}"),
            PreviewOf::Proposal(id) => format!("/v1/proposals/{id}/preview?size={size}"),
        };
        let response = self.get_response(&path).await?;
        let bytes = response.bytes().await.map_err(|e| {
            Error::Unavailable(format!(
                "the preview could not be read from {}: {e}",
                self.server()
            ))
        })?;
        Ok(bytes.to_vec())
    }

    async fn accept_proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.post(&format!("/v1/proposals/{id}/accept"), json!({}))
            .await
    }

    async fn rebuild_proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.post(&format!("/v1/proposals/{id}/rebuild"), json!({}))
            .await
    }

    async fn reject_proposal(&self, id: ProposalId) -> Result<Proposal> {
        self.post(&format!("/v1/proposals/{id}/reject"), json!({}))
            .await
    }

    async fn break_lease(&self, id: ArtifactId, reason: &str) -> Result<Artifact> {
        self.post(
            &format!("/v1/artifacts/{id}/break"),
            json!({ "reason": reason }),
        )
        .await
    }

    async fn ask(&self, id: ArtifactId, message: Option<&str>) -> Result<(Request, bool)> {
        let body = match message {
            Some(message) => json!({ "message": message }),
            None => json!({}),
        };
        let (request, status) = self
            .json_with_status(
                Method::POST,
                &format!("/v1/artifacts/{id}/requests"),
                Some(body),
            )
            .await?;
        Ok((request, status == reqwest::StatusCode::CREATED))
    }

    async fn requests(&self, live_only: bool) -> Result<Vec<Request>> {
        let path = match live_only {
            true => "/v1/requests?state=open",
            false => "/v1/requests",
        };
        Ok(self.get::<RequestList>(path).await?.requests)
    }

    async fn reply(&self, id: RequestId, message: &str) -> Result<Request> {
        self.post(
            &format!("/v1/requests/{id}/reply"),
            json!({ "message": message }),
        )
        .await
    }

    async fn withdraw(&self, id: RequestId) -> Result<Request> {
        self.post(&format!("/v1/requests/{id}/withdraw"), json!({}))
            .await
    }

    async fn open_thread(&self, id: ArtifactId, new: NewThread) -> Result<Thread> {
        self.post(&format!("/v1/artifacts/{id}/threads"), json!(new))
            .await
    }

    async fn threads(&self, id: ArtifactId, query: ThreadQuery) -> Result<Vec<Thread>> {
        let mut params = Vec::new();
        if let Some(version) = query.version {
            params.push(format!("version={version}"));
        }
        if let Some(proposal) = query.proposal {
            params.push(format!("proposal={proposal}"));
        }
        if let Some(state) = query.state {
            let state = serde_json::to_value(state).expect("a state serializes");
            params.push(format!("state={}", state.as_str().unwrap_or_default()));
        }
        let path = format!("/v1/artifacts/{id}/threads?{}", params.join("&"));
        Ok(self.get::<ThreadList>(&path).await?.threads)
    }

    async fn comment(&self, thread: ThreadId, body: &str) -> Result<Comment> {
        self.post(
            &format!("/v1/threads/{thread}/comments"),
            json!({ "body": body }),
        )
        .await
    }

    async fn resolve_thread(&self, thread: ThreadId, resolved: bool) -> Result<Thread> {
        let verb = if resolved { "resolve" } else { "reopen" };
        self.post(&format!("/v1/threads/{thread}/{verb}"), json!({}))
            .await
    }

    async fn review(&self, id: ArtifactId, new: NewReview) -> Result<Review> {
        self.post(&format!("/v1/artifacts/{id}/reviews"), json!(new))
            .await
    }

    async fn reviews(&self, id: ArtifactId, target: ReviewTarget) -> Result<ReviewList> {
        let on = match target {
            ReviewTarget::Version(v) => format!("version={v}"),
            ReviewTarget::Proposal(p) => format!("proposal={p}"),
        };
        self.get(&format!("/v1/artifacts/{id}/reviews?{on}")).await
    }

    async fn request_review(&self, id: ArtifactId, new: NewReviewRequest) -> Result<Requested> {
        self.post(&format!("/v1/artifacts/{id}/review-requests"), json!(new))
            .await
    }

    async fn inbox(&self, query: InboxQuery) -> Result<InboxPage> {
        let mut params = Vec::new();
        for (name, value) in [("after", query.after), ("before", query.before)] {
            // No seq is past 2^63 - 1, which is all a server takes.
            if let Some(value) = value.map(|v| v.min(i64::MAX as u64)) {
                params.push(format!("{name}={value}"));
            }
        }
        if let Some(limit) = query.limit {
            params.push(format!("limit={limit}"));
        }
        if query.unread {
            params.push("unread=true".to_owned());
        }
        self.get(&format!("/v1/inbox?{}", params.join("&"))).await
    }

    async fn mark_inbox_read(&self, up_to: u64) -> Result<u64> {
        #[derive(serde::Deserialize)]
        struct Unread {
            unread: u64,
        }
        let answer: Unread = self
            .post("/v1/inbox/read", json!({ "up_to": up_to }))
            .await?;
        Ok(answer.unread)
    }

    async fn rename(&self, id: ArtifactId, to: &RepoPath) -> Result<Artifact> {
        self.post(&format!("/v1/artifacts/{id}/rename"), json!({ "path": to }))
            .await
    }

    async fn query_events(&self, query: EventQuery) -> Result<EventPage> {
        let mut path = format!("/v1/events?limit={}", query.limit);
        if let Some(after) = query.after {
            path.push_str(&format!("&after={after}"));
        }
        if let Some(before) = query.before {
            // Every seq is below 2^63, the largest number the API takes.
            let before = before.min(i64::MAX as u64);
            path.push_str(&format!("&before={before}"));
        }
        if let Some(artifact) = query.artifact {
            path.push_str(&format!("&artifact={artifact}"));
        }
        self.get(&path).await
    }
}
