//! Deterministic noise for tests and benches: bytes no compressor, run-length
//! coder or chunker can shortcut, the same again for the same seed so that a
//! failure can be replayed. Never a source of secrets.

/// Marsaglia's xorshift64 (shifts 13, 7, 17): cheap, and never 0 after a
/// state that is not.
#[derive(Clone, Debug)]
pub struct Xorshift(u64);

impl Xorshift {
    /// The generator at `state` itself, which must not be 0.
    pub fn new(state: u64) -> Self {
        assert_ne!(state, 0, "xorshift stays at 0 forever");
        Self(state)
    }

    /// The generator for any `seed`, 0 included: spread by the golden ratio
    /// and made odd, so that near seeds give unrelated runs.
    pub fn seeded(seed: u64) -> Self {
        Self(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next step's state.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// Fills `bytes` eight at a time, each step's state little-endian; a
    /// last short piece takes the first bytes of its step.
    pub fn fill(&mut self, bytes: &mut [u8]) {
        for piece in bytes.chunks_mut(8) {
            let step = self.next_u64().to_le_bytes();
            piece.copy_from_slice(&step[..piece.len()]);
        }
    }
}

/// `len` bytes of noise from `seed`: one step a byte, its lowest.
pub fn noise(seed: u64, len: usize) -> Vec<u8> {
    let mut steps = Xorshift::seeded(seed);
    (0..len).map(|_| steps.next_u64() as u8).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_bytes_and_another_seed_others() {
        assert_eq!(noise(7, 1000), noise(7, 1000));
        assert_ne!(noise(7, 1000), noise(8, 1000));
        assert_eq!(noise(0, 10).len(), 10);
    }

    #[test]
    fn fill_takes_a_step_for_each_eight_bytes() {
        let mut steps = Xorshift::new(1);
        let (first, second) = (steps.next_u64(), steps.next_u64());
        let mut bytes = [0u8; 11];
        Xorshift::new(1).fill(&mut bytes);
        assert_eq!(bytes[..8], first.to_le_bytes());
        assert_eq!(bytes[8..], second.to_le_bytes()[..3]);
    }
}
