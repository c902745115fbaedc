//! Where a check-out of yours holds its work. A check-out remembers the
//! device it was made on (on a server, its token's; none on the bundled
//! store or from before devices were recorded). One made on another device
//! whose copy to edit was never got here, or one whose copy is not here at
//! all, cannot be checked in here: the window and the tray offer to get the
//! copy here ("Download to edit") and Cancel instead of a Check in that can
//! only fail. Once the copy is got here, Check in works here as usual. It
//! reads the workspace only; it never changes a lease or a copy.

use std::collections::HashSet;

use super::Desk;
use crate::error::{Error, Result};
use crate::model::*;
use crate::workspace::{LocalState, Workspace};

/// Whether `checkout` cannot be checked in here: its copy is not here
/// (`copy_here` false), or it was made on another device than
/// `this_device` and its copy to edit was never placed here
/// (`placed_here`). With no device recorded, only the copy decides.
pub fn held_elsewhere(
    checkout: &Checkout,
    copy_here: bool,
    placed_here: bool,
    this_device: Option<&str>,
) -> bool {
    if !copy_here {
        return true;
    }
    let another = checkout
        .device
        .as_ref()
        .is_some_and(|d| Some(d.id.as_str()) != this_device);
    another && !placed_here
}

/// Whether a copy in state `local` is a file here.
pub fn copy_here(local: LocalState) -> bool {
    !matches!(
        local,
        LocalState::NotLocal | LocalState::Missing | LocalState::Unplaceable
    )
}

/// [`held_elsewhere`] for your check-out `mine` (if any) of a file whose
/// copy is in state `local`. Blocking: reads the workspace's index.
pub(super) fn row_elsewhere(
    workspace: &Workspace,
    this_device: Option<&str>,
    mine: Option<&Checkout>,
    local: LocalState,
) -> Result<bool> {
    let Some(checkout) = mine else {
        return Ok(false);
    };
    let placed = workspace.placed_here(checkout.id)?;
    Ok(held_elsewhere(
        checkout,
        copy_here(local),
        placed,
        this_device,
    ))
}

impl Desk {
    /// This desk's device: the id of its token, on a server (none on the
    /// bundled store).
    pub fn with_device(mut self, id: Option<String>) -> Self {
        self.device = id;
        self
    }

    pub fn device(&self) -> Option<&str> {
        self.device.as_deref()
    }

    /// Which of `checkouts` (yours) cannot be checked in here (see
    /// [`held_elsewhere`]): the tray's, which has no rows. A copy counts as
    /// here when there is a file at its place, hashed or not.
    pub async fn held_elsewhere(&self, checkouts: &[Checkout]) -> Result<HashSet<CheckoutId>> {
        let (workspace, device) = (self.workspace.clone(), self.device.clone());
        let checkouts = checkouts.to_vec();
        tokio::task::spawn_blocking(move || {
            let mut elsewhere = HashSet::new();
            for checkout in &checkouts {
                let copy_here = checkout.path.placement_problem().is_none()
                    && !matches!(workspace.known_digest(&checkout.path)?, Ok(None));
                let placed = workspace.placed_here(checkout.id)?;
                if held_elsewhere(checkout, copy_here, placed, device.as_deref()) {
                    elsewhere.insert(checkout.id);
                }
            }
            Ok(elsewhere)
        })
        .await
        .map_err(|e| Error::Internal(format!("workspace task: {e}")))?
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn checkout(device: Option<&str>) -> Checkout {
        serde_json::from_value(serde_json::json!({
            "id": CheckoutId::new(),
            "artifact_id": ArtifactId::new(),
            "path": "brand/hero.psd",
            "version": 1,
            "digest": "blake3:0000000000000000000000000000000000000000000000000000000000000000",
            "actor": "user:alice",
            "holder": "checkout:x:user:alice",
            "created_at": "2026-12-01T09:00:00Z",
            "expires_at": "2026-12-01T17:00:00Z",
            "state": "open",
            "device": device.map(|id| serde_json::json!({ "id": id, "name": format!("{id}'s name") })),
        }))
        .unwrap()
    }

    #[test]
    fn a_check_out_of_another_device_is_elsewhere_until_its_copy_is_got_here() {
        let laptop = checkout(Some("laptop"));
        let here = Some("desktop");
        assert!(
            held_elsewhere(&laptop, true, false, here),
            "a read-only copy"
        );
        assert!(held_elsewhere(&laptop, false, false, here), "no copy");
        assert!(
            !held_elsewhere(&laptop, true, true, here),
            "got here to edit"
        );
        assert!(
            held_elsewhere(&laptop, false, true, here),
            "got here, then gone"
        );
        assert!(held_elsewhere(&laptop, true, false, None), "no device here");
    }

    #[test]
    fn a_check_out_of_this_device_or_of_none_is_here_while_its_copy_is() {
        let desktop = checkout(Some("desktop"));
        assert!(!held_elsewhere(&desktop, true, false, Some("desktop")));
        assert!(held_elsewhere(&desktop, false, false, Some("desktop")));
        let old = checkout(None);
        assert!(!held_elsewhere(&old, true, false, Some("desktop")));
        assert!(!held_elsewhere(&old, true, false, None));
        assert!(held_elsewhere(&old, false, false, None));
    }

    #[test]
    fn only_a_file_on_disk_is_a_copy_here() {
        for local in [
            LocalState::UpToDate,
            LocalState::Modified,
            LocalState::OutOfDate,
            LocalState::Checking,
        ] {
            assert!(copy_here(local), "{local:?}");
        }
        for local in [
            LocalState::NotLocal,
            LocalState::Missing,
            LocalState::Unplaceable,
        ] {
            assert!(!copy_here(local), "{local:?}");
        }
    }
}
