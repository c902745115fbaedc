//! The sweep of resumable uploads: lapsed ones, those whose check-out or
//! edit closed, and parts no upload names (see `transfers`).

use super::*;

impl Bundled {
    /// Removes the uploads that lapsed or whose check-out or edit closed;
    /// at most once a minute (by the store's clock), and parts no upload
    /// names. Blocking.
    pub(crate) fn sweep_uploads(&self) -> Result<()> {
        let uploads = &self.shared.uploads;
        let now = self.clock().now();
        {
            let mut last = uploads.last_swept.lock().expect("uploads");
            if last.is_some_and(|at| now - at < SWEEP_UPLOADS_EVERY) {
                return Ok(());
            }
            *last = Some(now);
        }
        let store = &self.shared.store;
        let (mut over, open) = store.read(|tx| tx.uploads_to_look_over(now, now - USED_KEPT))?;
        for (id, target) in open {
            let closed = store.read(|tx| {
                Ok(match &target {
                    UploadFor::Import(_) => false,
                    UploadFor::Checkout(c) => tx
                        .checkout(*c)?
                        .is_none_or(|row| row.checkout.state == CheckoutState::Closed),
                    UploadFor::Edit(e) => {
                        tx.edit(*e)?.is_none_or(|row| row.state != EditState::Open)
                    }
                })
            })?;
            if closed {
                over.push(id);
            }
        }
        for &id in &over {
            store.write(Durability::Normal, |tx| tx.delete_upload(id))?;
            uploads.parts.remove_blocking(id)?;
        }
        // Parts no row names: a begin or a server that died midway.
        for (id, age) in uploads.parts.uploads()? {
            if age >= ORPHAN_PARTS_AFTER && !store.read(|tx| tx.upload_exists(id))? {
                uploads.parts.remove_blocking(id)?;
            }
        }
        // Lists a killed process was receiving.
        for entry in std::fs::read_dir(&uploads.spool)
            .into_iter()
            .flatten()
            .flatten()
        {
            let old = entry
                .metadata()
                .and_then(|m| m.modified())
                .is_ok_and(|at| at.elapsed().unwrap_or_default() >= ORPHAN_PARTS_AFTER);
            if old {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(())
    }
}
