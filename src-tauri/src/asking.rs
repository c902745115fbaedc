//! Asking the holder, in the shell: the holder told of a request (in the
//! window, and on the desktop with Check in, Release and Reply), the asker
//! told of the answer, and what a click on the desktop's notification asks
//! the window to do (an `Intent`, kept until the window takes it). Nothing
//! here releases a lease but the holder's own click on Release, which is
//! their Cancel: their changes are kept beside the file.

use leasedesk_desk::{Desk, RequestNews};
use leasedesk_model::model::{ArtifactId, CheckoutId, Request, RequestId, ThreadId};
use serde::Serialize;
use tauri::{AppHandle, Manager};

use crate::shell_events::{self, Asked};
use crate::{desktop_notification, notify, show_main, tray_refresh, AppState};

/// What a click outside the window (the desktop's notification, the tray)
/// asks the window to do once it is shown.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, ts_rs::TS)]
#[serde(tag = "kind", rename_all = "snake_case")]
#[ts(export)]
pub enum Intent {
    /// Open the check-in dialog of this check-out of yours.
    CheckIn { checkout: CheckoutId },
    /// Answer this request, in My check-outs.
    Reply { request: RequestId },
    /// Show My check-outs, with the requests waiting there.
    ShowRequests,
    /// Show this file's detail (an editor's "Open in Leasedesk").
    ShowFile { artifact: ArtifactId },
    /// Show this file's detail at this review thread: inbox item `seq`'s,
    /// which is then read as a click in the inbox reads it.
    ShowThread {
        artifact: ArtifactId,
        thread: ThreadId,
        #[ts(type = "number")]
        seq: u64,
    },
    /// Show the inbox.
    ShowInbox,
}

/// Tells you of a request's news: the holder of a request to them (with
/// Check in, Release and Reply), the asker of the holder's answer. An
/// ended request says nothing by itself: "free" is told when the file is.
pub fn tell(app: &AppHandle, news: &RequestNews) {
    let (title, body) = (news.title(), news.body());
    match news {
        RequestNews::Asked(request) => tell_holder(app, title, body, request.clone()),
        RequestNews::Replied(_) => notify(app, &title, &body),
        RequestNews::Ended(_) => {}
    }
}

fn tell_holder(app: &AppHandle, title: String, body: String, request: Request) {
    let (checkout, id) = (request.checkout_id, request.id);
    let asked = Asked {
        title: title.clone(),
        body: body.clone(),
        request,
    };
    shell_events::tell(app, shell_events::AskedOfYou, &asked);
    let app = app.clone();
    let actions = [
        ("checkin", "Check in"),
        ("release", "Release"),
        ("reply", "Reply"),
    ];
    desktop_notification(
        &app.clone(),
        &title,
        &body,
        &actions,
        move |action| match action {
            "checkin" => ask_window(&app, Intent::CheckIn { checkout }),
            "reply" => ask_window(&app, Intent::Reply { request: id }),
            "release" => {
                let app = app.clone();
                tauri::async_runtime::spawn(async move { release(&app, checkout).await });
            }
            _ => {}
        },
    );
}

/// Shows the window and leaves it `intent`, which it takes when it is
/// ready (`take_intent`): a window built again has no listener yet.
pub fn ask_window(app: &AppHandle, intent: Intent) {
    *app.state::<AppState>().intent() = Some(intent);
    show_main(app);
    shell_events::tell(app, shell_events::IntentLeft, &());
}

/// Release, clicked on the desktop's notification: the holder's Cancel,
/// their changes kept beside the file, told as the window tells it.
async fn release(app: &AppHandle, checkout: CheckoutId) {
    let Ok(desk) = app.state::<AppState>().desk().await else {
        return show_main(app);
    };
    match desk.cancel(checkout).await {
        Ok(closed) => {
            let name = closed.checkout.path.file_name().to_owned();
            let kept = match &closed.backup {
                Some(backup) => format!(
                    "Your changes are kept as “{}”.",
                    backup.file_name().unwrap_or_default().to_string_lossy()
                ),
                None => "Nothing had changed.".to_owned(),
            };
            notify(
                app,
                &format!(
                    "{name} is released, back to version {}",
                    closed.checkout.version
                ),
                &kept,
            );
        }
        Err(e) => notify(app, "Leasedesk could not release it", &e.to_string()),
    }
    shell_events::tell(app, shell_events::StoreChanged, &());
    tray_refresh(app).await;
}

/// Looks at each request event for news of yours and tells it; each
/// `request.opened` is told to its holder once (`told`): the rules write
/// one a quarter hour at most, however often the request is asked.
pub async fn on_request_events(
    app: &AppHandle,
    desk: &Desk,
    me: &leasedesk_model::model::Participant,
    events: &[leasedesk_model::model::Event],
    told: &mut leasedesk_desk::Told,
) {
    for event in events
        .iter()
        .filter(|e| leasedesk_desk::is_request_event(e))
    {
        let Ok(Some(news)) = desk.request_news(event, me).await else {
            continue;
        };
        if matches!(news, RequestNews::Asked(_)) && !told.first(event.id) {
            continue;
        }
        tell(app, &news);
    }
}
