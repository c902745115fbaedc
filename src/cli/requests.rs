//! The request commands: ask the holder of a file to release it, list the
//! requests to and from you, reply, withdraw. A request releases nothing:
//! the holder checks in or cancels with the lease commands.

use leasedesk::model::*;
use leasedesk::{Backend, Error};

use super::{lines_of, local_time, Output};

/// `ask`: a request to whoever holds `path` under a check-out.
pub(super) async fn ask(
    store: &dyn Backend,
    path: &RepoPath,
    message: Option<&str>,
    out: &Output,
) -> Result<(), Error> {
    let artifact = store.artifact_by_path(path).await?;
    let (request, is_new) = store.ask(artifact.id, message).await?;
    out.print(&request, || {
        let asked = match is_new {
            true => "asked",
            false => "asked again",
        };
        format!(
            "{asked} {} to release {} (request {})",
            request.to, request.path, request.id
        )
    });
    Ok(())
}

/// `requests`: those that still stand, or every one with `all`.
pub(super) async fn list(store: &dyn Backend, all: bool, out: &Output) -> Result<(), Error> {
    let me = store.me().await?;
    let requests = store.requests(!all).await?;
    out.print(&requests, || {
        if requests.is_empty() {
            return "no requests".into();
        }
        lines_of(&requests, |r| line(r, &me))
    });
    Ok(())
}

/// One request as a line: who asks whom for what, and where it stands.
fn line(r: &Request, me: &Participant) -> String {
    let who = match r.to == *me {
        true => format!("{} asks you for {}", r.from, r.path),
        false => format!("you ask {} for {}", r.to, r.path),
    };
    let mut line = format!("{}  {}  {who}", r.id, local_time(r.created_at));
    if let Some(message) = &r.message {
        line += &format!(": \"{message}\"");
    }
    match (&r.state, &r.reply) {
        (RequestState::Replied, Some(reply)) => line += &format!("  (replied: \"{reply}\")"),
        (RequestState::Withdrawn, _) => line += "  (withdrawn)",
        (RequestState::Ended, _) => line += "  (ended)",
        _ => {}
    }
    line
}

/// `reply`: the holder's answer to a request.
pub(super) async fn reply(
    store: &dyn Backend,
    id: RequestId,
    message: &str,
    out: &Output,
) -> Result<(), Error> {
    let request = store.reply(id, message).await?;
    out.print(&request, || {
        format!("replied to {} about {}", request.from, request.path)
    });
    Ok(())
}

/// `withdraw`: a request of yours taken back.
pub(super) async fn withdraw(
    store: &dyn Backend,
    id: RequestId,
    out: &Output,
) -> Result<(), Error> {
    let request = store.withdraw(id).await?;
    out.print(&request, || {
        format!("withdrew your request for {}", request.path)
    });
    Ok(())
}
