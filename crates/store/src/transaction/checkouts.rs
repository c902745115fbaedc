//! Check-outs and edits, the proposals and changes their check-ins make,
//! and requests to a holder.

use super::{fetch_all, fetch_first, Sql};
use crate::error::{Error, Result};
use crate::model::*;
use crate::rows;
use crate::{resolved, ChangeRow, CheckoutRow, DecisionRow, EditRow, RequestRow, StoredResult};

/// Check-outs and edits, the proposals and changes their check-ins make,
/// and requests to a holder. Part of every [`Tx`](super::Tx).
pub trait CheckoutRows: Sql {
    fn checkout(&self, id: CheckoutId) -> Result<Option<CheckoutRow>> {
        let found = fetch_first(self, rows::select_checkout(self.p(), id), |r| {
            rows::checkout(r)
        })?;
        found.map(|row| resolved(self, row)).transpose()
    }

    /// A participant's check-outs, newest first; only open ones if `open_only`.
    fn checkouts_of(&self, actor: &Participant, open_only: bool) -> Result<Vec<Checkout>> {
        let found = rows::select_checkouts_of(self.p(), actor, open_only);
        fetch_all(self, found, |r| rows::checkout(r))?
            .into_iter()
            .map(|row| Ok(resolved(self, row)?.checkout))
            .collect()
    }

    /// A stored result as the API shows it (a proposal in its current state).
    fn resolve_result(&self, stored: StoredResult) -> Result<CheckinResult> {
        Ok(match stored {
            StoredResult::Committed { version, digest } => {
                CheckinResult::Committed { version, digest }
            }
            StoredResult::Unchanged { version, digest } => {
                CheckinResult::Unchanged { version, digest }
            }
            StoredResult::Proposal { proposal_id } => CheckinResult::Proposal {
                proposal: self
                    .proposal(proposal_id)?
                    .ok_or_else(|| Error::Internal(format!("proposal {proposal_id} is missing")))?,
            },
        })
    }

    /// Writes a whole check-out record, new or changed.
    fn put_checkout(
        &self,
        row: &CheckoutRow,
        result: Option<&StoredResult>,
        closed_at: Option<Timestamp>,
    ) -> Result<()> {
        self.queue(rows::put_checkout(self.p(), row, result, closed_at)?)
    }

    fn edit(&self, id: EditId) -> Result<Option<EditRow>> {
        fetch_first(self, rows::select_edit(self.p(), id), |r| rows::edit(r))
    }

    fn put_edit(&self, row: &EditRow, now: Timestamp) -> Result<()> {
        self.queue(rows::put_edit(self.p(), row, now)?)
    }

    fn proposal(&self, id: ProposalId) -> Result<Option<Proposal>> {
        fetch_first(self, rows::select_proposal(self.p(), id), |r| {
            rows::proposal(r)
        })
    }

    fn proposals(&self, filter: &ProposalFilter) -> Result<Vec<Proposal>> {
        fetch_all(self, rows::select_proposals(self.p(), filter), |r| {
            rows::proposal(r)
        })
    }

    /// The proposal that replaced a superseded one.
    fn successor(&self, id: ProposalId) -> Result<Option<ProposalId>> {
        let found = fetch_first(self, rows::select_successor(self.p(), id), |r| {
            rows::parsed_opt(r, 0)
        })?;
        Ok(found.flatten())
    }

    fn insert_proposal(&self, p: &Proposal) -> Result<()> {
        self.require_durable();
        self.queue(rows::insert_proposal(self.p(), p)?)
    }

    /// Moves a proposal out of `open`, if it is open still.
    fn decide_proposal(&self, id: ProposalId, decision: &DecisionRow) -> Result<()> {
        self.queue(rows::decide_proposal(self.p(), id, decision))
    }

    fn insert_change(&self, change: &ChangeRow) -> Result<()> {
        self.queue(rows::insert_change(self.p(), change))
    }

    fn change(&self, id: ChangeId) -> Result<Option<ChangeRow>> {
        fetch_first(self, rows::select_change(self.p(), id), |r| rows::change(r))
    }

    /// The proposals kept for one change, in every state.
    fn change_proposals(&self, id: ChangeId) -> Result<Vec<Proposal>> {
        let found = rows::select_change_proposals(self.p(), id);
        fetch_all(self, found, |r| rows::proposal(r))
    }

    fn request(&self, id: RequestId) -> Result<Option<RequestRow>> {
        fetch_first(self, rows::select_request(self.p(), id), |r| {
            rows::request(r)
        })
    }

    /// The requests on one check-out, oldest first, in every state.
    fn checkout_requests(&self, checkout: CheckoutId) -> Result<Vec<RequestRow>> {
        let found = rows::select_checkout_requests(self.p(), checkout);
        fetch_all(self, found, |r| rows::request(r))
    }

    /// The requests to or from `participant`, newest first; only those that
    /// still stand if `live_only`.
    fn requests_of(&self, participant: &Participant, live_only: bool) -> Result<Vec<Request>> {
        let found = rows::select_requests_of(self.p(), participant, live_only);
        fetch_all(self, found, |r| rows::request(r).map(|row| row.request))
    }

    /// Writes a request, new or changed.
    fn put_request(&self, row: &RequestRow) -> Result<()> {
        self.queue(rows::put_request(self.p(), row))
    }
}
