//! [`Studio`] for [`Remote`]: invites, devices, participants, groups and
//! permissions as `docs/API.md` gives them; and redeeming an invite, the
//! one call made without a token.

use async_trait::async_trait;
use reqwest::Method;
use serde_json::json;

use super::servers::Resend;
use super::{encoded, Remote};
use crate::backend::Studio;
use crate::error::Result;
use crate::model::*;
use crate::trust::Trust;

impl Remote {
    /// Redeems an invite at `server` for this device, named `device`: the
    /// participant, the device, and its token (shown only now: keep it in
    /// the keychain).
    pub async fn redeem(server: &str, trust: Trust, code: &str, device: &str) -> Result<Redeemed> {
        let anonymous = Remote::with_trust(server, "", trust)?;
        anonymous
            .post(
                "/v1/invites/redeem",
                json!({ "code": code, "device": device }),
            )
            .await
    }

    /// A DELETE answered with 204.
    async fn delete(&self, path: &str) -> Result<()> {
        self.send(Resend::Safe, |base| {
            Ok(self.request(base, Method::DELETE, path))
        })
        .await?;
        Ok(())
    }
}

#[async_trait]
impl Studio for Remote {
    async fn invite(&self, request: InviteRequest) -> Result<Invite> {
        let body = json!({
            "name": request.name,
            "admin": request.admin,
            "agent": request.agent,
            "expires_seconds": request.expires_seconds,
        });
        self.post("/v1/invites", body).await
    }

    async fn invite_myself(&self, expires_seconds: Option<u64>) -> Result<Invite> {
        let body = match expires_seconds {
            Some(seconds) => json!({ "expires_seconds": seconds }),
            None => json!({}),
        };
        self.post("/v1/me/invites", body).await
    }

    async fn invites(&self) -> Result<Vec<OpenInvite>> {
        Ok(self.get::<InviteList>("/v1/invites").await?.invites)
    }

    async fn revoke_invite(&self, id: InviteId) -> Result<()> {
        self.delete(&format!("/v1/invites/{id}")).await
    }

    async fn my_devices(&self) -> Result<MyDevices> {
        self.get("/v1/me/devices").await
    }

    async fn revoke_my_device(&self, id: &str) -> Result<()> {
        self.delete(&format!("/v1/me/devices/{}", encoded(id)))
            .await
    }

    async fn members(&self) -> Result<Vec<Member>> {
        Ok(self
            .get::<MemberList>("/v1/participants")
            .await?
            .participants)
    }

    async fn revoke_device(&self, owner: &Participant, id: &str) -> Result<()> {
        self.delete(&format!(
            "/v1/participants/{}/devices/{}",
            encoded(owner.as_str()),
            encoded(id)
        ))
        .await
    }

    async fn groups(&self) -> Result<Vec<Group>> {
        Ok(self.get::<GroupList>("/v1/groups").await?.groups)
    }

    async fn put_group(&self, group: Group) -> Result<Group> {
        self.json(
            Method::PUT,
            &format!("/v1/groups/{}", encoded(group.name.as_str())),
            Some(json!({ "members": group.members })),
        )
        .await
    }

    async fn delete_group(&self, name: &GroupName) -> Result<()> {
        self.delete(&format!("/v1/groups/{}", encoded(name.as_str())))
            .await
    }

    async fn permission_rules(&self) -> Result<Vec<Rule>> {
        Ok(self.get::<Rules>("/v1/permissions").await?.rules)
    }

    async fn put_permission_rules(&self, rules: Vec<Rule>) -> Result<Vec<Rule>> {
        let rules: Rules = self
            .json(
                Method::PUT,
                "/v1/permissions",
                Some(json!({ "rules": rules })),
            )
            .await?;
        Ok(rules.rules)
    }
}
