//! Errors as the window gets them: `{code, message, ...}` with the code from
//! API.md and the same details (the holder's lease, the head), so the UI can
//! say what happened and what to do instead of showing a raw string.

use leasedesk_desk::Connection;
use serde::Serialize;

#[derive(Clone, Debug, ts_rs::TS)]
#[ts(export, type = "{ code: string, message: string }")]
pub struct UiError(serde_json::Value);

impl From<leasedesk_model::Error> for UiError {
    fn from(error: leasedesk_model::Error) -> Self {
        let mut body = error.to_body();
        if let Some(object) = body.as_object_mut() {
            if let Some(code) = object.remove("error") {
                object.insert("code".into(), code);
            }
        }
        Self(body)
    }
}

impl UiError {
    /// The desk's error as the window gets it: a server that did not answer
    /// is `offline`, with `since` (when the view shown was fetched), so the
    /// window can say why a click was refused rather than "cannot be reached".
    pub fn from_desk(error: leasedesk_model::Error, connection: Connection) -> Self {
        let offline = connection.offline_since();
        let mut told = Self::from(error);
        if let (Some(since), "unavailable") = (offline, told.code()) {
            told.0["code"] = "offline".into();
            told.0["since"] = serde_json::json!(since);
        }
        told
    }

    pub fn code(&self) -> &str {
        self.0["code"].as_str().unwrap_or("internal")
    }

    /// An error of the app's own (not the store's), e.g. `keychain`.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self(serde_json::json!({ "code": code, "message": message.into() }))
    }

    /// The error with a detail the window uses, e.g. the `path` of a file.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        self.0[key] = serde_json::json!(value);
        self
    }

    /// The sentence for the user.
    pub fn message(&self) -> &str {
        self.0["message"]
            .as_str()
            .unwrap_or("Something went wrong.")
    }
}

impl Serialize for UiError {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

pub type UiResult<T> = Result<T, UiError>;

#[cfg(test)]
mod tests {
    use super::*;
    use leasedesk_model::model::*;

    #[test]
    fn a_busy_file_reaches_the_ui_with_its_code_and_holder() {
        let lease = Lease {
            holder: "checkout:x:user:bob".into(),
            participant: "user:bob".parse().unwrap(),
            kind: LeaseKind::Checkout,
            checkout_id: None,
            note: Some("print crop".into()),
            acquired_at: chrono::Utc::now(),
            expires_at: chrono::Utc::now(),
        };
        let error = leasedesk_model::Error::ArtifactBusy {
            path: "hero.psd".parse().unwrap(),
            lease: Some(Box::new(lease)),
        };
        let body = serde_json::to_value(UiError::from(error)).unwrap();
        assert_eq!(body["code"], "artifact_busy");
        assert_eq!(body["lease"]["note"], "print crop");
        assert!(body.get("error").is_none(), "one name for the code: `code`");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    }

    #[test]
    fn a_refusal_while_offline_reaches_the_ui_as_offline_with_its_time() {
        let since = chrono::Utc::now();
        let refusal = leasedesk_desk::Action::CheckIn.refused();
        let body = serde_json::to_value(UiError::from_desk(
            refusal.clone(),
            Connection::Offline { since },
        ))
        .unwrap();
        assert_eq!(body["code"], "offline");
        assert_eq!(body["since"], serde_json::json!(since));
        assert_eq!(body["message"], refusal.to_string());
        let online = UiError::from_desk(refusal, Connection::Online);
        assert_eq!(online.code(), "unavailable", "online, it is what it was");
        let busy = UiError::from_desk(
            leasedesk_model::Error::Forbidden("not yours".into()),
            Connection::Offline { since },
        );
        assert_eq!(
            busy.code(),
            "forbidden",
            "only an unanswered request is offline"
        );
    }
}
