//! A link between a client and a server that a test or a bench controls: a
//! TCP proxy on 127.0.0.1:0 that counts the bytes each way, can shape them
//! (a rate each way and a one-way delay, as a slow home link has), and cuts
//! every connection through it on demand or once so many bytes went up, or
//! leaves them half open (the client's side closed, the server's silent).
//! While it is down it takes connections and drops them at once.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// How a link carries bytes: bytes per second each way (`None`: as fast as
/// they come) and the delay each way (half the round trip).
#[derive(Clone, Copy, Debug, Default)]
pub struct Shape {
    pub up_rate: Option<u64>,
    pub down_rate: Option<u64>,
    pub one_way_delay: Duration,
}

impl Shape {
    /// `up` and `down` in megabits per second, and a round trip in milliseconds.
    pub fn mbit(up: f64, down: f64, rtt_ms: u64) -> Self {
        Self {
            up_rate: Some((up * 1e6 / 8.0) as u64),
            down_rate: Some((down * 1e6 / 8.0) as u64),
            one_way_delay: Duration::from_millis(rtt_ms / 2),
        }
    }
}

/// A running link; it stops when dropped.
pub struct Link {
    address: SocketAddr,
    shared: Arc<Shared>,
    accepting: tokio::task::JoinHandle<()>,
}

struct Shared {
    server: SocketAddr,
    shape: Shape,
    up: AtomicU64,
    down: AtomicU64,
    /// Bumped to cut every connection open now.
    cuts: tokio::sync::watch::Sender<u64>,
    /// Bumped to leave every connection open now half open.
    half_cuts: tokio::sync::watch::Sender<u64>,
    /// The server's sides of the connections left half open: kept, silent.
    half_open: Mutex<Vec<TcpStream>>,
    /// Cut everything once this many bytes went up in all.
    cut_at_up: Mutex<Option<u64>>,
    is_down: AtomicBool,
    /// When each direction's wire is free again (the rate's pacing).
    up_free: Mutex<Instant>,
    down_free: Mutex<Instant>,
}

impl Link {
    /// A link to `server` shaped as `shape`.
    pub async fn to(server: SocketAddr, shape: Shape) -> Link {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind the link");
        let address = listener.local_addr().expect("the link's address");
        let shared = Arc::new(Shared {
            server,
            shape,
            up: AtomicU64::new(0),
            down: AtomicU64::new(0),
            cuts: tokio::sync::watch::channel(0).0,
            half_cuts: tokio::sync::watch::channel(0).0,
            half_open: Mutex::new(Vec::new()),
            cut_at_up: Mutex::new(None),
            is_down: AtomicBool::new(false),
            up_free: Mutex::new(Instant::now()),
            down_free: Mutex::new(Instant::now()),
        });
        let accepting = {
            let shared = shared.clone();
            tokio::spawn(async move {
                while let Ok((client, _)) = listener.accept().await {
                    if shared.is_down.load(Ordering::SeqCst) {
                        drop(client);
                        continue;
                    }
                    tokio::spawn(carry(client, shared.clone()));
                }
            })
        };
        Link {
            address,
            shared,
            accepting,
        }
    }

    /// The address clients use instead of the server's.
    pub fn address(&self) -> SocketAddr {
        self.address
    }

    /// `http://` and the address.
    pub fn url(&self) -> String {
        format!("http://{}", self.address)
    }

    /// Bytes carried from clients to the server so far.
    pub fn sent_up(&self) -> u64 {
        self.shared.up.load(Ordering::SeqCst)
    }

    /// Bytes carried from the server to clients so far.
    pub fn sent_down(&self) -> u64 {
        self.shared.down.load(Ordering::SeqCst)
    }

    /// Returns once `bytes` in all have gone up.
    pub async fn until_sent_up(&self, bytes: u64) {
        while self.sent_up() < bytes {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Returns once `bytes` in all have come down.
    pub async fn until_sent_down(&self, bytes: u64) {
        while self.sent_down() < bytes {
            tokio::time::sleep(Duration::from_millis(2)).await;
        }
    }

    /// Cuts every connection open now.
    pub fn cut_now(&self) {
        self.shared.cuts.send_modify(|n| *n += 1);
    }

    /// Leaves every connection open now half open, as a dead client or a
    /// dropped NAT mapping does: the client's side is closed, while the
    /// server's stays open and hears nothing more, not even a close.
    pub fn half_open_now(&self) {
        self.shared.half_cuts.send_modify(|n| *n += 1);
    }

    /// Cuts every connection once `bytes` in all have gone up (once).
    pub fn cut_when_up(&self, bytes: u64) {
        *self.shared.cut_at_up.lock().unwrap() = Some(bytes);
    }

    /// Takes the link down (every connection cut, new ones dropped) or up.
    pub fn set_down(&self, down: bool) {
        self.shared.is_down.store(down, Ordering::SeqCst);
        if down {
            self.cut_now();
        }
    }
}

impl Drop for Link {
    fn drop(&mut self) {
        self.accepting.abort();
        self.cut_now();
        self.shared.half_open.lock().unwrap().clear();
    }
}

/// Carries one connection both ways until either side closes or a cut.
async fn carry(client: TcpStream, shared: Arc<Shared>) {
    let Ok(server) = TcpStream::connect(shared.server).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut cuts, mut half_cuts) = (shared.cuts.subscribe(), shared.half_cuts.subscribe());
    // The server's side is lent to the pipes, so that a half-open cut keeps
    // it whole: its halves would close it when dropped.
    let server = std::sync::Arc::new(server);
    let (from_client, to_client) = client.into_split();
    let up = pipe(from_client, &*server, shared.clone(), true);
    let down = pipe(&*server, to_client, shared.clone(), false);
    let half_open = tokio::select! {
        _ = async { tokio::join!(up, down) } => false,
        _ = cuts.changed() => false,
        _ = half_cuts.changed() => true,
    };
    if half_open {
        if let Ok(server) = std::sync::Arc::try_unwrap(server) {
            shared.half_open.lock().unwrap().push(server);
        }
    }
}

/// A side of a connection a pipe reads or writes: an owned half, or a
/// stream lent to both pipes.
trait Side: Send {
    fn read_some<'a>(
        &'a mut self,
        buf: &'a mut [u8],
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<usize>> + Send + 'a>>;
    fn write_whole<'a>(
        &'a mut self,
        bytes: &'a [u8],
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<()>> + Send + 'a>>;
    fn close(&mut self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>>;
}

impl Side for tokio::net::tcp::OwnedReadHalf {
    fn read_some<'a>(
        &'a mut self,
        buf: &'a mut [u8],
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<usize>> + Send + 'a>>
    {
        Box::pin(self.read(buf))
    }
    fn write_whole<'a>(
        &'a mut self,
        _: &'a [u8],
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<()>> + Send + 'a>> {
        Box::pin(async { Err(std::io::ErrorKind::Unsupported.into()) })
    }
    fn close(&mut self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(async {})
    }
}

impl Side for tokio::net::tcp::OwnedWriteHalf {
    fn read_some<'a>(
        &'a mut self,
        _: &'a mut [u8],
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<usize>> + Send + 'a>>
    {
        Box::pin(async { Err(std::io::ErrorKind::Unsupported.into()) })
    }
    fn write_whole<'a>(
        &'a mut self,
        bytes: &'a [u8],
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<()>> + Send + 'a>> {
        Box::pin(self.write_all(bytes))
    }
    fn close(&mut self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        Box::pin(async {
            let _ = self.shutdown().await;
        })
    }
}

impl Side for &TcpStream {
    fn read_some<'a>(
        &'a mut self,
        buf: &'a mut [u8],
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<usize>> + Send + 'a>>
    {
        let stream: &TcpStream = self;
        Box::pin(async move {
            loop {
                stream.readable().await?;
                match stream.try_read(buf) {
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    read => return read,
                }
            }
        })
    }
    fn write_whole<'a>(
        &'a mut self,
        mut bytes: &'a [u8],
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = std::io::Result<()>> + Send + 'a>> {
        let stream: &TcpStream = self;
        Box::pin(async move {
            while !bytes.is_empty() {
                stream.writable().await?;
                match stream.try_write(bytes) {
                    Ok(n) => bytes = &bytes[n..],
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
                    Err(e) => return Err(e),
                }
            }
            Ok(())
        })
    }
    fn close(&mut self) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>> {
        let _ = socket2::SockRef::from(*self).shutdown(std::net::Shutdown::Write);
        Box::pin(async {})
    }
}

/// One direction: read, wait for the wire (rate) and the delay, write.
async fn pipe(mut from: impl Side, mut to: impl Side, shared: Arc<Shared>, upward: bool) {
    let (rate, free, counted) = if upward {
        (shared.shape.up_rate, &shared.up_free, &shared.up)
    } else {
        (shared.shape.down_rate, &shared.down_free, &shared.down)
    };
    let delay = shared.shape.one_way_delay;
    // Pieces in flight on the wire, each with when it arrives.
    let (queue, mut arriving) = tokio::sync::mpsc::channel::<(Instant, Vec<u8>)>(64);
    let writer = async move {
        while let Some((at, piece)) = arriving.recv().await {
            tokio::time::sleep_until(at.into()).await;
            if to.write_whole(&piece).await.is_err() {
                return;
            }
        }
        to.close().await;
    };
    let reader = async {
        let mut buf = vec![0u8; 16 << 10];
        loop {
            let n = match from.read_some(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => n,
            };
            let now = Instant::now();
            let sent_at = match rate {
                None => now,
                Some(rate) => {
                    let mut free = free.lock().unwrap();
                    let start = (*free).max(now);
                    *free = start + Duration::from_secs_f64(n as f64 / rate as f64);
                    *free
                }
            };
            // The sender waits for the wire as a real one would.
            tokio::time::sleep_until(sent_at.into()).await;
            let total = counted.fetch_add(n as u64, Ordering::SeqCst) + n as u64;
            if upward {
                let mut limit = shared.cut_at_up.lock().unwrap();
                if limit.is_some_and(|at| total >= at) {
                    *limit = None;
                    drop(limit);
                    shared.cuts.send_modify(|c| *c += 1);
                    return;
                }
            }
            if queue
                .send((sent_at + delay, buf[..n].to_vec()))
                .await
                .is_err()
            {
                break;
            }
        }
        drop(queue);
    };
    tokio::join!(reader, writer);
}
