//! Reminders of a lease of yours running out: which are due, and the
//! notification's words. Pure functions of the check-outs and `now`; they
//! never send anything or call the clock.

use std::collections::HashSet;

use serde::Serialize;

use crate::model::*;

/// A reminder about a lease of yours running out.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Reminder {
    /// At 30 minutes left, for a lease longer than that.
    ThirtyMinutes,
    /// At 5 minutes left, or at once for a shorter lease: the last call.
    FiveMinutes,
    Lapsed,
}

impl Reminder {
    /// The notification's title: the time actually left, in the window's words.
    pub fn title(self, checkout: &Checkout, now: Timestamp) -> String {
        let name = checkout.path.file_name();
        match self {
            Reminder::Lapsed => format!("{name}: your lease has lapsed"),
            _ => format!(
                "{name}: your lease ends in {}",
                time_left(checkout.expires_at - now)
            ),
        }
    }

    /// The notification's body: what to do.
    pub fn body(self) -> &'static str {
        match self {
            Reminder::ThirtyMinutes => "Extend it if you need longer.",
            Reminder::FiveMinutes => "Extend it now, or check in what you have.",
            Reminder::Lapsed => "Your file is safe. Check in to keep your work: if someone else took the file, it becomes a proposal.",
        }
    }
}

/// What is left of a lease as the window's countdown says it (`timeLeft` in
/// `ui/src/format.ts`): "1 h 05 min", "12 min", "40 s", or "lapsed".
pub fn time_left(left: chrono::TimeDelta) -> String {
    let seconds = left.num_seconds();
    match seconds {
        s if s <= 0 => "lapsed".into(),
        s if s < 60 => format!("{s} s"),
        s if s < 3600 => format!("{} min", s / 60),
        s => format!("{} h {:02} min", s / 3600, s % 3600 / 60),
    }
}

/// Which reminders are due now. Each is given once per expiry time: an
/// extension moves the expiry and so arms them again. `sent` remembers.
/// The 30-minute one comes only to a lease longer than 30 minutes, none
/// being promised time it never had; the last call comes to every lease,
/// even one shorter than 5 minutes. Titles say what is left ([`Reminder::title`]).
pub fn due_reminders(
    checkouts: &[Checkout],
    now: Timestamp,
    sent: &mut HashSet<(CheckoutId, Timestamp, Reminder)>,
) -> Vec<(Checkout, Reminder)> {
    let thirty = chrono::TimeDelta::minutes(30);
    let mut due = Vec::new();
    for checkout in checkouts.iter().filter(|c| c.state == CheckoutState::Open) {
        let left = checkout.expires_at - now;
        let whole = checkout.expires_at - checkout.created_at;
        let reminder = if left <= chrono::TimeDelta::zero() {
            Reminder::Lapsed
        } else if left <= chrono::TimeDelta::minutes(5) {
            Reminder::FiveMinutes
        } else if left <= thirty && whole > thirty {
            Reminder::ThirtyMinutes
        } else {
            continue;
        };
        if sent.insert((checkout.id, checkout.expires_at, reminder)) {
            due.push((checkout.clone(), reminder));
        }
    }
    due
}
