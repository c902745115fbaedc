//! The ledger's events: pages (`/v1/events`) and the live stream (Server-Sent
//! Events). It never writes an event: the rules do, with each change.

use std::convert::Infallible;
use std::time::Duration;

use axum::extract::Request;
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::Extension;
use futures_util::{Stream, StreamExt};
use serde::Deserialize;

use super::super::errors::ApiResult;
use super::super::request::{bearer_of, id, in_range, query, Caller, Params};
use super::super::Closing;
use super::JsonList;
use crate::backend::Backend;
use crate::bundled::Bundled;
use crate::error::Error;
use crate::model::*;
use crate::wire::LAST_EVENT_ID_HEADER;

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(crate) struct EventsQuery {
    after: Option<u64>,
    before: Option<u64>,
    limit: Option<u64>,
    artifact: Option<String>,
}

#[utoipa::path(get, path = "/v1/events", responses((status = 200, body = EventPage)))]
pub(crate) async fn events(
    Caller(me): Caller,
    Params(q): Params<EventsQuery>,
) -> ApiResult<JsonList<Event>> {
    let limit = in_range("limit", q.limit)?
        .unwrap_or(100)
        .min(MAX_EVENTS_PAGE.into());
    let page = me
        .query_events(EventQuery {
            artifact: q.artifact.as_deref().map(id).transpose()?,
            after: in_range("after", q.after)?,
            before: in_range("before", q.before)?,
            limit: limit as u32,
        })
        .await?;
    let mut list = JsonList::new("events", page.events);
    list.rest = format!(",\"next\":{}", page.next);
    Ok(list)
}

/// Server-Sent Events: every event after `after` (or the `Last-Event-ID` a
/// reconnecting client sends), then each new one as it is written (by this
/// server at once; by another process within a second). The stream looks at
/// its token again, uncached, before it sends what it read and at least once
/// a second, so it ends within a second of a revocation and sends nothing
/// written after it; and it ends at once when the server shuts down. While
/// the store cannot be reached it stays open, sending keep-alives, and reads
/// on from its last event once the store is back.
#[utoipa::path(get, path = "/v1/events/stream", responses((status = 200, description = "Server-Sent Events, one Event per message", content_type = "text/event-stream")))]
pub(crate) async fn event_stream(
    Caller(me): Caller,
    Extension(closing): Extension<Closing>,
    request: Request,
) -> ApiResult<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>> {
    let q: EventsQuery = query(request.uri())?;
    let last_event_id = match request.headers().get(LAST_EVENT_ID_HEADER) {
        None => None,
        Some(value) => Some(
            value
                .to_str()
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or_else(|| Error::BadRequest("Last-Event-ID must be an event's seq".into()))?,
        ),
    };
    let after = in_range("Last-Event-ID", last_event_id)?
        .or(in_range("after", q.after)?)
        .unwrap_or(0);
    let bearer = bearer_of(request.headers())?.to_owned();
    let start: (Bundled, u64, Vec<Event>) = (me, after, Vec::new());
    let events = futures_util::stream::unfold(start, move |(me, mut after, mut pending)| {
        let bearer = bearer.clone();
        async move {
            loop {
                if let Some(event) = pending.pop() {
                    let sse = SseEvent::default()
                        .id(event.seq.to_string())
                        .event(&event.kind)
                        .json_data(&event)
                        .unwrap_or_default();
                    return Some((Ok(sse), (me, after, pending)));
                }
                let changed = me.changed();
                let page = me.events(after, 500).await;
                match me.recheck(&bearer).await {
                    Ok(_) => {}
                    Err(Error::Unauthorized(_)) => return None, // revoked: the stream ends
                    Err(_) => {
                        // The store is away: the stream waits for it, sending
                        // its keep-alives, and reads on from `after` once back.
                        tokio::time::sleep(Duration::from_secs(1)).await;
                        continue;
                    }
                }
                match page {
                    Ok(page) if !page.events.is_empty() => {
                        after = page.next;
                        pending = page.events;
                        pending.reverse();
                    }
                    // Only events of files the caller cannot see: read on past them.
                    Ok(page) if page.next > after => after = page.next,
                    Ok(_) => {
                        let _ = tokio::time::timeout(Duration::from_secs(1), changed).await;
                    }
                    Err(_) => tokio::time::sleep(Duration::from_secs(1)).await,
                }
            }
        }
    });
    Ok(Sse::new(events.take_until(closing.wait())).keep_alive(KeepAlive::default()))
}
