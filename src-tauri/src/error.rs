//! Errors as the window gets them: `{code, message, ...}`, the code one of
//! the model's [`Code`]s (the API's, or the app's own such as `no_token`)
//! and the same details as the API's body (the holder's lease, the head),
//! so the UI can say what happened and what to do instead of showing a raw
//! string.

use leasedesk_desk::Connection;
pub use leasedesk_model::error::Code;
use serde::Serialize;

#[derive(Clone, Debug, Serialize, ts_rs::TS)]
#[ts(export)]
pub struct UiError {
    code: Code,
    message: String,
    /// What some codes carry besides (`lease`, `head`, `path`, `since`...),
    /// beside `code` and `message` in the same object.
    #[serde(flatten)]
    #[ts(skip)]
    details: serde_json::Map<String, serde_json::Value>,
}

impl From<leasedesk_model::Error> for UiError {
    fn from(error: leasedesk_model::Error) -> Self {
        let mut details = match error.to_body() {
            serde_json::Value::Object(body) => body,
            _ => Default::default(),
        };
        // The body's own `error` is `code` here; its message, `message`.
        details.remove("error");
        let message = match details.remove("message") {
            Some(serde_json::Value::String(message)) => message,
            _ => error.to_string(),
        };
        Self {
            code: error.code(),
            message,
            details,
        }
    }
}

impl UiError {
    /// The desk's error as the window gets it: a server that did not answer
    /// is `offline`, with `since` (when the view shown was fetched), so the
    /// window can say why a click was refused rather than "cannot be reached".
    pub fn from_desk(error: leasedesk_model::Error, connection: Connection) -> Self {
        let offline = connection.offline_since();
        let told = Self::from(error);
        match offline {
            Some(since) if told.code == Code::Unavailable => Self {
                code: Code::Offline,
                ..told
            }
            .with("since", since),
            _ => told,
        }
    }

    pub fn code(&self) -> Code {
        self.code
    }

    /// An error of the app's own (not the store's), e.g. `Code::Keychain`.
    pub fn new(code: Code, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            details: Default::default(),
        }
    }

    /// The error with a detail the window uses, e.g. the `path` of a file.
    pub fn with(mut self, key: &str, value: impl Serialize) -> Self {
        self.details
            .insert(key.to_owned(), serde_json::json!(value));
        self
    }

    /// The sentence for the user.
    pub fn message(&self) -> &str {
        &self.message
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
    fn every_error_keeps_its_code_message_and_details() {
        let errors = [
            leasedesk_model::Error::TooLarge { limit: 7 },
            leasedesk_model::Error::Forbidden("not yours".into()),
            leasedesk_model::Error::Internal("the disk".into()),
        ];
        for error in errors {
            let body = serde_json::to_value(UiError::from(error.clone())).unwrap();
            let mut expected = error.to_body();
            let code = expected["error"].take();
            let expected = expected.as_object_mut().unwrap();
            expected.remove("error");
            expected.insert("code".into(), code);
            assert_eq!(&body, &serde_json::Value::Object(expected.clone()));
        }
    }

    #[test]
    fn an_apps_own_error_is_its_code_message_and_what_it_is_given() {
        let body = serde_json::to_value(
            UiError::new(Code::Reveal, "hero.psd could not be shown").with("path", "/a/hero.psd"),
        )
        .unwrap();
        assert_eq!(
            body,
            serde_json::json!({ "code": "reveal", "message": "hero.psd could not be shown", "path": "/a/hero.psd" })
        );
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
        assert_eq!(
            online.code(),
            Code::Unavailable,
            "online, it is what it was"
        );
        let busy = UiError::from_desk(
            leasedesk_model::Error::Forbidden("not yours".into()),
            Connection::Offline { since },
        );
        assert_eq!(
            busy.code(),
            Code::Forbidden,
            "only an unanswered request is offline"
        );
    }
}
