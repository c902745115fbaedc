//! The row mapping both stores share: a row of SQLite or of PostgreSQL, read
//! by column index through [`Row`], into the domain's types (`row`); a
//! column's value as a write binds it, or in transit between the stores
//! for `migrate` ([`Field`]); and, by family of rows, the columns, the
//! stored spellings and the statements both stores run alike, each
//! [`Statement`] its SQL with its parameters (`p` spells a numbered
//! parameter: `?` on SQLite, `$` on PostgreSQL). Never runs a query: a
//! store runs these statements and hands its rows here.

mod artifacts;
mod checkouts;
mod events;
mod field;
mod leases;
mod row;
mod studio;

use crate::model::*;
use crate::EditState;

pub use artifacts::*;
pub use checkouts::*;
pub use events::*;
pub(crate) use field::{by_key, int, text, text_opt};
pub use field::{signed, Field, Kind, Statement};
pub use leases::*;
pub use row::*;
pub use studio::*;

/// How each state is stored, both ways from one table: a read gives the
/// variant written so, and anything else stored as `else` says.
macro_rules! spellings {
    ($($vis:vis $ty:ident: $to:ident, $from:ident {
        $($variant:ident => $text:literal),+
    } else $other:ident;)+) => {$(
        $vis fn $to(value: $ty) -> &'static str {
            match value {
                $($ty::$variant => $text),+
            }
        }

        fn $from(text: &str) -> $ty {
            match text {
                $($text => $ty::$variant,)+
                _ => $ty::$other,
            }
        }
    )+};
}

spellings! {
    LeaseKind: lease_kind_str, lease_kind {
        Checkout => "checkout", Edit => "edit"
    } else Checkout;
    CheckoutState: checkout_state_str, checkout_state {
        Open => "open", Closed => "closed"
    } else Closed;
    EditState: edit_state_str, edit_state {
        Open => "open", Committed => "committed", Released => "released"
    } else Released;
    pub ProposalState: proposal_state_str, proposal_state {
        Open => "open", Accepted => "accepted", Rejected => "rejected", Superseded => "superseded"
    } else Superseded;
    RequestState: request_state_str, request_state {
        Open => "open", Replied => "replied", Withdrawn => "withdrawn", Ended => "ended"
    } else Ended;
    ChangeOutcome: change_outcome_str, change_outcome {
        Committed => "committed", Proposal => "proposal"
    } else Proposal;
}

// After `spellings!`, which it uses.
mod review;
pub use review::*;
