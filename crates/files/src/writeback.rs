//! Files written once and read later, if ever (a blob, a download): their
//! writeback started as they are written, so the fsync that makes them
//! durable finds little left to do, and what reached the disk dropped from
//! the page cache behind the writing.

use std::fs::File;
use std::sync::mpsc;

/// How much is written before its writeback is started.
const WRITEBACK_WINDOW: u64 = 8 << 20;

/// Has what is written to a file written to disk in the background, every
/// [`WRITEBACK_WINDOW`], so the fsync that makes it durable finds little
/// left to do: the disk works while the copy goes on instead of after it;
/// and each window, once on disk, leaves the page cache. A thread of its
/// own asks, since asking can block while the disk is busy. Best effort:
/// without it the final fsync simply does all the work.
pub struct Writeback {
    written: u64,
    flushing_from: u64,
    flusher: Option<mpsc::Sender<(u64, u64)>>,
}

impl Writeback {
    /// For a file whose writing goes on at byte `at`.
    pub fn new(at: u64) -> Self {
        Self {
            written: at,
            flushing_from: at,
            flusher: None,
        }
    }

    /// Notes `n` more bytes written to `file`.
    pub fn wrote(&mut self, file: &File, n: u64) {
        self.written += n;
        if self.written - self.flushing_from < WRITEBACK_WINDOW {
            return;
        }
        if self.flusher.is_none() {
            self.flusher = spawn_flusher(file);
        }
        if let Some(flusher) = &self.flusher {
            let range = (self.flushing_from, self.written - self.flushing_from);
            let _ = flusher.send(range);
        }
        self.flushing_from = self.written;
    }
}

/// A thread that starts the writeback of the byte ranges it is sent (on Linux,
/// with sync_file_range; elsewhere there is none), and once a range has gone
/// to disk, drops it from the page cache. It ends when its sender drops.
///
/// Dropped because such a file is written once and read later, if ever:
/// kept, a gigabyte written would push a gigabyte of other files out of
/// memory, and take a gigabyte of fresh memory to do it, which on virtual
/// machines that hand idle memory back to their host is slower than the
/// disk (writing 1 GiB took 1.2 to 4.2 s so, 0.7 s dropping each range as
/// it went).
#[cfg(target_os = "linux")]
fn spawn_flusher(file: &File) -> Option<mpsc::Sender<(u64, u64)>> {
    use std::os::fd::AsRawFd;
    let file = file.try_clone().ok()?;
    let (ranges, to_flush) = mpsc::channel::<(u64, u64)>();
    let spawned = std::thread::Builder::new()
        .name("blob-writeback".into())
        .spawn(move || {
            let fd = file.as_raw_fd();
            let mut before: Option<(u64, u64)> = None;
            for (from, len) in to_flush {
                // SAFETY (both): they only read their integer arguments, and
                // `file` keeps the descriptor open. Advisory: the final fsync
                // makes the blob durable and reports any error.
                unsafe {
                    libc::sync_file_range(fd, from as i64, len as i64, libc::SYNC_FILE_RANGE_WRITE)
                };
                // The range before, written by now or waited for, leaves
                // the cache: the next ranges reuse its memory.
                if let Some((from, len)) = before.replace((from, len)) {
                    unsafe {
                        libc::sync_file_range(
                            fd,
                            from as i64,
                            len as i64,
                            libc::SYNC_FILE_RANGE_WAIT_BEFORE
                                | libc::SYNC_FILE_RANGE_WRITE
                                | libc::SYNC_FILE_RANGE_WAIT_AFTER,
                        );
                        libc::posix_fadvise(fd, from as i64, len as i64, libc::POSIX_FADV_DONTNEED);
                    }
                }
            }
        });
    spawned.ok().map(|_| ranges)
}

#[cfg(not(target_os = "linux"))]
fn spawn_flusher(_file: &File) -> Option<mpsc::Sender<(u64, u64)>> {
    None
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;
    use std::io::Write;
    use std::os::fd::AsRawFd;
    use std::time::{Duration, Instant};

    /// How many bytes of the file's first `len` are in the page cache.
    fn resident(file: &File, len: usize) -> usize {
        // SAFETY: a private read-only mapping of `len` bytes of an open
        // file, read by mincore into a vector of one byte a page, unmapped.
        unsafe {
            let page = libc::sysconf(libc::_SC_PAGESIZE) as usize;
            let map = libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            );
            assert_ne!(map, libc::MAP_FAILED);
            let mut pages = vec![0u8; len.div_ceil(page)];
            let asked = libc::mincore(map, len, pages.as_mut_ptr());
            libc::munmap(map, len);
            assert_eq!(asked, 0);
            pages.iter().filter(|p| **p & 1 == 1).count() * page
        }
    }

    /// Whether `path` is on a tmpfs, whose pages are the file itself.
    fn on_tmpfs(path: &std::path::Path) -> bool {
        let c = std::ffi::CString::new(path.as_os_str().as_encoded_bytes()).unwrap();
        // SAFETY: statfs fills the struct it is given.
        unsafe {
            let mut fs: libc::statfs = std::mem::zeroed();
            libc::statfs(c.as_ptr(), &mut fs) == 0 && fs.f_type == libc::TMPFS_MAGIC
        }
    }

    /// Each window written, once on disk, leaves the page cache: of 64 MiB
    /// written, no more than the last windows stay.
    #[test]
    fn what_reached_the_disk_leaves_the_page_cache() {
        let dir = std::env::current_dir()
            .unwrap()
            .join("target-writeback-test");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(format!("written-{}", std::process::id()));
        // Readable too, to be mapped.
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create_new(true)
            .open(&path)
            .unwrap();
        let len = 64 << 20;
        let piece = vec![0x5au8; 1 << 20];
        let mut writeback = Writeback::new(0);
        for _ in 0..len / piece.len() {
            file.write_all(&piece).unwrap();
            writeback.wrote(&file, piece.len() as u64);
        }
        drop(writeback);
        let tmpfs = on_tmpfs(&dir);
        let most = 3 * WRITEBACK_WINDOW as usize;
        let deadline = Instant::now() + Duration::from_secs(30);
        let mut now = resident(&file, len);
        while now > most && Instant::now() < deadline && !tmpfs {
            std::thread::sleep(Duration::from_millis(50));
            now = resident(&file, len);
        }
        drop(file);
        std::fs::remove_dir_all(&dir).unwrap();
        if !tmpfs {
            assert!(now <= most, "{now} bytes of {len} still cached");
        }
    }
}
