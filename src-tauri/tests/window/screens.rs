//! Screenshots: each step's in `target/e2e-screenshots/`, the README's in
//! `docs/screenshots/` only when asked (`LEASEDESK_SCREENSHOTS=update`), the
//! window read from Xvfb's framebuffer file. Never writes a tracked file unasked.

use std::path::PathBuf;
use std::time::Duration;

use super::process::{oldest_app_process, web_process_of};
use super::session::World;

impl World {
    /// After a step failed: its screenshot if one can still be taken, and
    /// what became of the app (running, its web process, its last output),
    /// said in the failure so a run on another machine explains itself.
    pub async fn post_mortem(&self) -> String {
        let shot = tokio::time::timeout(Duration::from_secs(10), self.try_png()).await;
        let shot = match shot {
            Ok(Ok(png)) => {
                let file = self.shots.join(format!("{}-failure.png", self.name()));
                std::fs::write(&file, png)
                    .map_or_else(|e| e.to_string(), |()| file.display().to_string())
            }
            Ok(Err(e)) => format!("none: {e}"),
            Err(_) => "none: the window did not answer within 10 s".to_owned(),
        };
        let app = match oldest_app_process() {
            None => "the app is not running".to_owned(),
            Some(pid) => match web_process_of(pid) {
                Some(web) => format!("the app runs ({pid}), its web process too ({web})"),
                None => format!("the app runs ({pid}) without a web process"),
            },
        };
        let output =
            std::fs::read_to_string(self.log.with_extension("stderr.log")).unwrap_or_default();
        let last: Vec<&str> = output.lines().rev().take(30).collect();
        let last: Vec<&str> = last.into_iter().rev().collect();
        format!(
            "\nscreenshot: {shot}\n{app}\nthe app's last output:\n{}",
            last.join("\n")
        )
    }

    pub async fn screenshot(&self, step: &str) {
        let png = self.png().await;
        std::fs::write(self.shots.join(format!("{}-{step}.png", self.name())), png).unwrap();
    }

    /// The window as PNG. Read from Xvfb's framebuffer file when
    /// `LEASEDESK_XVFB_FRAMEBUFFER` names it (`cargo xtask test` does): on a
    /// busy machine WebKitWebDriver's screenshot sometimes never answers, and
    /// holds every later command of the session with it.
    pub async fn png(&self) -> Vec<u8> {
        self.try_png().await.unwrap()
    }

    async fn try_png(&self) -> Result<Vec<u8>, String> {
        let Some(file) = std::env::var_os("LEASEDESK_XVFB_FRAMEBUFFER") else {
            return self.client.screenshot().await.map_err(|e| e.to_string());
        };
        let frame = self
            .client
            .execute(
                "return [screenX, screenY, outerWidth, outerHeight];",
                vec![],
            )
            .await
            .map_err(|e| e.to_string())?;
        let at: Vec<u32> = frame
            .as_array()
            .into_iter()
            .flatten()
            .map(|v| v.as_f64().unwrap_or(0.0).max(0.0) as u32)
            .collect();
        let [x, y, width, height] = at[..] else {
            return Err(format!("the window's place reads {frame}"));
        };
        // A frame drawn since the last change, so the file shows it.
        tokio::time::sleep(Duration::from_millis(150)).await;
        let screen = xwd_to_rgb(&std::fs::read(file).map_err(|e| e.to_string())?);
        let (x, y) = (x.min(screen.width()), y.min(screen.height()));
        let (width, height) = (
            width.min(screen.width() - x),
            height.min(screen.height() - y),
        );
        let window = image::imageops::crop_imm(&screen, x, y, width, height).to_image();
        let mut png = std::io::Cursor::new(Vec::new());
        window
            .write_to(&mut png, image::ImageFormat::Png)
            .map_err(|e| e.to_string())?;
        Ok(png.into_inner())
    }

    /// A screenshot for the README too (`docs/screenshots/NAME.png`) when
    /// `LEASEDESK_SCREENSHOTS=update`, so a plain test run changes no tracked file.
    pub async fn readme_screenshot(&self, name: &str) {
        self.screenshot(name).await;
        if std::env::var("LEASEDESK_SCREENSHOTS").as_deref() == Ok("update") {
            let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/screenshots");
            std::fs::create_dir_all(&docs).unwrap();
            std::fs::write(docs.join(format!("{name}.png")), self.png().await).unwrap();
        }
    }
}

/// Xvfb's screen (`-fbdir`: an XWD file, ZPixmap at 32 bits per pixel) as RGB.
pub fn xwd_to_rgb(xwd: &[u8]) -> image::RgbImage {
    let field = |i: usize| u32::from_be_bytes(xwd[i * 4..i * 4 + 4].try_into().unwrap());
    let (header, width, height) = (field(0) as usize, field(4), field(5));
    let (byte_order, bits_per_pixel, bytes_per_line) = (field(7), field(11), field(12) as usize);
    let colours = field(19) as usize;
    assert_eq!((field(2), bits_per_pixel), (2, 32), "a 24-bit Xvfb screen");
    let pixels = &xwd[header + colours * 12..];
    image::RgbImage::from_fn(width, height, |x, y| {
        let at = y as usize * bytes_per_line + x as usize * 4;
        let p = &pixels[at..at + 4];
        // LSBFirst (0) keeps blue first in memory.
        if byte_order == 0 {
            image::Rgb([p[2], p[1], p[0]])
        } else {
            image::Rgb([p[1], p[2], p[3]])
        }
    })
}
