//! A private etcd for the pool's tests: Debian's `etcd` (package
//! `etcd-server`; `.ci/run` installs it) on two free loopback ports and a
//! temp data directory, started by the test and killed when dropped. When
//! no `etcd` is installed, the Debian package is downloaded (`apt-get
//! download`) and unpacked under `target/`, so `cargo test` needs nothing
//! installed beforehand on a Debian machine.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running etcd.
pub(crate) struct Etcd {
    child: Child,
    /// `http://127.0.0.1:<port>`.
    pub(crate) endpoint: String,
    peer_url: String,
    pub(crate) dir: PathBuf,
}

fn spawn(dir: &Path, endpoint: &str, peer_url: &str) -> Child {
    Command::new(program())
        .arg("--name")
        .arg("roost-test")
        .arg("--data-dir")
        .arg(dir.join("data"))
        .args(["--listen-client-urls", endpoint])
        .args(["--advertise-client-urls", endpoint])
        .args(["--listen-peer-urls", peer_url])
        .args(["--initial-advertise-peer-urls", peer_url])
        .args(["--initial-cluster", &format!("roost-test={peer_url}")])
        .stdout(Stdio::null())
        .stderr(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(dir.join("etcd.log"))
                .map_or_else(|_| Stdio::null(), Stdio::from),
        )
        .spawn()
        .expect("etcd starts")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .expect("a free port")
        .port()
}

/// The `etcd` program: installed, or unpacked from Debian's package.
fn program() -> PathBuf {
    for p in ["/usr/bin/etcd", "/usr/local/bin/etcd"] {
        if Path::new(p).exists() {
            return PathBuf::from(p);
        }
    }
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("target/etcd");
    let bin = root.join("usr/bin/etcd");
    if bin.exists() {
        return bin;
    }
    std::fs::create_dir_all(&root).expect("mkdir target/etcd");
    let fetched = Command::new("apt-get")
        .args(["download", "etcd-server"])
        .current_dir(&root)
        .status()
        .is_ok_and(|s| s.success());
    let deb = std::fs::read_dir(&root).ok().and_then(|d| {
        d.filter_map(Result::ok)
            .map(|e| e.path())
            .find(|p| p.extension().is_some_and(|x| x == "deb"))
    });
    match (fetched, deb) {
        (true, Some(deb)) => {
            let ok = Command::new("dpkg-deb")
                .arg("-x")
                .arg(&deb)
                .arg(&root)
                .status()
                .is_ok_and(|s| s.success());
            assert!(ok && bin.exists(), "cannot unpack {}", deb.display());
            bin
        }
        _ => panic!(
            "the pool's tests need etcd: install Debian's etcd-server (apt-get install etcd-server)"
        ),
    }
}

impl Etcd {
    /// Starts one, named `name` (its data under a temp dir), and waits
    /// until it answers.
    pub(crate) fn start(name: &str) -> Etcd {
        let dir = super::daemon::temp(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        let (client, peer) = (free_port(), free_port());
        let endpoint = format!("http://127.0.0.1:{client}");
        let peer_url = format!("http://127.0.0.1:{peer}");
        let child = spawn(&dir, &endpoint, &peer_url);
        let etcd = Etcd {
            child,
            endpoint,
            peer_url,
            dir,
        };
        etcd.wait_healthy();
        etcd
    }

    fn wait_healthy(&self) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !self.healthy() {
            assert!(Instant::now() < deadline, "etcd did not come up");
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Starts it again after [`Etcd::pause`], on its ports and data.
    pub(crate) fn resume(&mut self) {
        self.child = spawn(&self.dir, &self.endpoint, &self.peer_url);
        self.wait_healthy();
    }

    fn healthy(&self) -> bool {
        let Some(addr) = self.endpoint.strip_prefix("http://") else {
            return false;
        };
        let Ok(mut s) = std::net::TcpStream::connect(addr) else {
            return false;
        };
        use std::io::{Read, Write};
        let _ = s.set_read_timeout(Some(Duration::from_secs(2)));
        if s.write_all(b"GET /health HTTP/1.0\r\nHost: x\r\n\r\n")
            .is_err()
        {
            return false;
        }
        let mut answer = String::new();
        let _ = s.read_to_string(&mut answer);
        answer.contains("\"health\":\"true\"")
    }

    /// Stops it (its data stays, for [`Etcd::resume`]).
    pub(crate) fn pause(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Etcd {
    fn drop(&mut self) {
        self.pause();
    }
}
