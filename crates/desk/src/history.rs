//! A file's history as the window shows it, newest first: its versions,
//! its check-outs and how each ended, its proposals and what became of them,
//! its renames. Read from the artifact's events, paged back by sequence
//! number.
//!
//! Pages are pages of events, not of entries: each entry stands at the event
//! that began it (a check-out at its `checkout.opened`), so it appears on
//! exactly one page. Events on a page that belong to an entry on an older
//! page (the end of a check-out begun earlier) are left to that page, which
//! reads on past its own newest event until each check-out begun on it has
//! ended (or the ledger ends). So a check-out whose start and end fall on
//! different pages still reads right, and no entry is shown twice.

use std::collections::HashMap;

use serde::Serialize;

use crate::backend::Backend;
use crate::error::Result;
use crate::model::*;

/// One page of a history, newest first.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct HistoryPage {
    pub entries: Vec<HistoryEntry>,
    /// Ask with `before` = this for the next (older) page; `None` at the start.
    #[ts(type = "number | null")]
    pub next_before: Option<u64>,
}

/// One thing that happened to a file. `seq` is the event it stands at.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum HistoryEntry {
    Version {
        #[ts(type = "number")]
        seq: u64,
        #[serde(flatten)]
        head: Head,
    },
    Checkout(CheckoutEntry),
    Proposal {
        #[ts(type = "number")]
        seq: u64,
        /// With its state now (open, accepted, rejected, superseded).
        #[serde(flatten)]
        proposal: Proposal,
    },
    Renamed {
        #[ts(type = "number")]
        seq: u64,
        at: Timestamp,
        by: Option<Participant>,
        from: String,
        to: String,
    },
}

impl HistoryEntry {
    pub fn seq(&self) -> u64 {
        match self {
            HistoryEntry::Version { seq, .. }
            | HistoryEntry::Proposal { seq, .. }
            | HistoryEntry::Renamed { seq, .. } => *seq,
            HistoryEntry::Checkout(entry) => entry.seq,
        }
    }
}

/// A check-out from its start to how it ended.
#[derive(Clone, Debug, PartialEq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct CheckoutEntry {
    #[ts(type = "number")]
    pub seq: u64,
    pub id: CheckoutId,
    pub who: Participant,
    /// The version checked out.
    #[ts(type = "number")]
    pub version: u64,
    pub note: Option<String>,
    pub from: Timestamp,
    /// When it ended (`None` while open).
    pub to: Option<Timestamp>,
    pub ended: CheckoutEnd,
    /// The lease lapsed or was broken before the check-out was closed (its
    /// check-in then became a proposal if someone else took the file).
    pub lease_lost: Option<CheckoutEnd>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(tag = "outcome", rename_all = "snake_case")]
#[derive(ts_rs::TS)]
#[ts(export)]
pub enum CheckoutEnd {
    Open,
    /// Checked in as `version`; `unchanged` when the bytes were already the head.
    CheckedIn {
        #[ts(type = "number")]
        version: u64,
        unchanged: bool,
    },
    /// Checked in late: kept as this proposal against a newer head.
    Proposed {
        proposal: ProposalId,
    },
    Cancelled,
    Lapsed,
    Broken {
        by: Participant,
        reason: String,
    },
}

impl CheckoutEntry {
    fn closed(&self) -> bool {
        !matches!(
            self.ended,
            CheckoutEnd::Open | CheckoutEnd::Lapsed | CheckoutEnd::Broken { .. }
        )
    }

    /// Follows one of the check-out's later events.
    fn follow(&mut self, event: &Event) {
        match event.kind.as_str() {
            "checkout.closed" => {
                let result = &event.data["result"];
                let version = result["version"].as_u64().unwrap_or_default();
                self.ended = match result["outcome"].as_str() {
                    Some("committed") => CheckoutEnd::CheckedIn {
                        version,
                        unchanged: false,
                    },
                    Some("unchanged") => CheckoutEnd::CheckedIn {
                        version,
                        unchanged: true,
                    },
                    Some("proposal") => match id_in(&event.data["result"], "proposal_id") {
                        Some(proposal) => CheckoutEnd::Proposed { proposal },
                        None => CheckoutEnd::Cancelled,
                    },
                    _ => CheckoutEnd::Cancelled,
                };
                self.to = Some(event.at);
            }
            "lease.expired" | "lease.broken" if !self.closed() => {
                let lost = if event.kind == "lease.expired" {
                    CheckoutEnd::Lapsed
                } else {
                    CheckoutEnd::Broken {
                        by: event
                            .participant
                            .clone()
                            .unwrap_or_else(|| self.who.clone()),
                        reason: event.data["reason"].as_str().unwrap_or_default().into(),
                    }
                };
                self.lease_lost = Some(lost.clone());
                self.ended = lost;
                self.to = Some(event.at);
            }
            // Its lease taken again (an extension or a check-in after a
            // lapse nobody else used): open again.
            "lease.acquired" if !self.closed() => {
                self.lease_lost = None;
                self.ended = CheckoutEnd::Open;
                self.to = None;
            }
            _ => {}
        }
    }

    /// As the entry is shown: a lapse or break that nothing followed is the
    /// end itself, not a loss before it.
    fn finished(mut self) -> Self {
        if !self.closed() {
            self.lease_lost = None;
        }
        self
    }
}

/// The check-out an event is about, if any.
fn checkout_of(event: &Event) -> Option<CheckoutId> {
    id_in(&event.data, "checkout_id")
}

fn id_in<T: std::str::FromStr>(data: &serde_json::Value, key: &str) -> Option<T> {
    data[key].as_str()?.parse().ok()
}

/// See the module's comment. `before`: `None` for the newest page.
pub async fn page(
    backend: &dyn Backend,
    artifact: ArtifactId,
    before: Option<u64>,
    limit: u32,
) -> Result<HistoryPage> {
    let limit = limit.clamp(1, MAX_EVENTS_PAGE);
    let (page, versions, proposals) = tokio::try_join!(
        backend.query_events(EventQuery {
            artifact: Some(artifact),
            after: None,
            // Every sequence number is below 2^63 (SQLite's integers).
            before: Some(before.unwrap_or(i64::MAX as u64)),
            limit,
        }),
        backend.versions(artifact),
        backend.proposals(ProposalFilter {
            artifact: Some(artifact),
            state: None,
        }),
    )?;
    let full = page.events.len() == limit as usize;
    let newest_seq = page.events.first().map(|e| e.seq);
    let versions: HashMap<u64, Head> = versions.into_iter().map(|h| (h.version, h)).collect();
    let mut proposals: HashMap<ProposalId, Proposal> =
        proposals.into_iter().map(|p| (p.id, p)).collect();

    let mut entries = Vec::new();
    // Check-outs begun on this page, by id: where their entry is.
    let mut begun: HashMap<CheckoutId, usize> = HashMap::new();
    for event in page.events.iter().rev() {
        let entry = match event.kind.as_str() {
            "version.committed" => {
                let number = event.data["version"].as_u64().unwrap_or_default();
                versions
                    .get(&number)
                    .cloned()
                    .map(|head| HistoryEntry::Version {
                        seq: event.seq,
                        head,
                    })
            }
            "proposal.created" => id_in(&event.data, "proposal_id")
                .and_then(|id| proposals.remove(&id))
                .map(|proposal| HistoryEntry::Proposal {
                    seq: event.seq,
                    proposal,
                }),
            "artifact.renamed" => Some(HistoryEntry::Renamed {
                seq: event.seq,
                at: event.at,
                by: event.participant.clone(),
                from: event.data["from"].as_str().unwrap_or_default().into(),
                to: event.data["to"].as_str().unwrap_or_default().into(),
            }),
            "checkout.opened" => match (checkout_of(event), &event.participant) {
                (Some(id), Some(who)) => {
                    begun.insert(id, entries.len());
                    Some(HistoryEntry::Checkout(CheckoutEntry {
                        seq: event.seq,
                        id,
                        who: who.clone(),
                        version: event.data["version"].as_u64().unwrap_or_default(),
                        note: event.data["note"].as_str().map(str::to_owned),
                        from: event.at,
                        to: None,
                        ended: CheckoutEnd::Open,
                        lease_lost: None,
                    }))
                }
                _ => None,
            },
            _ => {
                follow(&mut entries, &begun, event);
                None
            }
        };
        entries.extend(entry);
    }

    // Check-outs begun here and not closed here: read on, newer events,
    // until each has closed. The newest page has nothing newer to read.
    let still_open = |entries: &Vec<HistoryEntry>| {
        begun.values().any(|&at| match &entries[at] {
            HistoryEntry::Checkout(c) => !c.closed(),
            _ => false,
        })
    };
    if let (Some(_), Some(mut after)) = (before, newest_seq) {
        while still_open(&entries) {
            let newer = backend
                .query_events(EventQuery {
                    artifact: Some(artifact),
                    after: Some(after),
                    before: None,
                    limit: MAX_EVENTS_PAGE,
                })
                .await?;
            for event in &newer.events {
                follow(&mut entries, &begun, event);
            }
            match newer.events.last() {
                Some(last) if newer.events.len() == MAX_EVENTS_PAGE as usize => after = last.seq,
                _ => break,
            }
        }
    }

    let entries = entries
        .into_iter()
        .rev()
        .map(|entry| match entry {
            HistoryEntry::Checkout(c) => HistoryEntry::Checkout(c.finished()),
            other => other,
        })
        .collect();
    Ok(HistoryPage {
        entries,
        next_before: full.then_some(page.next),
    })
}

/// Applies `event` to the check-out it is about, if that one began on this page.
fn follow(entries: &mut [HistoryEntry], begun: &HashMap<CheckoutId, usize>, event: &Event) {
    let Some(&at) = checkout_of(event).and_then(|id| begun.get(&id)) else {
        return;
    };
    if let HistoryEntry::Checkout(entry) = &mut entries[at] {
        entry.follow(event);
    }
}
