//! The inbox, as the app shows it: what needs you (mentions, review
//! requests, threads, comments and decisions on your work), newest first,
//! its unread count and read marks; and, as the event follower hears of
//! review, the items new since the app last looked ([`Desk::inbox_news`]),
//! each told once, and which of them are worth interrupting you for
//! ([`alerts`]). Only reads, and read marks: nothing here touches a lease.

use serde::Serialize;

use super::review::is_review_event;
use super::Desk;
use crate::error::Result;
use crate::model::*;

/// The `before` that asks for the newest items: the API's largest number.
const NEWEST: u64 = i64::MAX as u64;

/// At most this many desktop notifications at once: a flood of mentions
/// is told as one ("5 new in your inbox").
pub const MOST_ALERTS: usize = 3;

/// The pages one look for news reads at most; what is beyond is told at
/// the next look (the count has it at once).
const MOST_NEWS_PAGES: usize = 5;

/// What one look found: the items new since the last look, oldest first,
/// and how many are unread.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct InboxNews {
    pub items: Vec<InboxItem>,
    #[ts(type = "number")]
    pub unread: u64,
}

/// What the desk remembers of your inbox between looks.
#[derive(Debug, Default)]
pub(crate) struct Looked {
    /// The newest item told; none before the first look. Held while a look
    /// asks, so two looks never tell the same item.
    newest: tokio::sync::Mutex<Option<u64>>,
    /// The unread count as last answered (the tray shows it without asking).
    unread: std::sync::Mutex<Option<u64>>,
}

impl Looked {
    fn set_unread(&self, unread: u64) {
        *self.unread.lock().unwrap_or_else(|p| p.into_inner()) = Some(unread);
    }
}

/// Whether `event` may have brought `me` an inbox item: one of review, by
/// someone else (your own acts never reach your inbox).
pub fn may_reach_inbox(event: &Event, me: &Participant) -> bool {
    is_review_event(event) && event.participant.as_ref() != Some(me)
}

/// Whether an item calls for you now: a mention, or a request to review.
/// The rest (news of your own work) waits in the inbox.
pub fn calls_for_you(item: &InboxItem) -> bool {
    matches!(item.kind, InboxKind::Mention | InboxKind::ReviewRequested)
}

/// A desktop notification to give for new items.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InboxAlert {
    /// This item, which opens its file at its thread.
    One(InboxItem),
    /// So many items call for you that they are told together; opens the inbox.
    Many(usize),
}

impl InboxAlert {
    pub fn title(&self) -> String {
        match self {
            InboxAlert::One(item) => inbox_title(item),
            InboxAlert::Many(n) => format!("{n} new in your inbox"),
        }
    }

    pub fn body(&self) -> String {
        match self {
            InboxAlert::One(item) if item.kind == InboxKind::ReviewRequested => {
                format!("{}: open it in Leasedesk to review.", item.path)
            }
            InboxAlert::One(item) => format!("{}: open it in Leasedesk to answer.", item.path),
            InboxAlert::Many(_) => {
                "Mentions and requests to review: see them in Leasedesk's Inbox.".into()
            }
        }
    }
}

/// The notifications for `items` (new, oldest first): one for each that
/// calls for you, or a single one when more than [`MOST_ALERTS`] do.
pub fn alerts(items: &[InboxItem]) -> Vec<InboxAlert> {
    let calling: Vec<&InboxItem> = items.iter().filter(|i| calls_for_you(i)).collect();
    if calling.len() > MOST_ALERTS {
        return vec![InboxAlert::Many(calling.len())];
    }
    calling
        .into_iter()
        .map(|i| InboxAlert::One(i.clone()))
        .collect()
}

/// An item in words: "bob mentioned you in hero.psd".
pub fn inbox_title(item: &InboxItem) -> String {
    let (from, file) = (item.from.name(), item.path.file_name());
    match item.kind {
        InboxKind::Mention => format!("{from} mentioned you in {file}"),
        InboxKind::ReviewRequested => format!("{from} asked you to review {file}"),
        InboxKind::ThreadOnYours => format!("{from} commented on your {file}"),
        InboxKind::CommentInYours => format!("{from} replied in a thread on {file}"),
        InboxKind::DecisionOnYours => format!("{from} reviewed your {file}"),
    }
}

/// Whether a page that ended at `next`, having asked `after` with `limit`,
/// leaves items behind: it was full, or files you may not read hid some at
/// its end (its `next` is past its last item).
fn more_after(page: &InboxPage, after: u64, limit: u32) -> bool {
    page.next > after
        && (page.items.len() as u32 >= limit || page.items.last().map(|i| i.seq) != Some(page.next))
}

impl Desk {
    /// A page of your inbox, newest first: `limit` items before `before`
    /// (the newest when none); ask again with its `next` as `before`.
    pub async fn inbox(&self, before: Option<u64>, limit: u32) -> Result<InboxPage> {
        let query = InboxQuery {
            before: Some(before.unwrap_or(NEWEST).min(NEWEST)),
            limit: Some(limit),
            ..InboxQuery::default()
        };
        let page = self.noted(self.backend.inbox(query).await)?;
        self.inbox.set_unread(page.unread);
        Ok(page)
    }

    /// Your unread items: as last answered, else asked.
    pub async fn inbox_unread(&self) -> Result<u64> {
        match self.inbox_unread_known() {
            Some(unread) => Ok(unread),
            None => Ok(self.inbox(None, 1).await?.unread),
        }
    }

    /// Your unread items as last answered, without asking (none yet).
    pub fn inbox_unread_known(&self) -> Option<u64> {
        *self.inbox.unread.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Marks your items up to `up_to` read (never an item not yet made, and
    /// a mark never moves back); your unread count.
    pub async fn mark_inbox_read(&self, up_to: u64) -> Result<u64> {
        let unread = self.noted(self.backend.mark_inbox_read(up_to.min(NEWEST)).await)?;
        self.inbox.set_unread(unread);
        Ok(unread)
    }

    /// The items new since the last look, oldest first, and the unread
    /// count. The first look only finds where the inbox is: what was there
    /// before the app looked is not news. Each item is told once, however
    /// often it is looked for; a look reads a few pages at most, the next
    /// one goes on from there.
    pub async fn inbox_news(&self) -> Result<InboxNews> {
        let mut newest = self.inbox.newest.lock().await;
        let Some(mut after) = *newest else {
            let page = self.inbox(None, 1).await?;
            *newest = Some(page.items.first().map_or(0, |i| i.seq));
            return Ok(InboxNews {
                items: Vec::new(),
                unread: page.unread,
            });
        };
        let limit = MAX_INBOX_PAGE;
        let mut items = Vec::new();
        let mut unread = None;
        for _ in 0..MOST_NEWS_PAGES {
            let query = InboxQuery {
                after: Some(after),
                limit: Some(limit),
                ..InboxQuery::default()
            };
            let page = self.noted(self.backend.inbox(query).await)?;
            let more = more_after(&page, after, limit);
            after = after.max(page.next);
            unread = Some(page.unread);
            items.extend(page.items);
            if !more {
                break;
            }
        }
        *newest = Some(after);
        let unread = unread.unwrap_or_default();
        self.inbox.set_unread(unread);
        Ok(InboxNews { items, unread })
    }

    /// `outcome`, a server that did not answer noted (the window marks itself offline).
    fn noted<T>(&self, outcome: Result<T>) -> Result<T> {
        if let Err(e) = &outcome {
            if super::is_unreachable(e) {
                self.link.went_offline(self.clock.now());
            }
        }
        outcome
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(seq: u64, kind: InboxKind, from: &str) -> InboxItem {
        InboxItem {
            seq,
            kind,
            artifact_id: ArtifactId::new(),
            path: "brand/hero.psd".parse().unwrap(),
            thread_id: Some(ThreadId::new()),
            review_id: None,
            from: from.parse().unwrap(),
            at: chrono::Utc::now(),
            read: false,
        }
    }

    #[test]
    fn each_item_says_who_did_what_to_which_file() {
        let said = |kind| inbox_title(&item(1, kind, "user:bob"));
        assert_eq!(said(InboxKind::Mention), "bob mentioned you in hero.psd");
        assert_eq!(
            said(InboxKind::ReviewRequested),
            "bob asked you to review hero.psd"
        );
        assert_eq!(
            said(InboxKind::ThreadOnYours),
            "bob commented on your hero.psd"
        );
        assert_eq!(
            said(InboxKind::CommentInYours),
            "bob replied in a thread on hero.psd"
        );
        assert_eq!(
            said(InboxKind::DecisionOnYours),
            "bob reviewed your hero.psd"
        );
    }

    #[test]
    fn mentions_and_requests_to_review_interrupt_and_news_of_your_work_waits() {
        let items = [
            item(1, InboxKind::ThreadOnYours, "user:bob"),
            item(2, InboxKind::Mention, "user:bob"),
            item(3, InboxKind::DecisionOnYours, "user:sam"),
            item(4, InboxKind::ReviewRequested, "user:sam"),
        ];
        let told = alerts(&items);
        assert_eq!(
            told,
            vec![
                InboxAlert::One(items[1].clone()),
                InboxAlert::One(items[3].clone())
            ]
        );
        assert_eq!(told[1].title(), "sam asked you to review hero.psd");
        assert_eq!(
            told[1].body(),
            "brand/hero.psd: open it in Leasedesk to review."
        );
        assert_eq!(
            told[0].body(),
            "brand/hero.psd: open it in Leasedesk to answer."
        );
        assert!(alerts(&items[..1]).is_empty(), "a thread on yours waits");
    }

    #[test]
    fn a_flood_of_mentions_is_one_notification() {
        let flood: Vec<InboxItem> = (1..=50)
            .map(|n| item(n, InboxKind::Mention, "user:bob"))
            .collect();
        assert_eq!(alerts(&flood), vec![InboxAlert::Many(50)]);
        assert_eq!(alerts(&flood).len(), 1);
        assert_eq!(InboxAlert::Many(50).title(), "50 new in your inbox");
        assert_eq!(alerts(&flood[..MOST_ALERTS]).len(), MOST_ALERTS);
    }

    #[test]
    fn only_others_review_events_may_bring_you_an_item() {
        let event = |kind: &str, by: &str| Event {
            seq: 9,
            id: uuid::Uuid::new_v4(),
            kind: kind.into(),
            artifact_id: Some(ArtifactId::new()),
            participant: Some(by.parse().unwrap()),
            holder: None,
            at: chrono::Utc::now(),
            data: serde_json::json!({}),
        };
        let alice: Participant = "user:alice".parse().unwrap();
        for kind in crate::review::REVIEW_EVENTS {
            assert!(may_reach_inbox(&event(kind, "user:bob"), &alice), "{kind}");
            assert!(
                !may_reach_inbox(&event(kind, "user:alice"), &alice),
                "{kind}: her own"
            );
        }
        assert!(!may_reach_inbox(
            &event("lease.acquired", "user:bob"),
            &alice
        ));
    }

    #[test]
    fn a_page_leaves_items_behind_when_full_or_cut_short_by_hidden_files() {
        let page = |seqs: &[u64], next| InboxPage {
            items: seqs
                .iter()
                .map(|s| item(*s, InboxKind::Mention, "user:bob"))
                .collect(),
            next,
            unread: 0,
        };
        assert!(!more_after(&page(&[], 4), 4, 2), "nothing new");
        assert!(!more_after(&page(&[5], 5), 4, 2), "short and whole");
        assert!(more_after(&page(&[5, 6], 6), 4, 2), "full");
        assert!(more_after(&page(&[5], 9), 4, 2), "hidden items after 5");
        assert!(more_after(&page(&[], 9), 4, 2), "only hidden items");
    }
}
