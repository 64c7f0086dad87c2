//! Interned names. Consideration, tag, resource, capability, domain, context and provider-state
//! names are turned into [`Symbol`]s once, when content or a request is loaded, so the scoring
//! loop compares integers and never hashes a string.
//!
//! A [`Vocabulary`] is owned by its caller (one per request, zone or process); symbols from one
//! vocabulary mean nothing in another.

use std::collections::HashMap;

/// An interned name: an index into the [`Vocabulary`] that produced it.
#[derive(
    Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(transparent)]
pub struct Symbol(u32);

impl Symbol {
    /// The first symbol of any vocabulary (a placeholder where a value is needed before one is
    /// known).
    pub const FIRST: Symbol = Symbol(0);

    /// The symbol's position in its vocabulary (dense, starting at 0).
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// A string interner: the same name always gets the same [`Symbol`].
#[derive(Clone, Debug, Default)]
pub struct Vocabulary {
    symbols_by_name: HashMap<String, Symbol>,
    names: Vec<String>,
}

impl Vocabulary {
    /// An empty vocabulary.
    pub fn new() -> Self {
        Self::default()
    }

    /// The symbol for `name`, adding it if it is new.
    pub fn intern(&mut self, name: &str) -> Symbol {
        if let Some(symbol) = self.symbols_by_name.get(name) {
            return *symbol;
        }
        let symbol = Symbol(u32::try_from(self.names.len()).unwrap_or(u32::MAX));
        self.names.push(name.to_owned());
        self.symbols_by_name.insert(name.to_owned(), symbol);
        symbol
    }

    /// The symbol for `name` if it was interned.
    pub fn lookup(&self, name: &str) -> Option<Symbol> {
        self.symbols_by_name.get(name).copied()
    }

    /// The name behind `symbol` (empty for a symbol of another vocabulary).
    pub fn name(&self, symbol: Symbol) -> &str {
        self.names.get(symbol.index()).map_or("", String::as_str)
    }

    /// How many names are interned.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// Whether nothing is interned yet.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// A vocabulary holding `names` in order (a snapshot's), so content interned into it
    /// afterwards keeps every saved symbol's meaning and only adds names after them.
    pub fn from_names(names: &[String]) -> Result<Self, VocabularyMismatch> {
        let mut vocabulary = Self::new();
        vocabulary.extend_to(names)?;
        Ok(vocabulary)
    }

    /// Every name, in symbol order (what a snapshot keeps so its symbols keep their meaning).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Makes every symbol of `names` (a snapshot's vocabulary) mean here what it meant when it
    /// was saved. Where both have a name they must agree; the saved names this vocabulary lacks
    /// are interned in order; names only this one has (content added since, interned after
    /// the saved ones — see [`Vocabulary::from_names`]) stay as they are.
    pub fn extend_to(&mut self, names: &[String]) -> Result<(), VocabularyMismatch> {
        for (index, (have, want)) in self.names.iter().zip(names).enumerate() {
            if have != want {
                return Err(VocabularyMismatch::Differs {
                    index,
                    have: have.clone(),
                    want: want.clone(),
                });
            }
        }
        for name in names.iter().skip(self.names.len()) {
            let before = self.names.len();
            if self.intern(name).index() != before {
                return Err(VocabularyMismatch::Repeated { name: name.clone() });
            }
        }
        Ok(())
    }
}

/// Why a saved vocabulary cannot be laid over this one (the content changed since it was saved).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum VocabularyMismatch {
    /// A name differs at a position both have.
    #[error("name {index} is `{have}` here but `{want}` in the saved vocabulary")]
    Differs {
        /// Symbol position.
        index: usize,
        /// This vocabulary's name.
        have: String,
        /// The saved name.
        want: String,
    },
    /// The saved vocabulary names something twice.
    #[error("the saved vocabulary names `{name}` twice")]
    Repeated {
        /// The repeated name.
        name: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_name_gets_the_same_symbol() {
        let mut vocabulary = Vocabulary::new();
        let hunger = vocabulary.intern("HUNGER");
        let food = vocabulary.intern("food");
        assert_ne!(hunger, food);
        assert_eq!(vocabulary.intern("HUNGER"), hunger);
        assert_eq!(vocabulary.lookup("food"), Some(food));
        assert_eq!(vocabulary.lookup("missing"), None);
        assert_eq!(vocabulary.name(food), "food");
        assert_eq!(vocabulary.len(), 2);
    }

    #[test]
    fn a_saved_vocabulary_keeps_its_symbols_under_content_that_changed() {
        let saved: Vec<String> = ["HUNGER", "food", "rest"].map(String::from).to_vec();
        // Content that now interns its names in another order, plus a new one, built over the
        // saved names: every saved symbol keeps its number, the new name comes after.
        let mut over = Vocabulary::from_names(&saved).expect("seeded");
        for name in ["rest", "THIRST", "HUNGER", "food"] {
            over.intern(name);
        }
        assert_eq!(over.lookup("rest").map(Symbol::index), Some(2));
        assert_eq!(over.lookup("THIRST").map(Symbol::index), Some(3));
        assert_eq!(over.extend_to(&saved), Ok(()), "a prefix of this one fits");
        // Built without the seed, the same content disagrees with the snapshot, and says where.
        let mut fresh = Vocabulary::new();
        for name in ["rest", "THIRST", "HUNGER", "food"] {
            fresh.intern(name);
        }
        assert!(matches!(
            fresh.extend_to(&saved),
            Err(VocabularyMismatch::Differs { index: 0, .. })
        ));
        let repeated: Vec<String> = ["a", "a"].map(String::from).to_vec();
        assert!(matches!(
            Vocabulary::from_names(&repeated),
            Err(VocabularyMismatch::Repeated { .. })
        ));
    }
}
