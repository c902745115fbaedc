//! Errors as the window gets them: `{code, message, ...}` with the code from
//! API.md and the same details (the holder's lease, the head), so the UI can
//! say what happened and what to do instead of showing a raw string.

use serde::Serialize;

#[derive(Clone, Debug, ts_rs::TS)]
#[ts(export, type = "{ code: string, message: string }")]
pub struct UiError(serde_json::Value);

impl From<leasedesk::Error> for UiError {
    fn from(error: leasedesk::Error) -> Self {
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
    /// An error of the app's own (not the store's), e.g. `keychain`.
    pub fn new(code: &str, message: impl Into<String>) -> Self {
        Self(serde_json::json!({ "code": code, "message": message.into() }))
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
    use leasedesk::model::*;

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
        let error = leasedesk::Error::ArtifactBusy {
            path: "hero.psd".parse().unwrap(),
            lease: Some(Box::new(lease)),
        };
        let body = serde_json::to_value(UiError::from(error)).unwrap();
        assert_eq!(body["code"], "artifact_busy");
        assert_eq!(body["lease"]["note"], "print crop");
        assert!(body.get("error").is_none(), "one name for the code: `code`");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
}
