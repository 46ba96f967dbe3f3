//! The code-outline sidecar as recall reads it (`references/code-outline.json`): every
//! definition of each file of the `local` partition, methods of classes, impl blocks, traits and
//! interfaces included, grouped by file with its line range, and each file's table of definition
//! words that ranking and naming a hit's definition ask.
//!
//! The file is ours, written by `agentteams-mcp index build` beside the reference's code index
//! (not inside `code-index/`, and not listed in its manifest, so the reference never reads it),
//! in a code-index partition's own format with no postings: each document is one definition,
//! its `path` the file's path relative to the project with a line locator
//! ([`crate::corpus::locator`]), its `title` the qualified name (`Session.request`), its first
//! passage the signature and doc comment, its second the definition's tokens made at build time
//! ([`definition_tokens`]), so a query never runs the tokenizer over definitions.
//! Its `index_build_id` is the `local` partition's; recall uses it only for that partition, so a
//! code index the reference rebuilt is answered as before, file by file.
//!
//! What this module does not do: find definitions (`index::outline`), rank files
//! (`relevance`) or choose, among the definitions of a file already ranked, the one that
//! answers best (`refine`).

use super::loaded::{CodeFile, Corpus, Loaded};
use super::words::fnv1a;
use crate::corpus::locator::parse_locator;
use crate::corpus::sidecars::{definition_tokens, MAX_PASSAGE_TOKENS, NAME_MARK};
use crate::corpus::text::split_spaced;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

/// One definition of a file: its position in the outline's documents and its lines, read from
/// its locator once, when the outline is loaded.
#[derive(Clone, Copy, Debug)]
pub struct Definition {
    /// Position in the outline's documents.
    pub at: usize,
    pub first: u32,
    pub last: u32,
}

/// The words of one file's definitions, for ranking the file ([`super::relevance`]): each token
/// of a definition's name, and of its passage (signature and doc comment), with the definitions
/// holding it; and the names as written (`Command.InitDefaultHelpCmd` → `InitDefaultHelpCmd`).
/// Made from the outline the first time a query ranks the file, then kept with the outline
/// (dropped with it). Tokens are kept as their 64-bit FNV-1a hashes ([`fnv1a`]), grouped by
/// the top bits of the hash times a random odd multiplier ([`GroupKey`]) in one table per file:
/// making it is two passes over integers, with no allocation per token and no sort (a query
/// ranks files it may never have seen, and pays for making theirs), and a query's term is found
/// in a group of about two. FNV-1a is not keyed, so a repository can choose identifiers whose
/// hashes share their top bits; the multiplier, unknown to it, spreads distinct hashes over the
/// groups all the same (multiply-shift hashing), so no group grows long enough to slow every
/// query that ranks the file. Two tokens of one file
/// that share a hash would only lend each other their holders: a ranking matter within the
/// project that wrote the outline. Costs 18 bytes per token read (an entry and a share of the
/// groups): at most [`MAX_NAME_TOKENS`] and `MAX_PASSAGE_TOKENS` per definition.
#[derive(Debug, Default)]
pub struct DefinitionWords {
    /// `(token hash, holder)` grouped by the hash's top bits: the holder is the definition's
    /// position in the file's list, [`IN_NAME`] set where its name holds the token.
    tokens: Vec<(u64, u32)>,
    /// Where each group starts in `tokens`, and past the last, its end.
    group_starts: Vec<u32>,
    /// `64 - log2(groups)`: a hash's group is `(hash × key) >> group_shift`.
    group_shift: u32,
    key: GroupKey,
    /// The hashes of the definitions' names as written, sorted.
    exact: Vec<u64>,
    definitions: usize,
}

/// The odd multiplier that picks a token hash's group in [`DefinitionWords`]: random, drawn once
/// per process from std's keyed hasher.
#[derive(Clone, Copy, Debug)]
struct GroupKey(u64);

impl Default for GroupKey {
    fn default() -> GroupKey {
        static KEY: OnceLock<u64> = OnceLock::new();
        GroupKey(*KEY.get_or_init(|| {
            use std::hash::BuildHasher;
            std::collections::hash_map::RandomState::new().hash_one(0x5eed_u64) | 1
        }))
    }
}

impl GroupKey {
    fn group(self, hash: u64, shift: u32) -> usize {
        hash.wrapping_mul(self.0).checked_shr(shift).unwrap_or(0) as usize
    }
}

/// Tokens of a definition's name read into [`DefinitionWords`] (a qualified name such as
/// `HTTPAdapter.proxy_manager_for` has 7; the builder does not cap them, the reader does).
pub const MAX_NAME_TOKENS: usize = 16;

/// Marks a holder of a token whose name holds it, beside its position (at most `MAX_UNITS`).
const IN_NAME: u32 = 1 << 31;

/// Which query words one definition, the best of its file, holds.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BestDefinition {
    /// The words named by the definition whose name holds the most.
    pub name: u64,
    /// The words held by the definition whose name, signature and doc comment hold the most.
    pub passage: u64,
}

impl DefinitionWords {
    fn of(outline: &Corpus, definitions: &[Definition]) -> DefinitionWords {
        let mut words = DefinitionWords {
            definitions: definitions.len(),
            ..DefinitionWords::default()
        };
        words.exact.reserve(definitions.len());
        for (position, definition) in definitions.iter().enumerate() {
            // At most `MAX_UNITS` (400) definitions per file: the position fits below IN_NAME.
            let position = u32::try_from(position).unwrap_or(IN_NAME - 1) & !IN_NAME;
            let unit = &outline.documents[definition.at];
            let qualified = unit.title();
            let name = qualified.rsplit('.').next().unwrap_or(qualified);
            words.exact.push(fnv1a(name));
            // The tokens as the builder stored them (`definition_tokens`), else made here (an
            // outline of another writer).
            let made;
            let stored = unit.passages().nth(1);
            let (name_tokens, passage_tokens) =
                match stored.and_then(|s| split_spaced(s, NAME_MARK)) {
                    Some(split) => split,
                    None => {
                        made = definition_tokens(qualified, unit.passages().next().unwrap_or(""));
                        split_spaced(&made, NAME_MARK).unwrap_or((&made, ""))
                    }
                };
            // At most what the builder writes, whatever the file holds: the table stays within
            // 18 bytes a token of `MAX_NAME_TOKENS + MAX_PASSAGE_TOKENS` per definition.
            for (tokens, mark, most) in [
                (name_tokens, IN_NAME, MAX_NAME_TOKENS),
                (passage_tokens, 0, MAX_PASSAGE_TOKENS),
            ] {
                let holder = position | mark;
                words.tokens.extend(
                    tokens
                        .split(' ')
                        .filter(|t| !t.is_empty())
                        .take(most)
                        .map(|t| (fnv1a(t), holder)),
                );
            }
        }
        words.group_tokens();
        words.exact.sort_unstable();
        words.exact.dedup();
        words
    }

    /// Groups `tokens` by their keyed hashes' top bits (a counting sort): about two tokens per group.
    fn group_tokens(&mut self) {
        let groups = (self.tokens.len() / 2).max(1).next_power_of_two();
        self.group_shift = 64 - groups.trailing_zeros();
        let (key, shift) = (self.key, self.group_shift);
        let group = |hash: u64| key.group(hash, shift);
        let mut starts = vec![0u32; groups + 1];
        for &(hash, _) in &self.tokens {
            starts[group(hash) + 1] += 1;
        }
        for i in 1..starts.len() {
            starts[i] += starts[i - 1];
        }
        let mut next = starts.clone();
        let mut grouped = vec![(0u64, 0u32); self.tokens.len()];
        for &(hash, holder) in &self.tokens {
            let at = &mut next[group(hash)];
            grouped[*at as usize] = (hash, holder);
            *at += 1;
        }
        self.tokens = grouped;
        self.group_starts = starts;
    }

    /// The holders of the token whose hash is `hash`.
    fn holders(&self, hash: u64) -> impl Iterator<Item = u32> + '_ {
        let group = self.key.group(hash, self.group_shift);
        let range = match (
            self.group_starts.get(group),
            self.group_starts.get(group + 1),
        ) {
            (Some(&start), Some(&end)) => start as usize..end as usize,
            _ => 0..0,
        };
        self.tokens[range]
            .iter()
            .filter(move |(h, _)| *h == hash)
            .map(|&(_, holder)| holder)
    }

    /// The best definitions for the query: `terms` are the hashes ([`fnv1a`]) of the query's
    /// variant terms with their words' bits, `share` a mask's weight.
    pub fn best(&self, terms: &[(u64, u64)], share: impl Fn(u64) -> f64) -> BestDefinition {
        // Each definition's (name, passage) masks.
        let mut masks = vec![(0u64, 0u64); self.definitions];
        for &(term, bits) in terms {
            for holder in self.holders(term) {
                if let Some((name, passage)) = masks.get_mut((holder & !IN_NAME) as usize) {
                    *passage |= bits;
                    if holder & IN_NAME != 0 {
                        *name |= bits;
                    }
                }
            }
        }
        let mut best = BestDefinition::default();
        let (mut name_weight, mut passage_weight) = (0.0, 0.0);
        for (name, passage) in masks {
            if name != 0 && name != best.name {
                let weight = share(name);
                if weight > name_weight {
                    (name_weight, best.name) = (weight, name);
                }
            }
            if passage != 0 && passage != best.passage {
                let weight = share(passage);
                if weight > passage_weight {
                    (passage_weight, best.passage) = (weight, passage);
                }
            }
        }
        best
    }

    /// Whether a definition of the file is named `name`, exactly as written.
    pub fn defines(&self, name: &str) -> bool {
        self.exact.binary_search(&fnv1a(name)).is_ok()
    }
}

/// One file's definitions in the outline.
struct FileDefinitions {
    definitions: Vec<Definition>,
    words: OnceLock<DefinitionWords>,
}

/// A loaded outline, its definitions grouped by file.
pub struct Outline {
    loaded: Arc<Loaded>,
    /// File path relative to the project → its definitions, in order.
    by_file: HashMap<String, FileDefinitions>,
}

impl Outline {
    /// The outline of a loaded file, or `None` when it is not a partition or one of its
    /// documents carries no well-formed locator (then it is not an outline of ours).
    pub fn of(loaded: Arc<Loaded>) -> Option<Outline> {
        let Loaded::Code(CodeFile::Partition(corpus)) = &*loaded else {
            return None;
        };
        let mut by_file: HashMap<String, FileDefinitions> = HashMap::new();
        for (at, doc) in corpus.documents.iter().enumerate() {
            let (path, first, last) = parse_locator(doc.path())?;
            let definition = Definition { at, first, last };
            match by_file.get_mut(path) {
                Some(file) => file.definitions.push(definition),
                None => {
                    let file = FileDefinitions {
                        definitions: vec![definition],
                        words: OnceLock::new(),
                    };
                    by_file.insert(path.to_owned(), file);
                }
            }
        }
        Some(Outline { loaded, by_file })
    }

    /// Whether this outline was loaded from `loaded` (the loader's cache hands out the same
    /// `Arc` until the file changes).
    pub fn is_of(&self, loaded: &Arc<Loaded>) -> bool {
        Arc::ptr_eq(&self.loaded, loaded)
    }

    /// The outline's documents (one per definition).
    pub fn corpus(&self) -> &Corpus {
        match &*self.loaded {
            Loaded::Code(CodeFile::Partition(corpus)) => corpus,
            // `of` admits partitions only.
            _ => unreachable!("an outline is a partition"),
        }
    }

    /// The words of the definitions of the file at `rel` (relative to the project), `None`
    /// when the outline holds none of it.
    pub fn definitions_of(&self, rel: &str) -> Option<&DefinitionWords> {
        let file = self.by_file.get(rel)?;
        Some(
            file.words
                .get_or_init(|| DefinitionWords::of(self.corpus(), &file.definitions)),
        )
    }

    /// The definitions of the file at `rel` (relative to the project), in order; `None` when the
    /// outline holds none of it.
    pub fn definitions_in(&self, rel: &str) -> Option<&[Definition]> {
        self.by_file.get(rel).map(|file| &file.definitions[..])
    }

    /// Whether this outline is the one built with `local` (the same build id).
    pub fn belongs_to(&self, local: &Corpus) -> bool {
        local.build_id.is_some() && local.build_id == self.corpus().build_id
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::corpus::sidecars::NAME_SEPARATOR;
    use crate::corpus::tokenize::Tokenizer;
    use crate::recall::loaded::Document;

    #[test]
    fn identifiers_chosen_to_share_their_hashes_top_bits_still_spread_over_the_groups() {
        // A repository can compute FNV-1a: it picks 1,200 identifiers whose hashes share their
        // top 10 bits, the bits an unkeyed table of 1,024 groups would group them by.
        const TOKENS: usize = 1200;
        let mut chosen = Vec::with_capacity(TOKENS);
        let mut i = 0u64;
        while chosen.len() < TOKENS {
            let token = format!("id{i}");
            if fnv1a(&token) >> 54 == 0x2a5 {
                chosen.push(token);
            }
            i += 1;
        }
        let mut words = DefinitionWords {
            tokens: chosen
                .iter()
                .enumerate()
                .map(|(at, t)| (fnv1a(t), at as u32))
                .collect(),
            definitions: TOKENS,
            ..DefinitionWords::default()
        };
        words.group_tokens();
        assert_eq!(words.group_starts.len(), 1024 + 1);
        let longest = words
            .group_starts
            .windows(2)
            .map(|w| w[1] - w[0])
            .max()
            .unwrap();
        // About one token a group; 1,200 thrown at random into 1,024 groups put at most a
        // handful in any one, where unkeyed grouping put all of them in one.
        assert!(longest <= 12, "{longest} tokens in one group");
        // Every token is still found, with its holder.
        for (at, token) in chosen.iter().enumerate() {
            assert_eq!(words.holders(fnv1a(token)).collect::<Vec<_>>(), [at as u32]);
        }
    }

    #[test]
    fn a_definitions_tokens_are_read_up_to_the_builders_caps_whatever_the_file_holds() {
        // A planted outline whose one definition stores thousands of tokens.
        let names: Vec<String> = (0..100).map(|i| format!("n{i}")).collect();
        let passage: Vec<String> = (0..5000).map(|i| format!("p{i}")).collect();
        let stored = format!("{}{NAME_SEPARATOR}{}", names.join(" "), passage.join(" "));
        let unit = Document::new(
            "a.py#L1-L2",
            "f",
            0.0,
            "",
            ["def f()", stored.as_str()],
            None,
        );
        let outline = Corpus {
            tokenizer: Tokenizer::Code,
            n: 1.0,
            avgdl: 0.0,
            documents: vec![unit],
            postings: Default::default(),
            built_at: String::new(),
            build_id: None,
            source_kind: Some("local-script".into()),
        };
        let definition = Definition {
            at: 0,
            first: 1,
            last: 2,
        };
        let words = DefinitionWords::of(&outline, &[definition]);
        assert_eq!(words.tokens.len(), MAX_NAME_TOKENS + MAX_PASSAGE_TOKENS);
        let share = |mask: u64| f64::from(mask.count_ones());
        // A name token past the cap is not read; one within it names the definition.
        let best = words.best(&[(fnv1a("n3"), 1), (fnv1a("n99"), 2)], share);
        assert_eq!(
            best,
            BestDefinition {
                name: 1,
                passage: 1
            }
        );
        let best = words.best(&[(fnv1a("p0"), 1), (fnv1a("p4999"), 2)], share);
        assert_eq!(
            best,
            BestDefinition {
                name: 0,
                passage: 1
            }
        );
        assert!(words.defines("f"));
    }
}
