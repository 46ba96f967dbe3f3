//! A dudect-style timing check of the constant-time ES256 code (`crypto::p256_sign`): does the
//! time of a private-key operation depend on the secret? Never a test assertion: it prints
//! Welch's t statistic per measurement, and |t| above 4.5 (dudect's threshold) is a leak to
//! investigate, below it no leak was detected with this many samples.
//!
//! Two operations, each with two classes of secret, the class of every sample drawn at random so
//! drift in the machine hits both classes alike (Reparaz, Balasch, Verbauwhede, "Dude, is my code
//! constant time?", 2017). Class 0 is a random scalar whose upper 128 bits are zero (so a
//! variable-time multiplication would skip the top 32 windows, or select the identity there
//! faster), class 1 a random scalar of full length; both are fresh per sample, so the public
//! results (the public key, `r` and `s`) are random in both classes and the public-data checks
//! that follow cannot tell the classes apart:
//! - `keygen`: [`SigningKey::from_scalar`], the base-point multiplication `[d] G`, then the
//!   public key's on-curve check;
//! - `sign`: [`SigningKey::sign_p1363`] of a random message with a key of each class (RFC 6979
//!   nonce, `[k] G`, `k^-1`, `s = k^-1 (e + r d)`); the signature is verified after the timing.
//!
//! Measurements above the 90th percentile of the first 1,000 samples are dropped (interrupts,
//! migrations), as dudect's cropping does. Random bytes come from `/dev/urandom`. Every signature
//! is checked.
//!
//! `cargo build --release --offline --example p256_sign_timing &&
//! taskset -c 1 target/release/examples/p256_sign_timing [SAMPLES]` (default 20,000 per
//! operation).
#![forbid(unsafe_code)]

use agentteams_mcp::crypto::p256_sign::SigningKey;
use std::io::Read;
use std::time::Instant;

/// Welch's t statistic between two samples, from running sums.
#[derive(Default)]
struct Welch {
    n: [f64; 2],
    mean: [f64; 2],
    m2: [f64; 2],
}

impl Welch {
    /// Welford's update for one measurement of class `class`.
    fn push(&mut self, class: usize, x: f64) {
        self.n[class] += 1.0;
        let delta = x - self.mean[class];
        self.mean[class] += delta / self.n[class];
        self.m2[class] += delta * (x - self.mean[class]);
    }

    fn t(&self) -> f64 {
        let var = |c: usize| self.m2[c] / (self.n[c] - 1.0);
        (self.mean[0] - self.mean[1]) / (var(0) / self.n[0] + var(1) / self.n[1]).sqrt()
    }
}

/// Random bytes from the operating system.
struct Random(std::fs::File);

impl Random {
    fn bytes<const N: usize>(&mut self) -> [u8; N] {
        let mut out = [0u8; N];
        self.0.read_exact(&mut out).expect("read /dev/urandom");
        out
    }

    /// A random scalar of the class: class 0 has its upper 128 bits zero.
    fn scalar(&mut self, class: usize) -> [u8; 32] {
        let mut d: [u8; 32] = self.bytes();
        if class == 0 {
            d[..16].fill(0);
        }
        d
    }

    /// A key of the class (a full-length value is not below n with probability 2^-32: redraw).
    fn key(&mut self, class: usize) -> SigningKey {
        loop {
            if let Ok(key) = SigningKey::from_scalar(&self.scalar(class)) {
                return key;
            }
        }
    }
}

/// A timed operation, returning the untimed check of its result.
type Operation = Box<dyn FnOnce() -> Box<dyn FnOnce() -> bool>>;

/// Runs `samples` measurements of the operation `prepare(class)` gives, the class drawn at random
/// per sample, checks each result after its timing, and returns Welch's t over the cropped
/// measurements, the mean time of each class in µs, and how many measurements were kept.
fn run(
    random: &mut Random,
    samples: usize,
    mut prepare: impl FnMut(&mut Random, usize) -> Operation,
) -> (f64, [f64; 2], usize) {
    const WARMUP: usize = 1_000;
    let mut warmup = Vec::with_capacity(WARMUP);
    let mut welch = Welch::default();
    let mut crop = f64::INFINITY;
    let mut kept = 0;
    for i in 0..samples + WARMUP {
        let class = usize::from(random.bytes::<1>()[0] & 1);
        let operation = prepare(random, class);
        let start = Instant::now();
        let check = operation();
        let nanos = start.elapsed().as_nanos() as f64;
        assert!(check(), "an operation gave a wrong result");
        if i < WARMUP {
            warmup.push(nanos);
            if i + 1 == WARMUP {
                warmup.sort_by(f64::total_cmp);
                crop = warmup[WARMUP * 9 / 10];
            }
        } else if nanos <= crop {
            welch.push(class, nanos);
            kept += 1;
        }
    }
    (welch.t(), [welch.mean[0] / 1e3, welch.mean[1] / 1e3], kept)
}

fn main() {
    let samples: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(20_000);
    let mut random = Random(std::fs::File::open("/dev/urandom").expect("open /dev/urandom"));
    let keygen = run(&mut random, samples, |random, class| {
        let d = random.scalar(class);
        Box::new(move || {
            let key = std::hint::black_box(SigningKey::from_scalar(std::hint::black_box(&d)));
            // Full-length scalars not below n (probability 2^-32) are refused, as they must be.
            Box::new(move || key.is_ok() || class == 1)
        })
    });
    let sign = run(&mut random, samples, |random, class| {
        let key = random.key(class);
        let message: [u8; 32] = random.bytes();
        Box::new(move || {
            let signature = std::hint::black_box(key.sign_p1363(std::hint::black_box(&message)));
            Box::new(move || key.public_key().verify_p1363(&message, &signature).is_ok())
        })
    });
    println!("{samples} samples per operation, cropped above the warm-up's 90th percentile");
    println!("operation  kept    mean class 0 (µs)  mean class 1 (µs)  Welch t");
    for (name, (t, means, kept)) in [("keygen", keygen), ("sign", sign)] {
        println!(
            "{name:<9}  {kept:<6}  {:>17.1}  {:>17.1}  {t:>7.2}",
            means[0], means[1]
        );
    }
}
