//! Following the ledger over Server-Sent Events: the events after a point,
//! then each new one, the stream opened again (on the next server if need
//! be) after the last event given when it breaks, ends or falls silent, so
//! no event is lost or given twice. It never retries a refusal.

use std::pin::Pin;
use std::time::Duration;

use futures_util::StreamExt;

use super::Remote;
use crate::error::{Error, Result};
use crate::model::Event;

/// The server sends a keep-alive comment every 15 s: an event stream silent
/// for three of them is taken as broken (a server gone without closing it).
const STREAM_SILENCE: Duration = Duration::from_secs(45);

/// The bytes of an event stream as they come.
type EventBytes = Pin<Box<dyn futures_util::Stream<Item = reqwest::Result<bytes::Bytes>> + Send>>;

/// Where a follower is: the stream it reads, the bytes of a message not yet
/// whole, and the last event it gave (where a new stream starts).
struct Follow {
    remote: Remote,
    after: u64,
    bytes: Option<EventBytes>,
    buffer: Vec<u8>,
    /// Whether an event came since the stream was last opened: a stream that
    /// keeps ending with none is opened again only after a pause.
    progressed: bool,
    ended: bool,
}

/// Takes the next whole Server-Sent Events message off the front of
/// `buffer` and answers its data ("" for a keep-alive comment), or `None`
/// until a whole message is there. A message ends at a blank line; bytes are
/// kept until then, since a chunk may end inside a character.
pub fn next_message_data(buffer: &mut Vec<u8>) -> Option<String> {
    let end = buffer.windows(2).position(|w| w == b"\n\n")?;
    let message: Vec<u8> = buffer.drain(..end + 2).collect();
    Some(
        String::from_utf8_lossy(&message)
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(str::trim_start)
            .collect(),
    )
}

impl Remote {
    /// The events after `after`, then each new one as a server writes it
    /// (Server-Sent Events). When a stream breaks or ends, it is opened again
    /// after the last event given, moving on to the next server if this one
    /// does not answer, so no event is lost or given twice. It ends with an
    /// error when no server answers, or one refuses (a revoked token).
    pub async fn follow_events(
        &self,
        after: u64,
    ) -> Result<impl futures_util::Stream<Item = Result<Event>> + use<>> {
        let follow = Follow {
            remote: self.clone(),
            after,
            bytes: Some(self.event_stream(after).await?),
            buffer: Vec::new(),
            progressed: true,
            ended: false,
        };
        Ok(futures_util::stream::unfold(follow, |mut f| async move {
            loop {
                if f.ended {
                    return None;
                }
                if let Some(data) = next_message_data(&mut f.buffer) {
                    if data.is_empty() {
                        continue; // a keep-alive comment
                    }
                    let event: Result<Event> = serde_json::from_str(&data)
                        .map_err(|e| Error::Internal(format!("an event could not be read: {e}")));
                    if let Ok(event) = &event {
                        f.after = event.seq;
                        f.progressed = true;
                    }
                    return Some((event, f));
                }
                let next = match &mut f.bytes {
                    Some(bytes) => tokio::time::timeout(STREAM_SILENCE, bytes.next()).await,
                    None => Ok(None),
                };
                if let Ok(Some(Ok(chunk))) = next {
                    f.buffer.extend_from_slice(&chunk);
                    continue;
                }
                // Broken, silent or ended: a half-read message comes again
                // on the new stream, which starts after the last event given.
                f.bytes = None;
                f.buffer.clear();
                if !f.progressed {
                    tokio::time::sleep(Duration::from_secs(1)).await;
                }
                f.progressed = false;
                match f.remote.event_stream(f.after).await {
                    Ok(bytes) => f.bytes = Some(bytes),
                    Err(e) => {
                        f.ended = true;
                        return Some((Err(e), f));
                    }
                }
            }
        }))
    }

    async fn event_stream(&self, after: u64) -> Result<EventBytes> {
        let path = format!("/v1/events/stream?after={after}");
        Ok(Box::pin(self.get_response(&path).await?.bytes_stream()))
    }
}
