//! Git LFS objects for the server's `/lfs/F/objects` routes (`docs/API.md`,
//! "Git LFS"): which of a batch's objects a folder keeps, a credential of
//! its own for each action (one object, one operation, an hour at most),
//! and the bytes streamed in (hashed with SHA-256 as Git names them, and
//! BLAKE3 as Leasedesk does, so the same bytes are one blob) or out.
//! Nothing is kept unless the bytes match their oid and size.

use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use ring::hmac;
use tokio::io::{AsyncRead, ReadBuf};

use super::uploads::Naming;
use super::{off_thread, Bundled};
use crate::backend::Upload;
use crate::error::{Error, Result};
use crate::model::*;
use crate::rules;
use crate::store::Durability;

/// The longest an action's credential is good for.
pub const LFS_ACTION_SECONDS: u64 = 3600;

/// How an action's credential begins: never a Leasedesk token.
const CREDENTIAL_PREFIX: &str = "ldlfs.";

/// The name of the secret credentials are signed with.
const SECRET_NAME: &str = "lfs_actions";

/// What an action does to one object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LfsAction {
    Upload,
    Verify,
    Download,
}

impl LfsAction {
    pub fn as_str(self) -> &'static str {
        match self {
            LfsAction::Upload => "upload",
            LfsAction::Verify => "verify",
            LfsAction::Download => "download",
        }
    }

    /// Whether it needs `write` (else `read`).
    pub fn is_upload(self) -> bool {
        self != LfsAction::Download
    }
}

/// Whether `oid` is Git's name for bytes: 64 lower-case hex.
pub fn is_oid(oid: &str) -> bool {
    oid.len() == 64 && oid.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// What a credential is good for.
struct Grant {
    action: LfsAction,
    folder: String,
    oid: String,
    size: u64,
    expires: i64,
    participant: Participant,
}

impl Grant {
    fn text(&self) -> String {
        let Grant {
            action,
            folder,
            oid,
            size,
            expires,
            participant,
        } = self;
        format!(
            "{}\n{folder}\n{oid}\n{size}\n{expires}\n{participant}",
            action.as_str()
        )
    }

    fn parse(text: &str) -> Option<Grant> {
        let mut fields = text.splitn(6, '\n');
        let action = match fields.next()? {
            "upload" => LfsAction::Upload,
            "verify" => LfsAction::Verify,
            "download" => LfsAction::Download,
            _ => return None,
        };
        Some(Grant {
            action,
            folder: fields.next()?.to_owned(),
            oid: fields.next()?.to_owned(),
            size: fields.next()?.parse().ok()?,
            expires: fields.next()?.parse().ok()?,
            participant: fields.next()?.parse().ok()?,
        })
    }
}

/// An upload refused for `why`, its bytes dropped.
fn not_kept(why: String) -> Error {
    Error::Invalid(format!("{why}: nothing was kept"))
}

/// Reads through, hashing with SHA-256 and counting what passes.
struct Sha256Reading<R> {
    inner: R,
    hashed: Arc<Mutex<(ring::digest::Context, u64)>>,
}

impl<R: AsyncRead + Unpin> AsyncRead for Sha256Reading<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let polled = Pin::new(&mut self.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = &polled {
            let read = &buf.filled()[before..];
            let mut hashed = self.hashed.lock().unwrap_or_else(|p| p.into_inner());
            hashed.0.update(read);
            hashed.1 += read.len() as u64;
        }
        polled
    }
}

impl Bundled {
    /// The key credentials are signed with: the store's secret, made by
    /// the first server to ask, so every server of a studio takes another's.
    async fn lfs_key(&self) -> Result<&hmac::Key> {
        let shared = self.shared.clone();
        self.shared
            .lfs_key
            .get_or_try_init(|| async move {
                off_thread(move || {
                    let mut made = [0u8; 32];
                    getrandom::fill(&mut made)
                        .map_err(|e| Error::Internal(format!("no randomness: {e}")))?;
                    let kept = shared
                        .store
                        .write(Durability::Normal, |tx| tx.secret(SECRET_NAME, &hex(&made)))?;
                    let secret = unhex(&kept)
                        .ok_or_else(|| Error::Internal("the LFS secret is not hex".into()))?;
                    Ok(hmac::Key::new(hmac::HMAC_SHA256, &secret))
                })
                .await
            })
            .await
    }

    /// Refuses the caller moving objects of `folder` one way or the other
    /// (see `rules::lfs_object_access`).
    pub async fn lfs_access(&self, folder: &str, upload: bool) -> Result<()> {
        let folder = folder.to_owned();
        self.read(move |tx, me, _| rules::lfs_object_access(tx, me, &folder, upload))
            .await
    }

    /// The largest object the server takes (`serve --max-upload`).
    pub fn lfs_max_size(&self) -> u64 {
        self.shared.options.max_upload
    }

    /// The objects of `oids` that `folder` keeps, in their order.
    pub async fn lfs_objects(
        &self,
        folder: &str,
        oids: Vec<String>,
    ) -> Result<Vec<Option<LfsObject>>> {
        let folder = folder.to_owned();
        self.read(move |tx, _, _| oids.iter().map(|oid| tx.lfs_object(&folder, oid)).collect())
            .await
    }

    /// A credential for the caller to do `action` to object `oid` of
    /// `size` bytes in `folder`, good for [`LFS_ACTION_SECONDS`].
    pub async fn lfs_credential(
        &self,
        action: LfsAction,
        folder: &str,
        oid: &str,
        size: u64,
    ) -> Result<String> {
        let expires = self.clock().now().timestamp() + LFS_ACTION_SECONDS as i64;
        let grant = Grant {
            action,
            folder: folder.to_owned(),
            oid: oid.to_owned(),
            size,
            expires,
            participant: self.participant.clone(),
        };
        let text = grant.text();
        let tag = hmac::sign(self.lfs_key().await?, text.as_bytes());
        Ok(format!(
            "{CREDENTIAL_PREFIX}{}.{}",
            hex(text.as_bytes()),
            hex(tag.as_ref())
        ))
    }

    /// Whether `text` is shaped as an action's credential (not a token).
    pub fn is_lfs_credential(text: &str) -> bool {
        text.starts_with(CREDENTIAL_PREFIX)
    }

    /// The store acting as whom `credential` was given to, if it is good for
    /// `action` on `oid` in `folder` now, and the size it was given for.
    /// Forged or lapsed: `Unauthorized`; for another object or operation:
    /// `Forbidden`. The caller's access is decided again, as it is now.
    pub async fn lfs_redeem(
        &self,
        credential: &str,
        action: LfsAction,
        folder: &str,
        oid: &str,
    ) -> Result<(Bundled, u64)> {
        let forged = || Error::Unauthorized("not a credential this server gave".into());
        let (text, tag) = credential
            .strip_prefix(CREDENTIAL_PREFIX)
            .and_then(|rest| rest.split_once('.'))
            .ok_or_else(forged)?;
        let (text, tag) = (
            unhex(text).ok_or_else(forged)?,
            unhex(tag).ok_or_else(forged)?,
        );
        hmac::verify(self.lfs_key().await?, &text, &tag).map_err(|_| forged())?;
        let grant = String::from_utf8(text)
            .ok()
            .and_then(|t| Grant::parse(&t))
            .ok_or_else(forged)?;
        if grant.action != action || grant.folder != folder || grant.oid != oid {
            return Err(Error::Forbidden(format!(
                "this credential is for {} of object {} in {}/, not {} of {oid} in {folder}/: \
                 ask the batch API for this one",
                grant.action.as_str(),
                grant.oid,
                grant.folder,
                action.as_str()
            )));
        }
        if grant.expires <= self.clock().now().timestamp() {
            return Err(Error::Unauthorized(
                "this action's credential lapsed: ask the batch API again".into(),
            ));
        }
        let caller = self.acting_as(grant.participant);
        caller.lfs_access(folder, action.is_upload()).await?;
        Ok((caller, grant.size))
    }

    /// Streams in object `oid` of `size` bytes for `folder`: kept only if
    /// the bytes are exactly `size` long and their SHA-256 is `oid` (else
    /// `Invalid`, and nothing is kept).
    pub async fn lfs_upload(
        &self,
        folder: &str,
        oid: &str,
        size: u64,
        reader: impl AsyncRead + Send + Unpin + 'static,
    ) -> Result<LfsObject> {
        self.lfs_access(folder, true).await?;
        let limit = self.lfs_max_size();
        if size > limit {
            return Err(Error::TooLarge { limit });
        }
        let hashed = Arc::new(Mutex::new((
            ring::digest::Context::new(&ring::digest::SHA256),
            0u64,
        )));
        let reading = Sha256Reading {
            inner: reader,
            hashed: hashed.clone(),
        };
        let options = &self.shared.options;
        let staged = self
            .shared
            .blobs
            .stage(Upload::stream(reading), size, &options.failpoints)
            .await
            .map_err(|e| match e {
                Error::TooLarge { .. } => {
                    not_kept(format!("object {oid} has more than its {size} bytes"))
                }
                e => e,
            })?;
        let (context, read) = {
            let hashed = hashed.lock().unwrap_or_else(|p| p.into_inner());
            (hashed.0.clone(), hashed.1)
        };
        if read != size || staged.size() != size {
            return Err(not_kept(format!(
                "object {oid} is {size} bytes, but {read} came"
            )));
        }
        let actual = hex(context.finish().as_ref());
        if actual != oid {
            return Err(not_kept(format!(
                "the bytes' SHA-256 is {actual}, not {oid}"
            )));
        }
        let object = LfsObject {
            oid: oid.to_owned(),
            size,
            digest: staged.digest().clone(),
        };
        let (_, pending) = self.persist(staged).await?;
        let folder = folder.to_owned();
        self.write_naming(
            Durability::Full,
            Some(Naming::new(pending, |_: &LfsObject| true)),
            move |tx, me, now, _| {
                rules::lfs_object_access(tx, me, &folder, true)?;
                tx.put_lfs_object(&folder, &object, now)?;
                Ok(object.clone())
            },
        )
        .await
    }

    /// Object `oid` of `folder` and its bytes, as a stream.
    pub async fn lfs_download(
        &self,
        folder: &str,
        oid: &str,
    ) -> Result<(LfsObject, Pin<Box<dyn AsyncRead + Send>>)> {
        self.lfs_access(folder, false).await?;
        let object = self
            .lfs_objects(folder, vec![oid.to_owned()])
            .await?
            .pop()
            .flatten()
            .ok_or_else(|| Error::NotFound(format!("no object {oid} in {folder}/")))?;
        let reader = self.shared.blobs.open_read(&object.digest).await?;
        Ok((object, reader))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn oids_are_64_lower_case_hex() {
        assert!(is_oid(&"a1".repeat(32)));
        assert!(!is_oid(&"A1".repeat(32)));
        assert!(!is_oid(&"a1".repeat(31)));
        assert!(!is_oid(&format!("{}g", "a".repeat(63))));
        assert!(!is_oid("../../etc/passwd"));
    }

    #[test]
    fn a_grant_reads_back_as_it_was_written() {
        let grant = Grant {
            action: LfsAction::Verify,
            folder: "art".into(),
            oid: "0".repeat(64),
            size: 7,
            expires: 1_800_000_000,
            participant: "user:alice".parse().unwrap(),
        };
        let back = Grant::parse(&grant.text()).unwrap();
        assert_eq!(back.text(), grant.text());
        assert!(Grant::parse("delete\nart\n0\n7\n1\nuser:alice").is_none());
    }
}
