//! Redeems sent at once, and redeems that are not what a client sends.

use serde_json::json;

use super::*;

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

crate::on_sqlite_and_postgres!(
    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    a_code_redeemed_twice_at_once_makes_one_device(remote_fixture().await, team_fixture().await)
);

/// Malformed redeems are refused in our JSON with the status their fault
/// calls for, never a 500.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn malformed_redeems_are_refused_in_our_json_never_500() {
    let f = remote_fixture().await;
    let api = Http::of(&f);
    let code = random_code();
    let long_code = "A".repeat(100 << 10);
    let mut cases: Vec<(&str, Vec<u8>, u16, &str)> = vec![
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
    ];
    // A device name that is not a name is invalid, whatever the code.
    let too_long = "d".repeat(65);
    let names = [
        ("an empty device name", ""),
        ("a blank device name", "   "),
        ("a device name of 65 characters", too_long.as_str()),
        ("a device name with a control character", "lap\u{7}top"),
        ("a device name with a newline", "lap\ntop"),
    ];
    cases.extend(names.map(|(what, name)| (what, redeem_body(&code, name), 422, "invalid")));
    cases.extend([
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
    ]);
    for (what, body, status, code) in cases {
        let answer = api.redeem(body).await;
        assert_eq!(
            outcome(&answer),
            (status, code.to_owned()),
            "{what}: {}",
            answer.body
        );
        assert!(!answer.message().is_empty(), "{what}: {}", answer.body);
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
