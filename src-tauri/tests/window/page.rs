//! Looking at and working the window through WebDriver: waiting for what it
//! shows (with a screenshot when it does not), clicks, keys, the page's own
//! script, the shell's commands. Knows the page's ids and classes, never a
//! scenario's steps; every wait is bounded.

use std::time::{Duration, Instant};

use fantoccini::actions::{PointerAction, MOUSE_BUTTON_LEFT};
use fantoccini::elements::Element;
use fantoccini::Locator;
use serde_json::json;

use super::session::World;

/// WebDriver's keys, as `press` and `send_keys` take them.
pub const ARROW_DOWN: &str = "\u{E015}";
pub const ENTER: &str = "\u{E007}";
pub const ESCAPE: &str = "\u{E00C}";
pub const CONTROL: &str = "\u{E009}";

/// The left button of the pointer going down, and coming up.
pub const LEFT_DOWN: PointerAction = PointerAction::Down {
    button: MOUSE_BUTTON_LEFT,
};
pub const LEFT_UP: PointerAction = PointerAction::Up {
    button: MOUSE_BUTTON_LEFT,
};

/// The pointer onto the middle of `element`, at once.
pub fn pointer_onto(element: Element) -> PointerAction {
    PointerAction::MoveToElement {
        element,
        duration: None,
        x: 0.0,
        y: 0.0,
    }
}

/// How long a wait gives the window unless a step says otherwise: ample on
/// a loaded 2-core machine; a step whose claim is "at once" names its own.
pub const WAIT: Duration = Duration::from_secs(15);

impl World {
    /// Waits up to `WAIT` for an element matching `css`.
    pub async fn wait_for(&self, css: &str, what: &str) -> fantoccini::elements::Element {
        self.wait_text(css, what, |_| true).await
    }

    /// Waits up to `WAIT` for an element matching `css` whose text passes `test`.
    pub async fn wait_text(
        &self,
        css: &str,
        what: &str,
        test: impl Fn(&str) -> bool,
    ) -> fantoccini::elements::Element {
        self.wait_until(css, what, WAIT, test).await
    }

    /// Waits up to `WAIT` for an element matching `css` whose text is `text`.
    pub async fn wait_text_is(
        &self,
        css: &str,
        what: &str,
        text: &str,
    ) -> fantoccini::elements::Element {
        self.wait_text(css, what, |t| t == text).await
    }

    /// As `wait_text`, answering the whole text that passed `test` (as it
    /// was read then: the window may redraw the element right after).
    pub async fn text_when(&self, css: &str, what: &str, test: impl Fn(&str) -> bool) -> String {
        self.found(css, what, WAIT, test).await.1
    }

    /// The text of the error notice that passes `test`, once it shows.
    pub async fn error_notice(&self, what: &str, test: impl Fn(&str) -> bool) -> String {
        self.text_when(".notice.error", what, test).await
    }

    /// Waits for an element matching `css` whose text passes `test`.
    pub async fn wait_until(
        &self,
        css: &str,
        what: &str,
        limit: Duration,
        test: impl Fn(&str) -> bool,
    ) -> fantoccini::elements::Element {
        self.found(css, what, limit, test).await.0
    }

    /// Waits for an element matching `css` whose text passes `test`: the
    /// element, and its whole text when it passed.
    async fn found(
        &self,
        css: &str,
        what: &str,
        limit: Duration,
        test: impl Fn(&str) -> bool,
    ) -> (fantoccini::elements::Element, String) {
        let started = Instant::now();
        let mut seen = Vec::new();
        loop {
            seen.clear();
            match self.client.find_all(Locator::Css(css)).await {
                Ok(found) => {
                    for element in found {
                        // The DOM's text: WebKit's "visible text" reads some plain spans as empty.
                        match element.prop("textContent").await {
                            Ok(Some(text)) if test(text.trim()) => return (element, text),
                            Ok(text) => seen.push(text.unwrap_or_default()),
                            Err(e) => seen.push(format!("({e})")),
                        }
                    }
                }
                // Said in the failure: a WebDriver that cannot look is not an empty window.
                Err(e) => seen.push(format!("(finding: {e})")),
            }
            if started.elapsed() > limit {
                let after = self.post_mortem().await;
                panic!(
                    "{}: {what} did not show within {limit:?} ({css}); it reads {seen:?}{after}",
                    self.name()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    pub fn row(path: &str) -> String {
        format!(".row[data-path=\"{path}\"]")
    }

    pub async fn open_row(&self, path: &str) {
        self.click_css(&Self::row(path), path).await;
    }

    /// Waits up to `limit` for `path`'s row to show `text` in its `part`
    /// (`.local`, `.holder`, `.version`, …).
    pub async fn row_shows(&self, path: &str, part: &str, text: &str, limit: Duration) {
        self.wait_until(
            &format!("{} {part}", World::row(path)),
            &format!("{path}: {text:?} in {part}"),
            limit,
            |t| t == text,
        )
        .await;
    }

    /// Waits up to 10 s for `path`'s row to show version `version`.
    pub async fn version_shown(&self, path: &str, version: u32) {
        self.row_shows(
            path,
            ".version",
            &format!("v{version}"),
            Duration::from_secs(10),
        )
        .await;
    }

    /// Waits up to `limit` for the header to name `url` as the server in use.
    pub async fn server_shown(&self, url: &str, limit: Duration) {
        let shown = format!("Server: {}", url.trim_start_matches("http://"));
        self.wait_until("#server", "the server in use", limit, |t| t == shown)
            .await;
    }

    /// Opens Settings from the top bar and waits for the dialog.
    pub async fn open_settings(&self) {
        self.click("open-settings").await;
        self.wait_for("#settings[open]", "Settings").await;
    }

    /// The Settings dialog's field `id`, once the dialog is open (a closed
    /// one keeps its old fields until redrawn).
    pub async fn settings_field(&self, id: &str) -> fantoccini::elements::Element {
        self.wait_for(&format!("#settings[open] #{id}"), id).await
    }

    /// Chooses `value` in the list `css`, once it shows.
    pub async fn choose(&self, css: &str, value: &str) {
        let list = self.wait_for(css, css).await;
        list.select_by_value(value).await.unwrap();
    }

    /// Waits until nothing matches `css` (within 10 s).
    pub async fn wait_until_absent(&self, css: &str, what: &str) {
        let started = Instant::now();
        while !self.absent(css).await {
            if started.elapsed() > Duration::from_secs(10) {
                let after = self.post_mortem().await;
                panic!(
                    "{}: {what}: {css} still there after 10 s{after}",
                    self.name()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Chooses `value` in the Settings dialog's list `id`.
    pub async fn choose_setting(&self, id: &str, value: &str) {
        let field = self.settings_field(id).await;
        field.select_by_value(value).await.unwrap();
    }

    /// Types `text` into the Settings dialog's field `id`, after what it holds.
    pub async fn type_setting(&self, id: &str, text: &str) {
        self.settings_field(id).await.send_keys(text).await.unwrap();
    }

    /// Empties the Settings dialog's field `id`.
    pub async fn clear_setting(&self, id: &str) {
        self.settings_field(id).await.clear().await.unwrap();
    }

    /// Empties the Settings dialog's field `id`, then types `text` into it.
    pub async fn replace_setting(&self, id: &str, text: &str) {
        self.clear_setting(id).await;
        self.type_setting(id, text).await;
    }

    /// Types `text` into the field matching `css`.
    pub async fn type_into(&self, css: &str, text: &str) {
        self.client
            .find(Locator::Css(css))
            .await
            .unwrap()
            .send_keys(text)
            .await
            .unwrap();
    }

    /// Waits until the image matching `css` is decoded; answers its size.
    pub async fn decoded(&self, css: &str, what: &str) -> (u64, u64) {
        let started = Instant::now();
        loop {
            let size = self
                .client
                .execute(
                    "const img = document.querySelector(arguments[0]);
                     return img && img.complete && img.naturalWidth > 0 ? [img.naturalWidth, img.naturalHeight] : null;",
                    vec![json!(css)],
                )
                .await
                .unwrap();
            if let Some([width, height]) = size.as_array().map(Vec::as_slice) {
                return (width.as_u64().unwrap(), height.as_u64().unwrap());
            }
            if started.elapsed() > Duration::from_secs(15) {
                let after = self.post_mortem().await;
                panic!(
                    "{}: {what} was not decoded within 15 s ({css}){after}",
                    self.name()
                );
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }

    /// Dismisses the notices, as a user would once read (while shown, their
    /// strip at the window's foot makes the views shorter).
    pub async fn dismiss_notices(&self) {
        self.client
            .execute(
                "for (const b of document.querySelectorAll('.notice .button')) if (b.textContent === 'Dismiss') b.click();",
                vec![],
            )
            .await
            .unwrap();
    }

    /// Scrolls the element into the middle of its panel and clicks it there.
    /// For the history's buttons, far down the detail's own scrolling panel,
    /// where WebKitWebDriver's click answers an empty error.
    pub async fn click_in_panel(&self, css: &str, what: &str) {
        self.wait_for(css, what).await;
        let clicked = self
            .client
            .execute(
                "const b = document.querySelector(arguments[0]);
                 if (!b || b.disabled) return false;
                 b.scrollIntoView({ block: 'center' });
                 b.click();
                 return true;",
                vec![json!(css)],
            )
            .await
            .unwrap();
        assert_eq!(
            clicked,
            json!(true),
            "{}: {what} is not there to click",
            self.name()
        );
    }

    /// Presses a key in the window (outside any field).
    pub async fn press(&self, key: &str) {
        self.wait_for("body", "the page")
            .await
            .send_keys(key)
            .await
            .unwrap();
    }

    /// Moves the focus to the element whose id is `id`, as a click or Tab would.
    pub async fn focus(&self, id: &str) {
        self.eval(&format!("document.getElementById('{id}').focus();"))
            .await;
    }

    /// Presses Ctrl with `key` in the window.
    pub async fn with_control(&self, key: &str) {
        self.press(&format!("{CONTROL}{key}")).await;
    }

    pub async fn click(&self, id: &str) {
        self.click_css(&format!("#{id}"), id).await;
    }

    /// Clicks the element, finding it again if the window redrew it meanwhile.
    pub async fn click_css(&self, css: &str, what: &str) {
        let started = Instant::now();
        loop {
            let element = self.wait_for(css, what).await;
            match element.click().await {
                Ok(_) => return,
                Err(e) if started.elapsed() < Duration::from_secs(10) => {
                    let _ = e; // redrawn (stale) or covered for a moment: try again
                    tokio::time::sleep(Duration::from_millis(100)).await;
                }
                Err(e) => panic!("{}: clicking {what}: {e}", self.name()),
            }
        }
    }

    /// Clicks the element matching `css` until `shown` appears (within
    /// `WAIT`). On a loaded machine a click can land as the window redraws
    /// the element under it, and is lost; a person would click again.
    pub async fn click_until_shown(&self, css: &str, what: &str, shown: &str) {
        let started = Instant::now();
        loop {
            self.click_css(css, what).await;
            let clicked = Instant::now();
            while clicked.elapsed() < Duration::from_secs(2) {
                if !self.absent(shown).await {
                    return;
                }
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            if started.elapsed() > WAIT {
                let after = self.post_mortem().await;
                panic!(
                    "{}: {what} clicked, {shown} never shown{after}",
                    self.name()
                );
            }
        }
    }

    /// Clicks the element matching `css` with `modifier` held (`'\u{E008}'`
    /// Shift, `'\u{E009}'` Control), as WebDriver's actions do: the key goes
    /// down, the pointer clicks, the key comes up.
    pub async fn click_holding(&self, modifier: char, css: &str, what: &str) {
        use fantoccini::actions::{Actions, InputSource, KeyAction, KeyActions, MouseActions};
        let element = self.wait_for(css, what).await;
        let pause = || KeyAction::Pause {
            duration: Duration::ZERO,
        };
        let keys = KeyActions::new("keys".into())
            .then(KeyAction::Down { value: modifier })
            .then(pause())
            .then(pause())
            .then(pause())
            .then(KeyAction::Up { value: modifier });
        let pointer = MouseActions::new("mouse".into())
            .then(PointerAction::Pause {
                duration: Duration::ZERO,
            })
            .then(pointer_onto(element))
            .then(LEFT_DOWN)
            .then(LEFT_UP);
        self.client
            .perform_actions(Actions::from(keys).and(pointer))
            .await
            .unwrap_or_else(|e| panic!("{}: clicking {what} with a key held: {e}", self.name()));
    }

    /// The texts of the elements matching `css` whose words do not all show:
    /// more than their box holds (cut, or spilling over a neighbour) or
    /// running past the right edge of `within` (an element's id).
    pub async fn cut_off(&self, css: &str, within: &str) -> Vec<String> {
        let cut = self
            .client
            .execute(
                "const [css, within] = arguments;
                 const edge = document.getElementById(within).getBoundingClientRect().right;
                 return [...document.querySelectorAll(css)].filter((e) => {
                   if (!e.getClientRects().length) return false;
                   const over = e.scrollWidth > e.clientWidth + 1 || e.scrollHeight > e.clientHeight + 1;
                   return over || e.getBoundingClientRect().right > edge + 1;
                 }).map((e) => e.textContent.trim() || e.className);",
                vec![json!(css), json!(within)],
            )
            .await
            .unwrap();
        serde_json::from_value(cut).unwrap()
    }

    pub async fn invoke(&self, command: &str, args: serde_json::Value) -> serde_json::Value {
        self.client
            .execute_async(
                "const [command, args, done] = arguments;
                 window.__TAURI_INTERNALS__.invoke(command, args).then(done, (e) => done({ failed: e }));",
                vec![json!(command), args],
            )
            .await
            .unwrap()
    }

    /// Runs `script` in the window; answers what it returns.
    pub async fn eval(&self, script: &str) -> serde_json::Value {
        self.client.execute(script, vec![]).await.unwrap()
    }

    /// The texts of every element matching `css`, in page order.
    pub async fn texts(&self, css: &str) -> Vec<String> {
        let found = self
            .client
            .execute(
                "return [...document.querySelectorAll(arguments[0])].map((e) => e.textContent.trim());",
                vec![json!(css)],
            )
            .await
            .unwrap();
        serde_json::from_value(found).unwrap()
    }

    /// The activity's lines, newest first, without the time before each.
    pub async fn activity_lines(&self) -> Vec<String> {
        self.texts("#activity li")
            .await
            .into_iter()
            .map(|line| line.split_once(' ').unwrap().1.to_owned())
            .collect()
    }

    pub async fn absent(&self, css: &str) -> bool {
        self.client
            .find_all(Locator::Css(css))
            .await
            .unwrap()
            .is_empty()
    }
}
