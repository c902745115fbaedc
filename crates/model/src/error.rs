//! The one error type: each variant is something a caller acts on differently.

use crate::model::{BusyFile, Digest, Head, Invalid, Lease};

mod code;

pub use code::{Code, UnknownCode};

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<Invalid> for Error {
    fn from(invalid: Invalid) -> Self {
        Error::Invalid(invalid.0)
    }
}

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    /// Someone else holds the artifact's lease (or held it a moment ago: `lease`
    /// is `None` when it ended in between, and the caller may retry at once).
    #[error("{}", busy_message(.path, .lease.as_deref()))]
    ArtifactBusy {
        path: String,
        lease: Option<Box<Lease>>,
    },

    /// Files of a multi-file check-out that others hold: none was taken.
    #[error("{}", some_busy_message(.0))]
    SomeBusy(Vec<BusyFile>),

    #[error("{0}")]
    Forbidden(String),

    #[error("{0}")]
    CheckoutClosed(String),

    /// Nobody holds the file under a check-out (no live lease, or an
    /// agent's edit): there is no holder to ask.
    #[error("{0}")]
    NotHeld(String),

    /// A check-out of a change has no file staged for it.
    #[error("{0}")]
    NotStaged(String),

    /// The head moved since the change's base.
    #[error("the file changed since your edit began: version {} by {} is the head now", .head.version, .head.author)]
    Stale { head: Box<Head> },

    /// A proposal's test digest is no longer the head's.
    #[error("the file changed since this proposal was made (version {} by {} is the head now): rebuild it at the head", .head.version, .head.author)]
    ProposalStale { head: Box<Head> },

    #[error("{0}")]
    Exists(String),

    #[error("{0}")]
    NotFound(String),

    /// An invite code that is unknown, used or lapsed: one answer for all three.
    #[error("{0}")]
    InviteInvalid(String),

    /// Too many failed tries from one address: wait a minute.
    #[error("{0}")]
    TooMany(String),

    /// The file has no image Leasedesk can read; the message says what it seems to be.
    #[error("{0}")]
    NoPreview(String),

    #[error("{0}")]
    Invalid(String),

    /// A request that is not well formed (JSON, query, id, header).
    #[error("{0}")]
    BadRequest(String),

    #[error("the upload's digest is {actual}, not the declared {expected}: nothing was stored")]
    DigestMismatch { expected: Digest, actual: Digest },

    #[error("{0}")]
    Unauthorized(String),

    /// An agent's command ran past its deadline; its edit was released.
    #[error("{0}")]
    DeadlineExceeded(String),

    #[error("the upload is larger than the limit of {limit} bytes: nothing was stored")]
    TooLarge { limit: u64 },

    /// An append to a resumable upload at another offset than the server's.
    #[error("the upload is at byte {offset}: send from there")]
    WrongOffset { offset: u64 },

    /// A resumable upload's chunk whose bytes are not its id: what came of
    /// it was dropped.
    #[error("chunk {index}'s bytes are not its id: send them again from byte {offset}")]
    ChunkMismatch { index: u64, offset: u64 },

    /// A resumable upload used before every byte came.
    #[error("the upload has {offset} of its {length} bytes: send the rest first")]
    UploadIncomplete { offset: u64, length: u64 },

    /// A `Range` that starts past the end of the bytes.
    #[error("the range asked for starts past the end of the {size} bytes")]
    RangeNotSatisfiable { size: u64 },

    /// The remote server cannot be reached (retrying later may work).
    #[error("{0}")]
    Unavailable(String),

    /// The server's certificate is not the one the client pinned (client-side only).
    #[error("the server's certificate changed: expected fingerprint {expected}, got {actual}")]
    CertificateChanged { expected: String, actual: String },

    /// The server's certificate is not trusted: unknown CA, wrong name, expired
    /// (client-side only).
    #[error("{0}")]
    CertificateUntrusted(String),

    #[error("the disk is full: nothing was stored ({0})")]
    StorageFull(String),

    /// A failure of the machinery (disk, database); details go to the log, not the caller.
    #[error("internal error: {0}")]
    Internal(String),
}

fn busy_message(path: &str, lease: Option<&Lease>) -> String {
    match lease {
        None => format!("{path} was busy a moment ago but is free now: try again"),
        Some(lease) => {
            let held = match lease.kind {
                crate::model::LeaseKind::Checkout => "checked out",
                crate::model::LeaseKind::Edit => "being edited",
            };
            let mut message = format!(
                "{path} is {held} by {} until {}",
                lease.participant,
                lease.expires_at.format("%Y-%m-%d %H:%M UTC")
            );
            if let Some(note) = &lease.note {
                message.push_str(&format!(" (note: {note})"));
            }
            message
        }
    }
}

fn some_busy_message(busy: &[BusyFile]) -> String {
    let each: Vec<String> = busy
        .iter()
        .map(|b| busy_message(b.path.as_str(), Some(&b.lease)))
        .collect();
    format!("nothing was checked out: {}", each.join("; "))
}

impl Error {
    /// The error's code: `docs/API.md`'s, or the client's own for a
    /// certificate it refuses.
    pub fn code(&self) -> Code {
        match self {
            Error::ArtifactBusy { .. } | Error::SomeBusy(_) => Code::ArtifactBusy,
            Error::Forbidden(_) => Code::Forbidden,
            Error::CheckoutClosed(_) => Code::CheckoutClosed,
            Error::NotHeld(_) => Code::NotHeld,
            Error::NotStaged(_) => Code::NotStaged,
            Error::Stale { .. } => Code::Stale,
            Error::ProposalStale { .. } => Code::ProposalStale,
            Error::Exists(_) => Code::Exists,
            Error::NotFound(_) => Code::NotFound,
            Error::InviteInvalid(_) => Code::InviteInvalid,
            Error::TooMany(_) => Code::TooMany,
            Error::NoPreview(_) => Code::NoPreview,
            Error::Invalid(_) => Code::Invalid,
            Error::BadRequest(_) => Code::BadRequest,
            Error::DigestMismatch { .. } => Code::DigestMismatch,
            Error::Unauthorized(_) => Code::Unauthorized,
            Error::DeadlineExceeded(_) => Code::DeadlineExceeded,
            Error::TooLarge { .. } => Code::TooLarge,
            Error::WrongOffset { .. } => Code::WrongOffset,
            Error::ChunkMismatch { .. } => Code::ChunkMismatch,
            Error::UploadIncomplete { .. } => Code::UploadIncomplete,
            Error::RangeNotSatisfiable { .. } => Code::RangeNotSatisfiable,
            Error::StorageFull(_) => Code::StorageFull,
            Error::CertificateChanged { .. } => Code::CertificateChanged,
            Error::CertificateUntrusted(_) => Code::CertificateUntrusted,
            Error::Unavailable(_) => Code::Unavailable,
            Error::Internal(_) => Code::Internal,
        }
    }

    /// The HTTP status this error is answered with (`docs/API.md`'s table).
    pub fn status(&self) -> u16 {
        match self {
            Self::ArtifactBusy { .. } | Self::SomeBusy(_) | Self::CheckoutClosed(_) => 409,
            Self::Stale { .. } | Self::ProposalStale { .. } | Self::NotStaged(_) => 409,
            Self::Exists(_)
            | Self::NotHeld(_)
            | Self::WrongOffset { .. }
            | Self::UploadIncomplete { .. } => 409,
            Self::ChunkMismatch { .. } => 422,
            Self::RangeNotSatisfiable { .. } => 416,
            Self::Forbidden(_) => 403,
            Self::NotFound(_) | Self::NoPreview(_) | Self::InviteInvalid(_) => 404,
            Self::TooMany(_) => 429,
            Self::Invalid(_) => 422,
            Self::BadRequest(_) | Self::DigestMismatch { .. } => 400,
            Self::Unauthorized(_) => 401,
            Self::TooLarge { .. } => 413,
            Self::DeadlineExceeded(_) => 504,
            Self::StorageFull(_) => 507,
            Self::Unavailable(_) => 503,
            Self::Internal(_) => 500,
            // A client's own refusals of a server: never answered by one.
            Self::CertificateChanged { .. } | Self::CertificateUntrusted(_) => 502,
        }
    }

    /// The JSON error body of `docs/API.md`: `error`, `message`, and the fields
    /// a caller acts on (`lease` for a busy file, `head` for a stale change).
    pub fn to_body(&self) -> serde_json::Value {
        let mut body = serde_json::json!({ "error": self.code(), "message": self.to_string() });
        match self {
            Error::ArtifactBusy { path, lease } => {
                body["path"] = serde_json::json!(path);
                body["lease"] = serde_json::json!(lease);
            }
            Error::SomeBusy(busy) => {
                // `path` and `lease` as for one busy file, of the first.
                body["path"] = serde_json::json!(busy.first().map(|b| &b.path));
                body["lease"] = serde_json::json!(busy.first().map(|b| &b.lease));
                body["busy"] = serde_json::json!(busy);
            }
            Error::Stale { head } | Error::ProposalStale { head } => {
                body["head"] = serde_json::json!(head);
            }
            Error::DigestMismatch { expected, actual } => {
                body["expected"] = serde_json::json!(expected);
                body["actual"] = serde_json::json!(actual);
            }
            Error::TooLarge { limit } => body["limit"] = serde_json::json!(limit),
            Error::WrongOffset { offset } => body["offset"] = serde_json::json!(offset),
            Error::ChunkMismatch { index, offset } => {
                body["index"] = serde_json::json!(index);
                body["offset"] = serde_json::json!(offset);
            }
            Error::UploadIncomplete { offset, length } => {
                body["offset"] = serde_json::json!(offset);
                body["length"] = serde_json::json!(length);
            }
            Error::RangeNotSatisfiable { size } => body["size"] = serde_json::json!(size),
            Error::CertificateChanged { expected, actual } => {
                body["expected"] = serde_json::json!(expected);
                body["actual"] = serde_json::json!(actual);
            }
            _ => {}
        }
        body
    }
}

/// An I/O error is ours (`Internal`), unless it carries an `Error`: a reader
/// of a request body says so when the client's body failed, not our disk.
impl From<std::io::Error> for Error {
    fn from(e: std::io::Error) -> Self {
        if let Some(carried) = e.get_ref().and_then(|inner| inner.downcast_ref::<Error>()) {
            carried.clone()
        } else if runs_out_of_descriptors(&e) {
            Error::Unavailable("the server has too many files open: try again shortly".into())
        } else if e.kind() == std::io::ErrorKind::StorageFull {
            Error::StorageFull(e.to_string())
        } else {
            Error::Internal(e.to_string())
        }
    }
}

/// Too many open files (this process's or the system's): a passing shortage,
/// not a fault of ours or the caller's.
fn runs_out_of_descriptors(e: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(e.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
    }
    #[cfg(not(unix))]
    {
        let _ = e;
        false
    }
}

#[cfg(feature = "sqlite")]
impl From<rusqlite::Error> for Error {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ffi::ErrorCode;
        match e.sqlite_error_code() {
            Some(ErrorCode::DiskFull) => Error::StorageFull(e.to_string()),
            _ => Error::Internal(format!("store: {e}")),
        }
    }
}

#[cfg(feature = "postgres")]
/// A database connection lost or unreachable is passing (`Unavailable`);
/// anything else the database says is ours.
impl From<tokio_postgres::Error> for Error {
    fn from(e: tokio_postgres::Error) -> Self {
        if e.is_closed() {
            return Error::Unavailable(format!("the database connection was lost: {e}"));
        }
        match e.as_db_error() {
            // Connection exceptions, and the database shutting down or starting.
            Some(db) if ["08", "57"].contains(&&db.code().code()[..2]) => Error::Unavailable(
                format!("the database connection was lost: {}", db.message()),
            ),
            Some(db) => {
                Error::Internal(format!("database: {}: {}", db.code().code(), db.message()))
            }
            None => Error::Unavailable(format!("the database cannot be reached: {e}")),
        }
    }
}
