//! The proposal commands: list, accept, rebuild, reject (these three are
//! `decide`). A proposal is only read or decided here; it is made by a late
//! check-in (`lease`), never here.

use std::collections::HashMap;

use leasedesk::model::*;
use leasedesk::{Backend, Error};

use super::{lines_of, Output};

/// `proposals`: open ones, or every one with `all`.
pub(super) async fn list(store: &dyn Backend, all: bool, out: &Output) -> Result<(), Error> {
    let filter = ProposalFilter {
        state: (!all).then_some(ProposalState::Open),
        ..ProposalFilter::default()
    };
    let proposals = store.proposals(filter).await?;
    let paths = artifact_paths(store).await?;
    out.print(&proposals, || {
        if proposals.is_empty() {
            return "no proposals".into();
        }
        lines_of(&proposals, |p| {
            format!(
                "{}  {}  {:?}  by {}  against v{} (made from v{})",
                p.id,
                paths.get(&p.artifact_id).map_or("?", |p| p.as_str()),
                p.state,
                p.author,
                p.base_version,
                p.provenance.version
            )
        })
    });
    Ok(())
}

/// What `accept`, `rebuild` and `reject` do to a proposal.
#[derive(Clone, Copy)]
pub(super) enum Decision {
    /// `accept`: an open proposal committed as the new head.
    Accept,
    /// `rebuild`: a stale proposal made again against the current head.
    Rebuild,
    /// `reject`: a proposal closed without committing it.
    Reject,
}

/// `accept`, `rebuild` or `reject`: proposal `id` decided.
pub(super) async fn decide(
    store: &dyn Backend,
    id: ProposalId,
    decision: Decision,
    out: &Output,
) -> Result<(), Error> {
    let proposal = match decision {
        Decision::Accept => store.accept_proposal(id).await?,
        Decision::Rebuild => store.rebuild_proposal(id).await?,
        Decision::Reject => store.reject_proposal(id).await?,
    };
    out.print(&proposal, || match decision {
        Decision::Accept => format!("accepted proposal {}", proposal.id),
        Decision::Rebuild => format!(
            "rebuilt as proposal {} against version {}",
            proposal.id, proposal.base_version
        ),
        Decision::Reject => format!("rejected proposal {}", proposal.id),
    });
    Ok(())
}

/// Each file's path by its id, to name a proposal's file.
async fn artifact_paths(store: &dyn Backend) -> Result<HashMap<ArtifactId, RepoPath>, Error> {
    Ok(store
        .artifacts()
        .await?
        .into_iter()
        .map(|a| (a.id, a.path))
        .collect())
}
