//! Blobs in object storage (`--blobs s3://…` on moto, `--blobs file:///…`):
//! the same answers as the data folder's blobs, and no visible object but a
//! whole one under its digest.

use crate::harness::*;

/// Each `s3()` is a new, empty bucket on the one moto of this process, and
/// its variables reach it.
#[test]
fn s3_gives_a_fresh_empty_bucket_each_time() {
    let (a, b) = (s3(), s3());
    assert_ne!(a.bucket, b.bucket);
    assert_eq!(a.endpoint, b.endpoint, "one moto per test process");
    assert!(a.keys().is_empty() && b.keys().is_empty());
    let endpoint = a
        .env
        .iter()
        .find(|(k, _)| *k == "AWS_ENDPOINT_URL")
        .unwrap();
    assert_eq!(endpoint.1, a.endpoint);
    assert_eq!(std::env::var("AWS_ENDPOINT_URL").unwrap(), a.endpoint);
    assert_eq!(a.url("team"), format!("s3://{}/team", a.bucket));
}
