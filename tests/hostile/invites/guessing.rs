//! A guesser of codes: ten tries a minute from an address, however fast
//! it sends, counted once for the studio whatever serves it, by the
//! store's clock.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use serde_json::json;

use super::*;
use crate::failover::{ServeProcess, SharedStore};

/// A guesser sends 10,000 well-formed codes from one address, 32 at a
/// time: exactly ten are judged (404 `invite_invalid`), every other is 429
/// `too_many`, and a real code from there is refused too for the rest of
/// the minute (the minute is the server's own clock, not waited for here),
/// without being used up: from another address it works. Alice is served
/// throughout.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_guesser_gets_ten_codes_a_minute_from_one_address() {
    let f = remote_fixture().await;
    let api = Http::of(&f);
    let (admin, alice) = (f.token("user:admin"), f.token("user:alice").to_owned());
    f.import("brand/open.psd", b"open").await;
    let real = api.invite(admin, "carol").await;

    let guessing = Arc::new(AtomicBool::new(true));
    let reads = tokio::spawn({
        let (api, guessing) = (api.clone(), guessing.clone());
        async move {
            let mut statuses = BTreeMap::new();
            while guessing.load(Ordering::Relaxed) {
                let (status, _) = api.get("/v1/artifacts", &alice).await.seen();
                *statuses.entry(status).or_insert(0) += 1;
            }
            statuses
        }
    });
    let started = Instant::now();
    let answers: Vec<(u16, String)> = futures_util::stream::iter(0..10_000)
        .map(|_| {
            let api = api.clone();
            async move { outcome(&api.redeem(redeem_body(&random_code(), "guesser")).await) }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let took = started.elapsed();
    let real_then = api.redeem(redeem_body(&real, "carol's laptop")).await;
    guessing.store(false, Ordering::Relaxed);
    let reads = reads.await.unwrap();

    let mut counts: BTreeMap<(u16, String), usize> = BTreeMap::new();
    for answer in answers {
        *counts.entry(answer).or_default() += 1;
    }
    eprintln!(
        "figure: 10000 guessed codes in {} ms: {counts:?}",
        took.as_millis()
    );
    eprintln!("figure: alice's list answered meanwhile: {reads:?}");
    assert!(
        took < Duration::from_secs(55),
        "the guesses took {took:?}: the server's minute may have turned"
    );
    let judged = counts
        .get(&(404, "invite_invalid".into()))
        .copied()
        .unwrap_or(0);
    let refused = counts.get(&(429, "too_many".into())).copied().unwrap_or(0);
    assert_eq!((judged, refused), (10, 9_990), "{counts:?}");
    assert_eq!(
        outcome(&real_then),
        (429, "too_many".into()),
        "{}",
        real_then.body
    );
    assert!(!real_then.message().is_empty());
    assert!(reads.get(&200).is_some_and(|n| *n > 0), "{reads:?}");
    assert_eq!(reads.keys().collect::<Vec<_>>(), vec![&200], "{reads:?}");

    // The refused code was not used up: from another address it works.
    let elsewhere = Http::from(&f, loopback(2));
    let (status, redeemed) = elsewhere
        .redeem(redeem_body(&real, "carol's laptop"))
        .await
        .seen();
    assert_eq!(status, 201, "{redeemed}");
    let carol = redeemed["token"].as_str().unwrap();
    assert_eq!(
        api.get("/v1/me", carol).await.body["participant"],
        "user:carol"
    );
}

/// The answer to a redeem past the limit, as docs/API.md gives it: 429
/// `too_many`, and this message.
fn assert_too_many(answer: &Answer, what: &str) {
    assert_eq!(answer.status, 429, "{what}: {}", answer.body);
    assert_eq!(
        answer.body,
        json!({
            "error": "too_many",
            "message": "more than 10 invites that did not work were tried from here this minute: wait a minute",
        }),
        "{what}"
    );
}

/// One count for the studio, whatever serves it: two servers on one store
/// (a data folder two processes share, or a team's database) take ten
/// failed redeems from one address between them, spread over both, and
/// refuse the eleventh on either; a burst from another address, every
/// other redeem to each server and 32 at a time, has exactly ten judged;
/// and a server started again on the store, once both were killed, still
/// refuses both addresses, a real code included, which then works from a
/// third address. The minute is the store's real clock here, not waited for.
async fn the_redeem_limit_is_one_count_across_servers_and_restarts(team: SharedStore) {
    let admin = team.admin("user:admin");
    let mut servers = [
        ServeProcess::start(&team, ""),
        ServeProcess::start(&team, ""),
    ];
    let at = |server: &ServeProcess, n: u8| Http::at(&server.url, loopback(n));
    let (one, two) = (at(&servers[0], 1), at(&servers[1], 1));
    let real = one.invite(&admin, "carol").await;
    let started = Instant::now();
    let since = || format!("{:?} after the first failure", started.elapsed());

    for i in 0..10 {
        let api = [&one, &two][i % 2];
        let answer = api.redeem(redeem_body(&random_code(), "guesser")).await;
        assert_eq!(
            outcome(&answer),
            (404, "invite_invalid".into()),
            "failure {} (server {}): {}",
            i + 1,
            i % 2 + 1,
            answer.body
        );
    }
    for (n, api) in [(1, &one), (2, &two)] {
        let eleventh = api.redeem(redeem_body(&random_code(), "guesser")).await;
        assert_too_many(&eleventh, &format!("the 11th on server {n}, {}", since()));
        let code = api.redeem(redeem_body(&real, "carol's laptop")).await;
        assert_too_many(&code, &format!("a real code on server {n}, {}", since()));
    }

    let burst = [at(&servers[0], 2), at(&servers[1], 2)];
    let answers: Vec<(u16, String)> = futures_util::stream::iter(0..200)
        .map(|i| {
            let api = burst[i % 2].clone();
            async move { outcome(&api.redeem(redeem_body(&random_code(), "guesser")).await) }
        })
        .buffer_unordered(32)
        .collect()
        .await;
    let mut counts: BTreeMap<(u16, String), usize> = BTreeMap::new();
    for answer in answers {
        *counts.entry(answer).or_default() += 1;
    }
    let judged = counts.get(&(404, "invite_invalid".into())).copied();
    let refused = counts.get(&(429, "too_many".into())).copied();
    assert_eq!(
        (judged, refused),
        (Some(10), Some(190)),
        "{counts:?}, {}",
        since()
    );

    for server in &mut servers {
        server.kill();
    }
    let again = ServeProcess::start(&team, "");
    for n in [1, 2] {
        let answer = at(&again, n)
            .redeem(redeem_body(&random_code(), "guesser"))
            .await;
        assert_too_many(
            &answer,
            &format!("127.0.0.{n} after the restart, {}", since()),
        );
    }
    let code = at(&again, 1)
        .redeem(redeem_body(&real, "carol's laptop"))
        .await;
    assert_too_many(
        &code,
        &format!("a real code after the restart, {}", since()),
    );

    // The refused code was not used up.
    let (status, redeemed) = at(&again, 3)
        .redeem(redeem_body(&real, "carol's laptop"))
        .await
        .seen();
    assert_eq!(status, 201, "{redeemed}");
    assert_eq!(redeemed["participant"], "user:carol");
}

crate::on_sqlite_and_postgres!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    the_redeem_limit_is_one_count_across_servers_and_restarts(
        SharedStore::new(),
        SharedStore::postgres(),
    )
);

/// The store's rows of failed redeems: each address and its count.
fn failed_redeem_rows(f: &Fixture) -> Vec<String> {
    sql_at(
        f.dir.path(),
        f.database.as_deref(),
        "SELECT address || ' ' || failed FROM failed_redeems ORDER BY address",
    )
    .unwrap()
}

/// The minute is the store's clock (the test's, here): after nine failed
/// redeems a real code still works, and is not counted, so the tenth
/// failure is judged and the eleventh refused; the address is refused at
/// 59.999 s, and at 60 s it has a new minute of ten tries. The addresses
/// whose minute is over are forgotten by the redeems that count, 16 at
/// most each, oldest first: the rows left are the last minute's.
async fn the_redeem_minute_is_the_stores_and_old_minutes_are_forgotten(f: Fixture) {
    let admin = f.token("user:admin");
    let api = Http::of(&f);
    let first = api.invite(admin, "carol").await;
    let second = api.invite(admin, "dave").await;
    let guess = || api.redeem(redeem_body(&random_code(), "guesser"));
    let invalid = (404, "invite_invalid".to_owned());

    for i in 1..=9 {
        let answer = guess().await;
        assert_eq!(outcome(&answer), invalid, "failure {i}: {}", answer.body);
    }
    let (status, worked) = api
        .redeem(redeem_body(&first, "carol's laptop"))
        .await
        .seen();
    assert_eq!(status, 201, "a real code under the limit: {worked}");
    let tenth = guess().await;
    assert_eq!(outcome(&tenth), invalid, "the 10th failure: {}", tenth.body);
    assert_too_many(&guess().await, "the 11th");
    let refused = api.redeem(redeem_body(&second, "dave's laptop")).await;
    assert_too_many(&refused, "a real code past the limit");
    assert_eq!(failed_redeem_rows(&f), ["127.0.0.1 10"]);

    f.clock.advance(Duration::from_millis(59_999));
    assert_too_many(&guess().await, "at 59.999 s");
    f.clock.advance(Duration::from_millis(1));
    let (status, worked) = api
        .redeem(redeem_body(&second, "dave's laptop"))
        .await
        .seen();
    assert_eq!(status, 201, "a real code in the next minute: {worked}");
    for i in 1..=10 {
        let answer = guess().await;
        assert_eq!(
            outcome(&answer),
            invalid,
            "next minute's failure {i}: {}",
            answer.body
        );
    }
    assert_too_many(&guess().await, "the next minute's 11th");

    // Twenty more addresses fail once each; a minute later, two others do.
    for n in 20..40 {
        let answer = Http::from(&f, loopback(n))
            .redeem(redeem_body(&random_code(), "guesser"))
            .await;
        assert_eq!(outcome(&answer), invalid, "127.0.0.{n}: {}", answer.body);
    }
    assert_eq!(failed_redeem_rows(&f).len(), 21);
    f.clock.advance(Duration::from_secs(60));
    for (n, left) in [(50, 21 - 16 + 1), (51, 2)] {
        let answer = Http::from(&f, loopback(n))
            .redeem(redeem_body(&random_code(), "guesser"))
            .await;
        assert_eq!(outcome(&answer), invalid, "127.0.0.{n}: {}", answer.body);
        assert_eq!(failed_redeem_rows(&f).len(), left, "after 127.0.0.{n}");
    }
    assert_eq!(failed_redeem_rows(&f), ["127.0.0.50 1", "127.0.0.51 1"]);
}

crate::on_sqlite_and_postgres!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    the_redeem_minute_is_the_stores_and_old_minutes_are_forgotten(
        remote_fixture().await,
        postgres_fixture().await,
    )
);
