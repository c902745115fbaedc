//! The proposal commands: list, accept, rebuild, reject. A proposal is only
//! read or decided here; it is made by a late check-in (`lease`), never here.

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

/// `accept`: an open proposal committed as the new head.
pub(super) async fn accept(store: &dyn Backend, id: ProposalId, out: &Output) -> Result<(), Error> {
    let proposal = store.accept_proposal(id).await?;
    out.print(&proposal, || format!("accepted proposal {}", proposal.id));
    Ok(())
}

/// `rebuild`: a stale proposal made again against the current head.
pub(super) async fn rebuild(
    store: &dyn Backend,
    id: ProposalId,
    out: &Output,
) -> Result<(), Error> {
    let proposal = store.rebuild_proposal(id).await?;
    out.print(&proposal, || {
        format!(
            "rebuilt as proposal {} against version {}",
            proposal.id, proposal.base_version
        )
    });
    Ok(())
}

/// `reject`: a proposal closed without committing it.
pub(super) async fn reject(store: &dyn Backend, id: ProposalId, out: &Output) -> Result<(), Error> {
    let proposal = store.reject_proposal(id).await?;
    out.print(&proposal, || format!("rejected proposal {}", proposal.id));
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
