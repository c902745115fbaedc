//! Lease reminders: when they come, what they say, and an extension arming
//! them again.

use super::*;

/// A check-out made with a 75 s lease (as the CLI allows): its one reminder
/// says the time actually left, in the window's words, then the lapse.
async fn a_short_lease_is_reminded_of_the_time_it_has_left(f: Fixture) {
    let a = f.import("hero.psd", b"v1").await;
    f.alice.check_out(a.id, for_seconds(75)).await.unwrap();
    let mut sent = HashSet::new();
    async fn due(
        f: &Fixture,
        sent: &mut HashSet<(CheckoutId, Timestamp, Reminder)>,
    ) -> Vec<(Reminder, String)> {
        let open = f.alice.checkouts(true).await.unwrap();
        let now = f.clock.now();
        desk::due_reminders(&open, now, sent)
            .into_iter()
            .map(|(checkout, reminder)| (reminder, reminder.title(&checkout, now)))
            .collect()
    }
    assert_eq!(
        due(&f, &mut sent).await,
        vec![(
            Reminder::FiveMinutes,
            "hero.psd: your lease ends in 1 min".to_owned()
        )]
    );
    f.advance(std::time::Duration::from_secs(45));
    assert_eq!(due(&f, &mut sent).await, vec![], "once");
    f.advance(std::time::Duration::from_secs(30));
    assert_eq!(
        due(&f, &mut sent).await,
        vec![(
            Reminder::Lapsed,
            "hero.psd: your lease has lapsed".to_owned()
        )]
    );
}

fn open_checkout(expires_at: Timestamp) -> Checkout {
    lease_from(expires_at - TimeDelta::hours(8), expires_at)
}

/// An open check-out whose lease runs from `created_at` to `expires_at`.
fn lease_from(created_at: Timestamp, expires_at: Timestamp) -> Checkout {
    Checkout {
        id: CheckoutId::new(),
        artifact_id: ArtifactId::new(),
        path: path("hero.psd"),
        version: 1,
        digest: digest(b"v1"),
        actor: participant("user:alice"),
        holder: "checkout:x:user:alice".into(),
        note: None,
        created_at,
        expires_at,
        state: CheckoutState::Open,
        result: None,
        broken: None,
        change_id: None,
        device: None,
    }
}

#[test]
fn reminders_come_at_30_and_5_minutes_and_at_the_lapse_once_each() {
    let start = start_time();
    let checkout = open_checkout(start + TimeDelta::minutes(45));
    let mut sent = HashSet::new();
    let at = |minutes: i64| start + TimeDelta::minutes(minutes);
    let due = |sent: &mut HashSet<_>, when| -> Vec<Reminder> {
        desk::due_reminders(std::slice::from_ref(&checkout), when, sent)
            .into_iter()
            .map(|(_, r)| r)
            .collect()
    };
    assert_eq!(due(&mut sent, at(10)), vec![], "45 min left: nothing yet");
    assert_eq!(due(&mut sent, at(15)), vec![Reminder::ThirtyMinutes]);
    assert_eq!(due(&mut sent, at(20)), vec![], "once");
    assert_eq!(due(&mut sent, at(41)), vec![Reminder::FiveMinutes]);
    assert_eq!(due(&mut sent, at(45)), vec![Reminder::Lapsed]);
    assert_eq!(due(&mut sent, at(50)), vec![], "once");
}

/// What each reminder says, as the user would read it: the time actually left,
/// and never a threshold longer than the whole lease.
#[test]
fn reminders_say_the_time_left_and_never_more_than_the_lease() {
    let start = start_time();
    let at = |seconds: i64| start + TimeDelta::seconds(seconds);
    let said = |checkout: &Checkout, when| -> Vec<String> {
        desk::due_reminders(std::slice::from_ref(checkout), when, &mut HashSet::new())
            .into_iter()
            .map(|(c, r)| r.title(&c, when))
            .collect()
    };
    let long = lease_from(start, at(45 * 60));
    assert_eq!(
        said(&long, at(15 * 60)),
        ["hero.psd: your lease ends in 30 min"]
    );
    assert_eq!(
        said(&long, at(40 * 60)),
        ["hero.psd: your lease ends in 5 min"]
    );
    assert_eq!(
        said(&long, at(45 * 60 - 40)),
        ["hero.psd: your lease ends in 40 s"]
    );
    let ten_minutes = lease_from(start, at(10 * 60));
    assert_eq!(
        said(&ten_minutes, start),
        Vec::<String>::new(),
        "no 30-minute reminder for a 10-minute lease"
    );
    assert_eq!(
        said(&ten_minutes, at(5 * 60)),
        ["hero.psd: your lease ends in 5 min"]
    );
    let short = lease_from(start, at(75));
    assert_eq!(said(&short, start), ["hero.psd: your lease ends in 1 min"]);
    assert_eq!(said(&short, at(20)), ["hero.psd: your lease ends in 55 s"]);
    let eight_hours = lease_from(start, at(8 * 3600));
    assert_eq!(
        said(&eight_hours, at(8 * 3600 - 29 * 60)),
        ["hero.psd: your lease ends in 29 min"]
    );
}

#[test]
fn an_extension_arms_the_reminders_again() {
    let start = start_time();
    let mut sent = HashSet::new();
    let before = open_checkout(start + TimeDelta::minutes(20));
    assert_eq!(
        desk::due_reminders(std::slice::from_ref(&before), start, &mut sent).len(),
        1
    );
    let mut extended = before;
    extended.expires_at = start + TimeDelta::minutes(50);
    let later = start + TimeDelta::minutes(25);
    let due = desk::due_reminders(&[extended], later, &mut sent);
    assert_eq!(
        due.len(),
        1,
        "the new expiry has its own 30-minute reminder"
    );
    assert_eq!(due[0].1, Reminder::ThirtyMinutes);
}

crate::contract!(a_short_lease_is_reminded_of_the_time_it_has_left);
