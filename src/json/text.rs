//! Text that takes no allocation of its own when short: [`Text`], a `String`'s size, which holds
//! every object key and string value of a tree.
//!
//! Documents on the wire are mostly short text: keys (`"id"`, `"name"`, `"seatCategoryId"`) and
//! values (`"2.0"`, `"tools/call"`, a language code, a colour); as `String`s each was an
//! allocation of its own, most of a parsed tree's allocations. Text of up to [`INLINE_CAPACITY`]
//! bytes is kept inside the `Text` itself (24 bytes, like a `String`), longer text in a
//! `Box<str>`.
//!
//! In safe Rust, bytes kept inline become a `&str` only through a UTF-8 check, so the paths that
//! run per key or per string keep to bytes: [`Map`](super::Map) lookups compare bytes, the writers
//! write the bytes, and the parser builds text from input it has checked already. A `Text`'s bytes
//! are UTF-8 by construction (every constructor takes a `str`), which the check at
//! [`Text::as_str`] relies on.

use std::borrow::Borrow;
use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};
use std::ops::Deref;

/// The longest text kept inline: with a length byte and the enum's tag, 24 bytes in all.
pub const INLINE_CAPACITY: usize = 22;

/// A JSON object's key or string value: compared, ordered and hashed as the `str` it holds.
#[derive(Clone)]
pub struct Text(Repr);

#[derive(Clone)]
enum Repr {
    /// `bytes[..len]` is the text, UTF-8; the rest is zero.
    Inline {
        len: u8,
        bytes: [u8; INLINE_CAPACITY],
    },
    Heap(Box<str>),
}

impl Text {
    /// The empty text.
    pub const fn new() -> Text {
        Text(Repr::Inline {
            len: 0,
            bytes: [0; INLINE_CAPACITY],
        })
    }

    /// The text as bytes (UTF-8), without the check [`Text::as_str`] makes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => &bytes[..usize::from(*len)],
            Repr::Heap(text) => text.as_bytes(),
        }
    }

    /// Longer text, held as a `str` already; `None` for short text (kept inline).
    #[inline]
    pub(crate) fn as_heap_str(&self) -> Option<&str> {
        match &self.0 {
            Repr::Inline { .. } => None,
            Repr::Heap(text) => Some(text),
        }
    }

    /// Short text's whole inline buffer and the text's length in it (the text is
    /// `buffer[..len]`), for a writer that copies a fixed number of bytes (no call to `memcpy`)
    /// and cuts back; `None` for longer text.
    #[inline]
    pub(crate) fn inline_buffer(&self) -> Option<(&[u8; INLINE_CAPACITY], usize)> {
        match &self.0 {
            Repr::Inline { len, bytes } => Some((bytes, usize::from(*len))),
            Repr::Heap(_) => None,
        }
    }

    /// The text as a `str`. Short text's bytes are checked as UTF-8 on the way (safe Rust has no other
    /// way to a `&str` of them); where bytes will do, [`Text::as_bytes`] costs nothing.
    #[inline]
    pub fn as_str(&self) -> &str {
        match &self.0 {
            Repr::Inline { len, bytes } => {
                std::str::from_utf8(&bytes[..usize::from(*len)]).expect("text is built from a str")
            }
            Repr::Heap(text) => text,
        }
    }

    /// The text's length in bytes.
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

    /// Whether the text is kept inline (no allocation of its own).
    pub fn is_inline(&self) -> bool {
        matches!(self.0, Repr::Inline { .. })
    }

    /// The text as a `String`.
    pub fn into_string(self) -> String {
        match self.0 {
            Repr::Inline { .. } => self.as_str().to_owned(),
            Repr::Heap(text) => text.into_string(),
        }
    }
}

impl Default for Text {
    fn default() -> Self {
        Text::new()
    }
}

impl From<&str> for Text {
    #[inline]
    fn from(text: &str) -> Self {
        if text.len() <= INLINE_CAPACITY {
            let mut bytes = [0; INLINE_CAPACITY];
            bytes[..text.len()].copy_from_slice(text.as_bytes());
            Text(Repr::Inline {
                len: text.len() as u8,
                bytes,
            })
        } else {
            Text(Repr::Heap(text.into()))
        }
    }
}

impl From<String> for Text {
    fn from(text: String) -> Self {
        if text.len() <= INLINE_CAPACITY {
            Text::from(text.as_str())
        } else {
            Text(Repr::Heap(text.into_boxed_str()))
        }
    }
}

impl From<&String> for Text {
    fn from(text: &String) -> Self {
        Text::from(text.as_str())
    }
}

impl From<Box<str>> for Text {
    fn from(text: Box<str>) -> Self {
        if text.len() <= INLINE_CAPACITY {
            Text::from(&*text)
        } else {
            Text(Repr::Heap(text))
        }
    }
}

impl From<std::borrow::Cow<'_, str>> for Text {
    #[inline]
    fn from(text: std::borrow::Cow<'_, str>) -> Self {
        match text {
            std::borrow::Cow::Borrowed(text) => Text::from(text),
            std::borrow::Cow::Owned(text) => Text::from(text),
        }
    }
}

impl From<&Text> for Text {
    fn from(key: &Text) -> Self {
        key.clone()
    }
}

impl From<Text> for String {
    fn from(key: Text) -> Self {
        key.into_string()
    }
}

impl Deref for Text {
    type Target = str;
    #[inline]
    fn deref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<str> for Text {
    fn as_ref(&self) -> &str {
        self.as_str()
    }
}

impl AsRef<[u8]> for Text {
    fn as_ref(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// Equality, order and hash are those of the text's `str`, so a `HashMap<Text, _>` or a
/// `BTreeMap<Text, _>` can be searched with a `&str`.
impl Borrow<str> for Text {
    fn borrow(&self) -> &str {
        self.as_str()
    }
}

impl PartialEq for Text {
    #[inline]
    fn eq(&self, other: &Text) -> bool {
        match (&self.0, &other.0) {
            // The rest of an inline buffer is zero, so two whole buffers compare as their texts
            // do: a few word compares of a fixed size, not a call to `memcmp` per pair (an
            // object's keys are compared pairwise for repeats).
            (
                Repr::Inline { len, bytes },
                Repr::Inline {
                    len: other_len,
                    bytes: other_bytes,
                },
            ) => len == other_len && bytes == other_bytes,
            _ => self.as_bytes() == other.as_bytes(),
        }
    }
}

impl Eq for Text {}

impl PartialEq<str> for Text {
    #[inline]
    fn eq(&self, other: &str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<&str> for Text {
    #[inline]
    fn eq(&self, other: &&str) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<String> for Text {
    fn eq(&self, other: &String) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Text> for str {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Text> for &str {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialEq<Text> for String {
    fn eq(&self, other: &Text) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl PartialOrd for Text {
    fn partial_cmp(&self, other: &Text) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Text {
    /// Byte order, which for UTF-8 is code point order: `str`'s order.
    #[inline]
    fn cmp(&self, other: &Text) -> Ordering {
        self.as_bytes().cmp(other.as_bytes())
    }
}

impl Hash for Text {
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_str().hash(state);
    }
}

impl fmt::Display for Text {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self.as_str(), f)
    }
}

impl fmt::Debug for Text {
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
        assert_eq!(std::mem::size_of::<Text>(), std::mem::size_of::<String>());
        assert_eq!(std::mem::size_of::<Text>(), 24);
    }

    #[test]
    fn keys_up_to_the_inline_capacity_are_inline_and_longer_ones_are_not() {
        for len in 0..=40 {
            let text = "k".repeat(len);
            for key in [Text::from(text.as_str()), Text::from(text.clone())] {
                assert_eq!(key.is_inline(), len <= INLINE_CAPACITY, "length {len}");
                assert_eq!(key.len(), len);
                assert_eq!(key.as_bytes(), text.as_bytes());
                assert_eq!(key.as_str(), text);
                assert_eq!(key.clone().into_string(), text);
            }
        }
        assert!(Text::from("k".repeat(22)).is_inline());
        assert!(!Text::from("k".repeat(23)).is_inline());
        assert!(Text::new().is_empty() && Text::default().is_inline());
    }

    #[test]
    fn multi_byte_characters_at_the_inline_boundary_stay_whole() {
        // 20 ASCII bytes and one 2-, 3- or 4-byte character: 22, 23 and 24 bytes.
        for (ch, inline) in [('é', true), ('€', false), ('𝄞', false)] {
            let text = format!("{}{ch}", "a".repeat(20));
            let key = Text::from(text.as_str());
            assert_eq!(key.is_inline(), inline, "{text:?}");
            assert_eq!(key.as_str(), text);
            assert_eq!(key.as_str().chars().last(), Some(ch));
        }
        // 22 bytes of 2-byte characters, and one byte more.
        let eleven = "é".repeat(11);
        assert!(Text::from(eleven.as_str()).is_inline());
        assert_eq!(Text::from(eleven.as_str()), *eleven);
        let longer = format!("{eleven}x");
        assert!(!Text::from(longer.as_str()).is_inline());
        assert_eq!(Text::from(longer.clone()).to_string(), longer);
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
            // Equal to an inline buffer's zero padding but for the length.
            "\u{0}",
            "a\u{0}",
            "aaaaaaaaaaaaaaaaaaaaa\u{0}",
        ];
        for a in texts {
            let key_a = Text::from(a);
            assert_eq!(hash_of(&key_a), hash_of(a), "{a:?}");
            assert_eq!(format!("{key_a}"), a);
            assert_eq!(format!("{key_a:?}"), format!("{a:?}"));
            // Every comparison with text, both ways round.
            let owned = String::from(a);
            assert!(<Text as PartialEq<&str>>::eq(&key_a, &a));
            assert!(<Text as PartialEq<str>>::eq(&key_a, a));
            assert!(<Text as PartialEq<String>>::eq(&key_a, &owned));
            assert!(<&str as PartialEq<Text>>::eq(&a, &key_a));
            assert!(<str as PartialEq<Text>>::eq(a, &key_a));
            assert!(<String as PartialEq<Text>>::eq(&owned, &key_a));
            assert_eq!(
                <Text as PartialEq<&str>>::eq(&key_a, &"\u{0}"),
                a == "\u{0}"
            );
            for b in texts {
                let key_b = Text::from(b);
                assert_eq!(key_a.cmp(&key_b), a.cmp(b), "{a:?} against {b:?}");
                assert_eq!(key_a == key_b, a == b);
                // However each was made.
                let (from_string, from_box) =
                    (Text::from(String::from(b)), Text::from(Box::from(a)));
                assert_eq!(key_a == from_string, a == b);
                assert_eq!(from_box == key_b, a == b);
            }
        }
        let mut set = std::collections::HashSet::new();
        set.insert(Text::from("seatCategoryId"));
        assert!(set.contains("seatCategoryId") && !set.contains("seatCategory"));
    }
}
