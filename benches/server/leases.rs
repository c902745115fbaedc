//! Lease acquire + release over HTTP from concurrent clients, beside etcd's
//! lease grant + revoke through its JSON gateway.

use super::*;

pub(crate) async fn http_pairs(work: &Path, sizes: &Sizes) {
    let server = Server::start(&work.join("http"));
    let http = reqwest::Client::new();
    let artifacts = make_artifacts(&http, &server.url, &server.token, CLIENTS).await;
    let (url, token) = (server.url.clone(), server.token.clone());
    let (rate, median, p99) = measure_pairs(CLIENTS, sizes.pairs_per_client, move |client| {
        let (http, url, token, artifact) = (
            http.clone(),
            url.clone(),
            token.clone(),
            artifacts[client].clone(),
        );
        async move { edit_pair(&http, &url, &token, &artifact).await }
    })
    .await;
    LAST_HTTP_RATE.store(rate as u64, Ordering::SeqCst);
    row(
        &format!("lease acquire + release over HTTP, {CLIENTS} clients, keep-alive"),
        format!("**{rate:.0} pairs/s**, {}", latency(median, p99)),
        "at least 3,000 pairs/s, p99 under 10 ms",
        pairs_data(rate, median, p99),
    );
    let mib = server.peak_memory() as f64 / 1048576.0;
    row(
        "server peak memory in that run",
        format!("{mib:.1} MiB"),
        "",
        value(mib, "MiB"),
    );
}

static LAST_HTTP_RATE: AtomicU64 = AtomicU64::new(0);

/// A duration in milliseconds, as the report's `ms` shows it.
pub(crate) fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// A pair's latency, as the report words it: its median and p99.
fn latency(median: Duration, p99: Duration) -> String {
    format!("median {}, p99 {}", ms(median), ms(p99))
}

/// The numbers of a row of pairs: the rate, then the latency's median and p99.
fn pairs_data(rate: f64, median: Duration, p99: Duration) -> Data {
    value(rate, "pairs/s")
        .and("median", millis(median), "ms")
        .and("p99", millis(p99), "ms")
}

/// etcd's lease grant + revoke through its JSON gateway, the same way.
pub(crate) async fn etcd_pairs(work: &Path, sizes: &Sizes) {
    let Some(etcd) = Etcd::start_or_report(&work.join("etcd"), "etcd lease grant + revoke").await
    else {
        return;
    };
    let (http, url) = (reqwest::Client::new(), etcd.url.clone());
    let (rate, median, p99) = measure_pairs(CLIENTS, sizes.pairs_per_client, move |_| {
        let (http, url) = (http.clone(), url.clone());
        async move {
            let granted: Value = pairs::json(
                http.post(format!("{url}/v3/lease/grant"))
                    .json(&json!({ "TTL": 45 })),
            )
            .await;
            let id = granted["ID"].as_str().expect("a lease id").to_owned();
            let revoked = http
                .post(format!("{url}/v3/lease/revoke"))
                .json(&json!({ "ID": id }))
                .send()
                .await
                .unwrap();
            assert!(revoked.status().is_success());
        }
    })
    .await;
    drop(etcd);
    let ours = LAST_HTTP_RATE.load(Ordering::SeqCst) as f64;
    let ratio = if ours > 0.0 {
        format!("; Leasedesk/etcd = {:.1}x", ours / rate)
    } else {
        String::new()
    };
    row(
        &format!("etcd 3.4 lease grant + revoke over its HTTP gateway, {CLIENTS} clients"),
        format!("{rate:.0} pairs/s, {}{ratio}", latency(median, p99)),
        "Leasedesk at least as fast",
        pairs_data(rate, median, p99),
    );
}
