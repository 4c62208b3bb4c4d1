//! Two index structures: a generation-checked slab and a set of ranks
//! with O(1) minimum.

/// A `Vec` of optional values with generation-checked indices.
#[derive(Debug)]
pub(super) struct Slab<T> {
    slots: Vec<Slot<T>>,
    vacant: Vec<u32>,
}

#[derive(Debug)]
struct Slot<T> {
    generation: u32,
    value: Option<T>,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Self {
            slots: Vec::new(),
            vacant: Vec::new(),
        }
    }
}

impl<T> Slab<T> {
    /// Stores `value`; returns its index and generation.
    pub(super) fn insert(&mut self, value: T) -> (u32, u32) {
        if let Some(index) = self.vacant.pop() {
            if let Some(slot) = self.slots.get_mut(index as usize) {
                slot.value = Some(value);
                return (index, slot.generation);
            }
        }
        self.slots.push(Slot {
            generation: 0,
            value: Some(value),
        });
        (self.slots.len() as u32 - 1, 0)
    }

    /// The value at `index` if it is of this generation.
    #[inline(always)]
    pub(super) fn get(&self, index: u32, generation: u32) -> Option<&T> {
        let slot = self.slots.get(index as usize)?;
        if slot.generation != generation {
            return None;
        }
        slot.value.as_ref()
    }

    /// The value at `index` if it is of this generation, to change.
    #[inline(always)]
    pub(super) fn get_mut(&mut self, index: u32, generation: u32) -> Option<&mut T> {
        let slot = self.slots.get_mut(index as usize)?;
        if slot.generation != generation {
            return None;
        }
        slot.value.as_mut()
    }

    /// Whether a value of this generation lives at `index`.
    pub(super) fn contains(&self, index: u32, generation: u32) -> bool {
        self.slots
            .get(index as usize)
            .is_some_and(|slot| slot.generation == generation && slot.value.is_some())
    }

    /// The generation of the value at `index`, if one lives there.
    pub(super) fn generation(&self, index: u32) -> Option<u32> {
        let slot = self.slots.get(index as usize)?;
        slot.value.as_ref().map(|_| slot.generation)
    }

    /// The live value at `index`, whatever its generation.
    pub(super) fn get_current(&self, index: u32) -> Option<&T> {
        self.slots.get(index as usize)?.value.as_ref()
    }

    /// The live value at `index`, whatever its generation.
    pub(super) fn get_current_mut(&mut self, index: u32) -> Option<&mut T> {
        self.slots.get_mut(index as usize)?.value.as_mut()
    }

    /// Takes the value out; its index may be reused under a new generation.
    pub(super) fn remove(&mut self, index: u32, generation: u32) -> Option<T> {
        let slot = self.slots.get_mut(index as usize)?;
        if slot.generation != generation {
            return None;
        }
        let value = slot.value.take()?;
        slot.generation = slot.generation.wrapping_add(1);
        self.vacant.push(index);
        Some(value)
    }

    /// Every live value, to change.
    pub(super) fn iter_mut(&mut self) -> impl Iterator<Item = &mut T> {
        self.slots.iter_mut().filter_map(|slot| slot.value.as_mut())
    }

    /// Live values with their index and generation.
    pub(super) fn iter(&self) -> impl Iterator<Item = (u32, u32, &T)> {
        self.slots.iter().enumerate().filter_map(|(i, slot)| {
            let value = slot.value.as_ref()?;
            Some((i as u32, slot.generation, value))
        })
    }
}

/// A set of small integers with O(1) insert, remove and minimum, for up to
/// 4096 members (one summary word); beyond that the minimum scans one
/// summary word per 4096.
#[derive(Debug, Default)]
pub(super) struct RankSet {
    /// Bit `r % 64` of word `r / 64` is set iff `r` is a member.
    words: Vec<u64>,
    /// Bit `w % 64` of summary word `w / 64` is set iff `words[w] != 0`.
    summary: Vec<u64>,
}

impl RankSet {
    pub(super) fn insert(&mut self, rank: usize) {
        let w = rank / 64;
        if w >= self.words.len() {
            self.words.resize(w + 1, 0);
            self.summary.resize(w / 64 + 1, 0);
        }
        self.words[w] |= 1 << (rank % 64);
        self.summary[w / 64] |= 1 << (w % 64);
    }

    pub(super) fn remove(&mut self, rank: usize) {
        let w = rank / 64;
        if let Some(word) = self.words.get_mut(w) {
            *word &= !(1 << (rank % 64));
            if *word == 0 {
                self.summary[w / 64] &= !(1 << (w % 64));
            }
        }
    }

    pub(super) fn first(&self) -> Option<usize> {
        let (s, bits) = self
            .summary
            .iter()
            .enumerate()
            .find(|&(_, &bits)| bits != 0)?;
        let w = s * 64 + bits.trailing_zeros() as usize;
        Some(w * 64 + self.words.get(w)?.trailing_zeros() as usize)
    }

    pub(super) fn clear(&mut self) {
        self.words.fill(0);
        self.summary.fill(0);
    }
}
