//! What `serve --metrics-listen` tells Prometheus: requests by route
//! template (never the raw path, so ids do not multiply the series),
//! connections refused at the cap, uploads in flight, group-commit batch
//! sizes, and live leases read at scrape time. It never labels by anything
//! unbounded (a raw path, an id, a participant) and never serves HTTP itself.

use std::time::Duration;

use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::{Registry, Unit};

/// The `Content-Type` of a scrape's answer (Prometheus text format 0.0.4).
pub const CONTENT_TYPE: &str = prometheus_client::encoding::prometheus_text::CONTENT_TYPE;

/// The server's counters. Cheap to clone; clones count together.
#[derive(Clone, Debug)]
pub struct Metrics {
    requests: Family<RequestLabels, Counter>,
    latency: Family<RequestLabels, Histogram, fn() -> Histogram>,
    /// Refused before any request was read: not among `requests`.
    connections_refused: Counter,
    uploads_in_flight: Gauge,
    batch_sizes: Histogram,
}

#[derive(Clone, Debug, Hash, PartialEq, Eq, EncodeLabelSet)]
struct RequestLabels {
    method: &'static str,
    route: String,
    /// `2xx`, `4xx`, ...
    status: &'static str,
}

fn latency_histogram() -> Histogram {
    // 1 ms to about 16 s.
    Histogram::new(exponential_buckets(0.001, 2.0, 15))
}

impl Metrics {
    /// Counters for a server whose store's group commits are `batch_sizes`
    /// (`Bundled::batch_sizes`).
    pub fn new(batch_sizes: Histogram) -> Self {
        Self {
            requests: Family::default(),
            latency: Family::new_with_constructor(latency_histogram),
            connections_refused: Counter::default(),
            uploads_in_flight: Gauge::default(),
            batch_sizes,
        }
    }

    /// Counts one answered request. `route` is the matched route's template
    /// (`/v1/checkouts/{id}/checkin`), or a fixed word for no route.
    pub fn observe_request(&self, method: &str, route: &str, status: u16, took: Duration) {
        let labels = RequestLabels {
            method: known_method(method),
            route: route.to_owned(),
            status: status_class(status),
        };
        self.requests.get_or_create(&labels).inc();
        self.latency
            .get_or_create(&labels)
            .observe(took.as_secs_f64());
    }

    /// Counts a connection refused at the connection cap.
    pub fn connection_refused(&self) {
        self.connections_refused.inc();
    }

    /// Counts an upload as in flight until the returned guard is dropped.
    pub fn upload_started(&self) -> UploadInFlight {
        self.uploads_in_flight.inc();
        UploadInFlight(self.uploads_in_flight.clone())
    }

    /// The scrape's text. `live_leases` is the store's count, read just now;
    /// when that read failed or timed out its gauge is left out and
    /// `leasedesk_store_up` is 0, rather than showing a stale count.
    pub fn render(&self, live_leases: Result<u64, String>) -> String {
        let mut registry = Registry::with_prefix("leasedesk");
        registry.register(
            "http_requests",
            "Requests answered, by method, route template and status class",
            self.requests.clone(),
        );
        registry.register_with_unit(
            "http_request_duration",
            "Time from a request's head to its answer's head, by method, route template and status class",
            Unit::Seconds,
            self.latency.clone(),
        );
        registry.register(
            "connections_refused",
            "Connections refused at the connection cap (--max-connections), before any request was read",
            self.connections_refused.clone(),
        );
        registry.register(
            "uploads_in_flight",
            "Uploads (imports, check-ins, edit commits) being received or stored now",
            self.uploads_in_flight.clone(),
        );
        registry.register(
            "group_commit_batch_size",
            "Writes committed together in one transaction",
            self.batch_sizes.clone(),
        );
        let store_up: Gauge = Gauge::default();
        store_up.set(i64::from(live_leases.is_ok()));
        registry.register(
            "store_up",
            "Whether this scrape's read of the store answered in time (1) or not (0)",
            store_up,
        );
        if let Ok(count) = live_leases {
            let live: Gauge = Gauge::default();
            live.set(i64::try_from(count).unwrap_or(i64::MAX));
            registry.register(
                "live_leases",
                "Leases held now (check-outs and edits not past their expiry)",
                live,
            );
        }
        let mut text = String::new();
        prometheus_client::encoding::prometheus_text::encode(&mut text, &registry)
            .expect("writing into a String cannot fail");
        text
    }
}

/// An upload counted in flight; dropping it ends the count.
pub struct UploadInFlight(Gauge);

impl Drop for UploadInFlight {
    fn drop(&mut self) {
        self.0.dec();
    }
}

/// The method as a label: any other method is `other`, so a client cannot
/// grow the label set.
fn known_method(method: &str) -> &'static str {
    match method {
        "GET" => "GET",
        "POST" => "POST",
        "DELETE" => "DELETE",
        "PUT" => "PUT",
        "PATCH" => "PATCH",
        "HEAD" => "HEAD",
        "OPTIONS" => "OPTIONS",
        _ => "other",
    }
}

fn status_class(status: u16) -> &'static str {
    match status / 100 {
        1 => "1xx",
        2 => "2xx",
        3 => "3xx",
        4 => "4xx",
        _ => "5xx",
    }
}
