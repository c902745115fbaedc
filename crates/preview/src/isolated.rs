//! A reader that cannot be bounded from inside (hayro, for PDF: it holds the
//! whole file and cannot be interrupted) runs in a child process of the same
//! program, which is killed at the deadline and, on Linux, denied memory past
//! the budget. A crash there is a file without a preview, not a crash here.
//!
//! A program opts in by calling [`serve_or_enable`] first thing in `main`;
//! elsewhere (tests, fuzzers) the reader runs in-process under the deadline
//! checks it has.

use std::ffi::OsString;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use super::{Limits, NoPreview, Preview, MAX_SIZE};

/// The first argument that makes the program a preview worker.
pub const WORKER_ARG: &str = "--leasedesk-preview-worker";

/// The program that serves as a worker, once enabled.
static PROGRAM: OnceLock<PathBuf> = OnceLock::new();

/// Memory the worker's own program needs beyond the decode's budget.
const PROGRAM_MEMORY: u64 = 64 << 20;

/// How often the parent looks whether the worker has finished.
const POLL: Duration = Duration::from_millis(2);

/// For a program's `main`, first thing: started as a preview worker, this
/// renders and exits; otherwise previews that need it run in workers of
/// this program from now on.
pub fn serve_or_enable() {
    let args: Vec<OsString> = std::env::args_os().collect();
    if args.get(1).is_some_and(|arg| arg == WORKER_ARG) {
        std::process::exit(serve(&args[2..]));
    }
    if let Ok(program) = std::env::current_exe() {
        let _ = PROGRAM.set(program);
    }
}

/// The PDF reader's preview of the file at `path`, from a worker: `None`
/// when this program has not enabled workers.
pub fn render_pdf(path: &Path, size: u32, limits: &Limits) -> Option<Result<Preview, NoPreview>> {
    let program = PROGRAM.get()?;
    Some(run(program, path, size, limits))
}

fn run(program: &Path, path: &Path, size: u32, limits: &Limits) -> Result<Preview, NoPreview> {
    let left = limits.deadline.saturating_duration_since(Instant::now());
    let mut command = Command::new(program);
    command
        .arg(WORKER_ARG)
        .arg(path)
        .arg(size.to_string())
        .arg(limits.memory.to_string())
        .arg(left.as_millis().to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        // No console window flashes up from the app.
        const CREATE_NO_WINDOW: u32 = 0x0800_0000;
        command.creation_flags(CREATE_NO_WINDOW);
    }
    let failed = |e: std::io::Error| NoPreview(format!("the PDF reader could not start: {e}"));
    let mut child = command.spawn().map_err(failed)?;
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let most = 11 + u64::from(u16::MAX) + u64::from(MAX_SIZE).pow(2) * 4;
    let reader = std::thread::spawn(move || {
        let mut answer = Vec::new();
        let _ = (&mut stdout).take(most).read_to_end(&mut answer);
        answer
    });
    let finished = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < limits.deadline => std::thread::sleep(POLL),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                break None;
            }
        }
    };
    let answer = reader.join().unwrap_or_default();
    match finished {
        None => Err(NoPreview(
            "making the preview took too long: gave up".into(),
        )),
        Some(status) if !status.success() => Err(NoPreview(
            "a PDF document the reader failed on (it ran out of memory or crashed): it seems damaged"
                .into(),
        )),
        Some(_) => decode_answer(&answer),
    }
}

/// The worker's answer: `I`, width and height (u32, little-endian), the
/// fidelity's length (u16) and text, and the RGBA pixels; or `N` and the
/// no-preview message.
fn decode_answer(answer: &[u8]) -> Result<Preview, NoPreview> {
    let garbled = || NoPreview("the PDF reader answered nonsense".into());
    match answer.split_first() {
        Some((b'N', message)) => Err(NoPreview(String::from_utf8_lossy(message).into_owned())),
        Some((b'I', rest)) if rest.len() >= 10 => {
            let number =
                |at: usize| u32::from_le_bytes(rest[at..at + 4].try_into().expect("four bytes"));
            let (width, height) = (number(0), number(4));
            let len = usize::from(u16::from_le_bytes([rest[8], rest[9]]));
            let fidelity = rest.get(10..10 + len).ok_or_else(garbled)?;
            let pixels = rest[10 + len..].to_vec();
            let image = image::RgbaImage::from_raw(width, height, pixels).ok_or_else(garbled)?;
            Ok(Preview::of_fidelity(
                image,
                &String::from_utf8_lossy(fidelity),
            ))
        }
        _ => Err(garbled()),
    }
}

/// The worker: `PATH SIZE MEMORY MILLIS`. Its exit code is 0 whenever it
/// answered, 2 for arguments it cannot read.
fn serve(args: &[OsString]) -> i32 {
    let [path, size, memory, millis] = args else {
        return 2;
    };
    let number = |arg: &OsString| arg.to_str().and_then(|s| s.parse::<u64>().ok());
    let (Some(size), Some(memory), Some(millis)) = (number(size), number(memory), number(millis))
    else {
        return 2;
    };
    deny_memory_past(memory.saturating_add(PROGRAM_MEMORY));
    let limits = Limits {
        memory,
        deadline: Instant::now() + Duration::from_millis(millis),
    };
    let size = size.clamp(super::MIN_SIZE as u64, MAX_SIZE as u64) as u32;
    let answer = match super::pdf_in_process(Path::new(path), size, &limits) {
        Ok(preview) => {
            let (image, fidelity) = (&preview.image, preview.fidelity());
            let mut answer = Vec::with_capacity(11 + fidelity.len() + image.as_raw().len());
            answer.push(b'I');
            answer.extend(image.width().to_le_bytes());
            answer.extend(image.height().to_le_bytes());
            // A fidelity is a header's value: far shorter than 64 KiB.
            answer.extend((fidelity.len() as u16).to_le_bytes());
            answer.extend_from_slice(fidelity.as_bytes());
            answer.extend_from_slice(image.as_raw());
            answer
        }
        Err(NoPreview(message)) => [b"N", message.as_bytes()].concat(),
    };
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(&answer).and_then(|()| stdout.flush()) {
        Ok(()) => 0,
        Err(_) => 1,
    }
}

/// On Linux, caps the heap (`RLIMIT_DATA` counts anonymous mappings too), so
/// an allocation past the budget fails and the worker aborts.
#[cfg(target_os = "linux")]
fn deny_memory_past(bytes: u64) {
    let limit = libc::rlimit {
        rlim_cur: bytes,
        rlim_max: bytes,
    };
    // SAFETY: setrlimit only reads `limit`.
    unsafe {
        libc::setrlimit(libc::RLIMIT_DATA, &limit);
    }
}

/// Elsewhere the deadline bounds the worker: macOS does not enforce
/// `RLIMIT_DATA`, and Windows has no such limit for a process on its own.
#[cfg(not(target_os = "linux"))]
fn deny_memory_past(_bytes: u64) {}
