//! SHA-256 (FIPS 180-4), so the tests can compute a namespace hash without trusting the tool's
//! own code. The round constants are derived from the primes as the standard defines them.

/// The first `n` primes.
fn primes(n: usize) -> Vec<u64> {
    let mut found = Vec::with_capacity(n);
    let mut candidate = 2u64;
    while found.len() < n {
        if found.iter().all(|p| !candidate.is_multiple_of(*p)) {
            found.push(candidate);
        }
        candidate += 1;
    }
    found
}

/// The first 32 bits of the fractional part of `x`.
fn fraction_bits(x: f64) -> u32 {
    ((x - x.floor()) * 4_294_967_296.0) as u32
}

/// The lowercase hex SHA-256 digest of `data`.
pub fn hex(data: &[u8]) -> String {
    let k: Vec<u32> = primes(64)
        .iter()
        .map(|p| fraction_bits((*p as f64).cbrt()))
        .collect();
    let mut h: Vec<u32> = primes(8)
        .iter()
        .map(|p| fraction_bits((*p as f64).sqrt()))
        .collect();
    let mut message = data.to_vec();
    message.push(0x80);
    while message.len() % 64 != 56 {
        message.push(0);
    }
    message.extend_from_slice(&(data.len() as u64 * 8).to_be_bytes());
    for block in message.chunks(64) {
        let mut w = [0u32; 64];
        for (i, word) in block.chunks(4).enumerate() {
            w[i] = u32::from_be_bytes([word[0], word[1], word[2], word[3]]);
        }
        for i in 16..64 {
            let s0 = w[i - 15].rotate_right(7) ^ w[i - 15].rotate_right(18) ^ (w[i - 15] >> 3);
            let s1 = w[i - 2].rotate_right(17) ^ w[i - 2].rotate_right(19) ^ (w[i - 2] >> 10);
            w[i] = w[i - 16]
                .wrapping_add(s0)
                .wrapping_add(w[i - 7])
                .wrapping_add(s1);
        }
        let mut v = [h[0], h[1], h[2], h[3], h[4], h[5], h[6], h[7]];
        for i in 0..64 {
            let [a, b, c, d, e, f, g, hh] = v;
            let s1 = e.rotate_right(6) ^ e.rotate_right(11) ^ e.rotate_right(25);
            let ch = (e & f) ^ (!e & g);
            let t1 = hh
                .wrapping_add(s1)
                .wrapping_add(ch)
                .wrapping_add(k[i])
                .wrapping_add(w[i]);
            let s0 = a.rotate_right(2) ^ a.rotate_right(13) ^ a.rotate_right(22);
            let maj = (a & b) ^ (a & c) ^ (b & c);
            let t2 = s0.wrapping_add(maj);
            v = [t1.wrapping_add(t2), a, b, c, d.wrapping_add(t1), e, f, g];
        }
        for (x, y) in h.iter_mut().zip(v) {
            *x = x.wrapping_add(y);
        }
    }
    h.iter().map(|x| format!("{x:08x}")).collect()
}

#[test]
fn known_digests() {
    assert_eq!(
        hex(b""),
        "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    );
    assert_eq!(
        hex(b"abc"),
        "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
    );
    let long = b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq";
    assert_eq!(
        hex(long),
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
    );
    assert_eq!(&hex(b"/home/me/repo")[..10], "74b392f5c9");
}
