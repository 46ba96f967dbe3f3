//! TLS fixtures for the client's https tests, made by the test that needs them: a throwaway CA and
//! server certificates signed at test time with openssl (good, expired, wrong host, unknown CA,
//! self-signed), and stunnel serving them in front of a plain TCP backend on loopback.
//!
//! openssl or stunnel missing: [`Tools::find`] says so on stderr and the test returns early (CI
//! installs stunnel4; openssl is on every machine of this project's kind). The including test
//! crate declares `mod common` (for its `TempDir`).
#![allow(dead_code)]

use crate::common::TempDir;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// The certificates [`Pki::make`] signs, by name: their key is `NAME.key`, their chain `NAME.pem`.
/// All but `wrong-host` name `localhost` and `127.0.0.1`; `wrong-host` names `elsewhere.example`.
pub const CERTS: [&str; 5] = ["good", "expired", "wrong-host", "unknown-ca", "self-signed"];

const OPENSSL_PATHS: [&str; 2] = ["/usr/bin/openssl", "/usr/local/bin/openssl"];
const STUNNEL_PATHS: [&str; 4] = [
    "/usr/bin/stunnel4",
    "/usr/bin/stunnel",
    "/usr/sbin/stunnel4",
    "/usr/sbin/stunnel",
];

/// How long stunnel may take to say it is ready.
const STUNNEL_START: Duration = Duration::from_secs(10);

/// The programs the https tests run.
pub struct Tools {
    pub openssl: PathBuf,
    pub stunnel: PathBuf,
}

fn first(paths: &[&str]) -> Option<PathBuf> {
    paths.iter().map(PathBuf::from).find(|p| p.is_file())
}

impl Tools {
    /// openssl and stunnel, or `None` after printing why the test is skipped.
    pub fn find(test: &str) -> Option<Tools> {
        let Some(openssl) = first(&OPENSSL_PATHS) else {
            eprintln!("skipped {test}: no openssl at {OPENSSL_PATHS:?}");
            return None;
        };
        let Some(stunnel) = first(&STUNNEL_PATHS) else {
            eprintln!("skipped {test}: no stunnel at {STUNNEL_PATHS:?} (apt-get install stunnel4)");
            return None;
        };
        Some(Tools { openssl, stunnel })
    }
}

/// The shell script that makes the CAs and certificates (run with `OPENSSL` set).
const MAKE_PKI: &str = r#"set -e
o=$OPENSSL
key() { "$o" genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key"; }
for ca in ca other-ca; do
  key $ca
  "$o" req -x509 -new -key $ca.key -days 2 -out $ca.pem -subj "/CN=agentteams test $ca" \
    -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign
done
# leaf NAME CA SAN [NOT_BEFORE NOT_AFTER]
leaf() {
  key $1
  "$o" req -new -key $1.key -subj "/CN=$1" -out $1.csr
  printf 'basicConstraints=CA:FALSE\nsubjectAltName=%s\nextendedKeyUsage=serverAuth\n' "$3" > $1.ext
  if [ -n "${4:-}" ]; then
    mkdir -p db.$1; : > db.$1/index.txt; echo 01 > db.$1/serial
    printf '[ca]\ndefault_ca=c\n[c]\ndatabase=db.%s/index.txt\nserial=db.%s/serial\nnew_certs_dir=db.%s\ndefault_md=sha256\npolicy=p\n[p]\ncommonName=supplied\n' $1 $1 $1 > db.$1/ca.cnf
    "$o" ca -batch -notext -config db.$1/ca.cnf -cert $2.pem -keyfile $2.key -in $1.csr \
      -out $1.pem -startdate "$4" -enddate "$5" -extfile $1.ext
  else
    "$o" x509 -req -in $1.csr -CA $2.pem -CAkey $2.key -set_serial "0x$(date +%s%N)" -days 2 \
      -extfile $1.ext -out $1.pem
  fi
}
leaf good ca "DNS:localhost,IP:127.0.0.1"
leaf expired ca "DNS:localhost,IP:127.0.0.1" 200101000000Z 200102000000Z
leaf wrong-host ca "DNS:elsewhere.example"
leaf unknown-ca other-ca "DNS:localhost,IP:127.0.0.1"
key self-signed
"$o" req -x509 -new -key self-signed.key -days 2 -out self-signed.pem -subj "/CN=localhost" \
  -addext subjectAltName=DNS:localhost,IP:127.0.0.1
"#;

/// A throwaway CA (`ca.pem`), an unrelated one (`other-ca.pem`) and the [`CERTS`].
pub struct Pki {
    pub dir: TempDir,
}

impl Pki {
    pub fn make(tools: &Tools) -> Pki {
        let dir = TempDir::new("tls-pki");
        let out = Command::new("/bin/sh")
            .args(["-c", MAKE_PKI])
            .env("OPENSSL", &tools.openssl)
            .current_dir(&dir.0)
            .stdin(Stdio::null())
            .output()
            .expect("sh runs");
        assert!(
            out.status.success(),
            "making the test certificates failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        Pki { dir }
    }

    /// The CA that signed every certificate but `unknown-ca` and `self-signed`.
    pub fn ca(&self) -> PathBuf {
        self.dir.0.join("ca.pem")
    }

    pub fn path(&self, file: &str) -> PathBuf {
        self.dir.0.join(file)
    }
}

/// A free port on 127.0.0.1 (the kernel's choice, released at once).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// stunnel serving TLS on one port per service, each forwarding to a plain TCP backend.
pub struct Tunnel {
    child: Child,
    ports: Vec<(String, u16)>,
    log: PathBuf,
    _dir: TempDir,
}

impl Tunnel {
    /// Serves `(certificate name, backend port)` pairs, each on a port of its own; the port of a
    /// service is [`Tunnel::port`] of its certificate name. `accept_ports` names the TLS port of
    /// a service when the caller chose it (for URLs it had to know before).
    pub fn start(tools: &Tools, pki: &Pki, services: &[(&str, u16)]) -> Tunnel {
        let chosen: Vec<(&str, u16, u16)> = services
            .iter()
            .map(|&(cert, backend)| (cert, backend, free_port()))
            .collect();
        Tunnel::start_on(tools, pki, &chosen)
    }

    /// As [`Tunnel::start`], with each service's TLS port given: `(cert, backend, port)`.
    pub fn start_on(tools: &Tools, pki: &Pki, services: &[(&str, u16, u16)]) -> Tunnel {
        let dir = TempDir::new("tls-stunnel");
        let log = dir.0.join("stunnel.log");
        let mut conf = format!(
            "foreground = yes\npid =\ndebug = 5\noutput = {}\n",
            log.display()
        );
        let mut ports = Vec::new();
        for &(cert, backend, port) in services {
            conf.push_str(&format!(
                "[{cert}]\naccept = 127.0.0.1:{port}\nconnect = 127.0.0.1:{backend}\ncert = {}\nkey = {}\n",
                pki.path(&format!("{cert}.pem")).display(),
                pki.path(&format!("{cert}.key")).display(),
            ));
            ports.push((cert.to_owned(), port));
        }
        let conf_path = dir.0.join("stunnel.conf");
        std::fs::write(&conf_path, conf).unwrap();
        let child = Command::new(&tools.stunnel)
            .arg(&conf_path)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("stunnel runs");
        let tunnel = Tunnel {
            child,
            ports,
            log,
            _dir: dir,
        };
        let started = Instant::now();
        while !tunnel.log().contains("Configuration successful") {
            assert!(
                started.elapsed() < STUNNEL_START,
                "stunnel did not start:\n{}",
                tunnel.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        tunnel
    }

    pub fn port(&self, cert: &str) -> u16 {
        self.ports
            .iter()
            .find(|(c, _)| c == cert)
            .map(|(_, p)| *p)
            .unwrap_or_else(|| panic!("no service for {cert}"))
    }

    /// What stunnel logged so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    /// TLS connections a service accepted so far.
    pub fn accepted(&self, cert: &str) -> usize {
        let needle = format!("Service [{cert}] accepted connection");
        self.log().matches(&needle).count()
    }
}

impl Drop for Tunnel {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What a [`Backend`] does with each connection once it has read a request head.
#[derive(Clone, Copy)]
pub enum Behaviour {
    /// Holds the connection open without answering, for this long, then closes it.
    Stall(Duration),
    /// Answers a chunked body one byte per 100 ms, for ever.
    Drip,
}

/// A plain TCP server that records every byte it receives, connection by connection.
pub struct Backend {
    pub port: u16,
    received: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Backend {
    pub fn start(behaviour: Behaviour) -> Backend {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let received = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&received);
        std::thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let log = Arc::clone(&log);
                std::thread::spawn(move || serve(stream, behaviour, &log));
            }
        });
        Backend { port, received }
    }

    /// Every connection's bytes so far.
    pub fn received(&self) -> Vec<Vec<u8>> {
        self.received.lock().unwrap().clone()
    }
}

fn serve(mut stream: TcpStream, behaviour: Behaviour, log: &Mutex<Vec<Vec<u8>>>) {
    let index = {
        let mut log = log.lock().unwrap();
        log.push(Vec::new());
        log.len() - 1
    };
    let _ = stream.set_read_timeout(Some(Duration::from_millis(200)));
    let mut chunk = [0u8; 4096];
    let started = Instant::now();
    // Read what arrives (the head) for a moment, recording it.
    while started.elapsed() < Duration::from_millis(500) {
        match stream.read(&mut chunk) {
            Ok(0) => return,
            Ok(n) => {
                log.lock().unwrap()[index].extend_from_slice(&chunk[..n]);
                let seen = &log.lock().unwrap()[index];
                if seen.windows(4).any(|w| w == b"\r\n\r\n") {
                    break;
                }
            }
            Err(_) => {}
        }
    }
    match behaviour {
        Behaviour::Stall(time) => std::thread::sleep(time),
        Behaviour::Drip => {
            let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n";
            if stream.write_all(head.as_bytes()).is_err() {
                return;
            }
            for _ in 0..600 {
                if stream.write_all(b"1\r\n \r\n").is_err() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
        }
    }
}

/// The command lines (NUL-separated arguments) of every process whose command line contains
/// `needle`, by pid.
pub fn processes_with(needle: &str) -> Vec<(u32, String)> {
    let mut found = Vec::new();
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return found;
    };
    for entry in entries.flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<u32>().ok())
        else {
            continue;
        };
        let Ok(raw) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let line = String::from_utf8_lossy(&raw).replace('\0', " ");
        if line.contains(needle) {
            found.push((pid, line));
        }
    }
    found
}

/// What a child wrote on a stream, read on a thread as it comes.
pub struct Collected {
    text: Arc<Mutex<String>>,
    reader: std::thread::JoinHandle<()>,
}

impl Collected {
    /// Everything the stream carried, once it has ended (the writer exited or closed it).
    pub fn finished(self) -> String {
        let _ = self.reader.join();
        let text = self.text.lock().unwrap();
        text.clone()
    }
}

/// Reads a stream's lines into a shared buffer on a thread (a child's stderr, watched while it
/// runs).
pub fn collect(stream: impl Read + Send + 'static) -> Collected {
    let text = Arc::new(Mutex::new(String::new()));
    let shared = Arc::clone(&text);
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stream).lines().map_while(Result::ok) {
            let mut text = shared.lock().unwrap();
            text.push_str(&line);
            text.push('\n');
        }
    });
    Collected { text, reader }
}
