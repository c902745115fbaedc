//! The room chunk lists may take in memory (a list is up to 37.7 MB): 256
//! MiB in all, of which one participant may hold three quarters. A request
//! takes what it needs all at once, once it knows (a begin's list has
//! arrived, into a file, by then), never for what a request only declares,
//! and in turn: so a list trickled in holds none, no two requests each hold
//! a part while waiting for the rest, and one participant's lists can hold
//! up their own requests, never everyone's.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::{OwnedSemaphorePermit, Semaphore};
use tokio::time::Instant;

use crate::error::{Error, Result};
use crate::model::Participant;

/// Room is counted in units of this many bytes.
const UNIT: u64 = 64 << 10;
/// All the room there is: 256 MiB.
const ROOM: u32 = ((256 << 20) / UNIT) as u32;
/// What one participant may hold of it: enough for the largest list and
/// the list of the largest file it may match.
const SHARE: u32 = ROOM / 4 * 3;
/// How long a request waits for room before it is told to come back (503).
pub(super) const ROOM_WAIT: Duration = Duration::from_secs(5);

/// The room of one server.
pub(super) struct Room {
    all: Arc<Semaphore>,
    shares: Mutex<HashMap<Participant, Arc<Semaphore>>>,
}

/// Room held by one request, given back when dropped.
pub(super) struct Held {
    who: Participant,
    /// Bytes asked for so far, and the units they were rounded up to.
    bytes: u64,
    units: u32,
    all: Vec<OwnedSemaphorePermit>,
    share: Vec<OwnedSemaphorePermit>,
}

impl Room {
    pub(super) fn new() -> Self {
        Self {
            all: Arc::new(Semaphore::new(ROOM as usize)),
            shares: Mutex::new(HashMap::new()),
        }
    }

    /// No room yet, for `who`.
    pub(super) fn none(&self, who: &Participant) -> Held {
        Held {
            who: who.clone(),
            bytes: 0,
            units: 0,
            all: Vec::new(),
            share: Vec::new(),
        }
    }

    /// Room for `bytes` more in `held`, waiting until `until` at most: the
    /// participant's share first, then the server's.
    pub(super) async fn grow(&self, held: &mut Held, bytes: u64, until: Instant) -> Result<()> {
        let wanted = (held.bytes + bytes).div_ceil(UNIT);
        if wanted > u64::from(SHARE) {
            return Err(Error::TooLarge {
                limit: u64::from(SHARE) * UNIT,
            });
        }
        let more = wanted as u32 - held.units;
        if more == 0 {
            held.bytes += bytes;
            return Ok(());
        }
        let share = self
            .shares
            .lock()
            .expect("room")
            .entry(held.who.clone())
            .or_insert_with(|| Arc::new(Semaphore::new(SHARE as usize)))
            .clone();
        let busy = |whose: &str| {
            Error::Unavailable(format!(
                "the server is busy with {whose} uploads' chunk lists: try again shortly"
            ))
        };
        let mine = tokio::time::timeout_at(until, share.acquire_many_owned(more))
            .await
            .map_err(|_| busy("your other"))?
            .map_err(|_| Error::Internal("the room for chunk lists closed".into()))?;
        let all = tokio::time::timeout_at(until, self.all.clone().acquire_many_owned(more))
            .await
            .map_err(|_| busy("other"))?
            .map_err(|_| Error::Internal("the room for chunk lists closed".into()))?;
        held.share.push(mine);
        held.all.push(all);
        held.units += more;
        held.bytes += bytes;
        Ok(())
    }

    /// Room for `bytes` for `who`, within [`ROOM_WAIT`].
    pub(super) async fn take(&self, who: &Participant, bytes: u64) -> Result<Held> {
        self.take_within(who, bytes, ROOM_WAIT).await
    }

    /// Room for `bytes` for `who`, all of it at once, within `wait`.
    pub(super) async fn take_within(
        &self,
        who: &Participant,
        bytes: u64,
        wait: Duration,
    ) -> Result<Held> {
        let mut held = self.none(who);
        self.grow(&mut held, bytes, Instant::now() + wait).await?;
        Ok(held)
    }

    /// The room held now, in bytes (for tests and the metrics).
    #[cfg(test)]
    fn held(&self) -> u64 {
        u64::from(ROOM - self.all.available_permits() as u32) * UNIT
    }
}

impl Held {
    /// Gives back all but `bytes` of the room held.
    pub(super) fn shrink_to(&mut self, bytes: u64) {
        let keep = bytes.div_ceil(UNIT).min(u64::from(self.units)) as u32;
        for permits in [&mut self.all, &mut self.share] {
            let mut kept = 0;
            permits.retain_mut(|permit| {
                let n = permit.num_permits() as u32;
                if kept + n <= keep {
                    kept += n;
                    return true;
                }
                let wanted = (keep - kept) as usize;
                kept = keep;
                // What is split off is dropped: given back.
                let _ = permit.split(permit.num_permits() - wanted);
                wanted > 0
            });
        }
        self.units = keep;
        self.bytes = bytes.min(self.bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn one_participant_holds_half_and_the_others_the_rest() {
        let room = Room::new();
        let (alice, bob) = (
            Participant::user("alice").unwrap(),
            Participant::user("bob").unwrap(),
        );
        let soon = || Instant::now() + Duration::from_millis(50);
        let mut first = room.none(&alice);
        room.grow(&mut first, 150 << 20, soon()).await.unwrap();
        let mut second = room.none(&alice);
        // Past alice's share: she waits, then is told to come back.
        match room.grow(&mut second, 50 << 20, soon()).await {
            Err(Error::Unavailable(why)) => assert!(why.contains("your other"), "{why}"),
            other => panic!("{other:?}"),
        }
        // Bob is not held up by her.
        let mut bobs = room.none(&bob);
        room.grow(&mut bobs, 100 << 20, soon()).await.unwrap();
        assert_eq!(room.held(), 250 << 20);
        drop(first);
        room.grow(&mut second, 50 << 20, soon()).await.unwrap();
        assert_eq!(room.held(), 150 << 20);
        assert!(matches!(
            room.grow(&mut bobs, 200 << 20, soon()).await,
            Err(Error::TooLarge { .. })
        ));
        bobs.shrink_to(10 << 20);
        assert_eq!(room.held(), 60 << 20, "bob keeps 10 MiB of his 100");
    }
}
