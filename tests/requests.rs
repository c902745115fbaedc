//! Asking the holder (API.md "Asking the holder"): a request to the holder
//! of a check-out, replies and withdrawals, its end with the check-out, and
//! a holder told at most once a quarter of an hour. A request never
//! releases anything by itself.

use std::time::Duration;

use leasedesk::model::*;
use leasedesk::Error;

use crate::harness::*;

/// A file alice holds under a check-out.
async fn held_by_alice(f: &Fixture, p: &str) -> (Artifact, Checkout) {
    let a = f.import(p, b"v1").await;
    let checkout = f.alice.check_out(a.id, checkout_request()).await.unwrap();
    (a, checkout)
}

async fn bob_asks_alice_and_she_replies(f: Fixture) {
    let (a, checkout) = held_by_alice(&f, "brand/hero.psd").await;
    let (asked, is_new) = f
        .bob
        .ask(a.id, Some("need it for the logo fix"))
        .await
        .unwrap();
    assert!(is_new);
    assert_eq!(
        (&asked.from, &asked.to, asked.checkout_id, asked.state),
        (
            &participant("user:bob"),
            &participant("user:alice"),
            checkout.id,
            RequestState::Open
        )
    );
    assert_eq!(asked.path, a.path);
    assert_eq!(asked.message.as_deref(), Some("need it for the logo fix"));
    let opened = f.last_event("request.opened").await;
    assert_eq!(opened.data["request_id"], asked.id.to_string());
    assert_eq!(opened.artifact_id, Some(a.id));
    assert_eq!(opened.participant, Some(participant("user:bob")));
    // Both see it: the holder asked, and the one who asks.
    assert_eq!(
        f.alice.requests(true).await.unwrap(),
        std::slice::from_ref(&asked)
    );
    assert_eq!(
        f.bob.requests(true).await.unwrap(),
        std::slice::from_ref(&asked)
    );
    assert!(f.agent.requests(false).await.unwrap().is_empty());
    // Nothing is released by the request.
    let lease = f.artifact(a.id).await.lease.unwrap();
    assert_eq!(lease.checkout_id, Some(checkout.id));

    let replied = f.alice.reply(asked.id, "20 more minutes").await.unwrap();
    assert_eq!(replied.state, RequestState::Replied);
    assert_eq!(replied.reply.as_deref(), Some("20 more minutes"));
    assert!(replied.replied_at.is_some());
    assert_eq!(
        f.bob.requests(true).await.unwrap(),
        std::slice::from_ref(&replied)
    );
    let again = f.alice.reply(asked.id, "10 more").await.unwrap();
    assert_eq!(again.reply.as_deref(), Some("10 more"));
    assert_eq!(f.events_of("request.replied").await.len(), 2);
}

async fn asking_again_replaces_the_message_and_tells_the_holder_once_a_quarter_hour(f: Fixture) {
    let (a, _) = held_by_alice(&f, "a.psd").await;
    let (first, _) = f.bob.ask(a.id, Some("please")).await.unwrap();
    let (second, is_new) = f.bob.ask(a.id, Some("pretty please")).await.unwrap();
    assert!(!is_new, "the same request, asked again");
    assert_eq!(second.id, first.id);
    assert_eq!(second.message.as_deref(), Some("pretty please"));
    assert_eq!(f.events_of("request.opened").await.len(), 1);
    // Withdrawn and asked anew within the quarter hour: a new request, no new notice.
    f.bob.withdraw(first.id).await.unwrap();
    let (renewed, is_new) = f.bob.ask(a.id, None).await.unwrap();
    assert!(is_new);
    assert_ne!(renewed.id, first.id);
    assert_eq!(f.events_of("request.opened").await.len(), 1);
    f.advance(Duration::from_secs(15 * 60));
    f.bob.ask(a.id, Some("still need it")).await.unwrap();
    assert_eq!(f.events_of("request.opened").await.len(), 2);
}

async fn a_flood_of_requests_tells_the_holder_once(f: Fixture) {
    let (a, _) = held_by_alice(&f, "a.psd").await;
    let seq = f.last_seq().await;
    for n in 0..200 {
        f.bob.ask(a.id, Some(&format!("ask {n}"))).await.unwrap();
    }
    assert_eq!(f.kinds_after(seq).await, ["request.opened"]);
    let standing = f.alice.requests(true).await.unwrap();
    assert_eq!(standing.len(), 1);
    assert_eq!(standing[0].message.as_deref(), Some("ask 199"));
}

async fn a_request_ends_with_its_checkout_however_it_closes(f: Fixture) {
    // Checked in, cancelled, broken by an admin, lapsed.
    for (n, how) in ["checkin", "cancel", "break", "lapse"]
        .into_iter()
        .enumerate()
    {
        let (a, checkout) = held_by_alice(&f, &format!("{how}.psd")).await;
        let (asked, _) = f.bob.ask(a.id, Some(how)).await.unwrap();
        let seq = f.last_seq().await;
        match how {
            "checkin" => {
                f.alice.check_in(checkout.id, bytes(b"v2")).await.unwrap();
            }
            "cancel" => {
                f.alice.cancel(checkout.id).await.unwrap();
            }
            "break" => {
                f.admin.break_lease(a.id, "urgent").await.unwrap();
            }
            _ => {
                f.advance(Duration::from_secs(DEFAULT_CHECKOUT_TTL_SECONDS + 1));
                f.store.sweep().unwrap();
            }
        }
        let kinds = f.kinds_after(seq).await;
        assert!(
            kinds.contains(&"request.ended".to_owned()),
            "{how}: {kinds:?}"
        );
        let all = f.bob.requests(false).await.unwrap();
        let ended = all.iter().find(|r| r.id == asked.id).unwrap();
        assert_eq!(ended.state, RequestState::Ended, "{how}");
        assert!(ended.ended_at.is_some());
        assert_eq!(
            f.bob.requests(true).await.unwrap(),
            [],
            "{how}: none stands"
        );
        // Nothing to answer any more.
        let late = f.alice.reply(asked.id, "too late").await;
        assert!(
            matches!(late, Err(Error::Invalid(_))),
            "{how} {n}: {late:?}"
        );
    }
}

async fn only_the_holder_replies_and_only_the_asker_withdraws(f: Fixture) {
    let (a, _) = held_by_alice(&f, "a.psd").await;
    let (asked, _) = f.bob.ask(a.id, None).await.unwrap();
    for (who, backend) in [("bob", &f.bob), ("admin", &f.admin)] {
        let replied = backend.reply(asked.id, "not mine").await;
        assert_forbidden(&replied, who);
    }
    let withdrawn = f.alice.withdraw(asked.id).await;
    assert_forbidden(&withdrawn, "alice withdraws bob's request");
    let empty = f.alice.reply(asked.id, "  ").await;
    assert!(matches!(empty, Err(Error::Invalid(_))), "{empty:?}");
    let withdrawn = f.bob.withdraw(asked.id).await.unwrap();
    assert_eq!(withdrawn.state, RequestState::Withdrawn);
    f.assert_retry_changes_nothing(f.bob.withdraw(asked.id), &withdrawn, "a retry")
        .await;
    let unknown = f.bob.withdraw(RequestId::new()).await;
    assert!(matches!(unknown, Err(Error::NotFound(_))), "{unknown:?}");
    let unknown = f.alice.reply(RequestId::new(), "hm").await;
    assert!(matches!(unknown, Err(Error::NotFound(_))), "{unknown:?}");
}

async fn a_request_needs_a_holder_by_checkout_and_a_message_that_fits(f: Fixture) {
    let free = f.import("free.psd", b"v1").await;
    let refused = f.bob.ask(free.id, None).await;
    assert!(matches!(refused, Err(Error::NotHeld(_))), "{refused:?}");
    let edited = f.import("edited.png", b"v1").await;
    f.agent.begin_edit(edited.id, None).await.unwrap();
    let refused = f.bob.ask(edited.id, None).await;
    assert!(matches!(refused, Err(Error::NotHeld(_))), "{refused:?}");
    let refused = f.bob.ask(ArtifactId::new(), None).await;
    assert!(matches!(refused, Err(Error::NotFound(_))), "{refused:?}");

    let (a, _) = held_by_alice(&f, "a.psd").await;
    let own = f.alice.ask(a.id, None).await;
    assert!(matches!(own, Err(Error::Invalid(_))), "{own:?}");
    let long = "é".repeat(MAX_REQUEST_MESSAGE_CHARS + 1);
    let refused = f.bob.ask(a.id, Some(&long)).await;
    assert!(matches!(refused, Err(Error::Invalid(_))), "{refused:?}");
    let control = f.bob.ask(a.id, Some("bell\u{7}")).await;
    assert!(matches!(control, Err(Error::Invalid(_))), "{control:?}");
    assert_eq!(
        f.bob.requests(false).await.unwrap(),
        [],
        "nothing was asked"
    );
    let fits = "é".repeat(MAX_REQUEST_MESSAGE_CHARS);
    let (asked, _) = f.bob.ask(a.id, Some(&fits)).await.unwrap();
    assert_eq!(asked.message.as_deref(), Some(fits.as_str()));
}

crate::contract!(
    bob_asks_alice_and_she_replies,
    asking_again_replaces_the_message_and_tells_the_holder_once_a_quarter_hour,
    a_flood_of_requests_tells_the_holder_once,
    a_request_ends_with_its_checkout_however_it_closes,
    only_the_holder_replies_and_only_the_asker_withdraws,
    a_request_needs_a_holder_by_checkout_and_a_message_that_fits,
);
