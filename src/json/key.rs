//! Object keys that take no allocation of their own when short: [`Key`], a `String`'s size.
//!
//! Objects on the wire have many short keys (`"id"`, `"name"`, `"seatCategoryId"`); as `String`s
//! each was an allocation of its own, most of a parsed tree's allocations on such documents. A key
//! of up to [`INLINE_CAPACITY`] bytes is kept inside the `Key` itself (24 bytes, like a `String`),
//! a longer one in a `Box<str>`.
//!
//! In safe Rust, bytes kept inline become a `&str` only through a UTF-8 check, so the paths that
//! run per key keep to bytes: [`Map`](super::Map) lookups compare bytes, the writers write the
//! bytes, and the parser builds keys from text it has checked already. A key's bytes are UTF-8 by
//! construction (every constructor takes a `str`), which the check at [`Key::as_str`] relies on.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// The longest key kept inline: with a length byte and the enum's tag, 24 bytes in all.
pub const INLINE_CAPACITY: usize = 22;

/// A JSON object's key: text, compared, ordered and hashed as the `str` it holds.
#[derive(Clone)]
pub struct Key(Repr);

#[derive(Clone)]
enum Repr {
    /// `bytes[..len]` is the key, UTF-8; the rest is zero.
    Inline {
        len: u8,
        bytes: [u8; INLINE_CAPACITY],
    },
    Heap(Box<str>),
}

impl Key {
    /// The empty key.
    pub const fn new() -> Key {
        Key(Repr::Inline {
            len: 0,
            bytes: [0; INLINE_CAPACITY],
        })
    }

    /// The key's text as bytes (UTF-8), without the check [`Key::as_str`] makes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Repr::Heap(text) => text.as_bytes(),
        }
    }

    /// A short key's whole inline buffer and the key's length in it (the key is
    /// `buffer[..len]`), for a writer that copies a fixed number of bytes (no call to `memcpy`)
    /// and cuts back; `None` for a longer key.
    #[inline]
    pub(crate) fn inline_buffer(&self) -> Option<(&[u8; INLINE_CAPACITY], usize)> {
        match &self.0 {
            Repr::Inline { len, bytes } => Some((bytes, usize::from(*len))),
            Repr::Heap(_) => None,
        }
    }

    /// The key's text. A short key's bytes are checked as UTF-8 on the way (safe Rust has no other
    /// way to a `&str` of them); where bytes will do, [`Key::as_bytes`] costs nothing.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).expect("a key is built from a str")
            }
            Repr::Heap(text) => text,
        }
    }

    /// The key's length in bytes.
    #[inline]
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Inline { len, .. } => usize::from(*len),
            Repr::Heap(text) => text.len(),
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the key is kept inline (no allocation of its own).
    pub fn is_inline(&self) -> bool {
        matches!(self.0, Repr::Inline { .. })
    }

    /// The key as a `String`.
    pub fn into_string(self) -> String {
        match self.0 {
            Repr::Inline { .. } => self.as_str().to_owned(),
            Repr::Heap(text) => text.into_string(),
        }
    }
}

impl Default for Key {
    fn default() -> Self {
        Key::new()
    }
}

impl From<&str> for Key {
    #[inline]
    fn from(text: &str) -> Self {
        if text.len() <= INLINE_CAPACITY {
            let mut bytes = [0; INLINE_CAPACITY];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            Key(Repr::Inline {
                len: text.len() as u8,
                bytes,
            })
        } else {
            Key(Repr::Heap(text.into()))
        }
    }
}

impl From<String> for Key {
    fn from(text: String) -> Self {
        if text.len() <= INLINE_CAPACITY {
            Key::from(text.as_str())
        } else {
            Key(Repr::Heap(text.into_boxed_str()))
        }
    }
}

impl From<&String> for Key {
    fn from(text: &String) -> Self {
        Key::from(text.as_str())
    }
}

impl From<Box<str>> for Key {
    fn from(text: Box<str>) -> Self {
        if text.len() <= INLINE_CAPACITY {
            Key::from(&*text)
        } else {
            Key(Repr::Heap(text))
        }
    }
}

impl From<std::borrow::Cow<'_, str>> for Key {
    #[inline]
    fn from(text: std::borrow::Cow<'_, str>) -> Self {
        match text {
            std::borrow::Cow::Borrowed(text) => Key::from(text),
            std::borrow::Cow::Owned(text) => Key::from(text),
        }
    }
}

impl From<&Key> for Key {
    fn from(key: &Key) -> Self {
        key.clone()
    }
}

impl From<Key> for String {
    fn from(key: Key) -> Self {
        key.into_string()
    }
}

impl Deref for Key {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Key {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<[u8]> for Key {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Equality, order and hash are those of the key's `str`, so a `HashMap<Key, _>` or a
/// `BTreeMap<Key, _>` can be searched with a `&str`.
impl Borrow<str> for Key {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Key {
    #[inline]
    fn eq(&self, other: &Key) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for Key {}

impl PartialEq<str> for Key {
    #[inline]
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Key {
    #[inline]
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<String> for Key {
    fn eq(&self, other: &String) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Key> for str {
    fn eq(&self, other: &Key) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Key> for &str {
    fn eq(&self, other: &Key) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Key> for String {
    fn eq(&self, other: &Key) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    /// Byte order, which for UTF-8 is code point order: `str`'s order.
    #[inline]
    fn cmp(&self, other: &Key) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for Key {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Display for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for Key {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(self.as_str(), f)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::hash_map::DefaultHasher;

    fn hash_of<T: Hash + ?Sized>(value: &T) -> u64 {
        let mut hasher = DefaultHasher::new();
        value.hash(&mut hasher);
        hasher.finish()
    }

    #[test]
    fn a_key_is_the_size_of_a_string() {
        assert_eq!(std::mem::size_of::<Key>(), std::mem::size_of::<String>());
        assert_eq!(std::mem::size_of::<Key>(), 24);
    }

    #[test]
    fn keys_up_to_the_inline_capacity_are_inline_and_longer_ones_are_not() {
        for len in 0..=40 {
            let text = "k".repeat(len);
            for key in [Key::from(text.as_str()), Key::from(text.clone())] {
                assert_eq!(key.is_inline(), len <= INLINE_CAPACITY, "length {len}");
                assert_eq!(key.len(), len);
                assert_eq!(key.as_bytes(), text.as_bytes());
                assert_eq!(key.as_str(), text);
                assert_eq!(key.clone().into_string(), text);
            }
        }
        assert!(Key::from("k".repeat(22)).is_inline());
        assert!(!Key::from("k".repeat(23)).is_inline());
        assert!(Key::new().is_empty() && Key::default().is_inline());
    }

    #[test]
    fn multi_byte_characters_at_the_inline_boundary_stay_whole() {
        // 20 ASCII bytes and one 2-, 3- or 4-byte character: 22, 23 and 24 bytes.
        for (ch, inline) in [('é', true), ('€', false), ('𝄞', false)] {
            let text = format!("{}{ch}", "a".repeat(20));
            let key = Key::from(text.as_str());
            assert_eq!(key.is_inline(), inline, "{text:?}");
            assert_eq!(key.as_str(), text);
            assert_eq!(key.as_str().chars().last(), Some(ch));
        }
        // 22 bytes of 2-byte characters, and one byte more.
        let eleven = "é".repeat(11);
        assert!(Key::from(eleven.as_str()).is_inline());
        assert_eq!(Key::from(eleven.as_str()), *eleven);
        let longer = format!("{eleven}x");
        assert!(!Key::from(longer.as_str()).is_inline());
        assert_eq!(Key::from(longer.clone()).to_string(), longer);
    }

    #[test]
    fn equality_order_and_hash_agree_with_str() {
        let texts = [
            "",
            "a",
            "ab",
            "b",
            "é",
            "z",
            "seatCategoryId",
            "aaaaaaaaaaaaaaaaaaaaaa",
            "aaaaaaaaaaaaaaaaaaaaaaa",
            "aaaaaaaaaaaaaaaaaaaaab",
            "aaaaaaaaaaaaaaaaaaaaaaaa€",
            "\u{7f}",
            "\u{80}",
        ];
        for a in texts {
            let key_a = Key::from(a);
            assert_eq!(hash_of(&key_a), hash_of(a), "{a:?}");
            assert_eq!(format!("{key_a}"), a);
            assert_eq!(format!("{key_a:?}"), format!("{a:?}"));
            // Every comparison with text, both ways round.
            let owned = String::from(a);
            assert!(<Key as PartialEq<&str>>::eq(&key_a, &a));
            assert!(<Key as PartialEq<str>>::eq(&key_a, a));
            assert!(<Key as PartialEq<String>>::eq(&key_a, &owned));
            assert!(<&str as PartialEq<Key>>::eq(&a, &key_a));
            assert!(<str as PartialEq<Key>>::eq(a, &key_a));
            assert!(<String as PartialEq<Key>>::eq(&owned, &key_a));
            assert!(!<Key as PartialEq<&str>>::eq(&key_a, &"\u{0}"));
            for b in texts {
                let key_b = Key::from(b);
                assert_eq!(key_a.cmp(&key_b), a.cmp(b), "{a:?} against {b:?}");
                assert_eq!(key_a == key_b, a == b);
            }
        }
        let mut set = std::collections::HashSet::new();
        set.insert(Key::from("seatCategoryId"));
        assert!(set.contains("seatCategoryId") && !set.contains("seatCategory"));
    }
}
