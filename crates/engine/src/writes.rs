//! Group commit: writers queue their work, and whoever gets the write turn
//! runs everything queued in one transaction (each write in a savepoint) and
//! answers the others. Never reads the clock: each write's `now` comes from
//! its transaction.

use super::uploads::Naming;
use super::{in_place, Bundled, Options, Shared};
use crate::error::{Error, Result};
use crate::failpoint::Failpoints;
use crate::model::*;
use crate::store::{Durability, Tx};

/// A write waiting for its batch, its type erased so any write can join.
pub(super) trait Queued: Send {
    fn durability(&self) -> Durability;
    fn abandoned(&self) -> bool;
    /// Runs the write (perhaps twice: see [`Store::write`]), keeping its value.
    fn run(&mut self, tx: &dyn Tx, options: &Options) -> Result<()>;
    /// Sends the caller its value, or the error that ended its write or batch.
    fn answer(self: Box<Self>, outcome: Result<()>);
}

struct QueuedWrite<T, F> {
    f: F,
    participant: Participant,
    durability: Durability,
    value: Option<T>,
    reply: tokio::sync::oneshot::Sender<Result<T>>,
    blob: Option<Naming<T>>,
}

impl<T, F> Queued for QueuedWrite<T, F>
where
    T: Send,
    F: Fn(&dyn Tx, &Participant, Timestamp, &Failpoints) -> Result<T> + Send,
{
    fn durability(&self) -> Durability {
        self.durability
    }

    fn abandoned(&self) -> bool {
        self.reply.is_closed()
    }

    fn run(&mut self, tx: &dyn Tx, options: &Options) -> Result<()> {
        let now = tx.now(&options.clock)?;
        self.value = Some((self.f)(tx, &self.participant, now, &options.failpoints)?);
        Ok(())
    }

    fn answer(self: Box<Self>, outcome: Result<()>) {
        let QueuedWrite {
            value, reply, blob, ..
        } = *self;
        let outcome = outcome.map(|()| value.expect("a value after a good run"));
        // Before the caller hears: then a refused upload's blob is gone by then.
        if let Some(naming) = blob {
            naming.settle(&outcome);
        }
        let _ = reply.send(outcome);
    }
}

impl Shared {
    fn queued_writes(&self) -> std::sync::MutexGuard<'_, Vec<Box<dyn Queued>>> {
        self.queued_writes.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs queued writes in one transaction (durable if any needs it) and
    /// answers each. Writes whose caller has gone are skipped, as if never sent.
    fn run_batch(&self, mut batch: Vec<Box<dyn Queued>>) {
        batch.retain(|write| !write.abandoned());
        if !batch.is_empty() {
            self.batch_sizes.observe(batch.len() as f64);
        }
        let durability = match batch.iter().any(|w| w.durability() == Durability::Full) {
            true => Durability::Full,
            false => Durability::Normal,
        };
        let outcomes = match &mut batch[..] {
            [] => return,
            // Alone, a write is its transaction: no savepoint to pay for.
            [write] => Ok(vec![self
                .store
                .write(durability, |tx| write.run(tx, &self.options))]),
            writes => self.store.write(durability, |tx| {
                writes
                    .iter_mut()
                    .map(|write| tx.savepoint(&mut |tx| write.run(tx, &self.options)))
                    .collect::<Result<Vec<_>>>()
            }),
        };
        match outcomes {
            Ok(outcomes) => {
                for (write, outcome) in batch.into_iter().zip(outcomes) {
                    write.answer(outcome);
                }
            }
            Err(failed) => {
                for write in batch {
                    write.answer(Err(failed.clone()));
                }
            }
        }
    }
}

impl Bundled {
    /// Runs a write, with `now` given by its transaction (see
    /// [`crate::store::Tx::now`]). `durability`: see [`Store::write`].
    ///
    /// Group commit: writers queue their work, and whoever gets the write turn
    /// runs everything queued in one transaction, each write in a savepoint of
    /// its own, and answers the others. Under load one commit (one set of WAL
    /// pages, one thread in the store) serves many lease changes; alone, a
    /// write is its own batch.
    pub(super) async fn write<T: Send + 'static>(
        &self,
        durability: Durability,
        f: impl Fn(&dyn Tx, &Participant, Timestamp, &Failpoints) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.write_naming(durability, None, f).await
    }

    /// [`Bundled::write`] at normal durability, for the many writes that
    /// read no failpoint (lease, proposal and request operations).
    pub(super) async fn write_normal<T: Send + 'static>(
        &self,
        f: impl Fn(&dyn Tx, &Participant, Timestamp) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.write(Durability::Normal, move |tx, me, now, _| f(tx, me, now))
            .await
    }

    /// [`Bundled::write`] made durable, for what people write to each other
    /// (review's threads, comments and decisions): a power loss keeps them.
    pub(super) async fn write_durable<T: Send + 'static>(
        &self,
        f: impl Fn(&dyn Tx, &Participant, Timestamp) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        self.write(Durability::Full, move |tx, me, now, _| f(tx, me, now))
            .await
    }

    /// [`Bundled::write`], for a write that names an upload's blob when
    /// `names_it` says so of its value; otherwise the blob is removed.
    pub(super) async fn write_naming<T: Send + 'static>(
        &self,
        durability: Durability,
        blob: Option<Naming<T>>,
        f: impl Fn(&dyn Tx, &Participant, Timestamp, &Failpoints) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let (reply, mut answer) = tokio::sync::oneshot::channel();
        self.shared.queued_writes().push(Box::new(QueuedWrite {
            f,
            participant: self.participant.clone(),
            durability,
            value: None,
            reply,
            blob,
        }));
        let lost = || {
            Err(Error::Internal(
                "the write's batch ended without an answer".into(),
            ))
        };
        tokio::select! {
            biased;
            answer = &mut answer => return answer.unwrap_or_else(|_| lost()),
            turn = self.shared.write_turn.acquire() => {
                let batch = std::mem::take(&mut *self.shared.queued_writes());
                if !batch.is_empty() {
                    let shared = self.shared.clone();
                    in_place(move || {
                        shared.run_batch(batch);
                        Ok(())
                    })
                    .await?;
                    self.shared.changed.notify_waiters();
                }
                drop(turn);
            }
        }
        // Our write was in this batch, or in one that has already answered.
        answer.await.unwrap_or_else(|_| lost())
    }
}
