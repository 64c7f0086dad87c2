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

    /// Every name, in symbol order (what a snapshot keeps so its symbols keep their meaning).
    pub fn names(&self) -> &[String] {
        &self.names
    }

    /// Makes this vocabulary equal to `names`, which must begin with every name it already has
    /// in the same order (a snapshot's vocabulary over the same content): the rest are interned
    /// in order, so a snapshot's symbols mean here what they meant when it was written.
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
        if names.len() < self.names.len() {
            return Err(VocabularyMismatch::Shorter {
                have: self.names.len(),
                want: names.len(),
            });
        }
        for name in &names[self.names.len()..] {
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
    /// The saved vocabulary has fewer names than the content already interns.
    #[error("the content interns {have} names but the saved vocabulary has only {want}")]
    Shorter {
        /// Names here.
        have: usize,
        /// Names saved.
        want: usize,
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
}
