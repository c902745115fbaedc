//! Asking the holder, as the app does it: ask (with a message), reply,
//! withdraw, the requests to and from you; what a request's event means for
//! you ([`news`]), each request told once however often it is asked
//! ([`Told`]), and how many wait for your answer ([`waiting_for_answer`]).
//! Nothing here releases a lease: a holder's Release is their own Cancel
//! ([`Desk::cancel`]), on their click.

use std::collections::HashSet;

use super::offline::Action;
use super::Desk;
use crate::error::Result;
use crate::model::*;

/// What a request's event tells you, the one it concerns.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RequestNews {
    /// Someone asks you to release a file you hold.
    Asked(Request),
    /// The holder answered your request.
    Replied(Request),
    /// Your request ended with its check-out: the file was checked in,
    /// cancelled, lapsed or broken (the "free" notice says it is free).
    Ended(Request),
}

impl RequestNews {
    pub fn request(&self) -> &Request {
        match self {
            RequestNews::Asked(r) | RequestNews::Replied(r) | RequestNews::Ended(r) => r,
        }
    }

    /// The notification's title: "bob asks for brand/hero.psd".
    pub fn title(&self) -> String {
        let request = self.request();
        match self {
            RequestNews::Asked(_) => format!("{} asks for {}", request.from.name(), request.path),
            RequestNews::Replied(_) => format!(
                "{} answered about {}",
                request.to.name(),
                request.path.file_name()
            ),
            RequestNews::Ended(_) => {
                format!("Your request for {} is over", request.path.file_name())
            }
        }
    }

    /// The notification's body: the message, quoted, and what can be done.
    pub fn body(&self) -> String {
        let request = self.request();
        match self {
            RequestNews::Asked(_) => {
                let said = match &request.message {
                    Some(message) => format!("“{message}”. "),
                    None => String::new(),
                };
                format!(
                    "{said}Check in, release it (your changes are kept beside the file) or reply."
                )
            }
            RequestNews::Replied(_) => match &request.reply {
                Some(reply) => format!("“{reply}”"),
                None => String::new(),
            },
            RequestNews::Ended(_) => format!(
                "{} no longer holds it under that check-out.",
                request.to.name()
            ),
        }
    }
}

/// What `event` means for `me`, given the requests to and from me as they
/// are now (`requests`): none for an event of another kind, or about a
/// request that is not mine either way.
pub fn news(event: &Event, requests: &[Request], me: &Participant) -> Option<RequestNews> {
    let id: RequestId = serde_json::from_value(event.data.get("request_id")?.clone()).ok()?;
    let request = requests.iter().find(|r| r.id == id)?.clone();
    match event.kind.as_str() {
        "request.opened" if request.to == *me && request.state.is_live() => {
            Some(RequestNews::Asked(request))
        }
        "request.replied" if request.from == *me => Some(RequestNews::Replied(request)),
        "request.ended" if request.from == *me => Some(RequestNews::Ended(request)),
        _ => None,
    }
}

/// Whether an event is about a request (and so worth a look at the requests).
pub fn is_request_event(event: &Event) -> bool {
    event.kind.starts_with("request.")
}

/// Whether `event` may change more than the list of files: your
/// check-outs or the requests to and from you (what the tray shows), the
/// open proposals, or what you may see. Yours, one of your leases ending,
/// a request, a proposal made or decided, a permissions change. Bob's
/// check-out or check-in of another file does not.
pub fn concerns(event: &Event, me: &Participant) -> bool {
    let data = |key: &str| event.data.get(key).and_then(|v| v.as_str());
    let proposed = event
        .data
        .pointer("/result/outcome")
        .and_then(|o| o.as_str())
        == Some("proposal");
    event.participant.as_ref() == Some(me)
        || data("holder_participant") == Some(me.as_str())
        || is_request_event(event)
        || proposed
        || event.kind.starts_with("proposal.")
        || event.kind == "change.proposed"
        || event.kind == "permissions.changed"
}

/// How many requests wait for `me` to answer: asked of me, still open, not
/// yet replied to.
pub fn waiting_for_answer(requests: &[Request], me: &Participant) -> usize {
    requests
        .iter()
        .filter(|r| r.to == *me && r.state == RequestState::Open)
        .count()
}

/// The `request.opened` events already told, by event id: each is told
/// once, even if a stream that lost its place delivers it again. The rules
/// write at most one a quarter hour for an asker and a check-out, so a
/// flood of asks makes one notification, and asking again later reminds.
#[derive(Debug, Default)]
pub struct Told {
    told: HashSet<uuid::Uuid>,
}

impl Told {
    /// Whether the event `id` is news: true the first time only.
    pub fn first(&mut self, id: uuid::Uuid) -> bool {
        self.told.insert(id)
    }
}

impl Desk {
    /// Asks the holder of `artifact`'s check-out to release it, with
    /// `message` (none when blank). Asking again while your request stands
    /// replaces its message. Releases nothing.
    pub async fn ask(&self, artifact: ArtifactId, message: Option<&str>) -> Result<Request> {
        let message = message.map(str::trim).filter(|m| !m.is_empty());
        let outcome = async { self.backend.ask(artifact, message).await }.await;
        self.refused_offline(Action::Ask, outcome)
            .map(|(request, _)| request)
    }

    /// The requests to and from you that still stand (open or replied),
    /// newest first; offline, as last seen.
    pub async fn requests(&self) -> Result<Vec<Request>> {
        let fetched = self.backend.requests(true).await;
        self.or_as_seen(fetched, |seen| seen.requests.clone())
    }

    /// The holder's short answer to a request; they may answer again.
    pub async fn reply(&self, request: RequestId, message: &str) -> Result<Request> {
        let outcome = async { self.backend.reply(request, message).await }.await;
        self.refused_offline(Action::Reply, outcome)
    }

    /// Takes back a request of yours.
    pub async fn withdraw(&self, request: RequestId) -> Result<Request> {
        let outcome = async { self.backend.withdraw(request).await }.await;
        self.refused_offline(Action::Reply, outcome)
    }

    /// What a request's event means for `me` (one look at the requests);
    /// none for any other event.
    pub async fn request_news(
        &self,
        event: &Event,
        me: &Participant,
    ) -> Result<Option<RequestNews>> {
        if !is_request_event(event) {
            return Ok(None);
        }
        // An ended request is no longer among the live ones: then look at all.
        let live_only = matches!(event.kind.as_str(), "request.opened" | "request.replied");
        let requests = self.backend.requests(live_only).await?;
        Ok(news(event, &requests, me))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(from: &str, to: &str, state: RequestState) -> Request {
        let now = chrono::Utc::now();
        Request {
            id: RequestId::new(),
            artifact_id: ArtifactId::new(),
            path: "brand/hero.psd".parse().unwrap(),
            from: from.parse().unwrap(),
            to: to.parse().unwrap(),
            checkout_id: CheckoutId::new(),
            message: Some("need it for the logo fix".into()),
            state,
            reply: None,
            created_at: now,
            replied_at: None,
            ended_at: None,
        }
    }

    fn event(kind: &str, request: &Request) -> Event {
        Event {
            seq: 7,
            id: uuid::Uuid::new_v4(),
            kind: kind.into(),
            artifact_id: Some(request.artifact_id),
            participant: Some(request.from.clone()),
            holder: None,
            at: request.created_at,
            data: serde_json::json!({ "request_id": request.id }),
        }
    }

    fn me(name: &str) -> Participant {
        name.parse().unwrap()
    }

    #[test]
    fn the_tray_is_concerned_with_your_work_your_leases_and_requests() {
        let asked = request("user:bob", "user:alice", RequestState::Open);
        let mut bobs = event("lease.acquired", &asked);
        assert!(!concerns(&bobs, &me("user:alice")), "bob's check-out");
        assert!(concerns(&bobs, &me("user:bob")), "bob's own");
        bobs.participant = None;
        bobs.kind = "lease.expired".into();
        bobs.data = serde_json::json!({ "holder_participant": "user:alice" });
        assert!(concerns(&bobs, &me("user:alice")), "alice's lease lapsed");
        assert!(concerns(
            &event("request.opened", &asked),
            &me("user:carol")
        ));
    }

    #[test]
    fn the_holder_hears_of_a_request_to_them_and_nobody_else_does() {
        let asked = request("user:bob", "user:alice", RequestState::Open);
        let opened = event("request.opened", &asked);
        let all = [asked.clone()];
        assert_eq!(
            news(&opened, &all, &me("user:alice")),
            Some(RequestNews::Asked(asked.clone()))
        );
        assert_eq!(news(&opened, &all, &me("user:bob")), None, "the asker");
        assert_eq!(news(&opened, &all, &me("user:carol")), None, "a bystander");
        assert_eq!(
            news(&opened, &[], &me("user:alice")),
            None,
            "a request not among mine"
        );
        let lock = event("lease.acquired", &asked);
        assert_eq!(news(&lock, &all, &me("user:alice")), None);
        assert!(!is_request_event(&lock) && is_request_event(&opened));
    }

    #[test]
    fn a_request_over_by_the_time_its_event_is_read_tells_the_holder_nothing() {
        let ended = request("user:bob", "user:alice", RequestState::Ended);
        let opened = event("request.opened", &ended);
        assert_eq!(news(&opened, &[ended], &me("user:alice")), None);
    }

    #[test]
    fn the_asker_hears_the_reply_and_the_end() {
        let mut replied = request("user:bob", "user:alice", RequestState::Replied);
        replied.reply = Some("20 more minutes".into());
        let news_of =
            |kind: &str| news(&event(kind, &replied), &[replied.clone()], &me("user:bob"));
        let reply = news_of("request.replied").unwrap();
        assert_eq!(reply.title(), "alice answered about hero.psd");
        assert_eq!(reply.body(), "“20 more minutes”");
        assert!(matches!(
            news_of("request.ended"),
            Some(RequestNews::Ended(_))
        ));
        assert_eq!(
            news(
                &event("request.replied", &replied),
                &[replied.clone()],
                &me("user:alice")
            ),
            None,
            "the holder is not told of their own reply"
        );
    }

    #[test]
    fn the_holder_is_told_who_asks_for_what_and_why() {
        let asked = RequestNews::Asked(request("user:bob", "user:alice", RequestState::Open));
        assert_eq!(asked.title(), "bob asks for brand/hero.psd");
        assert_eq!(
            asked.body(),
            "“need it for the logo fix”. Check in, release it (your changes are kept beside the file) or reply."
        );
        let mut silent = request("user:bob", "user:alice", RequestState::Open);
        silent.message = None;
        assert_eq!(
            RequestNews::Asked(silent).body(),
            "Check in, release it (your changes are kept beside the file) or reply."
        );
    }

    #[test]
    fn a_request_event_is_told_once_however_often_it_comes() {
        let mut told = Told::default();
        let (a, b) = (uuid::Uuid::new_v4(), uuid::Uuid::new_v4());
        assert!(told.first(a));
        assert!(
            (0..1000).all(|_| !told.first(a)),
            "delivered again, told once"
        );
        assert!(told.first(b), "a later request.opened is news");
    }

    #[test]
    fn only_open_requests_to_me_wait_for_my_answer() {
        let alice = me("user:alice");
        let mut replied = request("user:bob", "user:alice", RequestState::Replied);
        replied.reply = Some("soon".into());
        let requests = [
            request("user:bob", "user:alice", RequestState::Open),
            request("user:carol", "user:alice", RequestState::Open),
            replied,
            request("user:alice", "user:bob", RequestState::Open),
            request("user:dan", "user:alice", RequestState::Withdrawn),
        ];
        assert_eq!(waiting_for_answer(&requests, &alice), 2);
        assert_eq!(waiting_for_answer(&requests, &me("user:bob")), 1);
        assert_eq!(waiting_for_answer(&[], &alice), 0);
    }
}
