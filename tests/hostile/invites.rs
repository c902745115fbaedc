//! Invites and the studio's admin endpoints against a hostile client (API.md
//! "Joining a studio", "Folder permissions"): a guesser of codes gets ten
//! tries a minute from an address, however fast it sends; a code redeemed
//! twice at once makes one token; malformed redeems are our JSON, never a
//! 500; bad rules change nothing; and a participant who is not an admin
//! reaches no admin endpoint. Over the server of a remote fixture (the real
//! `leasedesk serve` code on 127.0.0.1:0), from several loopback addresses
//! where a test needs them.

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::StreamExt;
use reqwest::Method;
use serde_json::{json, Value};

use crate::failover::{ServeProcess, SharedStore};
use crate::harness::*;

/// What these tests ask of a server beyond plain calls.
trait Redeeming {
    /// POST /v1/invites/redeem with `body` as sent, and no token.
    async fn redeem(&self, body: impl Into<Vec<u8>>) -> Answer;

    /// The admin's invite for `name`: its code.
    async fn invite(&self, admin: &str, name: &str) -> String;
}

impl Redeeming for Http {
    async fn redeem(&self, body: impl Into<Vec<u8>>) -> Answer {
        self.call(Method::POST, "/v1/invites/redeem", None, Some(body.into()))
            .await
    }

    async fn invite(&self, admin: &str, name: &str) -> String {
        let made = self
            .send_json(Method::POST, "/v1/invites", admin, json!({ "name": name }))
            .await;
        assert_eq!(made.status, 201, "{}", made.body);
        made.body["code"].as_str().unwrap().to_owned()
    }
}

/// Loopback address 127.0.0.`n`.
fn loopback(n: u8) -> IpAddr {
    IpAddr::V4(Ipv4Addr::new(127, 0, 0, n))
}

/// A code shaped like a real one (32 symbols of the codes' alphabet in
/// groups of four), random, so almost surely no invite's.
fn random_code() -> String {
    const ALPHABET: &[u8; 32] = b"0123456789ABCDEFGHJKMNPQRSTVWXYZ";
    let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
    let symbols: Vec<char> = a
        .as_bytes()
        .iter()
        .chain(b.as_bytes())
        .map(|byte| ALPHABET[usize::from(byte % 32)] as char)
        .collect();
    symbols
        .chunks(4)
        .map(|group| group.iter().collect::<String>())
        .collect::<Vec<_>>()
        .join("-")
}

fn redeem_body(code: &str, device: &str) -> Vec<u8> {
    json!({ "code": code, "device": device })
        .to_string()
        .into_bytes()
}

/// `(status, code)` of an answer: the error code, or "" for a success.
fn outcome(answer: &Answer) -> (u16, String) {
    (
        answer.status.as_u16(),
        answer.body["error"].as_str().unwrap_or_default().to_owned(),
    )
}

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
    assert!(real_then.body["message"]
        .as_str()
        .is_some_and(|m| !m.is_empty()));
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

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_redeem_limit_is_one_count_across_servers_and_restarts_on_a_data_folder() {
    the_redeem_limit_is_one_count_across_servers_and_restarts(SharedStore::new()).await
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_redeem_limit_is_one_count_across_servers_and_restarts_on_postgres() {
    the_redeem_limit_is_one_count_across_servers_and_restarts(SharedStore::postgres()).await
}

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redeem_minute_is_the_stores_and_old_minutes_are_forgotten_on_sqlite() {
    the_redeem_minute_is_the_stores_and_old_minutes_are_forgotten(remote_fixture().await).await
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redeem_minute_is_the_stores_and_old_minutes_are_forgotten_on_postgres() {
    the_redeem_minute_is_the_stores_and_old_minutes_are_forgotten(postgres_fixture().await).await
}

/// Twenty codes, each redeemed by two devices at the same moment (all forty
/// at once, each pair from its own address): one device of each pair gets
/// a working token, the other `invite_invalid`; each participant gains
/// exactly one device per code.
async fn a_code_redeemed_twice_at_once_makes_one_device(f: Fixture) {
    let api = Http::of(&f);
    let admin = f.token("user:admin");
    let mut codes = Vec::new();
    for i in 0..20 {
        // Half for new participants, half more devices of bob's.
        let name = if i % 2 == 0 {
            format!("guest{i}")
        } else {
            "bob".into()
        };
        codes.push((api.invite(admin, &name).await, name));
    }
    let pairs = codes.iter().enumerate().map(|(i, (code, _))| {
        let api = Http::from(&f, loopback(10 + i as u8));
        async move {
            let (a, b) = tokio::join!(
                api.redeem(redeem_body(code, "first")),
                api.redeem(redeem_body(code, "second"))
            );
            [a, b]
        }
    });
    let answers = futures_util::future::join_all(pairs).await;
    for ((_, name), pair) in codes.iter().zip(&answers) {
        let mut outcomes: Vec<(u16, String)> = pair.iter().map(outcome).collect();
        outcomes.sort();
        assert_eq!(
            outcomes,
            vec![(201, String::new()), (404, "invite_invalid".into())],
            "{pair:?}"
        );
        let made = pair.iter().find(|answer| answer.status == 201).unwrap();
        let participant = format!("user:{name}");
        assert_eq!(made.body["participant"], participant);
        let me = api
            .get("/v1/me", made.body["token"].as_str().unwrap())
            .await
            .seen();
        assert_eq!(me, (200, json!({ "participant": participant })));
    }
    let (_, members) = api.get("/v1/participants", admin).await.seen();
    let devices = |p: &str| {
        members["participants"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["participant"] == p)
            .map_or(0, |m| m["devices"].as_array().unwrap().len())
    };
    assert_eq!(devices("user:bob"), 1 + 10);
    for i in (0..20).step_by(2) {
        assert_eq!(devices(&format!("user:guest{i}")), 1);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_code_redeemed_twice_at_once_makes_one_device_on_sqlite() {
    a_code_redeemed_twice_at_once_makes_one_device(remote_fixture().await).await
}

#[cfg(target_os = "linux")]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_code_redeemed_twice_at_once_makes_one_device_on_postgres() {
    a_code_redeemed_twice_at_once_makes_one_device(team_fixture().await).await
}

/// Malformed redeems are refused in our JSON with the status their fault
/// calls for, never a 500.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_redeems_are_refused_in_our_json_never_500() {
    let f = remote_fixture().await;
    let api = Http::of(&f);
    let code = random_code();
    let long_code = "A".repeat(100 << 10);
    let cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
        ("no fields", b"{}".to_vec(), 400, "bad_request"),
        (
            "no device",
            json!({ "code": code }).to_string().into(),
            400,
            "bad_request",
        ),
        (
            "no code",
            json!({ "device": "laptop" }).to_string().into(),
            400,
            "bad_request",
        ),
        (
            "an unknown field",
            json!({ "code": code, "device": "laptop", "admin": true })
                .to_string()
                .into(),
            400,
            "bad_request",
        ),
        (
            "a code that is a number",
            json!({ "code": 7, "device": "laptop" }).to_string().into(),
            400,
            "bad_request",
        ),
        // Over the 64 KiB of any JSON body.
        (
            "a code of 100 KB",
            redeem_body(&long_code, "laptop"),
            413,
            "too_large",
        ),
        (
            "an empty device name",
            redeem_body(&code, ""),
            422,
            "invalid",
        ),
        (
            "a blank device name",
            redeem_body(&code, "   "),
            422,
            "invalid",
        ),
        (
            "a device name of 65 characters",
            redeem_body(&code, &"d".repeat(65)),
            422,
            "invalid",
        ),
        (
            "a device name with a control character",
            redeem_body(&code, "lap\u{7}top"),
            422,
            "invalid",
        ),
        (
            "a device name with a newline",
            redeem_body(&code, "lap\ntop"),
            422,
            "invalid",
        ),
        (
            "not JSON",
            b"code=abc&device=laptop".to_vec(),
            400,
            "bad_request",
        ),
        (
            "a JSON array",
            b"[\"abc\", \"laptop\"]".to_vec(),
            400,
            "bad_request",
        ),
        ("a JSON string", b"\"abc\"".to_vec(), 400, "bad_request"),
        (
            "bytes that are not UTF-8",
            b"{\"code\":\"\xff\xfe\",\"device\":\"x\"}".to_vec(),
            400,
            "bad_request",
        ),
        (
            "JSON cut short",
            b"{\"code\":\"abc\",\"dev".to_vec(),
            400,
            "bad_request",
        ),
    ];
    for (what, body, status, code) in cases {
        let answer = api.redeem(body).await;
        assert_eq!(
            outcome(&answer),
            (status, code.to_owned()),
            "{what}: {}",
            answer.body
        );
        assert!(
            answer.body["message"]
                .as_str()
                .is_some_and(|m| !m.is_empty()),
            "{what}: {}",
            answer.body
        );
    }
    // A device name of 64 characters is a name: only the code is wrong.
    let answer = api.redeem(redeem_body(&code, &"d".repeat(64))).await;
    assert_eq!(
        outcome(&answer),
        (404, "invite_invalid".into()),
        "{}",
        answer.body
    );
}

/// The invites waiting to be used, listed and revoked over HTTP by an
/// admin (docs/API-studio.md): no code is listed; an id that is not a
/// UUID is 400, one that names no open invite 404 `not_found`, a revoked
/// code the same 404 `invite_invalid` as an unknown one; every refusal is
/// our JSON, never a 500.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invites_are_listed_and_revoked_in_our_json() {
    let f = remote_fixture().await;
    let api = Http::of(&f);
    let admin = f.token("user:admin");
    let code = api.invite(admin, "dana").await;
    let (status, listed) = api.get("/v1/invites", admin).await.seen();
    assert_eq!(status, 200, "{listed}");
    let invites = listed["invites"].as_array().unwrap();
    assert_eq!(invites.len(), 1, "{listed}");
    assert_eq!(invites[0]["participant"], "user:dana");
    assert_eq!(invites[0]["made_by"], "user:admin");
    assert_eq!(invites[0]["admin"], false);
    assert!(!listed.to_string().contains(&code), "no code: {listed}");
    let id = invites[0]["id"].as_str().unwrap().to_owned();

    let (none, _) = api
        .call(Method::GET, "/v1/invites", None, None)
        .await
        .seen();
    assert_eq!(none, 401, "no token");
    let unknown = uuid::Uuid::new_v4().to_string();
    for (path, expected) in [
        ("/v1/invites/not-a-uuid".to_owned(), (400, "bad_request")),
        ("/v1/invites/%FF%FE".to_owned(), (400, "bad_request")),
        (
            format!("/v1/invites/{}", "9".repeat(200)),
            (400, "bad_request"),
        ),
        (format!("/v1/invites/{unknown}"), (404, "not_found")),
    ] {
        let answer = api.call(Method::DELETE, &path, Some(admin), None).await;
        assert_eq!(
            outcome(&answer),
            (expected.0, expected.1.to_owned()),
            "DELETE {path}: {}",
            answer.body
        );
    }
    for (method, path) in [
        (Method::GET, format!("/v1/invites/{id}")),
        (Method::PUT, "/v1/invites".to_owned()),
        (Method::DELETE, "/v1/invites".to_owned()),
        (Method::DELETE, "/v1/invites/redeem".to_owned()),
    ] {
        let answer = api.call(method.clone(), &path, Some(admin), None).await;
        assert_eq!(
            outcome(&answer),
            (405, "method_not_allowed".to_owned()),
            "{method} {path}: {}",
            answer.body
        );
    }

    let path = format!("/v1/invites/{id}");
    let revoked = api.call(Method::DELETE, &path, Some(admin), None).await;
    assert_eq!(revoked.status, 204, "{}", revoked.body);
    assert_eq!(
        api.get("/v1/invites", admin).await.seen(),
        (200, json!({ "invites": [] }))
    );
    let again = api.call(Method::DELETE, &path, Some(admin), None).await;
    assert_eq!(outcome(&again), (404, "not_found".into()), "{}", again.body);
    let redeemed = api.redeem(redeem_body(&code, "dana's laptop")).await;
    assert_eq!(
        outcome(&redeemed),
        (404, "invite_invalid".into()),
        "the same refusal as an unknown code: {}",
        redeemed.body
    );
}

/// Bad rules are refused whole (422) and leave the rules as they were; a
/// group a rule names cannot be removed; and bob, who is no admin, reaches
/// none of the admin endpoints, nor makes himself one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_rules_change_nothing_and_no_one_but_an_admin_sets_them() {
    let f = remote_fixture().await;
    let api = Http::of(&f);
    let (admin, bob, alice) = (
        f.token("user:admin"),
        f.token("user:bob"),
        f.token("user:alice"),
    );
    let group = api
        .send_json(
            Method::PUT,
            "/v1/groups/clients",
            admin,
            json!({ "members": ["user:bob"] }),
        )
        .await;
    assert_eq!(group.status, 200, "{}", group.body);
    let good = json!([
        { "folder": "finance/", "who": "group:clients", "level": "none" },
        { "folder": "brand/approved/", "who": "user:bob", "level": "read" },
    ]);
    let set = api
        .send_json(
            Method::PUT,
            "/v1/permissions",
            admin,
            json!({ "rules": good }),
        )
        .await;
    assert_eq!(set.status, 200, "{}", set.body);
    let rules_before = api.get("/v1/permissions", admin).await.seen();
    assert_eq!(rules_before, (200, json!({ "rules": good })));
    let groups_before = api.get("/v1/groups", admin).await.seen();

    let bad = [
        (
            "a group that does not exist",
            json!({ "folder": "brand/", "who": "group:ghost", "level": "read" }),
        ),
        (
            "a folder without its slash",
            json!({ "folder": "brand", "who": "user:bob", "level": "read" }),
        ),
        (
            "an absolute folder",
            json!({ "folder": "/abs/", "who": "user:bob", "level": "read" }),
        ),
        (
            "a folder that climbs",
            json!({ "folder": "../up/", "who": "user:bob", "level": "read" }),
        ),
        (
            "a level that is not one",
            json!({ "folder": "brand/", "who": "user:bob", "level": "admin" }),
        ),
        (
            "a who that is not one",
            json!({ "folder": "brand/", "who": "root", "level": "read" }),
        ),
        (
            "someone who is not a participant",
            json!({ "folder": "brand/", "who": "user:mallory", "level": "read" }),
        ),
    ];
    for (what, rule) in bad {
        let mut rules = good.as_array().unwrap().clone();
        rules.push(rule);
        let answer = api
            .send_json(
                Method::PUT,
                "/v1/permissions",
                admin,
                json!({ "rules": rules }),
            )
            .await;
        assert_eq!(
            outcome(&answer),
            (422, "invalid".into()),
            "{what}: {}",
            answer.body
        );
        assert_eq!(
            api.get("/v1/permissions", admin).await.seen(),
            rules_before,
            "{what}"
        );
    }
    let removed = api
        .call(Method::DELETE, "/v1/groups/clients", Some(admin), None)
        .await;
    assert_eq!(
        outcome(&removed),
        (422, "invalid".into()),
        "{}",
        removed.body
    );
    assert_eq!(api.get("/v1/groups", admin).await.seen(), groups_before);

    // Bob, no admin, at every admin endpoint.
    let (_, alices) = api.get("/v1/me/devices", alice).await.seen();
    let alices_device = alices["current"].as_str().unwrap().to_owned();
    let as_bob: Vec<(Method, String, Option<Value>)> = vec![
        (
            Method::POST,
            "/v1/invites".into(),
            Some(json!({ "name": "mallory" })),
        ),
        (
            Method::POST,
            "/v1/invites".into(),
            Some(json!({ "name": "bob", "admin": true })),
        ),
        (
            Method::POST,
            "/v1/invites".into(),
            Some(json!({ "name": "admin", "admin": true })),
        ),
        (Method::GET, "/v1/invites".into(), None),
        (
            Method::DELETE,
            format!("/v1/invites/{}", uuid::Uuid::new_v4()),
            None,
        ),
        (Method::GET, "/v1/participants".into(), None),
        (
            Method::DELETE,
            format!("/v1/participants/user:alice/devices/{alices_device}"),
            None,
        ),
        (
            Method::DELETE,
            "/v1/participants/user:alice/devices/no-such-device".into(),
            None,
        ),
        (Method::GET, "/v1/groups".into(), None),
        (
            Method::PUT,
            "/v1/groups/clients".into(),
            Some(json!({ "members": [] })),
        ),
        (
            Method::PUT,
            "/v1/groups/admins".into(),
            Some(json!({ "members": ["user:bob"] })),
        ),
        (
            Method::PUT,
            "/v1/groups/ghosts".into(),
            Some(json!({ "members": ["user:nobody"] })),
        ),
        (Method::DELETE, "/v1/groups/clients".into(), None),
        (Method::DELETE, "/v1/groups/ghosts".into(), None),
        (Method::GET, "/v1/permissions".into(), None),
        (
            Method::PUT,
            "/v1/permissions".into(),
            Some(
                json!({ "rules": [{ "folder": "finance/", "who": "user:bob", "level": "write" }] }),
            ),
        ),
        (
            Method::PUT,
            "/v1/permissions".into(),
            Some(json!({ "rules": [] })),
        ),
    ];
    for (method, path, body) in as_bob {
        let body = body.map(|b| b.to_string().into_bytes());
        let answer = api.call(method.clone(), &path, Some(bob), body).await;
        assert_eq!(
            outcome(&answer),
            (403, "forbidden".into()),
            "{method} {path}: {}",
            answer.body
        );
    }
    // His own devices are his: an invite for another of them (not an
    // admin's, whatever he asks), but not another's device.
    let escalate = api
        .send_json(
            Method::POST,
            "/v1/me/invites",
            bob,
            json!({ "admin": true }),
        )
        .await;
    assert_eq!(
        outcome(&escalate),
        (400, "bad_request".into()),
        "{}",
        escalate.body
    );
    let mine = api
        .send_json(Method::POST, "/v1/me/invites", bob, json!({}))
        .await;
    assert_eq!(
        (mine.status.as_u16(), &mine.body["participant"]),
        (201, &json!("user:bob"))
    );
    let other = api
        .call(
            Method::DELETE,
            &format!("/v1/me/devices/{alices_device}"),
            Some(bob),
            None,
        )
        .await;
    assert_eq!(outcome(&other), (404, "not_found".into()), "{}", other.body);

    // Nothing changed: the rules, the groups, alice's device, bob's flags.
    assert_eq!(api.get("/v1/permissions", admin).await.seen(), rules_before);
    assert_eq!(api.get("/v1/groups", admin).await.seen(), groups_before);
    assert_eq!(api.get("/v1/me", alice).await.status, 200);
    let (_, members) = api.get("/v1/participants", admin).await.seen();
    let listed: Vec<(&str, bool)> = members["participants"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["participant"].as_str().unwrap(),
                m["admin"].as_bool().unwrap(),
            )
        })
        .collect();
    assert!(listed.contains(&("user:bob", false)), "{listed:?}");
    assert!(
        !listed.iter().any(|(p, _)| *p == "user:mallory"),
        "{listed:?}"
    );
}
