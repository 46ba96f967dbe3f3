//! The JSON document tree: [`Value`], its [`Number`], [`Array`] and [`Map`], and the conversions
//! into it. The leaf the parser, the reader and the writers build or walk.

use super::text::{Text, INLINE_CAPACITY as TEXT_INLINE_CAPACITY};
use std::collections::hash_map::{Entry, HashMap};
use std::ops::{Deref, DerefMut};

/// An object's key: [`Text`], the type string values are held in too.
pub type Key = Text;

/// The longest key kept inline (see [`Text`]).
pub const KEY_INLINE_CAPACITY: usize = TEXT_INLINE_CAPACITY;

/// A JSON value.
#[derive(Clone, Debug, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(Text),
    Array(Array),
    Object(Map),
}

/// A JSON number, stored the way that keeps it exact.
#[derive(Clone, Debug)]
pub struct Number {
    pub(super) n: N,
}

#[derive(Clone, Debug)]
pub(super) enum N {
    /// A non-negative integer that fits in u64.
    PosInt(u64),
    /// A negative integer that fits in i64.
    NegInt(i64),
    /// A finite float (the token had a fraction or exponent).
    Float(f64),
    /// A number no primitive holds exactly: its source text, already validated as a JSON number.
    Verbatim(Box<str>),
}

impl Number {
    /// Bytes of source text the number keeps (one no primitive holds exactly), else 0.
    pub(crate) fn text_len(&self) -> usize {
        match &self.n {
            N::Verbatim(text) => text.len(),
            _ => 0,
        }
    }

    /// Whether the number was written as an integer (no fraction, no exponent).
    #[inline]
    pub fn is_integer_token(&self) -> bool {
        match &self.n {
            N::PosInt(_) | N::NegInt(_) => true,
            N::Float(_) => false,
            N::Verbatim(s) => !s.bytes().any(|b| matches!(b, b'.' | b'e' | b'E')),
        }
    }

    /// The value as u64 when it is an integer token in range.
    #[inline]
    pub fn as_u64(&self) -> Option<u64> {
        match self.n {
            N::PosInt(u) => Some(u),
            _ => None,
        }
    }

    /// The value as i64 when it is an integer token in range.
    #[inline]
    pub fn as_i64(&self) -> Option<i64> {
        match self.n {
            N::PosInt(u) => i64::try_from(u).ok(),
            N::NegInt(i) => Some(i),
            _ => None,
        }
    }

    /// The value as f64 (nearest; infinite for a verbatim number beyond f64's range).
    #[inline]
    pub fn as_f64(&self) -> f64 {
        match &self.n {
            N::PosInt(u) => *u as f64,
            N::NegInt(i) => *i as f64,
            N::Float(f) => *f,
            N::Verbatim(s) => s.parse().unwrap_or(f64::NAN),
        }
    }

    /// A float number; `None` for NaN or infinity, which JSON cannot carry.
    pub fn from_f64(f: f64) -> Option<Number> {
        f.is_finite().then_some(Number { n: N::Float(f) })
    }

    /// True when this number came from (or is) a float token.
    #[inline]
    pub fn is_float(&self) -> bool {
        matches!(self.n, N::Float(_))
    }

    /// The source text of a number no primitive holds exactly (`-0`, an integer beyond 64 bits,
    /// a float beyond `f64`'s range), else `None`.
    pub(crate) fn verbatim_text(&self) -> Option<&str> {
        match &self.n {
            N::Verbatim(text) => Some(text),
            _ => None,
        }
    }

    pub(crate) fn verbatim(text: &str) -> Number {
        Number {
            n: N::Verbatim(text.into()),
        }
    }

    pub(crate) fn float(f: f64) -> Number {
        Number { n: N::Float(f) }
    }
}

impl From<u64> for Number {
    fn from(u: u64) -> Self {
        Number { n: N::PosInt(u) }
    }
}

impl From<i64> for Number {
    fn from(i: i64) -> Self {
        if i >= 0 {
            Number {
                n: N::PosInt(i as u64),
            }
        } else {
            Number { n: N::NegInt(i) }
        }
    }
}

impl PartialEq for Number {
    /// Numbers are equal when they denote the same value of the same kind (integer or float);
    /// verbatim numbers compare by text.
    fn eq(&self, other: &Self) -> bool {
        match (&self.n, &other.n) {
            (N::PosInt(a), N::PosInt(b)) => a == b,
            (N::NegInt(a), N::NegInt(b)) => a == b,
            (N::Float(a), N::Float(b)) => a == b,
            (N::Verbatim(a), N::Verbatim(b)) => a == b,
            _ => false,
        }
    }
}

/// A JSON array. A thin wrapper over `Vec<Value>` whose `Drop` does not recurse.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Array(pub(super) Vec<Value>);

impl Array {
    pub fn new() -> Array {
        Array(Vec::new())
    }
    /// Takes the elements out.
    pub fn into_vec(mut self) -> Vec<Value> {
        std::mem::take(&mut self.0)
    }
}

impl From<Vec<Value>> for Array {
    fn from(v: Vec<Value>) -> Self {
        Array(v)
    }
}

impl Deref for Array {
    type Target = Vec<Value>;
    fn deref(&self) -> &Vec<Value> {
        &self.0
    }
}

impl DerefMut for Array {
    fn deref_mut(&mut self) -> &mut Vec<Value> {
        &mut self.0
    }
}

impl FromIterator<Value> for Array {
    fn from_iter<I: IntoIterator<Item = Value>>(iter: I) -> Self {
        Array(iter.into_iter().collect())
    }
}

/// A JSON object: entries in insertion order, keyed by [`Key`]s (short ones without an allocation
/// of their own). `Drop` does not recurse.
#[derive(Clone, Debug, Default)]
pub struct Map {
    entries: Vec<(Key, Value)>,
}

impl Map {
    pub fn new() -> Map {
        Map::default()
    }

    pub fn with_capacity(n: usize) -> Map {
        Map {
            entries: Vec::with_capacity(n),
        }
    }

    /// The value of `key`; with duplicate keys, the last one (as Python's `json` keeps).
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.entries
            .iter()
            .rev()
            .find(|(k, _)| k.as_bytes() == key.as_bytes())
            .map(|(_, v)| v)
    }

    pub fn get_mut(&mut self, key: &str) -> Option<&mut Value> {
        self.entries
            .iter_mut()
            .rev()
            .find(|(k, _)| k.as_bytes() == key.as_bytes())
            .map(|(_, v)| v)
    }

    pub fn contains_key(&self, key: &str) -> bool {
        self.entries
            .iter()
            .any(|(k, _)| k.as_bytes() == key.as_bytes())
    }

    /// Sets `key`: replaces the value in place when present (keeping its position), else appends.
    pub fn insert(&mut self, key: impl Into<Key>, value: Value) {
        let key = key.into();
        match self.entries.iter_mut().rev().find(|(k, _)| *k == key) {
            Some((_, slot)) => *slot = value,
            None => self.entries.push((key, value)),
        }
    }

    /// Appends without looking for an existing key: a repeated key is kept, as the parser keeps
    /// it. With [`Map::has_repeated_key`] once it is complete, an object is built and checked
    /// for repeats in O(n log n), where `contains_key` or `insert` per key would be O(n²).
    pub fn push(&mut self, key: impl Into<Key>, value: Value) {
        self.entries.push((key.into(), value));
    }

    /// Whether some key appears more than once: compared pairwise for a few entries, else by
    /// sorting references to the keys.
    pub fn has_repeated_key(&self) -> bool {
        const PAIRWISE_ENTRIES: usize = 16;
        if self.entries.len() <= PAIRWISE_ENTRIES {
            return (1..self.entries.len()).any(|i| {
                let key = &self.entries[i].0;
                self.entries[..i].iter().any(|(earlier, _)| earlier == key)
            });
        }
        let mut keys: Vec<&[u8]> = self.entries.iter().map(|(k, _)| k.as_bytes()).collect();
        keys.sort_unstable();
        keys.windows(2).any(|pair| pair[0] == pair[1])
    }

    /// Appends without looking for an existing key (keeps duplicates).
    #[cfg(test)]
    pub(crate) fn push_unchecked(&mut self, key: Key, value: Value) {
        self.entries.push((key, value));
    }

    /// The parser's constructor: entries as parsed, duplicates kept.
    pub(crate) fn from_parsed_entries(entries: Vec<(Key, Value)>) -> Map {
        Map { entries }
    }

    /// Removes every entry with `key`, returning the last value.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        let mut found = None;
        let mut i = 0;
        while i < self.entries.len() {
            if self.entries[i].0.as_bytes() == key.as_bytes() {
                found = Some(self.entries.remove(i).1);
            } else {
                i += 1;
            }
        }
        found
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    pub fn iter(&self) -> impl Iterator<Item = (&Key, &Value)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    pub fn keys(&self) -> impl Iterator<Item = &Key> {
        self.entries.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &Value> {
        self.entries.iter().map(|(_, v)| v)
    }

    /// Takes the entries out, in order.
    pub fn into_entries(mut self) -> Vec<(Key, Value)> {
        std::mem::take(&mut self.entries)
    }

    pub(crate) fn entries(&self) -> &[(Key, Value)] {
        &self.entries
    }

    /// Keys and values, mutable in place (the sanitiser rewrites keys).
    pub(crate) fn entries_mut(&mut self) -> &mut [(Key, Value)] {
        &mut self.entries
    }
}

impl PartialEq for Map {
    /// Maps are equal when they hold the same entries in the same order.
    fn eq(&self, other: &Self) -> bool {
        self.entries == other.entries
    }
}

/// The map [`Map::insert`] of each entry in turn makes (a repeated key keeps its first place and
/// takes its last value), in time linear in the entries: past a few entries the keys' places are
/// kept in a hash table (std's, randomly keyed, so chosen keys cannot collide), since `insert`
/// looks for the key among the entries so far, which made a record or an argument object of many
/// members quadratic (a call's 90,000 argument keys took 26 s to log, a record of 300,000 members
/// 189 s to verify).
impl<K: Into<Key>> FromIterator<(K, Value)> for Map {
    fn from_iter<I: IntoIterator<Item = (K, Value)>>(iter: I) -> Self {
        const SCANNED_ENTRIES: usize = 16;
        let mut m = Map::new();
        let mut place: HashMap<Key, usize> = HashMap::new();
        for (k, v) in iter {
            let key = k.into();
            if m.entries.len() < SCANNED_ENTRIES && place.is_empty() {
                m.insert(key, v);
                continue;
            }
            if place.is_empty() {
                place.extend(
                    m.entries
                        .iter()
                        .enumerate()
                        .map(|(i, (k, _))| (k.clone(), i)),
                );
            }
            match place.entry(key) {
                Entry::Occupied(at) => m.entries[*at.get()].1 = v,
                Entry::Vacant(slot) => {
                    m.entries.push((slot.key().clone(), v));
                    slot.insert(m.entries.len() - 1);
                }
            }
        }
        m
    }
}

/// Children of a container waiting to be dropped: an array's elements or an object's entries.
enum Pending {
    Elements(Vec<Value>),
    Entries(Vec<(Key, Value)>),
}

/// Drops `first` with constant call-stack depth: each child container's buffer is taken out of it;
/// a buffer that holds further non-empty containers goes onto a heap stack to be emptied in turn,
/// one that does not is dropped on the spot (its elements' own `Drop` finds nothing nested, so it
/// cannot recurse further).
///
/// A buffer whose children hold no non-empty container (a ring of coordinate pairs) is dropped
/// whole, after one pass that only reads: that pass fetches the children's buffers from memory
/// side by side, where a pass that frees each child in turn waits for one fetch at a time (on
/// canada.json's 56,045 pairs, most of the drop's time).
fn drop_iteratively(first: Pending) {
    let mut stack = vec![first];
    while let Some(pending) = stack.pop() {
        match pending {
            Pending::Elements(values) => {
                // `fold`, not `any`: no early exit, so the loads do not wait on each other.
                if values
                    .iter()
                    .fold(false, |any, v| any | holds_non_empty_container(v))
                {
                    for value in values {
                        set_aside(value, &mut stack);
                    }
                }
            }
            Pending::Entries(entries) => {
                if entries
                    .iter()
                    .fold(false, |any, (_, v)| any | holds_non_empty_container(v))
                {
                    for (_, value) in entries {
                        set_aside(value, &mut stack);
                    }
                }
            }
        }
    }
}

/// Whether `value` is a container one of whose children is a non-empty container.
#[inline]
fn holds_non_empty_container(value: &Value) -> bool {
    match value {
        Value::Array(a) => a.0.iter().any(is_non_empty_container),
        Value::Object(m) => m.entries.iter().any(|(_, v)| is_non_empty_container(v)),
        _ => false,
    }
}

/// Drops `value` now if it holds no non-empty container, else moves its buffer onto `stack`.
#[inline]
fn set_aside(value: Value, stack: &mut Vec<Pending>) {
    match value {
        Value::Array(mut a) => {
            let elements = std::mem::take(&mut a.0);
            if elements.iter().any(is_non_empty_container) {
                stack.push(Pending::Elements(elements));
            }
        }
        Value::Object(mut m) => {
            let entries = std::mem::take(&mut m.entries);
            if entries.iter().any(|(_, v)| is_non_empty_container(v)) {
                stack.push(Pending::Entries(entries));
            }
        }
        _ => {}
    }
}

fn is_non_empty_container(value: &Value) -> bool {
    match value {
        Value::Array(a) => !a.0.is_empty(),
        Value::Object(m) => !m.entries.is_empty(),
        _ => false,
    }
}

impl Drop for Array {
    fn drop(&mut self) {
        if self.0.iter().any(is_non_empty_container) {
            drop_iteratively(Pending::Elements(std::mem::take(&mut self.0)));
        }
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        if self.entries.iter().any(|(_, v)| is_non_empty_container(v)) {
            drop_iteratively(Pending::Entries(std::mem::take(&mut self.entries)));
        }
    }
}

impl PartialEq for Value {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Value::Null, Value::Null) => true,
            (Value::Bool(a), Value::Bool(b)) => a == b,
            (Value::Number(a), Value::Number(b)) => a == b,
            (Value::String(a), Value::String(b)) => a == b,
            (Value::Array(a), Value::Array(b)) => a.0 == b.0,
            (Value::Object(a), Value::Object(b)) => a == b,
            _ => false,
        }
    }
}

impl Value {
    #[inline]
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }
    #[inline]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }
    #[inline]
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            Value::Bool(b) => Some(*b),
            _ => None,
        }
    }
    #[inline]
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(n) => Some(n),
            _ => None,
        }
    }
    /// An integer token in u64 range.
    #[inline]
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(Number::as_u64)
    }
    /// An integer token in i64 range.
    #[inline]
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }
    #[inline]
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().map(Number::as_f64)
    }
    #[inline]
    pub fn as_array(&self) -> Option<&Array> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_array_mut(&mut self) -> Option<&mut Array> {
        match self {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }
    #[inline]
    pub fn as_object(&self) -> Option<&Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
    pub fn as_object_mut(&mut self) -> Option<&mut Map> {
        match self {
            Value::Object(m) => Some(m),
            _ => None,
        }
    }
    /// The member `key` of an object; `None` for a missing key or a non-object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|m| m.get(key))
    }
    /// The JSON type name as JSON Schema spells it ("integer" for integer tokens).
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Number(n) if n.is_integer_token() => "integer",
            Value::Number(_) => "number",
            Value::String(_) => "string",
            Value::Array(_) => "array",
            Value::Object(_) => "object",
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Self {
        Value::String(Text::from(s))
    }
}
impl From<String> for Value {
    fn from(s: String) -> Self {
        Value::String(Text::from(s))
    }
}
impl From<Text> for Value {
    fn from(s: Text) -> Self {
        Value::String(s)
    }
}
impl From<bool> for Value {
    fn from(b: bool) -> Self {
        Value::Bool(b)
    }
}
impl From<u64> for Value {
    fn from(u: u64) -> Self {
        Value::Number(u.into())
    }
}
impl From<i64> for Value {
    fn from(i: i64) -> Self {
        Value::Number(i.into())
    }
}
impl From<u32> for Value {
    fn from(u: u32) -> Self {
        Value::Number(u64::from(u).into())
    }
}
impl From<i32> for Value {
    fn from(i: i32) -> Self {
        Value::Number(i64::from(i).into())
    }
}
impl From<usize> for Value {
    fn from(u: usize) -> Self {
        Value::Number((u as u64).into())
    }
}
impl From<f64> for Value {
    /// A finite float; NaN and infinities become `null` (JSON cannot carry them).
    fn from(f: f64) -> Self {
        Number::from_f64(f).map_or(Value::Null, Value::Number)
    }
}
impl From<Vec<Value>> for Value {
    fn from(v: Vec<Value>) -> Self {
        Value::Array(Array(v))
    }
}
impl From<Map> for Value {
    fn from(m: Map) -> Self {
        Value::Object(m)
    }
}
impl From<Array> for Value {
    fn from(a: Array) -> Self {
        Value::Array(a)
    }
}
impl<T: Into<Value>> From<Option<T>> for Value {
    fn from(o: Option<T>) -> Self {
        o.map_or(Value::Null, Into::into)
    }
}

/// Builds an object from `(key, value)` pairs, keeping their order.
///
/// ```
/// use agentteams_mcp::json::{obj, Value};
/// let v = obj([("a", Value::from(1u64)), ("b", "x".into())]);
/// assert_eq!(agentteams_mcp::json::to_string(&v), r#"{"a":1,"b":"x"}"#);
/// ```
pub fn obj<K: Into<Key>, const LEN: usize>(pairs: [(K, Value); LEN]) -> Value {
    let mut m = Map::with_capacity(LEN);
    for (k, v) in pairs {
        m.insert(k, v);
    }
    Value::Object(m)
}
